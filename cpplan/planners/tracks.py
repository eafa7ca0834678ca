"""Finishing a partial plan fast: the blocks still unplaced go into *tracks* above it.

When a greedy planner's time runs out part-way (:mod:`cpplan.planners.fit` places the largest
blocks first), the blocks left are small. They are finished here in O(m log m) for m blocks,
with no search: blocks are grouped by pool and by *size class* (sizes in one power-of-two
octave), and each class is partitioned into tracks by the classic interval-partitioning greedy
(blocks by start; a block reuses the track that became free first, else opens a new one: the
fewest tracks an interval graph needs, its clique number). Each track is as tall as its tallest
member and the tracks are stacked above the pool's current height, so no track meets a placed
block or another track. A class's tracks take at most twice the bytes of its own load (a member
is more than half its track), and that is the price of finishing in a fraction of a second what
best-fit would take seconds for.

A block's track offset is a multiple of its alignment in its pool (every track of a class is
aligned to the lcm of its members' alignments, and as tall as a multiple of it). A block with
several pieces occupies its span in its track (the bounding rectangle: valid, if loose).
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from ..blocks import Blocks
from ..errors import CapacityError

__all__ = ["finish_in_tracks"]


def finish_in_tracks(blocks: Blocks, pool_of: np.ndarray, offset: np.ndarray) -> None:
    """Place every block with ``pool_of == -1`` (none of them fixed) in tracks above the
    placed ones (module docstring), writing ``pool_of`` and ``offset`` (scaled) in place.

    A block goes to its first candidate pool without a capacity, else its first candidate.
    Raises :class:`CapacityError` when the tracks pass that pool's capacity.
    """
    todo = np.flatnonzero(pool_of < 0)
    if len(todo) == 0:
        return
    size = blocks.size
    caps = blocks.pool_capacity
    heights = np.zeros(blocks.n_pools, np.int64)
    placed = pool_of >= 0
    np.maximum.at(heights, pool_of[placed], offset[placed] + size[placed])
    if blocks.n_pools == 1:
        pool = np.zeros(len(todo), np.int64)
    else:
        pool = np.fromiter((next((p for p in blocks.pools[i] if caps[p] < 0), blocks.pools[i][0])
                            for i in todo.tolist()), np.int64, len(todo))
    z = size[todo]
    cls = np.where(z > 0, np.ceil(np.log2(np.maximum(z, 1))).astype(np.int64), -1)
    order = np.lexsort((todo, blocks.start[todo], cls, pool))
    # (keys >= 0: class -1, zero-size blocks, must not match the -1 before the first group)
    groups = np.flatnonzero(np.diff(pool[order] * 128 + cls[order] + 1, prepend=-1) != 0)
    for g, a in enumerate(groups.tolist()):
        b = int(groups[g + 1]) if g + 1 < len(groups) else len(order)
        members = todo[order[a:b]]
        p, c = int(pool[order[a]]), int(cls[order[a]])
        # (every member's alignment in the pool, lcm'd: the lcm of theirs and the pool's)
        align = math.lcm(int(np.lcm.reduce(blocks.alignment[members])),
                         int(blocks.pool_alignment[p]))
        base = -(-int(heights[p]) // align) * align
        pool_of[members] = p
        if c < 0:  # zero-size blocks occupy nothing: at an aligned offset, no track
            offset[members] = base
            continue
        free: list[tuple[int, int]] = []  # (end, track) of the tracks in use
        tracks = 0
        chosen = []
        for s, e in zip(blocks.start[members].tolist(), blocks.end[members].tolist(),
                        strict=True):
            if free and free[0][0] <= s:
                track = heapq.heappop(free)[1]
            else:
                track, tracks = tracks, tracks + 1
            heapq.heappush(free, (e, track))
            chosen.append(track)
        on = np.asarray(chosen, np.int64)
        # A track is as tall as its tallest member (rounded up to the alignment), not as its
        # class: sizes cluster (Y_1's many of 1.27 x 2**27 bytes), and rounding them up to the
        # power of two took up to 60 % more than they need.
        tall = np.zeros(tracks, np.int64)
        np.maximum.at(tall, on, size[members])
        tall = -(-tall // align) * align
        floor = base + np.cumsum(tall) - tall
        offset[members] = floor[on]
        heights[p] = base + int(tall.sum())
        if caps[p] >= 0 and heights[p] > caps[p]:
            raise CapacityError(f"the blocks left at the time limit do not fit in pool "
                                f"{blocks.problem.pools[p].name!r} above the others")
