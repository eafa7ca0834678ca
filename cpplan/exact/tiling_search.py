"""The tiling search itself: a skyline filled valley by valley, with restarts
(:mod:`cpplan.exact.tiling` says what it infers and why, and calls it).

:class:`TilingSearch` holds one tight problem at one height (blocks in local time ``0..T``) and
runs restarts (:meth:`TilingSearch.run`); each restart is one depth-first search (``_search``)
over the decisions "this block at this corner of this valley" (or "waste this valley"), with:

* the skyline as segments (start -> end, start -> height, end -> start), and per valley its
  branching key in a heap; every change is written to an *undo log* first, one record per
  change, so that going back to a decision rolls the log back to that decision's mark. A record
  is a plain tuple (records are the hottest allocation: a named tuple costs five times as much
  to build), its first item one of the kinds below, which name its layout;
* the stack of decisions as :class:`_Frame` records;
* the slack per moment in a :class:`cpplan.segtree.RangeAddTree` (or :class:`_NoSlack` where
  it is zero everywhere).
"""

from __future__ import annotations

import bisect
import heapq
import time
from collections.abc import Callable

import numpy as np

from ..segtree import RangeAddTree

__all__ = ["TilingSearch", "LUBY_UNIT", "LUBY_FLOOR"]

LUBY_UNIT = 2  # nodes per block in the first restart's limit
LUBY_FLOOR = 2000  # nodes, at least (small problems may need a long run: a few seconds)
WALK = 64  # segments walked to find how far a corner's block may reach (beyond: no inference)
POLL_EVERY = 256  # nodes between looks at the clock and the stop flags
# Restarts keep the deepest search's choices but for this share of them, picked at random
# (phase saving, as in SAT solvers), and break ties between candidates with noise of this size
# (scores move by 1 to 3 a feature): perfect packings of 2000 buffers, 4 of 4 rebuilt in 25 s,
# against 0 of 4 in 60 s with fresh restarts and ties alone.
FORGET = 0.1
NOISE = 2.5
_INF = 1 << 62

# The kinds of undo records, ``(kind, ...)``, and what rolling one back restores:
SEGMENT = 0  # (SEGMENT, a, b, y): the segment starting at a ended at b at height y (b None: none)
SEGMENT_AT_END = 1  # (SEGMENT_AT_END, b, a): the segment ending at b started at a (a None: none)
VALLEY_KEY = 2  # (VALLEY_KEY, a, key): the valley at a had this branching key (None: none)
PLACED = 3  # (PLACED, i): block i was not placed
SLACK = 4  # (SLACK, a, b, d): d to add back to the slack of moments [a, b)
WALL_HULL = 5  # (WALL_HULL, t, lo, hi): the placed blocks of wall t spanned bytes [lo, hi)
#                (lo None: none was placed)


class _Frame:
    """One decision of the search: a valley and its options, the one being tried."""

    __slots__ = ("mark", "valley", "options", "next", "count", "causes", "span")

    def __init__(self, mark: int, valley: int, options: list[tuple], count: int) -> None:
        self.mark = mark  # the undo log's length before the decision
        self.valley = valley  # the valley's start
        self.options = options  # (block, offset), or (-1, height) for waste, best first
        self.next = 0  # the option to try next
        self.count = count  # blocks placed before the decision
        # Why its options failed: spans of moments, closed (every decision whose option
        # touches one may be the reason).
        self.causes: list[tuple[int, int]] = []
        self.span = (-1, -1)  # the span of moments the option being tried touches


def _latest_touching(stack: list[_Frame], causes: list[tuple[int, int]]) -> int:
    """The index of the latest frame whose option's span of moments meets one of ``causes``
    (closed spans: a block that ends where a cause starts shapes it), or -1."""
    if len(causes) > 8:  # merged, so that the scan stays short
        causes.sort()
        merged = [causes[0]]
        for lo, hi in causes[1:]:
            if lo <= merged[-1][1]:
                if hi > merged[-1][1]:
                    merged[-1] = (merged[-1][0], hi)
            else:
                merged.append((lo, hi))
        causes[:] = merged
    for j in range(len(stack) - 1, -1, -1):
        s, e = stack[j].span
        for lo, hi in causes:
            if s <= hi and lo <= e:
                return j
    return -1


