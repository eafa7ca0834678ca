"""Tight blocks whose alignments differ: tiled with the alignments dropped, then placed again
in the tiling's order, each block aligned.

The hole search (:mod:`.refill`) reads a tiling's offsets from the order of the blocks alone,
so it declines blocks whose alignments differ; and the tiling search's classes of offsets
(:mod:`.dissection`) fail where equal sizes abound: on aligned perfect packings of 10000
buffers, blocks of one size swapped at a moment (which a tiling without alignments may always
do) leave merged blocks whose classes the tiling needs no longer there. Dropping the
alignments (:func:`unaligned`) is a relaxation: every aligned packing is a packing of the
relaxed blocks, so the relaxed blocks not fitting proves that the aligned ones do not either,
and a tiling of the relaxed blocks is a guide. :func:`realign` places the blocks again in its
order, the lowest first (first-fit, :class:`cpplan.planners.placer.Placer`), each at the
lowest offset of its alignment where it fits: the tiling comes back with the padding that the
alignments need. The order read from the top down is tried too; the lower of the two is kept.

It is a heuristic: the packing it gives may be above the height (the padding piles up), and
is then a plan to improve on, not an answer (``benchmarks/versus.py --families aligned-mosaic
aligned-realloc ...``: aligned perfect packings of every family, optimum known).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..blocks import Blocks
from ..errors import CapacityError
from ..planners.placer import Placer
from .outcome import Outcome

__all__ = ["aligned_apart", "unaligned", "realign", "realigned"]


def aligned_apart(blocks: Blocks, ids: np.ndarray, pool: int) -> bool:
    """Whether some of blocks ``ids`` have an alignment in ``pool`` beyond the scale (1,
    scaled): then a tiling's offsets, sums of the sizes below each block, may break it."""
    return any(blocks.align_in(i, pool) > 1 for i in np.asarray(ids).tolist())


def unaligned(blocks: Blocks) -> Blocks:
    """The same blocks with every alignment (and every pool's) 1: the relaxation. Kept with
    ``blocks`` (made once)."""
    made = blocks.__dict__.get("_unaligned")
    if made is None:
        made = dataclasses.replace(blocks, alignment=np.ones_like(blocks.alignment),
                                   pool_alignment=np.ones_like(blocks.pool_alignment))
        blocks.__dict__["_unaligned"] = made
    return made


def realign(blocks: Blocks, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray | None:
    """Offsets of blocks ``ids`` (one pool, plain) that keep every alignment and overlap
    nothing, from ``offsets``, a packing of them with their alignments dropped: placed with
    first-fit in the order of their offsets (the earliest start first among equals), and
    again in the order read from the top down; the lower of the two packings. None when a
    block fits under no capacity."""
    ids = np.asarray(ids, np.int64)
    offsets = np.asarray(offsets, np.int64)
    size = blocks.size[ids]
    top = int((offsets + size).max()) if len(ids) else 0
    best: np.ndarray | None = None
    for bottoms in (offsets, top - offsets - size):
        placer = Placer(blocks)
        try:
            placer.place_order(ids[np.lexsort((blocks.start[ids], bottoms))], "first")
        except CapacityError:
            continue
        got = placer.offset[ids]
        if best is None or (got + size).max() < (best + size).max():
            best = got.copy()
    return best


def realigned(blocks: Blocks, ids: np.ndarray, pool: int, relaxed: np.ndarray,
              height: int) -> Outcome:
    """:func:`realign` of ``relaxed`` (a packing of ``ids`` in ``pool`` without their
    alignments) as an answer at ``height``: ``feasible`` within it, else ``unknown`` with the
    packing (a plan above the height), or plain ``unknown`` (no packing under the
    capacity)."""
    offsets = realign(blocks, ids, relaxed)
    if offsets is None:
        return Outcome("unknown")
    pools = np.full(len(offsets), pool, np.int64)
    status = "feasible" if int((offsets + blocks.size[ids]).max()) <= height else "unknown"
    return Outcome(status, pools, offsets, detail="a tiling without alignments, realigned")
