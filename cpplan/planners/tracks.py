"""Finishing a partial plan fast: the blocks still unplaced go into *tracks* above it.

When a greedy planner's time runs out part-way (:mod:`cpplan.planners.fit` places the largest
blocks first), the blocks left are small. They are finished here in O(m log m) for m blocks,
with no search:

1. Blocks are grouped by pool and by *size class* (sizes in one power-of-two octave).
2. Each class is partitioned into tracks by the classic interval-partitioning greedy (blocks
   by start; a block takes the lowest track free at its start, else opens a new one: the
   fewest tracks an interval graph needs, its clique number). A track is as tall as its
   tallest member, so a class's tracks take at most twice the bytes of its own load.
3. A class's tracks, one above the other, make a *band*. Bands go above the placed blocks, the
   largest class first, each as low as the bands below it allow on a coarse profile of time
   (:data:`BUCKETS` stretches). A band *stands* (its lowest track at its bottom) or *hangs*
   (upside down: its lowest track at its top), whichever leaves the profile lower. Classes
   crowd at different moments, and a band hung over a hollow of the profile takes no more
   room there than its members alive then: stacked flat instead, bands take the sum of their
   heights where the small blocks' own load needs only the most of them.

That is the price of finishing in a fraction of a second what best-fit would take seconds for.
No track meets a placed block or another band's track: every band lies above the profile of
everything before it, in every stretch of time where it has a member.

A block's track offset is a multiple of its alignment in its pool (every track of a class is
aligned to the lcm of its members' alignments, and as tall as a multiple of it). A block with
several pieces occupies its span in its track (the bounding rectangle: valid, if loose).
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from ..blocks import Blocks
from ..deadline import OutOfTime
from ..errors import CapacityError

__all__ = ["finish_in_tracks", "finish_cut_short", "BUCKETS"]

#: Stretches of time in the bands' profile (equal numbers of moments each): enough to tell
#: apart the moments where size classes crowd; a band's cost grows with them.
BUCKETS = 64


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
    # Largest class first in each pool; members by start (the partitioning's order).
    order = np.lexsort((todo, blocks.start[todo], -cls, pool))
    key = pool[order] * 128 - cls[order]
    groups = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    stretch = _stretches(blocks)
    profile: dict[int, np.ndarray] = {}  # pool -> its top in each stretch of time
    for g, a in enumerate(groups.tolist()):
        b = int(groups[g + 1]) if g + 1 < len(groups) else len(order)
        members = todo[order[a:b]]
        p, c = int(pool[order[a]]), int(cls[order[a]])
        # (every member's alignment in the pool, lcm'd: the lcm of theirs and the pool's)
        align = math.lcm(int(np.lcm.reduce(blocks.alignment[members])),
                         int(blocks.pool_alignment[p]))
        pool_of[members] = p
        if c < 0:  # zero-size blocks occupy nothing: at an aligned offset, no track
            offset[members] = -(-int(heights[p]) // align) * align
            continue
        sky = profile.setdefault(p, np.full(BUCKETS, heights[p], np.int64))
        track = _partition(blocks.start[members].tolist(), blocks.end[members].tolist())
        tall = np.zeros(int(track.max()) + 1, np.int64)
        np.maximum.at(tall, track, size[members])
        tall = -(-tall // align) * align
        floor = np.cumsum(tall) - tall  # each track's offset in the band
        offset[members] = _band(sky, stretch[blocks.start[members]],
                                stretch[blocks.end[members] - 1], floor[track],
                                (floor + tall)[track], int(tall.sum()), align)
        heights[p] = int(sky.max())
        if caps[p] >= 0 and heights[p] > caps[p]:
            raise CapacityError(f"the blocks left at the time limit do not fit in pool "
                                f"{blocks.problem.pools[p].name!r} above the others")


def finish_cut_short(blocks: Blocks, pool_of: np.ndarray, offset: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """A greedy placement the time limit cut short (``pool_of == -1`` for the blocks it did
    not reach), finished in tracks: new arrays, a valid placement of every block. Raises
    :class:`OutOfTime` when it cannot be finished so: fixed blocks not placed yet, or tracks
    past a capacity."""
    pool_of, offset = pool_of.copy(), offset.copy()
    if (blocks.fixed[pool_of < 0] >= 0).any():
        raise OutOfTime("the time limit ran out before the fixed blocks were placed")
    try:
        finish_in_tracks(blocks, pool_of, offset)
    except CapacityError:
        raise OutOfTime("the time limit ran out, and the blocks left do not fit") from None
    return pool_of, offset


def _stretches(blocks: Blocks) -> np.ndarray:
    """The stretch of time (``0 .. BUCKETS - 1``, equal numbers of moments) of each moment."""
    moments = max(len(blocks.times), 1)
    return np.arange(moments, dtype=np.int64) * BUCKETS // moments


def _partition(starts: list[int], ends: list[int]) -> np.ndarray:
    """The track of each interval (given by start): the lowest track free at its start (no
    interval in it still alive), a new one when none is. As many tracks as the most intervals
    alive at one moment."""
    busy: list[tuple[int, int]] = []  # (end, track) of the intervals alive
    free: list[int] = []  # tracks whose interval has ended
    opened = 0
    out = []
    for s, e in zip(starts, ends, strict=True):
        while busy and busy[0][0] <= s:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            track = heapq.heappop(free)
        else:
            track, opened = opened, opened + 1
        heapq.heappush(busy, (e, track))
        out.append(track)
    return np.asarray(out, np.int64)


def _band(sky: np.ndarray, first: np.ndarray, last: np.ndarray, low: np.ndarray,
          high: np.ndarray, height: int, align: int) -> np.ndarray:
    """The offsets of a band's members, each taking ``[low, high)`` of a band ``height`` tall
    during the stretches ``first .. last``: the band standing or hanging upside down, as low as
    it goes with every member above ``sky`` in each of its stretches, whichever leaves the
    profile lower (its highest point, then its sum). ``sky`` is raised to the band's members.
    """
    count = last - first + 1
    member = np.repeat(np.arange(len(first)), count)
    at = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count) + first[member]
    top = np.full(len(sky), -1, np.int64)  # the band's highest and lowest bytes per stretch
    np.maximum.at(top, at, high[member])
    bottom = np.full(len(sky), height, np.int64)
    np.minimum.at(bottom, at, low[member])
    used = top >= 0
    best: tuple[tuple[int, int], np.ndarray, np.ndarray] | None = None
    for lo, hi, flip in ((bottom, top, False), (height - top, height - bottom, True)):
        base = int((sky[used] - lo[used]).max())
        base = -(-base // align) * align
        raised = np.where(used, np.maximum(sky, base + hi), sky)
        key = (int(raised.max()), int(raised.sum()))
        if best is None or key < best[0]:
            best = (key, raised, base + (height - high if flip else low))
    assert best is not None
    sky[:] = best[1]
    return best[2]
