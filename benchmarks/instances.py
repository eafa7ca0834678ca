"""Every problem in instances/ through the solver: a checked plan and its status.

    python benchmarks/instances.py [--time-limit S]

Prints per instance, as it finishes: buffers, aliases, lower bound, height, status, gap,
seconds. An instance whose solve raises or whose plan fails ``cpplan.plan.check`` is marked
FAILED, and the script exits 1 after the others.

Takes about 3 s on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from cpplan.io import read_problem
from cpplan.plan import check
from cpplan.solve import solve

ROOT = Path(__file__).resolve().parents[1] / "instances"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time-limit", type=float, default=10.0)
    args = ap.parse_args()
    files = sorted(p for p in ROOT.rglob("*") if p.suffix in (".json", ".csv"))
    print(f"{'instance':<40}{'buffers':>8}{'aliases':>8}{'lower bound':>14}{'height':>14}"
          f"{'status':>10}{'gap %':>8}{'s':>7}", flush=True)
    failed = []
    for f in files:
        name = str(f.relative_to(ROOT))
        try:
            problem = read_problem(f)
            t = time.perf_counter()
            plan = solve(problem, time_limit=args.time_limit)
            s = time.perf_counter() - t
            wrong = check(problem, plan)
        except Exception as e:
            failed.append(name)
            print(f"{name:<40}FAILED: {type(e).__name__}: {e}", flush=True)
            continue
        if wrong:
            failed.append(name)
            print(f"{name:<40}FAILED: invalid plan: {wrong[0]}", flush=True)
            continue
        gap = "-" if plan.gap is None else f"{100 * plan.gap:.3f}"
        print(f"{name:<40}{len(problem.buffers):>8}{len(problem.aliases):>8}"
              f"{plan.lower_bound:>14}{plan.objective:>14}{plan.status:>10}{gap:>8}{s:>7.2f}",
              flush=True)
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