def _luby(i: int) -> int:
    """The i-th term (from 1) of Luby's sequence 1, 1, 2, 1, 1, 2, 4, ..."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    while i != (1 << k) - 1:
        i -= (1 << (k - 1)) - 1
        k = 1
        while (1 << k) - 1 < i:
            k += 1
    return 1 << (k - 1)


class _NoSlack:
    """The slack of a problem tight at every moment: zero, and never to be spent."""

    def add(self, a: int, b: int, d: int) -> None:  # (never called: no waste fits)
        raise AssertionError("no slack to spend")

    def min(self, a: int, b: int) -> int:
        return 0

    def max(self, a: int, b: int) -> int:
        return 0


def _single_walls(by_start: dict[int, list[int]], by_end: dict[int, list[int]],
                  size: list[int]) -> dict[int, int]:
    """Moments ``t`` whose wall is one interval: the blocks ending at ``t`` and those starting
    there have equal total sizes, and no proper subsets of them with equal sums (subset sums
    as bit sets). Maps ``t`` to the wall's length."""

    def sums(members: list[int]) -> int:
        bits = 1
        for i in members:
            bits |= bits << size[i]
        return bits

    walls = {}
    for t in by_start.keys() & by_end.keys():
        total = sum(size[i] for i in by_start[t])
        if total != sum(size[i] for i in by_end[t]):
            continue
        common = sums(by_start[t]) & sums(by_end[t]) & ~1 & ~(1 << total)
        if common == 0:
            walls[t] = total
    return walls


