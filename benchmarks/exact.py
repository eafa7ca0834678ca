"""The exact engine on the public instance sets: what it proves, how fast, how close.

    python benchmarks/exact.py fit                 # challenging set: "fits in 1048576?"
    python benchmarks/exact.py minimise C D J      # minimise height: proofs, bounds, gaps
    python benchmarks/exact.py minimise --set idealloc resnet50 G_1

Prints one row per instance (height, lower bound, status, gap, seconds) and, for ``fit``, how
many were proven to fit and the median time, beside MiniMalloc's reference figures from
shared/benchmarks/README.md (3.8 s median per instance, 33 s for all 11, 2-core machine).
An instance whose solve raises or whose plan fails ``cpplan.plan.check`` is marked FAILED, and
the script exits 1 after the others.

Takes about 45 s on this 2-core machine for ``fit``; ``minimise`` takes up to ``--time-limit``
per instance (``minimise C D J``: about 2 min; ``--set idealloc minimise resnet50 G_1``: 2 s).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from shared_sets import SETS, instance_files

from cpplan.bounds import max_load
from cpplan.io import read_problem
from cpplan.plan import check
from cpplan.solve import solve


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("mode", choices=["fit", "minimise"])
    ap.add_argument("names", nargs="*", help="instance names (file stem prefix); default all")
    ap.add_argument("--set", choices=sorted(SETS), default="challenging")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--capacity", type=int, default=1048576, help="for fit mode")
    args = ap.parse_args()
    files = instance_files(args.set, args.names)
    if files is None:
        return 0
    print(f"mode {args.mode}, time limit {args.time_limit}s, workers {args.workers}")
    print(f"{'instance':<12}{'buffers':>8}{'max-load':>12}{'height':>12}{'lower bound':>13}"
          f"{'status':>12}{'gap %':>9}{'seconds':>9}", flush=True)
    times, proven = [], 0
    failed: list[str] = []
    for f in files:
        problem = read_problem(f)
        if args.mode == "fit":
            problem = problem.with_capacity({problem.pools[0].name: args.capacity})
        name = f.stem.split('.')[0]
        t = time.perf_counter()
        try:
            plan = solve(problem, time_limit=args.time_limit, workers=args.workers,
                         goal=args.mode)
        except Exception as e:
            failed.append(name)
            print(f"{name:<12}{len(problem.buffers):>8}  FAILED: {type(e).__name__}: {e}",
                  flush=True)
            continue
        seconds = time.perf_counter() - t

        load = max_load(problem)[problem.pools[0].name].bytes
        ok = plan.status in ("optimal", "feasible")
        wrong = check(problem, plan) if ok else []
        if wrong:
            failed.append(name)
            print(f"{name:<12}{len(problem.buffers):>8}  FAILED: invalid plan: {wrong[0]}",
                  flush=True)
            continue
        if args.mode == "fit" and ok:
            proven += 1
            times.append(seconds)
        elif args.mode == "minimise" and plan.status == "optimal":
            proven += 1
        gap = "-" if plan.gap is None else f"{100 * plan.gap:.3f}"
        lb = "-" if plan.lower_bound is None else plan.lower_bound
        height = plan.objective if plan.placements else "-"
        print(f"{name:<12}{len(problem.buffers):>8}{load:>12}{height:>12}"
              f"{lb:>13}{plan.status:>12}{gap:>9}{seconds:>9.2f}", flush=True)
    if args.mode == "fit":
        med = statistics.median(times) if times else float("nan")
        print(f"proven to fit: {proven} of {len(files)}; median {med:.2f}s over those, "
              f"{sum(times):.1f}s in all (MiniMalloc: 11 of 11, median 3.8s, 33s in all)")
    else:
        print(f"proven optimal: {proven} of {len(files)}")
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
