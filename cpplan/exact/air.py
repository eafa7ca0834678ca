"""Air: the bytes a nearly tight packing leaves free, as blocks, so that it becomes a tiling.

The searches at zero slack (the hole search, :mod:`.refill`, and the tiling search,
:mod:`.tiling`) rebuild perfect packings of hundreds of blocks in a second, but only where the
load is the height at every moment: take 5 % of a perfect packing's 250 buffers away
(:func:`cpplan.perfect.thinned`) and neither applies, and every other search ends 1-15 %
above the optimum. Yet a packing of such blocks at the height is still a tiling, of the
blocks and of the bytes they leave free.

:func:`with_air` writes those free bytes as *air blocks*: the height less the load, moment by
moment (a step function), cut into rectangles, each starting where the free bytes grow and
ending where they shrink. Where they shrink by exactly an air block's size, that block ends (a
buffer taken away leaves a hole of its own size and lifetime), or by two or three blocks'
sizes, those end (buffers taken away may end together); else the youngest ones end, the last
cut to what is left (a stack), or the oldest (a queue). Sliced at every moment the free
bytes change, the air blocks may also move at each. The blocks and their air are at zero
slack, and a tiling of them, the air taken out, is a packing of the blocks at the height. The
converse does not hold: the free bytes of a packing may be cut into other rectangles, so a
"no" for the blocks with air is no proof for the blocks alone, and callers treat it as no
answer; each way of cutting (:data:`RULES`) is a different tiling, or none.

Closing the slack with filler rectangles is as old as strip packing's lower-bound proofs;
the cuts here are cpplan's own.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import replace

import numpy as np

from ..blocks import Blocks
from ..load import load_profile
from .dfs import plain, single_pool

__all__ = ["air_rectangles", "with_air", "RULES"]

#: The ways to cut the free bytes, in the order tried: where they shrink, how many air blocks
#: at most whose sizes add up to the bytes freed end first (buffers taken away may end
#: together); whether the youngest ends first (a stack) or the oldest (a queue); whether each
#: air block is sliced at every moment the free bytes change, so that they may move at each
#: (more blocks, but the tiling of fewer shapes). Cut one way, the blocks with their air may
#: not tile where cut another way they do.
RULES: tuple[tuple[int, bool, bool], ...] = ((1, True, False), (1, True, True), (1, False, False),
                                             (3, True, False), (3, True, True))
#: Where two or three air blocks are looked for that a shrink of the free bytes ends: the
#: first of two, or the first two of three, among so many of the youngest.
MATCH_AMONG = 32


def air_rectangles(blocks: Blocks, ids: np.ndarray, height: int, *,
                   rule: tuple[int, bool, bool] = RULES[0]) -> list[tuple[int, int, int]] | None:
    """The height (scaled) less the load of blocks ``ids`` over their span, cut into
    rectangles ``(start, end, size)`` (compressed time, scaled bytes) by ``rule`` (one of
    :data:`RULES`: how many blocks at most adding up to the bytes freed end first, whether
    the youngest ends first, whether each is sliced where the free bytes change): at every
    moment their sizes add up to the bytes left free. None where the load is above the
    height somewhere (no packing fits)."""
    matched, youngest, sliced = rule
    ids = np.asarray(ids, np.int64)
    mask = np.zeros(len(blocks), bool)
    mask[ids] = True
    load, _live = load_profile(blocks, mask)
    t0, t1 = int(blocks.start[ids].min()), int(blocks.end[ids].max())
    free = int(height) - load[t0:t1]
    if (free < 0).any():
        return None
    rects: list[tuple[int, int, int]] = []
    alive: list[list[int]] = []  # [start, size], oldest first
    before = 0
    for t, now in enumerate(free.tolist(), t0):
        if now > before:
            alive.append([t, now - before])
        elif now < before:
            need = before - now
            for k in sorted(_matching(alive, need, matched), reverse=True):
                start, size = alive.pop(k)
                rects.append((start, t, size))
                need -= size
            k = -1 if youngest else 0
            while need:  # (the last one ending cut to what is left)
                start, size = alive[k]
                cut = min(size, need)
                rects.append((start, t, cut))
                need -= cut
                if cut == size:
                    alive.pop(k)
                else:
                    alive[k][1] = size - cut
        before = now
    rects += [(start, t1, size) for start, size in alive]
    return _sliced(rects) if sliced else rects


def _matching(alive: list[list[int]], need: int, most: int) -> tuple[int, ...]:
    """The positions in ``alive`` (``[start, size]``, oldest first) of at most ``most`` air
    blocks whose sizes add up to ``need``, the fewest first: one of that size (the youngest),
    else all but the last among the :data:`MATCH_AMONG` youngest (the youngest first), the
    last the youngest block of the size still needed; none if no such."""
    sizes = [size for _start, size in alive]
    youngest = range(len(alive) - 1, -1, -1)
    at: dict[int, int] = {}  # (a size's youngest position)
    for y in youngest:
        at.setdefault(sizes[y], y)
    if most >= 1 and need in at:
        return (at[need],)
    for k in range(2, most + 1):
        for c in itertools.combinations(youngest[:MATCH_AMONG], k - 1):
            last = at.get(need - sum(sizes[i] for i in c))
            if last is not None and last not in c:
                return (*c, last)
    return ()


def _sliced(rects: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Air rectangles ``rects`` cut at every moment the free bytes change (where one of them
    starts or ends)."""
    moments = sorted({t for start, end, _size in rects for t in (start, end)})
    return [(a, b, size) for start, end, size in rects
            for a, b in itertools.pairwise(
                [start, *moments[bisect.bisect_right(moments, start):
                                 bisect.bisect_left(moments, end)], end])]