class TilingSearch:
    """The skyline search over ``n`` positive-size blocks in local time ``0..T``, at most ``H``
    high (see the module docstring); its nodes, restarts and deepest choices last across
    calls of :meth:`run`."""

    def __init__(self, size: np.ndarray, align: np.ndarray, start: np.ndarray,
                 end: np.ndarray, T: int, H: int,
                 classes: dict[int, tuple[tuple[int, int], ...]] | None = None) -> None:
        self.n, self.T, self.H = len(size), T, H
        self.sz, self.al = size.tolist(), align.tolist()
        # Blocks whose offsets may be in any of several classes (modulus, residue), rather
        # than the multiples of their alignment: merged blocks (:mod:`.dissection`) whose parts
        # have mixed alignments.
        self.classes = dict(classes or {})
        self.st, self.en = start.tolist(), end.tolist()
        load = np.zeros(T + 1, np.int64)
        np.add.at(load, start, size)
        np.add.at(load, end, -size)
        self.slack0 = (H - np.cumsum(load)[:T]).tolist()
        self.by_start: dict[int, list[int]] = {}
        self.by_end: dict[int, list[int]] = {}
        for i in range(self.n):
            self.by_start.setdefault(self.st[i], []).append(i)
            self.by_end.setdefault(self.en[i], []).append(i)
        self.starts = sorted(self.by_start)
        self.walls = _single_walls(self.by_start, self.by_end, self.sz)
        self.nodes = 0
        self.restarts = 0
        self.solution: list[int] = []
        self.deepest = 0
        self.saved: dict[int, int] = {}  # the deepest search's offsets (phase saving)

    # -- driver -------------------------------------------------------------------------------

    def run(self, seed: int | tuple, deadline: float, node_budget: int | None,
            stopped: Callable[[], bool], *, noisy: bool = False) -> str:
        """Restarts until an answer, the deadline, the node budget (a total over every call)
        or a stop: ``feasible``, ``infeasible`` (exhausted at zero slack everywhere) or
        ``unknown``. ``noisy``: random tie-breaking from the first restart on (a twin search's
        first restart would otherwise repeat the original's)."""
        if min(self.slack0) < 0:
            return "infeasible"  # the load alone is above H
        complete = max(self.slack0) == 0
        while True:
            self.restarts += 1
            limit = max(LUBY_UNIT * self.n, LUBY_FLOOR) * _luby(self.restarts)
            if node_budget is not None:
                limit = min(limit, node_budget - self.nodes)
                if limit <= 0:
                    return "unknown"
            rng = None if self.restarts == 1 and not noisy else \
                np.random.default_rng((*np.atleast_1d(seed).tolist(), self.restarts))
            status = self._search(limit, rng, deadline, stopped)
            if status == "feasible":
                return status
            if status == "exhausted":
                return "infeasible" if complete else "unknown"
            if status == "stopped":
                return "unknown"

    # -- one search ---------------------------------------------------------------------------

    def _search(self, limit: int, rng: np.random.Generator | None, deadline: float,
                stopped: Callable[[], bool]) -> str:
        n, T, H = self.n, self.T, self.H
        sz, al, st, en = self.sz, self.al, self.st, self.en
        classes = self.classes

        def aligned(i: int, y: int) -> int:
            """Block i's first allowed offset at or above y."""
            if i in classes:
                return min(y + (r - y) % m for m, r in classes[i])
            return -(-y // al[i]) * al[i]
        by_start, by_end, walls, starts = self.by_start, self.by_end, self.walls, self.starts
        slack = _NoSlack() if max(self.slack0) == 0 else RangeAddTree(self.slack0)
        keep = {} if rng is None else {i: o for i, o in self.saved.items()
                                       if rng.random() >= FORGET}
        placed = [False] * n
        off = [0] * n
        seg_end = {0: T}  # segment start -> its end
        seg_y = {0: 0}  # segment start -> its height
        seg_at_end = {T: 0}  # segment end -> its start
        hull_lo: dict[int, int] = {}  # wall moment -> lowest byte of its placed blocks
        hull_hi: dict[int, int] = {}
        key: dict[int, tuple] = {}  # valley start -> its branching key
        heap: list = []  # (key, valley start), stale entries skipped
        undo: list[tuple] = []
        dirty: list[int] = []  # segments created since the last check
        failed: list[tuple[int, int]] = [(0, T)]  # the span of the last dead end's causes

        def set_seg(a: int, b: int, y: int) -> None:
            undo.append((SEGMENT, a, seg_end.get(a), seg_y.get(a)))
            old = seg_end.get(a)
            if old is not None and seg_at_end.get(old) == a:
                undo.append((SEGMENT_AT_END, old, a))
                del seg_at_end[old]
            seg_end[a] = b
            seg_y[a] = y
            undo.append((SEGMENT_AT_END, b, seg_at_end.get(b)))
            seg_at_end[b] = a
            dirty.append(a)

        def del_seg(a: int) -> None:
            b = seg_end[a]
            undo.append((SEGMENT, a, b, seg_y[a]))
            undo.append((SEGMENT_AT_END, b, seg_at_end[b]))
            del seg_end[a], seg_y[a]
            if seg_at_end.get(b) == a:
                del seg_at_end[b]
            set_key(a, None)

        def set_key(a: int, k: tuple | None) -> None:
            old = key.get(a)
            if old == k:
                return
            undo.append((VALLEY_KEY, a, old))
            if k is None:
                del key[a]
            else:
                key[a] = k
                heapq.heappush(heap, (k, a))

        def rollback(mark: int) -> None:
            while len(undo) > mark:
                op = undo.pop()
                kind = op[0]
                if kind == SEGMENT:
                    _, a, b, y = op
                    if b is None:
                        seg_end.pop(a, None)
                        seg_y.pop(a, None)
                    else:
                        seg_end[a], seg_y[a] = b, y
                elif kind == SEGMENT_AT_END:
                    _, b, a = op
                    if a is None:
                        seg_at_end.pop(b, None)
                    else:
                        seg_at_end[b] = a
                elif kind == VALLEY_KEY:
                    _, a, old = op
                    if old is None:
                        key.pop(a, None)
                    else:
                        key[a] = old
                        heapq.heappush(heap, (old, a))
                elif kind == PLACED:
                    placed[op[1]] = False
                elif kind == SLACK:
                    slack.add(op[1], op[2], op[3])
                else:
                    _, t, lo, hi = op
                    if lo is None:
                        del hull_lo[t], hull_hi[t]
                    else:
                        hull_lo[t], hull_hi[t] = lo, hi

        def raise_to(a: int, b: int, y: int) -> None:
            """Segment [a, b) rises to height y, merging with neighbours as high."""
            lo, hi = a, b
            prev = seg_at_end.get(a)
            if prev is not None and seg_y[prev] == y:
                lo = prev
                del_seg(prev)
            if b in seg_end and seg_y[b] == y:
                hi = seg_end[b]
                del_seg(b)
            del_seg(a)
            set_seg(lo, hi, y)

        def wall_tight(t: int) -> bool:
            return 0 < t < T and slack.max(t - 1, t + 1) == 0

        def fits(i: int, y: int) -> bool:
            """Block i at its first aligned offset from y: within H and its walls."""
            o = aligned(i, y)
            top = o + sz[i]
            if top > H:
                return False
            for t in (st[i], en[i]):
                w = walls.get(t)
                if w is not None and t in hull_lo and wall_tight(t) \
                        and max(hull_hi[t], top) - min(hull_lo[t], o) > w:
                    return False
            return True

        def reach_right(s0: int, y: int) -> int:
            r = seg_end[s0]
            for _ in range(WALK):
                if r == T or seg_y[r] > y:
                    return r
                r = seg_end[r]
            return T

        def reach_left(s0: int, y: int) -> int:
            r = s0
            for _ in range(WALK):
                if r == 0:
                    return 0
                p = seg_at_end[r]
                if seg_y[p] > y:
                    return r
                r = p
            return 0

        def left_candidates(s0: int, reach: int, y: int) -> list[int]:
            return [i for i in by_start.get(s0, ()) if not placed[i] and en[i] <= reach
                    and fits(i, y)]

        def right_candidates(s1: int, reach: int, y: int) -> list[int]:
            return [i for i in by_end.get(s1, ()) if not placed[i] and st[i] >= reach
                    and fits(i, y)]

        def covered(a: int, b: int, y: int) -> bool:
            """Valley [a, b) at zero slack throughout: its moments are covered by unplaced
            blocks that fit in it."""
            if slack.max(a, b) > 0:
                return True
            reach = a
            k = bisect.bisect_left(starts, a)
            while reach < b:
                if k >= len(starts) or starts[k] > reach:
                    return False
                for i in by_start[starts[k]]:
                    if not placed[i] and reach < en[i] <= b and fits(i, y):
                        reach = en[i]
                k += 1
            return True

        def examine(s0: int) -> bool:
            """The corners of segment s0 hold, and its valley key is up to date. On a dead end,
            ``failed`` holds the span of moments whose blocks made it (see :meth:`_search`)."""
            if check(s0):
                return True
            y = seg_y[s0]
            failed[0] = (reach_left(s0, y), reach_right(s0, y))
            return False

        def check(s0: int) -> bool:
            y, s1 = seg_y[s0], seg_end[s0]
            if y >= H:
                set_key(s0, None)
                return True
            prev = seg_at_end.get(s0)
            left_high = prev is None or seg_y[prev] > y
            right_high = s1 == T or seg_y[s1] > y
            n_left = n_right = _INF
            if left_high and slack.min(s0, s0 + 1) == 0:
                found = left_candidates(s0, s1 if right_high else reach_right(s0, y), y)
                if not found:
                    return False
                n_left = len(found)
            if right_high and slack.min(s1 - 1, s1) == 0:
                found = right_candidates(s1, s0 if left_high else reach_left(s0, y), y)
                if not found:
                    return False
                n_right = len(found)
            if left_high and right_high:
                if not covered(s0, s1, y):
                    return False
                set_key(s0, (min(n_left, n_right), y, s0))
            else:
                set_key(s0, None)
            return True

        def examine_dirty() -> bool:
            segs = set()
            for t in dirty:
                if t not in seg_end:
                    continue
                segs.add(t)
                p = seg_at_end.get(t)
                if p is not None:
                    segs.add(p)
                if seg_end[t] in seg_end:
                    segs.add(seg_end[t])
            dirty.clear()
            return all(examine(s0) for s0 in segs)

        def best_valley() -> int | None:
            while heap:
                k, a = heap[0]
                if key.get(a) == k and a in seg_end:
                    return a
                heapq.heappop(heap)
            return None

        def options(s0: int) -> list[tuple]:
            """The valley's blocks, at its corner with fewer candidates, best first; and the
            waste, last, where that corner has slack."""
            y, s1 = seg_y[s0], seg_end[s0]
            prev = seg_at_end.get(s0)
            py = seg_y[prev] if prev is not None else None
            ny = seg_y[s1] if s1 in seg_end else None
            tight_left = slack.min(s0, s0 + 1) == 0
            tight_right = slack.min(s1 - 1, s1) == 0
            left = left_candidates(s0, s1, y)
            right = right_candidates(s1, s0, y)
            use_right = tight_right and (not tight_left or len(right) < len(left))
            scored = []
            for i in (right if use_right else left):
                o = aligned(i, y)
                top = o + sz[i]
                score = 0.0  # flush edges first: a top level with a neighbour, an end at one
                if en[i] == s1:
                    score -= 2 + (ny is not None and top == ny)
                if st[i] == s0:
                    score -= 2 + (py is not None and top == py)
                for t in (st[i], en[i]):
                    if t in hull_lo and (hull_hi[t] == o or hull_lo[t] == top):
                        score -= 3  # next to a block of the same wall
                if keep.get(i) == o:
                    score -= 20  # where the deepest search so far put it
                if rng is not None:
                    score += NOISE * rng.random()
                scored.append(((score, -al[i], st[i] - en[i], -sz[i]), i, o))
            scored.sort(key=lambda s: s[0])
            opts: list[tuple] = [(i, o) for _, i, o in scored]
            if not (tight_right if use_right else tight_left):
                heights = [h for h in (py, ny) if h is not None]
                if heights:
                    opts.append((-1, min(heights)))
            return opts

        if not examine(0):
            return "exhausted"
        stack: list[_Frame] = []
        count = 0
        polls = POLL_EVERY
        while count < n:
            a = best_valley()
            if a is not None:
                stack.append(_Frame(len(undo), a, options(a), count))
                dirty.clear()
            elif stack:  # no valley below H with blocks to place: the last choice moves on
                stack[-1].causes.append((0, T))
            while True:
                self.nodes += 1
                limit -= 1
                polls -= 1
                if polls <= 0:
                    polls = POLL_EVERY
                    if stopped() or time.perf_counter() > deadline:
                        return "stopped"
                if limit < 0:
                    return "limit"
                if not stack:
                    return "exhausted"
                frame = stack[-1]
                a, opts, k, count, causes = (frame.valley, frame.options, frame.next,
                                             frame.count, frame.causes)
                rollback(frame.mark)
                dirty.clear()
                if k >= len(opts):
                    # Every option failed: so does the valley as it was made (the decisions
                    # touching it) with the causes of its options' failures. Back to the
                    # latest decision among those (conflict-directed backjumping, Prosser
                    # 1993): the ones after it touch none of the causes, and moving them
                    # would change nothing here.
                    causes.append((a, seg_end[a]))
                    stack.pop()
                    j = _latest_touching(stack, causes)
                    if j < 0:
                        return "exhausted"
                    del stack[j + 1:]
                    stack[j].causes.extend(causes)
                    continue
                frame.next = k + 1
                b, y = seg_end[a], seg_y[a]
                i, o = opts[k]
                if i < 0:  # waste: the valley rises to its lower neighbour
                    frame.span = (a, b)
                    if slack.min(a, b) < o - y:
                        causes.append((a, b))
                        continue
                    slack.add(a, b, y - o)
                    undo.append((SLACK, a, b, o - y))
                    raise_to(a, b, o)
                else:
                    s, e = st[i], en[i]
                    frame.span = (s, e)
                    if o > y:
                        if slack.min(s, e) < o - y:
                            causes.append((s, e))
                            continue
                        slack.add(s, e, y - o)
                        undo.append((SLACK, s, e, o - y))
                    if not fits(i, o):
                        causes.append((s, e))
                        continue
                    placed[i] = True
                    undo.append((PLACED, i))
                    off[i] = o
                    count += 1
                    if count > self.deepest:
                        self.deepest = count
                        self.saved = {j: off[j] for j in range(n) if placed[j]}
                    top = o + sz[i]
                    for t in (s, e):
                        if t in walls:
                            undo.append((WALL_HULL, t, hull_lo.get(t), hull_hi.get(t)))
                            hull_lo[t] = min(hull_lo.get(t, o), o)
                            hull_hi[t] = max(hull_hi.get(t, top), top)
                    del_seg(a)  # [a, b) becomes [a, s) at y, [s, e) at top, [e, b) at y
                    if s > a:
                        set_seg(a, s, y)
                    if e < b:
                        set_seg(e, b, y)
                    set_seg(s, e, y)
                    raise_to(s, e, top)
                if examine_dirty():
                    break
                causes.append(failed[0])
        self.solution = off
        return "feasible"


