"""Heuristic planners on the public instance sets: height / lower bound and seconds.

    python benchmarks/heuristics.py [--planners best-fit,portfolio] [--family own]
        [--instances A,B,Y_1] [--repeat 3] [--time-limit 3] [--long]

Runs every registered heuristic planner (replicas and cpplan's own; exact planners are left out
unless named) on the 11 MiniMalloc challenging instances and the 5 idealloc instances found in
``shared/benchmarks`` beside the repository. Prints a line per planner and instance as soon as
it is measured (``height/LB seconds status``), then one table: a row per planner, a column per
instance, each cell ``height/LB seconds``: the median height and the median seconds of
``--repeat`` runs for planners that take under 2 s and for the time-budgeted ones whose result
varies with the machine's speed (``local-search`` with ``--time-limit``, ``portfolio`` with its
defaults); ``usmp-hill-climb`` runs once with its own defaults (500 seeded attempts: the same
result every run). Every run is timed on its own copy of the problem, so the plan checker runs
each time (it remembers plans it passed for one problem object). ``--long`` prints the lines
only, without the table. A planner taking 2 s or more runs once here;
``benchmarks/fit_speed.py`` times one planner as the median of several runs (issue 14: best-fit
on Y_1). Exits cleanly with a message when the instance folder is absent; exits 1 after the
last line when a planner raised on an instance (its cell says ``error``).

How long it takes on this 2-core machine: the challenging set alone
(``--instances A,B,C,D,E,F,G,H,I,J,K``) about 8 min, measured; with the defaults several hours,
estimated: the large idealloc instances dominate, ``usmp-hill-climb`` (up to 500 attempts,
about 2 s each on pangu_2.6B, 7 s on S_1 and 40 s on Y_1 here), ``vela`` (more than 5 min on
resnet50, more than 6 min on pangu_2.6B) and ``usmp-greedy-by-size`` (70 s on pangu_2.6B).
``--planners`` or ``--family own`` with ``--instances`` keeps a run short.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from shared_sets import instance_files

from cpplan.io import read_problem
from cpplan.planners import info, names

SETS = {
    "challenging": [f"{c}.1048576" for c in "ABCDEFGHIJK"],
    "idealloc": ["resnet50", "G_1", "pangu_2.6B", "S_1", "Y_1"],
}
SEARCHES = {"local-search"}  # time-budgeted: run with --time-limit
TIMED = SEARCHES | {"portfolio"}  # result depends on the machine's speed: always --repeat runs
ONCE = {"usmp-hill-climb"}  # seeded and bounded by attempts: one run
REPEAT_UNDER = 2.0  # seconds: faster planners are timed as the median of --repeat runs


def instances(selected: list[str] | None) -> list[tuple[str, Path]] | None:
    """(short name, path) of the selected instances; None when the shared sets are absent."""
    out = []
    for set_name, stems in SETS.items():
        files = instance_files(set_name)
        if files is None:
            return None
        by_stem = {f.stem: f for f in files}
        for stem in stems:
            short = stem.removesuffix(".1048576")
            if selected and short not in selected and stem not in selected:
                continue
            if stem in by_stem:
                out.append((short, by_stem[stem]))
    return out


def run(name: str, problem, time_limit: float, repeat: int) -> tuple[str, float, str]:
    """(cell text, seconds, status) of planner ``name`` on ``problem``; status ``error`` when
    the planner raised (the cell names the error)."""
    fn = info(name)  # called as a user calls it: fn(problem, time_limit=...)
    options = {"time_limit": time_limit} if name in SEARCHES else {}
    times = []
    plans = []
    for k in range(max(repeat, 1)):
        # A new problem object per run: the plan checker remembers the plans it passed for the
        # same object, and a repeated run must be checked again, as a user's call is.
        fresh = problem.replace()
        t = time.perf_counter()
        try:
            plans.append(fn(fresh, **options))
        except Exception as e:  # (a CpplanError, or a bug: the row says which, the exit code 1)
            what = str(e).strip().splitlines()[0][:40] if str(e).strip() else ""
            return f"error: {type(e).__name__} {what}", time.perf_counter() - t, "error"
        times.append(time.perf_counter() - t)
        if name in ONCE or k + 1 >= repeat or (times[-1] >= REPEAT_UNDER and name not in TIMED):
            break
    plan = sorted(plans, key=lambda p: p.objective)[(len(plans) - 1) // 2]  # median height
    ratio = plan.objective / plan.lower_bound if plan.lower_bound else float("nan")
    return f"{ratio:.4f}", statistics.median(times), plan.status


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--planners", help="comma-separated planner names (default: all heuristics)")
    ap.add_argument("--family", choices=["own", "replica"], help="only this family")
    ap.add_argument("--instances", help="comma-separated instance names (A..K, resnet50, G_1, "
                    "pangu_2.6B, S_1, Y_1)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per fast planner (median)")
    ap.add_argument("--time-limit", type=float, default=3.0, help="seconds for the searches")
    ap.add_argument("--long", action="store_true",
                    help="the lines only (one per planner and instance), no table at the end")
    args = ap.parse_args()

    selected = [s.strip() for s in args.instances.split(",")] if args.instances else None
    todo = instances(selected)
    if todo is None:
        return 0
    if args.planners:
        planners = [p.strip() for p in args.planners.split(",") if p.strip()]
    else:
        families = [args.family] if args.family else ["own", "replica"]
        planners = [n for f in families for n in names(f)]
        # Per-order variants of best-fit / first-fit clutter the table; name them to run them.
        planners = [n for n in planners if not n.startswith(("best-fit-", "first-fit-"))]
    if not todo:
        print("no instances to run")
        return 0

    print(f"{len(planners)} planners x {len(todo)} instances; each line as its cell finishes "
          "(height / lower bound, median seconds, status)" + ("" if args.long else
                                                              "; the table at the end"),
          flush=True)
    print(f"{'instance':<10} {'planner':<38} {'height/LB':<10} {'seconds':>9} status", flush=True)
    cells: dict[tuple[str, str], str] = {}
    failed: list[str] = []
    for short, path in todo:
        problem = read_problem(path)
        for name in planners:
            text, seconds, status = run(name, problem, args.time_limit, args.repeat)
            cells[name, short] = f"{text} {seconds:.2f}s"
            if status == "error":
                failed.append(f"{name} on {short}")
            print(f"{short:<10} {name:<38} {text:<10} {seconds:8.3f}s {status}", flush=True)
    if not args.long:
        width = max(len(c) for c in cells.values()) + 1
        head = f"{'planner':<38}" + "".join(f"{short:>{width}}" for short, _ in todo)
        print("\nheight / lower bound and seconds (median of runs; usmp-hill-climb: one run)")
        print(head)
        for name in planners:
            print(f"{name:<38}" + "".join(f"{cells[name, short]:>{width}}" for short, _ in todo))
    if failed:
        print(f"{len(failed)} failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
