"""The tiling search alone (:func:`cpplan.exact.tiling.tile`), deterministic, on perfect packings:
what it answers, in how many nodes, at how many nodes a second.

Deterministic mode (no twin process, node budgets instead of the clock): the same code gives
the same nodes and the same packing on any machine, so two versions of the search can be
compared node for node (run this script with each one's ``PYTHONPATH``, alternating, and compare
the digests and the medians of nodes/s). Per instance and mode (``merged``: the blocks merged
into rectangles first, as solve does; ``plain``: the search of the blocks themselves) it prints
the status, the nodes, a digest of the offsets, the seconds and nodes/s; then the median of
nodes/s per mode.

    python benchmarks/tiling.py                           # perfect 2000 and aligned 120, seeds 0-7
    python benchmarks/tiling.py --family mosaic --sizes 250 --seeds 0 1 2 --nodes 200000

Each call's row is printed as it ends; a call that raises is marked FAILED in its row, and the
script exits 1 after the others. Takes about 30 s on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time

import numpy as np

from cpplan import make_blocks, objective_lower_bound
from cpplan.deadline import PlanOptions
from cpplan.exact.tiling import tile
from cpplan.perfect import FAMILIES


def run(problem, merge: bool, nodes: int) -> tuple[str, int, str, float]:
    """(status, nodes, digest of the offsets, seconds) of one deterministic call."""
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    height = objective_lower_bound(blocks) // blocks.scale
    budget = PlanOptions(workers=1, deterministic=True).budget()
    stats: dict = {}
    t0 = time.perf_counter()
    out = tile(blocks, ids, height, budget, node_budget=nodes, stats=stats, merge=merge)
    seconds = time.perf_counter() - t0
    digest = "-" if out.offsets is None else \
        hashlib.sha1(np.asarray(out.offsets, np.int64).tobytes()).hexdigest()[:10]
    return out.status, int(stats.get("nodes", 0)), digest, seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", default=None, choices=sorted(FAMILIES),
                    help="one family (default: perfect 2000 and aligned perfect 120)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000])
    ap.add_argument("--aligned", action="store_true")
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(8)))
    ap.add_argument("--nodes", type=int, default=100_000, help="node budget per call")
    ap.add_argument("--modes", nargs="+", default=["merged", "plain"],
                    choices=["merged", "plain"])
    args = ap.parse_args()
    if args.family is None:
        cases = [("perfect", 2000, False), ("perfect", 120, True)]
    else:
        cases = [(args.family, n, args.aligned) for n in args.sizes]
    rates: dict[str, list[float]] = {m: [] for m in args.modes}
    print(f"{'instance':26} {'mode':7} {'status':>10} {'nodes':>8} {'digest':>11} "
          f"{'seconds':>8} {'nodes/s':>8}", flush=True)
    failed: list[str] = []
    for family, n, aligned in cases:
        for seed in args.seeds:
            problem = FAMILIES[family](n, seed=seed, aligned=aligned)
            for mode in args.modes:
                try:
                    status, nodes, digest, seconds = run(problem, mode == "merged", args.nodes)
                except Exception as e:
                    failed.append(f"{problem.name} {mode}")
                    print(f"{problem.name:26} {mode:7} FAILED: {type(e).__name__}: {e}",
                          flush=True)
                    continue
                rate = nodes / seconds if seconds > 0 else 0.0
                if nodes >= 1000:  # (rates of a few nodes are noise)
                    rates[mode].append(rate)
                print(f"{problem.name:26} {mode:7} {status:>10} {nodes:>8} {digest:>11} "
                      f"{seconds:>8.2f} {rate:>8.0f}", flush=True)
    for mode, got in rates.items():
        if got:
            print(f"median nodes/s, {mode}: {statistics.median(got):.0f} "
                  f"({len(got)} calls of 1000 nodes or more)")
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
