"""Find rectangles (time x bytes) that overlap, with one sweep over time.

This is the engine under the plan checker and the problem validator. It never compares all
pairs: events are swept in time order (ends before starts at the same moment: lifetimes are
half-open) while the live rectangles are kept in two sets:

* ``act``: disjoint *runs* sorted by their low byte, each one live rectangle or the union of
  live rectangles of one group that overlap one another (members of one alias block, which may
  share bytes). A new rectangle overlaps a contiguous range of runs, found by a binary search:
  the one just below it (if it reaches up past the new low) and those whose low is below the new
  high; meeting only runs of its own group, it joins them into one run. Every valid plan keeps
  all rectangles here, so an event costs a binary search plus the overlaps it reports (and,
  when a member of a run of several ends, sorting what is left of that run).
* ``extra``: rectangles that overlapped another group's run when they started (a violation).
  They are compared with each new rectangle one by one, and leave when they end, so a few
  violations early on do not slow the rest of the sweep.

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
    return overlaps_of(starts, ends, los, his, groups, limit=limit)


def overlaps_of(starts: np.ndarray, ends: np.ndarray, los: np.ndarray, his: np.ndarray,
                groups: np.ndarray, *, limit: int | None = None) -> list[tuple[int, int]]:
    """:func:`find_overlaps` of the rectangles given as columns (int64 arrays): the same pairs.
    """
    if len(starts) < 2:
        return []
    ev_kind, ev_rect = events(starts, ends, his > los)
    lo_l, hi_l, grp_l = los.tolist(), his.tolist(), groups.tolist()

    pairs: list[tuple[int, int]] = []
    # ``act``: disjoint runs sorted by low byte, as one list ``lo0, hi0, lo1, hi1, ...``, and
    # what makes each: one rectangle, or a list of rectangles of one group that overlap one
    # another (members of an alias block).
    runs: list[int] = []
    made: list[int | list[int]] = []
    extra: list[int] = []  # live rectangles that overlapped another group's run when they started
    in_extra: set[int] = set()
    for kind, r in zip(ev_kind, ev_rect, strict=True):
        lo = lo_l[r]
        if kind == 0:
            if in_extra and r in in_extra:
                in_extra.discard(r)
                extra.remove(r)
                continue
            k = bisect_right(runs, lo) >> 1  # (runs are disjoint: the one holding r)
            of = made[k]
            if isinstance(of, int):
                del runs[2 * k:2 * k + 2]
                del made[k]
            else:
                of.remove(r)
                runs[2 * k:2 * k + 2], made[k:k + 1] = _joined(of, lo_l, hi_l)
            continue
        hi, g = hi_l[r], grp_l[r]
        i = bisect_right(runs, lo)
        if not i & 1 and (i == len(runs) or runs[i] >= hi):
            # The common case (every event of a valid plan): it meets no run.
            runs[i:i] = (lo, hi)
            made.insert(i >> 1, r)
            if not extra:
                continue
            found: list[int] = []
        else:
            a = i >> 1  # the runs it meets: a .. b - 1
            b = a + 1
            while 2 * b < len(runs) and runs[2 * b] < hi:
                b += 1
            members = [x for k in range(a, b) for x in _members(made[k])]
            if all(grp_l[x] == g for x in members):  # its own block's: one run with them
                members.append(r)
                runs[2 * a:2 * b] = (min(lo, runs[2 * a]), max(hi, runs[2 * b - 1]))
                made[a:b] = [members]
                found = []
            else:
                found = [x for x in members if lo_l[x] < hi and hi_l[x] > lo]
                extra.append(r)
                in_extra.add(r)
        if extra:
            found.extend(x for x in extra if x != r and lo_l[x] < hi and hi_l[x] > lo)
        for x in found:
            if grp_l[x] != g:
                pairs.append((x, r))
                if limit is not None and len(pairs) >= limit:
                    return pairs
    return pairs


def _members(of: int | list[int]) -> list[int]:
    return [of] if isinstance(of, int) else of


def _joined(members: list[int], lo_l: list[int], hi_l: list[int]
            ) -> tuple[list[int], list[int | list[int]]]:
    """The runs (``lo, hi, ...``) and what makes each, of ``members`` (rectangles of one group,
    at least one): the disjoint unions of those that overlap one another."""
    members.sort(key=lo_l.__getitem__)
    runs: list[int] = []
    made: list[int | list[int]] = []
    for x in members:
        if runs and lo_l[x] < runs[-1]:
            runs[-1] = max(runs[-1], hi_l[x])
            last = made[-1]
            made[-1] = [*_members(last), x]
        else:
            runs += (lo_l[x], hi_l[x])
            made.append(x)
    return runs, made


def disjoint(starts: np.ndarray, ends: np.ndarray, los: np.ndarray, his: np.ndarray) -> bool:
    """Whether no two rectangles (given as columns, int64 arrays) share a moment and a byte:
    :func:`overlaps_of` is empty, told by the same sweep without the names (no groups: every
    rectangle its own). Empty rectangles never overlap anything.

    The live rectangles are one sorted list ``lo0, hi0, lo1, hi1, ...`` (disjoint, so
    ``hi_k <= lo_k+1``); a new one overlaps none iff the binary search for its low lands
    between two rectangles (an even position) and its high reaches no further than the next
    low. The sweep stops at the first overlap. For a valid plan this is the whole check, with
    less to keep than :func:`overlaps_of`: no names, no groups.
    """
    if len(starts) < 2:
        return True
    kinds, ids = events(starts, ends, his > los)
    lo_l, hi_l = los.tolist(), his.tolist()
    runs: list[int] = []
    for kind, r in zip(kinds, ids, strict=True):
        lo = lo_l[r]
        if kind:
            hi = hi_l[r]
            i = bisect_right(runs, lo)
            if i & 1 or (i < len(runs) and runs[i] < hi):
                return False
            runs[i:i] = (lo, hi)
        else:
            # Lows are distinct; a high equal to this low (a rectangle just below, touching)
            # comes first, at an odd position.
            i = bisect_left(runs, lo)
            i += i & 1
            del runs[i:i + 2]
    return True


def first_overlap(rects: Sequence[Rect]) -> tuple[int, int] | None:
    """The first overlapping pair found, or ``None`` when the rectangles are disjoint."""
    found = find_overlaps(rects, limit=1)
    return found[0] if found else None


class OverlapIndex:
    """Which half-open intervals ``[starts[i], ends[i])`` share a moment: the one time-overlap
    index of cpplan (the decoder's conflict lists, the local search's neighbours, the
    branch-and-bound search's neighbour lists, the TFLite GPU replica's busy objects).

    Intervals are sorted by start (ties: lower id first); call ``k`` an interval's *position* in
    that order. Everything that starts at or after the start of position ``k`` and before its
    end shares a moment with it, and those are the contiguous positions ``k + 1 .. reach[k] - 1``
    (one ``searchsorted`` of the ends in the sorted starts). So the index itself is O(n log n)
    time and O(n) memory, and every overlapping pair is the pair ``(k, q)`` of its earlier
    position with a later one in that range, once: lists and pairs are expanded from the ranges
    with ``repeat``/``cumsum``, in O(pairs). Counting needs no expansion (:meth:`degrees`).

    Guaranteed: exactly the pairs of intervals that share a moment, each once, and nothing
    else; empty intervals (``end <= start``) and those where ``keep`` is false are left out;
    with ``group`` (one label per interval, e.g. the block of a piece), pairs inside one group
    are left out too (pieces of one block never conflict with each other).
    """

    def __init__(self, starts: np.ndarray, ends: np.ndarray, *, keep: np.ndarray | None = None,
                 group: np.ndarray | None = None) -> None:
        starts = np.asarray(starts, np.int64)
        ends = np.asarray(ends, np.int64)
        self.n = len(starts)
        ok = ends > starts if keep is None else np.asarray(keep, bool) & (ends > starts)
        ids = np.flatnonzero(ok)
        self.ids = ids[np.argsort(starts[ids], kind="stable")]  # interval at each position
        self.reach = np.searchsorted(starts[self.ids], ends[self.ids], side="left")
        self.group = None if group is None else np.asarray(group, np.int64)[self.ids]
        self.position = np.full(self.n, -1, np.int64)  # -1: left out
        self.position[self.ids] = np.arange(len(self.ids))

    def _later(self) -> np.ndarray:
        """For each position, how many later positions share a moment with it."""
        return self.reach - np.arange(len(self.ids)) - 1

    def count(self) -> int:
        """Number of overlapping pairs, before ``group`` is applied (no expansion)."""
        return int(self._later().sum())

    def degrees(self) -> np.ndarray:
        """Per interval id, how many other intervals share a moment with it (``group`` is
        ignored), in O(n): the later ones are a range, and position ``q`` is a later partner
        of every earlier position whose range covers it (a difference array)."""
        m = len(self.ids)
        later = self._later()
        cover = np.zeros(m + 1, np.int64)
        np.add.at(cover, np.arange(m) + 1, 1)
        np.add.at(cover, self.reach, -1)
        out = np.zeros(self.n, np.int64)
        out[self.ids] = later + np.cumsum(cover)[:m]
        return out

    def pair_positions(self, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Every overlapping pair as positions ``(k, q)``, ``k < q``, sorted by ``k`` then
        ``q`` (``group`` applied). Raises ValueError, before expanding anything, when there are
        more than ``limit`` pairs (``group`` not yet applied)."""
        later = self._later()
        total = int(later.sum())
        if limit is not None and total > limit:
            raise ValueError(f"{total} overlapping pairs, more than the limit of {limit}")
        k = np.repeat(np.arange(len(self.ids), dtype=np.int64), later)
        first = np.cumsum(later) - later  # where each position's run starts in ``k``
        q = np.arange(total, dtype=np.int64) - np.repeat(first, later) + k + 1
        if self.group is not None:
            other = self.group[k] != self.group[q]
            k, q = k[other], q[other]
        return k, q

    def pairs(self, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Every overlapping pair once, as interval ids ``(i, j)`` with ``i`` before ``j`` in
        start order; sorted by the positions of ``i``, then ``j``. ``limit`` as in
        :meth:`pair_positions`."""
        k, q = self.pair_positions(limit)
        return self.ids[k], self.ids[q]

    def directed(self, *, by: str = "start", rows: np.ndarray | None = None,
                 limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Both orientations of every pair, as interval ids ``(i, j)``, grouped by ``i``: by
        ``rows[i]`` (a label per interval, e.g. the block of a piece; default ``i`` itself),
        then by the position of ``i``, then by the position of ``j`` (``by="start"``) or by
        ``j`` (``by="index"``, only without ``rows``). ``limit`` counts unordered pairs, as in
        :meth:`pair_positions`.

        The order comes from one sort of int64 keys (no indirect sort), which is what makes
        the expansion run at millions of entries per second."""
        if by not in ("start", "index"):
            raise ValueError(f"unknown order {by!r}; expected 'start' or 'index'")
        k, q = self.pair_positions(limit)
        a = np.concatenate([k, q])  # positions
        b = np.concatenate([q, k])
        m = max(len(self.ids), 1)
        if by == "index":
            if rows is not None:
                raise ValueError("rows= goes with by='start'")
            n = max(self.n, 1)
            key = np.sort(self.ids[a] * n + self.ids[b])
            return key // n, key % n
        if rows is None:
            key = np.sort(self.ids[a] * m + b)
            return key // m, self.ids[key % m]
        label = np.asarray(rows, np.int64)[self.ids]
        top = int(label.max()) + 1 if len(label) else 1
        if top * m * m >= 1 << 62:  # the key would overflow: an indirect sort instead
            order = np.lexsort((b, a, label[a]))
            return self.ids[a[order]], self.ids[b[order]]
        key = np.sort((label[a] * m + a) * m + b)
        return self.ids[(key // m) % m], self.ids[key % m]

    def neighbours(self, *, by: str = "start", limit: int | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
        """Neighbour lists in CSR form ``(ptr, nbr)``: the intervals sharing a moment with
        interval ``i`` are ``nbr[ptr[i]:ptr[i + 1]]`` (ids), in start order (``by="start"``,
        ties by id) or by id (``by="index"``). Left-out intervals have none."""
        i, j = self.directed(by=by, limit=limit)
        ptr = np.zeros(self.n + 1, np.int64)
        np.cumsum(np.bincount(i, minlength=self.n), out=ptr[1:])
        return ptr, j


def split_lists(ptr: np.ndarray, values: np.ndarray) -> list[list[int]]:
    """CSR rows as Python lists (for the plain-Python hot loops of the decoder and the local
    search, where a list beats a numpy view)."""
    flat = values.tolist()
    bounds = ptr.tolist()
    return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

