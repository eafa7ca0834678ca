"""Find rectangles (time x bytes) that overlap, with one sweep over time.

This is the engine under the plan checker and the problem validator. It never compares all
pairs: events are swept in time order (ends before starts at the same moment: lifetimes are
half-open) while the live rectangles are kept in two sets:

* ``act``: pairwise disjoint, sorted by their low byte. A new rectangle overlaps a contiguous run
  of them, found by a binary search: the one just below it (if it reaches up past the new low)
  and those whose low is below the new high. Every valid plan keeps all rectangles here, so an
  event costs a binary search plus the overlaps it reports.
* ``extra``: rectangles that overlapped a member of ``act`` when they started (a violation, or a
  pair from the same group, which is allowed: members of one alias block). They are compared
  with each new rectangle one by one, and leave when they end, so a few violations early on do
  not slow the rest of the sweep.

Every overlapping pair is reported once, when the later of the two starts, so broken plans get
every violation listed, not just the first.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

import numpy as np

Rect = tuple[int, int, int, int, int]  # start, end, lo, hi, group


def events(starts: np.ndarray, ends: np.ndarray,
           mask: np.ndarray | None = None) -> tuple[list[int], list[int]]:
    """The sweep's events over half-open intervals ``[starts[i], ends[i])``: ``(kinds, ids)``
    in time order, kind 0 for an end and 1 for a start, ends before starts at the same moment
    (lifetimes are half-open). Empty intervals, and those where ``mask`` is false, are left out.
    """
    ok = ends > starts if mask is None else mask & (ends > starts)
    keep = np.nonzero(ok)[0]
    times = np.concatenate([ends[keep], starts[keep]])
    kinds = np.concatenate([np.zeros(len(keep), np.int8), np.ones(len(keep), np.int8)])
    which = np.concatenate([keep, keep])
    order = np.lexsort((kinds, times))
    return kinds[order].tolist(), which[order].tolist()


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
    ev_kind, ev_rect = events(starts, ends, his > los)
    lo_l, hi_l, grp_l = los.tolist(), his.tolist(), groups.tolist()

    pairs: list[tuple[int, int]] = []
    act_lo: list[int] = []  # disjoint live rectangles, sorted by low byte
    act_id: list[int] = []
    extra: list[int] = []  # live rectangles that overlapped ``act`` when they started
    in_extra: set[int] = set()
    for kind, r in zip(ev_kind, ev_rect, strict=True):
        lo, hi = lo_l[r], hi_l[r]
        if kind == 0:
            if r in in_extra:
                in_extra.discard(r)
                extra.remove(r)
            else:
                k = bisect_left(act_lo, lo)  # lows in ``act`` are distinct: it is disjoint
                del act_lo[k]
                del act_id[k]
            continue
        g = grp_l[r]
        found: list[int] = []
        pos = bisect_right(act_lo, lo)
        if pos > 0 and hi_l[act_id[pos - 1]] > lo:
            found.append(act_id[pos - 1])
        k = pos
        while k < len(act_lo) and act_lo[k] < hi:
            found.append(act_id[k])
            k += 1
        if found:
            extra.append(r)
            in_extra.add(r)
        else:
            act_lo.insert(pos, lo)
            act_id.insert(pos, r)
        found.extend(x for x in extra if x != r and lo_l[x] < hi and hi_l[x] > lo)
        for x in found:
            if grp_l[x] != g:
                pairs.append((x, r))
                if limit is not None and len(pairs) >= limit:
                    return pairs
    return pairs


def first_overlap(rects: Sequence[Rect]) -> tuple[int, int] | None:
    """The first overlapping pair found, or ``None`` when the rectangles are disjoint."""
    found = find_overlaps(rects, limit=1)
    return found[0] if found else None
