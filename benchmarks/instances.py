"""Every problem in instances/ through the solver: a checked plan and its status.

    python benchmarks/instances.py [--time-limit S]

Prints per instance: buffers, aliases, lower bound, height, status, gap, seconds.
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
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--time-limit", type=float, default=10.0)
    args = ap.parse_args()
    files = sorted(p for p in ROOT.rglob("*") if p.suffix in (".json", ".csv"))
    print(f"{'instance':<40}{'buffers':>8}{'aliases':>8}{'lower bound':>14}{'height':>14}"
          f"{'status':>10}{'gap %':>8}{'s':>7}")
    for f in files:
        problem = read_problem(f)
        t = time.perf_counter()
        plan = solve(problem, time_limit=args.time_limit)
        s = time.perf_counter() - t
        assert not check(problem, plan), f"{f}: invalid plan"
        gap = "-" if plan.gap is None else f"{100 * plan.gap:.3f}"
        print(f"{str(f.relative_to(ROOT)):<40}{len(problem.buffers):>8}{len(problem.aliases):>8}"
              f"{plan.lower_bound:>14}{plan.objective:>14}{plan.status:>10}{gap:>8}{s:>7.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
