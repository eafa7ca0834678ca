"""Buffers with gaps (MiniMalloc's ``gaps`` column) against MiniMalloc's binary, and the exact
probe with and without the branch-and-bound search.

Random instances, seeded: ``N`` buffers over ``N`` steps, sizes multiples of 16 up to 1 KiB; half
the buffers longer than 3 steps get one or two gaps, half of those with a window of their bytes
(the shapes of MiniMalloc's own tests: holes in time, and stairs). Per instance:

* ``cpplan solve in.csv -o plan.csv --time-limit T -q`` (command line, wall time): status and
  height; the plan it writes is checked (``cpplan check``).
* ``../shared/anchors/minimalloc --capacity=H`` at cpplan's height H ("fits?", its plan checked
  by ``cpplan check``; a "no" there is marked WRONG, cpplan's checked plan being the witness)
  and at H - 1 (where it must say no if cpplan proved H optimal; a "fits" there when cpplan did
  not prove H is a better plan than cpplan's).
* the exact probe in-process, ``fits at H?`` and ``at H - 1?``, with the branch-and-bound search
  racing (``dfs=True``) and with CP-SAT alone (``dfs=False``): the search packs blocks with
  several pieces by their bounding rectangle, so it cannot prove "no" for them; this measures
  what it costs or brings.

    python benchmarks/gaps.py [--buffers 30 80 200] [--seeds 1 2 3] [--time-limit 30]

Takes about 12 min on this 2-core machine with the defaults. Prints each instance's row as it
finishes; exits 1 after the last when an instance failed (cpplan's command failed or raised, a
plan failed ``cpplan check``, or MiniMalloc contradicted cpplan's proof).
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from cpplan import Buffer, Problem, make_blocks
from cpplan.deadline import PlanOptions
from cpplan.exact.search import probe
from cpplan.io import write_problem

ROOT = Path(__file__).resolve().parents[1]
ANCHOR = ROOT.parent / "shared" / "anchors" / "minimalloc"


def instance(seed: int, n: int) -> Problem:
    r = random.Random(seed)
    buffers = []
    for i in range(n):
        start = r.randrange(0, max(n - 2, 1))
        end = min(n, start + r.randrange(1, max(n // 4, 2) + 2))
        size = 16 * r.randrange(1, 65)
        gaps = []
        if end - start > 3 and r.random() < 0.5:
            cuts = sorted(r.sample(range(start, end + 1), r.choice([2, 4])))
            for lo, hi in zip(cuts[0::2], cuts[1::2], strict=True):
                if r.random() < 0.5:
                    a = 16 * r.randrange(0, size // 16)
                    gaps.append((lo, hi, a, 16 * r.randrange(a // 16, size // 16 + 1)))
                else:
                    gaps.append((lo, hi))
        buffers.append(Buffer(f"b{i}", size, start, end, gaps=gaps))
    return Problem(tuple(buffers), name=f"gaps-{n}-{seed}")


# Three buffers: A's bytes [8, 10) stay in use during step 1 and B, C fit side by side below
# them (A, B at 0, C at 4: height 10). A search placing blocks in non-decreasing offset order at
# the top of those below (MiniMalloc's) cannot reach it: C must sit above B and below A's window.
WINDOW = Problem((Buffer("A", 10, 0, 3, gaps=[(1, 2, 8, 10)]), Buffer("B", 4, 1, 2),
                  Buffer("C", 4, 1, 2)), name="window-3")


def cli(*args: str, timeout: float) -> tuple[int, str, float]:
    exe = shutil.which("cpplan") or str(Path(sys.executable).with_name("cpplan"))
    t0 = time.perf_counter()
    done = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout.strip() + done.stderr.strip(), time.perf_counter() - t0


def minimalloc(src: Path, capacity: int, out: Path, timeout: float) -> tuple[str, float]:
    t0 = time.perf_counter()
    try:
        done = subprocess.run([str(ANCHOR), f"--capacity={capacity}", f"--input={src}",
                               f"--output={out}", f"--timeout={int(timeout)}s"],
                              capture_output=True, text=True, timeout=timeout + 10)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    if done.returncode == 0 and out.exists():
        return "fits", seconds
    said = done.stdout + done.stderr
    if "DEADLINE_EXCEEDED" in said:
        return "timeout", seconds
    return ("no" if "NOT_FOUND" in said else "error"), seconds


def probes(problem: Problem, height: int, budget: float) -> str:
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    cells = []
    for h in (height, height - 1):
        for dfs in (True, False):
            t0 = time.perf_counter()
            out = probe(blocks, ids, {0: h // blocks.scale}, PlanOptions(budget).budget(),
                        dfs=dfs)
            cells.append(f"{out.status[:5]:5} {time.perf_counter() - t0:6.2f}s")
    return " | ".join(cells)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--buffers", type=int, nargs="*", default=[30, 80, 200])
    ap.add_argument("--seeds", type=int, nargs="*", default=[1, 2, 3])
    ap.add_argument("--time-limit", type=float, default=30.0)
    args = ap.parse_args()
    have_anchor = ANCHOR.exists()
    if not have_anchor:
        print(f"note: {ANCHOR} is absent; MiniMalloc columns skipped")
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"{'instance':14} {'cpplan (lower bound)':32} {'minimalloc at H':22} {'at H-1':16} "
          "probe H: dfs+cp | cp alone | H-1: dfs+cp | cp alone", flush=True)
    bad = 0
    todo = [WINDOW, *(instance(seed, n) for n in args.buffers for seed in args.seeds)]
    for problem in todo:
        try:
            bad += row(problem, args, have_anchor)
        except Exception as e:  # (a command past its timeout too)
            print(f"{problem.name:14} FAILED: {type(e).__name__}: {e}", flush=True)
            bad += 1
    if bad:
        print(f"{bad} failure{'s' * (bad > 1)} (marked above)")
    return 1 if bad else 0


def row(problem: Problem, args: argparse.Namespace, have_anchor: bool) -> int:
    """Print ``problem``'s row; the number of failures in it."""
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        src, plan, mm = Path(tmp) / "p.csv", Path(tmp) / "plan.csv", Path(tmp) / "mm.csv"
        write_problem(problem, src)
        rc, out, secs = cli("solve", str(src), "-o", str(plan), "-q", "--time-limit",
                            str(args.time_limit), timeout=args.time_limit + 60)
        if rc != 0:
            print(f"{problem.name:14} cpplan failed: {out}", flush=True)
            return 1
        status, height = out.split(":")[0], int(out.split("height ")[1].split(",")[0])
        bound = out.split("lower bound ")[1].split(",")[0]
        checked, _, _ = cli("check", str(src), str(plan), timeout=60)
        bad += checked != 0
        mine = f"{status:8} {height:6} ({bound:>6}) {secs:5.1f}s" + (
            "" if checked == 0 else " INVALID")
        at_h = at_below = "-"
        if have_anchor:
            verdict, msecs = minimalloc(src, height, mm, args.time_limit)
            if verdict == "fits":
                checked, _, _ = cli("check", str(src), str(mm), timeout=60)
                verdict += "" if checked == 0 else " INVALID"
                bad += checked != 0
            if verdict == "no":  # cpplan's checked plan fits at H: a wrong "no"
                verdict = "no(WRONG)"
            at_h = f"{verdict:8} {msecs:6.2f}s"
            verdict, msecs = minimalloc(src, height - 1, mm, args.time_limit)
            if verdict == "fits" and status == "optimal":  # against cpplan's proof
                verdict = "fits(WRONG)"
                bad += 1
            at_below = f"{verdict:8} {msecs:6.2f}s"
        print(f"{problem.name:14} {mine:32} {at_h:22} {at_below:16} "
              f"{probes(problem, height, args.time_limit)}", flush=True)
    return bad


if __name__ == "__main__":
    sys.exit(main())
