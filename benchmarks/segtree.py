"""The one exception to cpplan's shared segment trees (:mod:`cpplan.segtree`), measured: the
placer's occupancy tree and its placement loop are written in C
(``cpplan/planners/_occupancy.c``).

Times best-fit's placement in size order with :class:`cpplan.planners.placer.Placer` and with
the same rule computed in numpy without a tree: the placed pieces that share a moment with the
block come from the static :class:`cpplan.planners.placer.PieceIndex`, and the offset from
:func:`cpplan.planners.placer.choose_shifted` (cpplan's placer before the tree, for a few
thousand blocks). Both on the same blocks, alternating; prints the median of each and their
ratio, and exits 1 when the two heights differ. Instances: random schedules of 1000 and 3000
buffers, a perfect packing of 10000, and idealloc's Y_1 (62185 buffers) where the public sets
are (the numpy side takes about 12 s a run there).

    python benchmarks/segtree.py [--repeat 3]

Takes about a minute on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np
from shared_sets import SHARED

from cpplan.blocks import Blocks, make_blocks
from cpplan.io import read_problem
from cpplan.perfect import perfect_packing
from cpplan.planners.fit import order_blocks
from cpplan.planners.placer import PieceIndex, Placer, choose_shifted
from cpplan.problem import Problem
from cpplan.random_problems import random_problem


def in_c(blocks: Blocks, order: np.ndarray) -> int:
    placer = Placer(blocks)
    placer.place_order(order, "best")
    return int(placer.heights().max())


def in_numpy(blocks: Blocks, order: np.ndarray) -> int:
    """Best-fit over ``order`` for blocks of one piece in one pool without capacity."""
    index = PieceIndex(blocks)
    lo = np.zeros(len(blocks), np.int64)
    hi = np.zeros(len(blocks), np.int64)
    placed = np.zeros(len(blocks), bool)
    top = 1 << 60
    for i in order.tolist():
        ids = index.overlapping(int(blocks.start[i]), int(blocks.end[i]))
        ids = ids[placed[ids]]
        size = int(blocks.size[i])
        off = choose_shifted(lo[ids], hi[ids], top, int(blocks.alignment[i]), "best", size - 1,
                             0) if size else 0
        lo[i], hi[i], placed[i] = off, off + size, True
    return int(hi.max())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
          flush=True)
    problems: list[Problem] = [random_problem(1000, seed=1), random_problem(3000, seed=1),
                               perfect_packing(10_000, seed=0)]
    y1 = SHARED / "idealloc" / "Y_1.csv"
    if y1.exists():
        problems.append(read_problem(y1))
    else:
        print(f"skipped Y_1: {y1} is absent")
    failed = False
    for problem in problems:
        blocks = make_blocks(problem)
        if len(blocks.piece_start) != len(blocks) or blocks.n_pools != 1:
            print(f"{problem.name}: skipped (blocks of several pieces or pools)")
            continue
        order = order_blocks(blocks, "size")
        times: dict[str, list[float]] = {"C tree": [], "numpy": []}
        heights: dict[str, set[int]] = {"C tree": set(), "numpy": set()}
        for _ in range(max(args.repeat, 1)):
            for name, run in (("C tree", in_c), ("numpy", in_numpy)):
                t0 = time.perf_counter()
                heights[name].add(run(blocks, order))
                times[name].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{problem.name or 'problem'} ({len(blocks)} blocks): C tree {med['C tree']:.3f} s,"
              f" numpy {med['numpy']:.3f} s, numpy / C tree {med['numpy'] / med['C tree']:.1f}; "
              f"heights {sorted(heights['C tree'])} / {sorted(heights['numpy'])}", flush=True)
        if heights["C tree"] != heights["numpy"]:
            print("FAILED: the heights differ")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
