"""The time-overlap index (:class:`cpplan.sweep.OverlapIndex`) on Y_1 (62185 buffers): < 1 s.

    python benchmarks/overlap_index.py [--instance Y_1] [--repeat 3] [--window 4000]

Prints the median seconds of ``--repeat`` runs of:

* ``index``: building the index over the blocks' spans (sort by start, ``searchsorted`` the ends);
  every overlapping pair is then known as a range, none expanded;
* ``count`` and ``degrees``: the number of overlapping pairs, and every block's number of
  neighbours, without expanding a pair;
* ``lists (window)``: the neighbour lists (CSR, ids in start order) of the ``--window`` blocks
  that start first from the busiest moment on: what a large neighbourhood search or the
  decoder asks for, expanded with ``repeat``/``cumsum``;
* ``pieces``: the index over the pieces of the blocks with the block as group (what the
  decoder uses when blocks have several pieces), built and counted.

The full neighbour lists of Y_1 are not built: they hold hundreds of millions of entries (the
count is printed), gigabytes that no caller needs at once. Exits cleanly with a message when the
shared instance folder is absent, with 1 when the instance named is not in it.

Takes about 10 s on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from cpplan.blocks import make_blocks
from cpplan.io import read_problem
from cpplan.sweep import OverlapIndex

try:
    from shared_sets import instance_files
except ImportError:  # run as a module from the repository root
    from benchmarks.shared_sets import instance_files


def timed(repeat: int, fn):
    """(median seconds, last result) of ``repeat`` calls of ``fn``."""
    times = []
    got = None
    for _ in range(repeat):
        t = time.perf_counter()
        got = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instance", default="Y_1")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--window", type=int, default=4000)
    args = ap.parse_args()
    files = instance_files("idealloc", [args.instance])
    if files is None:
        return 0
    if not files:
        print(f"no instance named {args.instance}")
        return 1
    blocks = make_blocks(read_problem(files[0]))
    n = len(blocks)
    print(f"{args.instance}: {n} blocks, {len(blocks.piece_start)} pieces "
          f"(median of {args.repeat})", flush=True)

    sec, index = timed(args.repeat, lambda: OverlapIndex(blocks.start, blocks.end))
    print(f"{'index':<16} {sec:8.3f} s", flush=True)
    sec, count = timed(args.repeat, index.count)
    print(f"{'count':<16} {sec:8.3f} s   {count} overlapping pairs "
          f"({2 * count * 8 / 1e9:.1f} GB as full int64 lists: not built)", flush=True)
    sec, deg = timed(args.repeat, index.degrees)
    print(f"{'degrees':<16} {sec:8.3f} s   max {int(deg.max())} neighbours", flush=True)

    # A window: the blocks that start first from the busiest moment on.
    pos = int(index.position[int(np.argmax(deg))])
    ids = index.ids[pos:pos + args.window]
    sub = OverlapIndex(blocks.start[ids], blocks.end[ids])
    sec, (ptr, _) = timed(args.repeat, lambda: sub.neighbours())
    entries = int(ptr[-1])
    print(f"{'lists (window)':<16} {sec:8.3f} s   {len(ids)} blocks, {entries} entries "
          f"({entries / max(sec, 1e-9) / 1e6:.0f} M entries/s)", flush=True)

    pblock = np.repeat(np.arange(n, dtype=np.int64), np.diff(blocks.piece_ptr))

    def pieces() -> int:
        pi = OverlapIndex(blocks.piece_start, blocks.piece_end,
                          keep=blocks.piece_hi > blocks.piece_lo, group=pblock)
        return pi.count()

    sec, _ = timed(args.repeat, pieces)
    print(f"{'pieces':<16} {sec:8.3f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
