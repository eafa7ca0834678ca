"""Find rectangles (time x bytes) that overlap, with one sweep over time.

This is the engine under the plan checker and the problem validator. It never compares all
pairs: events are swept in time order while the live rectangles are kept sorted by their low
byte. As long as the live set is disjoint (every valid plan), a new rectangle can only collide
with its neighbours in that order, so each event costs a binary search. The first collision
(or a pair from the same group, which is allowed to overlap: members of one alias block) switches
the sweep to an exhaustive mode over the live set that reports every pair, so broken plans get
every violation listed, not just the first.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

import numpy as np

Rect = tuple[int, int, int, int, int]  # start, end, lo, hi, group


def find_overlaps(rects: Sequence[Rect], *, limit: int | None = None) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` of rectangles that share a moment and a byte, ``i`` placed first.

    Rectangles are half-open in both axes. Rectangles with the same ``group`` never count as
    overlapping; empty ones (``hi <= lo``) never overlap anything. ``limit`` stops early.
    """
    n = len(rects)
    if n < 2:
        return []
    arr = np.asarray(rects, dtype=np.int64).reshape(n, 5)
    starts, ends, los, his, groups = arr.T
    keep = np.nonzero((his > los) & (ends > starts))[0]
    # Ends before starts at the same moment: lifetimes are half-open.
    times = np.concatenate([ends[keep], starts[keep]])
    kinds = np.concatenate([np.zeros(len(keep), np.int8), np.ones(len(keep), np.int8)])
    which = np.concatenate([keep, keep])
    order = np.lexsort((kinds, times))
    ev_kind = kinds[order].tolist()
    ev_rect = which[order].tolist()
    lo_l, hi_l, grp_l = los.tolist(), his.tolist(), groups.tolist()

    pairs: list[tuple[int, int]] = []
    act_lo: list[int] = []
    act_id: list[int] = []
    full = False
    slot_of: dict[int, int] = {}
    s_lo = s_hi = s_grp = s_id = s_used = None
    free: list[int] = []
    top = 0

    def to_full() -> None:
        nonlocal full, s_lo, s_hi, s_grp, s_id, s_used, top
        full = True
        cap = max(16, len(act_id) * 2)
        s_lo = np.zeros(cap, np.int64)
        s_hi = np.zeros(cap, np.int64)
        s_grp = np.zeros(cap, np.int64)
        s_id = np.zeros(cap, np.int64)
        s_used = np.zeros(cap, bool)
        for k, r in enumerate(act_id):
            s_lo[k], s_hi[k], s_grp[k], s_id[k], s_used[k] = lo_l[r], hi_l[r], grp_l[r], r, True
            slot_of[r] = k
        top = len(act_id)

    for kind, r in zip(ev_kind, ev_rect, strict=True):
        lo, hi = lo_l[r], hi_l[r]
        if not full:
            if kind == 0:
                k = bisect_left(act_lo, lo)
                while act_id[k] != r:  # equal lows only appear transiently
                    k += 1
                del act_lo[k]
                del act_id[k]
                continue
            pos = bisect_right(act_lo, lo)
            clash = (pos > 0 and hi_l[act_id[pos - 1]] > lo) or (
                pos < len(act_lo) and act_lo[pos] < hi)
            if not clash:
                act_lo.insert(pos, lo)
                act_id.insert(pos, r)
                continue
            to_full()
        if kind == 0:
            k = slot_of.pop(r)
            s_used[k] = False
            free.append(k)
            continue
        m = top
        hit = np.nonzero(s_used[:m] & (s_lo[:m] < hi) & (s_hi[:m] > lo) & (s_grp[:m] != grp_l[r]))[0]
        for k in hit.tolist():
            pairs.append((int(s_id[k]), r))
            if limit is not None and len(pairs) >= limit:
                return pairs
        if free:
            k = free.pop()
        else:
            if top == len(s_lo):
                grow = len(s_lo)
                s_lo = np.concatenate([s_lo, np.zeros(grow, np.int64)])
                s_hi = np.concatenate([s_hi, np.zeros(grow, np.int64)])
                s_grp = np.concatenate([s_grp, np.zeros(grow, np.int64)])
                s_id = np.concatenate([s_id, np.zeros(grow, np.int64)])
                s_used = np.concatenate([s_used, np.zeros(grow, bool)])
            k = top
            top += 1
        s_lo[k], s_hi[k], s_grp[k], s_id[k], s_used[k] = lo, hi, grp_l[r], r, True
        slot_of[r] = k
    return pairs


def first_overlap(rects: Sequence[Rect]) -> tuple[int, int] | None:
    """The first overlapping pair found, or ``None`` when the rectangles are disjoint."""
    found = find_overlaps(rects, limit=1)
    return found[0] if found else None
