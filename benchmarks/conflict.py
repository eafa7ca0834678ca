"""How long explaining an infeasibility takes: irreducible conflicts on random problems.

Problems of N buffers (sizes 1-39, lifetimes of 1-5 steps starting in [0, 20), alignments 1, 4
or 8) with the capacity set to their max-load: many do not fit, and not because of one moment's
load, so the set comes from the exact engine's deletion filter. Prints, per seed, the seconds,
the verdict and the size of the set.

    python benchmarks/conflict.py [--buffers 50] [--seeds 3 4 5 11 12 13] [--deterministic]

Takes about 10 s on this 2-core machine with the defaults. Exits 1 when a seed raises
(after the other seeds).
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from cpplan import Buffer, Problem
from cpplan.bounds import max_load
from cpplan.deadline import PlanOptions
from cpplan.exact.conflict import irreducible_conflict


def instance(seed: int, n: int) -> Problem:
    r = random.Random(seed)
    buffers = []
    for i in range(n):
        start = r.randrange(0, 20)
        buffers.append(Buffer(f"b{i}", r.randrange(1, 40), start, start + r.randrange(1, 6),
                              alignment=r.choice([1, 1, 4, 8])))
    problem = Problem(tuple(buffers))
    return problem.with_capacity({"default": max_load(problem)["default"].bytes})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--buffers", type=int, default=50)
    ap.add_argument("--seeds", type=int, nargs="*", default=[3, 4, 5, 11, 12, 13])
    ap.add_argument("--deterministic", action="store_true")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds per seed at most")
    args = ap.parse_args()
    total = 0.0
    failed = []
    print(f"{'seed':>4} {'seconds':>8}  verdict", flush=True)
    for seed in args.seeds:
        problem = instance(seed, args.buffers)
        t = time.perf_counter()
        try:
            found = irreducible_conflict(problem, PlanOptions(args.budget,
                                                              deterministic=args.deterministic))
        except Exception as e:
            failed.append(seed)
            print(f"{seed:>4} {time.perf_counter() - t:8.2f}  FAILED: {type(e).__name__}: {e}",
                  flush=True)
            continue
        took = time.perf_counter() - t
        total += took
        what = "fits (no conflict)" if found is None else \
            f"{len(found.buffers)} buffers, {found.how}, " \
            f"{'irreducible' if found.irreducible else 'not shown irreducible'}"
        print(f"{seed:>4} {took:8.2f}  {what}", flush=True)
    print(f"total {total:.2f} s")
    if failed:
        print(f"failed: seed{'s' * (len(failed) > 1)} {' '.join(map(str, failed))}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