def with_air(blocks: Blocks, ids: np.ndarray, height: int, *, most: int,
             rule: tuple[int, bool, bool] = RULES[0]) -> tuple[Blocks, np.ndarray] | None:
    """Blocks ``ids`` and their air at ``height`` (scaled), cut by ``rule``
    (:func:`air_rectangles`): new blocks, ``blocks``' own and
    the air after them (plain rectangles in the same pool, alignment 1), and the ids of the
    first and the second together, at zero slack at ``height``. None where the blocks are not
    all plain in one pool (the searches at zero slack take no others), where the load is
    above ``height``, or where the air, not sliced, takes more than ``most`` blocks (then it
    is no tiling's small part, and the searches have little to go on)."""
    ids = np.asarray(ids, np.int64)
    pool = single_pool(blocks, ids) if len(ids) else None
    if pool is None or (blocks.fixed[ids] >= 0).any() or not plain(blocks, ids).all():
        return None
    whole = air_rectangles(blocks, ids, height, rule=(*rule[:2], False))
    if whole is None or not whole or len(whole) > most:
        return None
    rects = _sliced(whole) if rule[2] else whole
    start, end, size = (np.array(col, np.int64) for col in zip(*rects, strict=True))
    n, k = len(blocks), len(rects)
    none = np.full(k, -1, np.int64)
    ptr = int(blocks.piece_ptr[-1])

    def grown(a: np.ndarray, tail: np.ndarray) -> np.ndarray:
        return np.concatenate((a, tail.astype(a.dtype)))

    more = replace(
        blocks,
        root=grown(blocks.root, none), start=grown(blocks.start, start),
        end=grown(blocks.end, end), size=grown(blocks.size, size),
        alignment=grown(blocks.alignment, np.ones(k, np.int64)),
        fixed=grown(blocks.fixed, none), hint=grown(blocks.hint, none),
        pools=blocks.pools + ((pool,),) * k,
        piece_ptr=grown(blocks.piece_ptr, ptr + np.arange(1, k + 1)),
        piece_start=grown(blocks.piece_start, start), piece_end=grown(blocks.piece_end, end),
        piece_lo=grown(blocks.piece_lo, np.zeros(k, np.int64)),
        piece_hi=grown(blocks.piece_hi, size),
        member_ptr=grown(blocks.member_ptr, np.full(k, blocks.member_ptr[-1])),
        traffic=grown(blocks.traffic, np.zeros(k, np.int64)),
    )
    return more, np.concatenate((ids, np.arange(n, n + k, dtype=np.int64)))
