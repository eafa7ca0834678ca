"""The exact engine's two methods side by side on one decision: "do the blocks fit at H?".

    python benchmarks/dfs.py                       # challenging set at capacity 1048576
    python benchmarks/dfs.py --set idealloc resnet50 G_1   # at the max-load L
    python benchmarks/dfs.py --methods dfs race    # skip the (slow) CP-SAT-alone column

Per instance and method, the answer (feasible / infeasible / unknown) and the seconds it took:
``dfs`` is :func:`cpplan.exact.dfs.fit` alone (one thread), ``cpsat`` the raced CP-SAT probe
without it (2 workers), ``race`` the probe as :func:`cpplan.solve.solve` runs it (both).
Every "feasible" answer is checked by building the plan; a method that raises or whose plan
fails the check is marked FAILED in its cell, and the script exits 1 after the other instances.

Then the DFS's speed in nodes a second over the instances (median and least): what
``cpplan.exact.dfs.DFS_NODES_PER_SECOND`` (the rate its nodes are charged at in deterministic
mode) stands for. Takes about 5 min on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
from shared_sets import SETS, instance_files

from cpplan.blocks import make_blocks
from cpplan.bounds import max_load
from cpplan.deadline import PlanOptions
from cpplan.exact.dfs import fit
from cpplan.exact.search import probe
from cpplan.io import read_problem


def run(method: str, blocks, ids, h: int, limit: float, workers: int
        ) -> tuple[str, float, str, int]:
    control = PlanOptions(limit, workers=workers).budget()
    t = time.perf_counter()
    stats: dict = {}
    if method == "dfs":
        out = fit(blocks, ids, h, control.within(limit), stats=stats)
    else:
        out = probe(blocks, ids, {0: h}, control.within(limit), dfs=method == "race")
    seconds = time.perf_counter() - t
    if out.status == "feasible":
        plan = blocks.to_plan(out.pools, out.offsets, planner=method)  # checked
        assert plan.height <= h * blocks.scale
    return out.status, seconds, out.detail, stats.get("nodes", 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("names", nargs="*", help="instance names (file stem prefix); default all")
    ap.add_argument("--set", choices=sorted(SETS), default="challenging")
    ap.add_argument("--methods", nargs="+", default=["dfs", "cpsat", "race"],
                    choices=["dfs", "cpsat", "race"])
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--capacity", type=int, default=1048576,
                    help="height asked on the challenging set (idealloc: the max-load)")
    args = ap.parse_args()
    files = instance_files(args.set, args.names)
    if files is None:
        return 0
    print(f"time limit {args.time_limit}s per method, workers {args.workers}")
    print(f"{'instance':<12}{'blocks':>7}{'height':>13}" +
          "".join(f"{m:>24}" for m in args.methods) + "   winner of the race", flush=True)
    failed: list[str] = []
    solved: dict[str, list[float]] = {m: [] for m in args.methods}
    rates: list[float] = []  # the DFS's nodes a second, per instance
    for f in files:
        problem = read_problem(f)
        blocks = make_blocks(problem)
        if args.set == "challenging":
            h = args.capacity // blocks.scale
        else:
            h = -(-max_load(problem)[problem.pools[0].name].bytes // blocks.scale)
        ids = np.arange(len(blocks))
        cells, winner = [], ""
        for m in args.methods:
            try:
                status, seconds, detail, nodes = run(m, blocks, ids, h, args.time_limit,
                                                     args.workers)
            except Exception as e:  # (an invalid plan too: to_plan checks it)
                failed.append(f"{f.stem.split('.')[0]} {m}: {type(e).__name__}: {e}")
                cells.append("FAILED")
                continue
            cells.append(f"{status} {seconds:7.2f}s")
            if status != "unknown":
                solved[m].append(seconds)
            if m == "race":
                winner = detail
            if m == "dfs" and nodes:
                rates.append(nodes / seconds)
        print(f"{f.stem.split('.')[0]:<12}{len(blocks):>7}{h * blocks.scale:>13}" +
              "".join(f"{c:>24}" for c in cells) + f"   {winner}", flush=True)
    for m, times in solved.items():
        med = statistics.median(times) if times else float("nan")
        print(f"{m}: answered {len(times)} of {len(files)}, median {med:.2f}s, "
              f"{sum(times):.1f}s in all")
    if rates:  # (what dfs.DFS_NODES_PER_SECOND, the deterministic clock's rate, stands for)
        print(f"dfs: {statistics.median(rates):,.0f} nodes a second (median; least "
              f"{min(rates):,.0f})")
    for why in failed:
        print(f"FAILED {why}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
