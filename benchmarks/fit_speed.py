"""How long one planner call takes in-process on an already-read problem: ``best-fit`` on Y_1
by default, the figure issue 14 asks to bring under 2 s (62185 buffers).

The call timed is what a user gets, ``registry.get(planner)(problem)``: blocks, orders,
placement, and the plan built and checked (:func:`cpplan.plan.ensure_valid`). The checker
remembers the last plans it passed for the very same problem object, so every run gets its own
copy of the problem (made outside the timing): a repeated run is checked again, as a first call
is. Prints the machine's load (``uptime``: 2 shared cores, so figures move with it), then per
file the median of ``--repeat`` runs, every run, and the plan's height.

    python benchmarks/fit_speed.py [FILE ...] [--planner best-fit] [--repeat 5]

Takes about 25 s on this 2-core machine with the defaults. A file named that is absent, or
a planner call that raises, is reported on its line and the script exits 1 after the others;
without the public sets (the default file) it says so and exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from shared_sets import SHARED

from cpplan.io import read_problem
from cpplan.planners import registry

DEFAULT = SHARED / "idealloc" / "Y_1.csv"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--planner", default="best-fit")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if not args.files and not DEFAULT.exists():
        print(f"skipped: {DEFAULT} is absent (python benchmarks/fetch_sets.py fetches the public "
              "sets)")
        return 0
    files = args.files or [DEFAULT]
    fn = registry.get(args.planner)
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
          flush=True)
    failed = []
    for path in files:
        if not path.exists():
            print(f"{path}: not found", flush=True)
            failed.append(str(path))
            continue
        try:
            problem = read_problem(path)
            runs = []
            for _ in range(max(args.repeat, 1)):
                fresh = problem.replace()  # a new object: ensure_valid checks its plan again
                t0 = time.perf_counter()
                plan = fn(fresh)
                runs.append(time.perf_counter() - t0)
        except Exception as e:
            print(f"{path.name}: FAILED: {type(e).__name__}: {e}", flush=True)
            failed.append(path.name)
            continue
        each = ", ".join(f"{t:.3f}" for t in runs)
        print(f"{path.name}: {args.planner}, {len(problem.buffers)} buffers, height "
              f"{plan.objective}, median {statistics.median(runs):.3f} s (runs: {each})",
              flush=True)
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
