"""Replicas of the TensorFlow Lite GPU delegate's memory strategies.

Reproduces tensorflow/tensorflow, ``tensorflow/lite/delegates/gpu/common/memory_management.cc``
(``AssignOffsetsToTensors``, ``AssignObjectsToTensors``, ``ObjectsToOffsets``) and, under
``tensorflow/lite/delegates/gpu/common/memory_management/``, ``greedy_by_size_assignment.cc``
(``GreedyBySizeAssignment``, ``GreedyBySizeDistPriorityAssignment``),
``greedy_in_order_assignment.h``, ``greedy_by_breadth_assignment.cc``,
``equality_assignment.h`` and ``internal.cc``. The strategies are described in Pisarchyk & Lee,
"Efficient Memory Management for Deep Neural Net Inference" (2020).

A *record* is a block with its span: TFLite's usage interval ``[first_task, last_task]`` is
inclusive, so it is ``[start, end - 1]`` here and two records intersect exactly when their
lifetimes overlap. Object strategies share whole objects among blocks with the same candidate
pools; objects are laid end to end in object order (``ObjectsToOffsets``), see
:func:`cpplan.replicas._greedy.lay_out_objects`. TFLite sorts with ``std::sort``; remaining ties
go by block index here (what libstdc++ does for the small inputs of TFLite's tests).
"""

from __future__ import annotations

import bisect
import heapq

import numpy as np

from ..blocks import Blocks
from ..deadline import PlanOptions, tick
from ..plan import Plan
from ..planners.registry import register
from ..problem import Problem
from ..segtree import SlotTree, first_below, last_above
from ..sweep import OverlapIndex
from ._greedy import INF, Arena, check_alignment, choose_best_fit, objects_plan, offset_plan

_REPRO = "tensorflow/tensorflow, tensorflow/lite/delegates/gpu/common/memory_management/"


@register("tflite-gpu-greedy-by-size", family="replica",
          reproduces=_REPRO + "greedy_by_size_assignment.cc (GreedyBySizeAssignment)")
def greedy_by_size(problem: Problem, options: PlanOptions, *, alignment: int = 1) -> Plan:
    """TFLite GPU GreedyBySizeAssignment: size descending, best-fit gap (offsets).

    Kept from the original: records by size descending (stable: block index on ties); the
    time-overlapping placed records in offset order with the running maximum end (rounded up to
    ``base_addr_align_bytes``); the smallest gap that holds the record wins (strict ``<``:
    lowest on ties); none: right after the highest overlapping end. ``alignment`` (bytes,
    default 1, as the unit tests call it) aligns offsets, never sizes, together with each
    block's and pool's alignment. Extensions (pools, fixed offsets, aliases, zero-size blocks)
    as in :mod:`cpplan.replicas._greedy`.
    """
    align_b = check_alignment(alignment)

    def order(blocks: Blocks, arena: Arena, todo: np.ndarray) -> np.ndarray:
        return todo[np.argsort(-blocks.size[todo], kind="stable")]

    return offset_plan(problem, "tflite-gpu-greedy-by-size", order=order, choose=choose_best_fit,
                       alignment=align_b)


# -- shared objects ------------------------------------------------------------------------------
def _in_order(blocks: Blocks, group: np.ndarray, equality: bool) -> list[list[int]]:
    """GreedyInOrderAssignment / EqualityAssignment over records in first-use order."""
    recs = group[np.lexsort((group, blocks.start[group]))]
    size = blocks.size
    objects: list[list[int]] = []
    osize: list[int] = []
    in_use: list[tuple[int, int]] = []  # (end of the object's last record, object)
    free_sorted: list[tuple[int, int]] = []  # in-order: (size, object)
    free_by_size: dict[int, list[int]] = {}  # equality: size -> stack of objects
    for i in recs.tolist():
        tick()
        s, start = int(size[i]), int(blocks.start[i])
        while in_use and in_use[0][0] <= start:  # last_task < first_task
            _, o = heapq.heappop(in_use)
            if equality:
                free_by_size.setdefault(osize[o], []).append(o)
            else:
                bisect.insort(free_sorted, (osize[o], o))
        o = -1
        if equality:
            stack = free_by_size.get(s)
            if stack:
                o = stack.pop()
        elif free_sorted:
            k = bisect.bisect_left(free_sorted, (s, -1))
            pick = k
            if k > 0 and (k == len(free_sorted) or s - free_sorted[k - 1][0] <
                          free_sorted[k][0] - s):
                pick = k - 1
            o = free_sorted.pop(pick)[1]
        if o < 0:
            o = len(objects)
            objects.append([])
            osize.append(s)
        objects[o].append(i)
        osize[o] = max(osize[o], s)
        heapq.heappush(in_use, (int(blocks.end[i]), o))
    return objects


def _by_breadth(blocks: Blocks, group: np.ndarray) -> list[list[int]]:
    """GreedyByBreadthAssignment: tasks by breadth descending, their records by size
    descending; each record joins the smallest free object that holds it, else the largest
    free one (growing it), else a new object."""
    nt = max(len(blocks.times), 1)
    size, start, end = blocks.size[group], blocks.start[group], blocks.end[group]
    delta = np.zeros(nt + 1, np.int64)
    np.add.at(delta, start, size)
    np.add.at(delta, end, -size)
    breadth = np.cumsum(delta)[:nt]
    visit = np.empty(nt + 1, np.int64)
    visit[:nt] = np.argsort(np.argsort(-breadth, kind="stable"), kind="stable")
    visit[nt] = INF
    # A record is taken at the first visited task it covers: a range minimum over its span.
    pairs = np.empty(2 * len(group), np.int64)
    pairs[0::2] = start
    pairs[1::2] = end
    claim = np.minimum.reduceat(visit, pairs)[0::2]
    recs = group[np.lexsort((group, -size, claim))]
    return _assign_free_objects(blocks, recs)


def _assign_free_objects(blocks: Blocks, recs: np.ndarray) -> list[list[int]]:
    """Give records ``recs``, in that order, objects (see :func:`_by_breadth`). An object is
    busy for a record when one of its records shares a moment with it: found through the
    neighbour lists of :class:`cpplan.sweep.OverlapIndex`, or, when there are more than
    :data:`_PAIRS_UP_TO` overlapping pairs (too much memory for the lists), by comparing the
    record with every record assigned before it."""
    n = len(recs)
    starts, ends = blocks.start[recs], blocks.end[recs]
    index = OverlapIndex(starts, ends)
    lists = index.count() <= _PAIRS_UP_TO
    if lists:
        ptr, nbr = index.neighbours()
        ptr_l = ptr.tolist()
    rec_obj = np.full(n, -1, np.int64)  # object of each record once assigned (recs order)
    osize = np.empty(n, np.int64)
    objects: list[list[int]] = []
    for k, i in enumerate(recs.tolist()):
        tick()
        s = int(blocks.size[i])
        nobj = len(objects)
        o = -1
        if nobj:
            busy = np.zeros(nobj, bool)
            if lists:
                got = rec_obj[nbr[ptr_l[k]:ptr_l[k + 1]]]
            else:
                got = rec_obj[:k][(starts[:k] < ends[k]) & (ends[:k] > starts[k])]
            busy[got[got >= 0]] = True
            sizes = osize[:nobj]
            suff = ~busy & (sizes >= s)
            if suff.any():
                o = int(np.argmin(np.where(suff, sizes, INF)))
            elif not busy.all():
                o = int(np.argmax(np.where(busy, -1, sizes)))
        if o < 0:
            o = len(objects)
            objects.append([])
            osize[o] = s
        objects[o].append(i)
        osize[o] = max(int(osize[o]), s)
        rec_obj[k] = o
    return objects


_PAIRS_UP_TO = 5_000_000  # overlapping pairs; above this the neighbour lists take > ~0.5 GB


def _by_size_dist(blocks: Blocks, group: np.ndarray) -> list[list[int]]:
    """GreedyBySizeDistPriorityAssignment (see the module of the registered planner)."""
    n = len(group)
    size = blocks.size[group]
    rs, re = blocks.start[group], blocks.end[group]
    first = blocks.times[rs]
    last = blocks.times[re] - 1  # inclusive, in schedule steps (TFLite's task ids)
    # position = max over tasks of the number of live records of size >= own size, minus 1.
    order = np.argsort(-size, kind="stable")
    position = np.empty(n, np.int64)
    nt = max(len(blocks.times), 1)
    count = np.zeros(nt, np.int64)
    best_count = 0
    k = 0
    while k < n:
        j = k
        while j < n and size[order[j]] == size[order[k]]:
            tick()
            r = order[j]
            count[rs[r]:re[r]] += 1
            best_count = max(best_count, int(count[rs[r]:re[r]].max()))
            j += 1
        position[order[k:j]] = best_count - 1
        k = j
    osize: list[int] = []
    objects: list[list[int]] = []
    obj_recs: list[list[int]] = []  # the same, as indices into ``group``
    gaps = _Gaps(first, last)

    def rows(recs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Fresh (best_dist, best_obj) of records ``recs``: min distance over objects, first
        object on ties; INF/-1 when every object intersects."""
        return gaps.nearest(first[recs], last[recs])

    for pos in np.unique(position).tolist():
        members = np.nonzero(position == pos)[0]
        bd, bo = rows(members)
        left = np.ones(len(members), bool)
        # Highest priority: smallest best_dist, then larger size, then lower index: one key
        # (np.argmin takes the first of equal keys).
        sizes = size[members]
        rank = np.unique(sizes, return_inverse=True)[1].reshape(-1)
        rank = rank.max() - rank + 1 if len(rank) else rank  # larger size, smaller rank

        width = len(members) + 1
        key = _priority(bd, rank, width)
        done = np.iinfo(np.int64).max
        for _ in range(len(members)):
            tick()
            t = int(np.argmin(key))
            key[t] = done
            r = int(members[t])
            left[t] = False
            if bd[t] >= INF:
                o = len(objects)
                objects.append([])
                obj_recs.append([])
                osize.append(int(size[r]))
                new = True
            else:
                o = int(bo[t])
                osize[o] = max(osize[o], int(size[r]))
                new = False
            objects[o].append(int(group[r]))
            obj_recs[o].append(r)
            gaps.add(o, r, new)
            # Update the records of this position still waiting.
            w = np.nonzero(left)[0]
            if len(w) == 0:
                continue
            rr = members[w]
            inter = ~((last[rr] < first[r]) | (first[rr] > last[r]))
            d = np.where(last[rr] < first[r], first[r] - last[rr], first[rr] - last[r])
            if new:
                better = ~inter & (d < bd[w])
            else:
                lost = inter & (bo[w] == o)
                if lost.any():
                    nb, no = rows(rr[lost])
                    bd[w[lost]], bo[w[lost]] = nb, no
                    key[w[lost]] = _priority(nb, rank[w[lost]], width)
                better = ~inter & (d < bd[w])
                if better.any():
                    # An object some record of which already intersects stays forbidden.
                    # (These records miss r, so asking the object's gaps, r included, is
                    # the same as asking its other records.)
                    idx = np.nonzero(better)[0]
                    better[idx] = [gaps.fits(o, q) for q in rr[idx].tolist()]
            bd[w[better]] = d[better]
            bo[w[better]] = o
            key[w[better]] = _priority(d[better], rank[w[better]], width)
    return objects


def _priority(dist: np.ndarray, rank: np.ndarray, width: int) -> np.ndarray:
    """One sortable key for (distance, size rank): distances are schedule steps (< 2**40) or
    ``INF``, ranks below ``width``."""
    return np.minimum(dist, 1 << 41) * width + rank


class _Gaps:
    """The free spans of the shared objects in time, for GreedyBySizeDistPriority's nearest
    object queries over the records ``[first, last]`` (inclusive tasks) of one group.

    An object's records are disjoint, so a record fits an object iff it lies inside one of the
    object's *gaps* (between two consecutive records, or before the first / after the last: an
    open side), and its distance to the object is to that gap's nearer closed end. A gap is
    seen from both ends: as the *left slot* of the record before it (start ``last`` of that
    record, end the next record's ``first`` or open) and as the *right slot* of the record
    after it (end its ``first``, start the previous record's ``last`` or open). Slots are in
    static orders (by ``last``, by ``first``), so the nearest gap from the left is a
    rightmost-above search in a max tree and from the right a leftmost-below search in a min
    tree: O(log n) per query and per update.
    """

    FAR = 1 << 40  # beyond any schedule step: the open side of a gap

    def __init__(self, first: np.ndarray, last: np.ndarray) -> None:
        self.first, self.last = first.tolist(), last.tolist()
        n = len(self.first)
        by_last = np.argsort(last, kind="stable")
        by_first = np.argsort(first, kind="stable")
        self.key_l = last[by_last].tolist()
        self.key_r = first[by_first].tolist()
        self.rec_l = by_last.tolist()
        self.rec_r = by_first.tolist()
        self.slot_l = np.argsort(by_last).tolist()
        self.slot_r = np.argsort(by_first).tolist()
        # Left slots: the end of the gap (inactive: -FAR); right slots: its start (inactive: FAR).
        self.ends = SlotTree(n, -self.FAR, max, INF)
        self.starts = SlotTree(n, self.FAR, min, INF)
        self.obj_of = [-1] * n
        self._firsts: list[list[int]] = []  # per object: its records' firsts, ascending
        self._recs: list[list[int]] = []  # per object: its records, in the same order

    def add(self, o: int, r: int, new: bool) -> None:
        """Record ``r`` joins object ``o`` (a new one when ``new``); it must fit a gap of it."""
        f, la = self.first[r], self.last[r]
        self.obj_of[r] = o
        prev = nxt = -1
        if new:
            self._firsts.append([f])
            self._recs.append([r])
        else:
            firsts, recs = self._firsts[o], self._recs[o]
            k = bisect.bisect_right(firsts, f)
            if k > 0:
                prev = recs[k - 1]
            if k < len(recs):
                nxt = recs[k]
            firsts.insert(k, f)
            recs.insert(k, r)
        self.ends.set(self.slot_l[r], self.first[nxt] if nxt >= 0 else self.FAR, o)
        self.starts.set(self.slot_r[r], self.last[prev] if prev >= 0 else -self.FAR, o)
        if prev >= 0:
            self.ends.set(self.slot_l[prev], f, o)
        if nxt >= 0:
            self.starts.set(self.slot_r[nxt], la, o)

    def fits(self, o: int, r: int) -> bool:
        """Whether record ``r`` intersects no record of object ``o``."""
        f = self.first[r]
        firsts, recs = self._firsts[o], self._recs[o]
        k = bisect.bisect_right(firsts, f)
        return ((k == 0 or self.last[recs[k - 1]] < f)
                and (k == len(firsts) or firsts[k] > self.last[r]))

    def nearest(self, qf: np.ndarray, ql: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For records ``[qf, ql]``: the smallest distance to an object none of whose records
        intersects them, and that object (the lowest id on ties); ``INF``/-1 when there is
        none."""
        if len(qf) > 256:
            return self._nearest_batch(qf, ql)
        bd = np.full(len(qf), INF, np.int64)
        bo = np.full(len(qf), -1, np.int64)
        key_l, key_r = self.key_l, self.key_r
        for q, (f, la) in enumerate(zip(qf.tolist(), ql.tolist(), strict=True)):
            dl = dr = INF
            ol = orr = -1
            j = self.ends.last_above(bisect.bisect_left(key_l, f), la)
            if j >= 0:  # the latest gap start below f among gaps ending above la
                v = key_l[j]
                dl = f - v
                # the lowest object among the gaps starting there that hold the record
                ol = self.ends.min_at(bisect.bisect_left(key_l, v), j + 1, la)
            k = self.starts.first_below(bisect.bisect_right(key_r, la), f)
            if k >= 0:  # the earliest gap end above la among gaps starting below f
                v = key_r[k]
                dr = v - la
                orr = self.starts.min_at(k, bisect.bisect_right(key_r, v), f)
            if dl < dr:
                bd[q], bo[q] = dl, ol
            elif dr < dl:
                bd[q], bo[q] = dr, orr
            elif dl < INF:
                bd[q], bo[q] = dl, min(ol, orr)
        return bd, bo

    def _nearest_batch(self, qf: np.ndarray, ql: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`nearest` for many queries at once: the same two range searches over every
        gap, sorted by start and by end, answered with sparse tables."""
        far = self.FAR
        nq = len(qf)
        ends = np.asarray(self.ends.leaf, np.int64)
        starts = np.asarray(self.starts.leaf, np.int64)
        act_l = np.nonzero(ends > -far)[0]  # every gap once, as a left slot ...
        lead = np.nonzero(starts == -far)[0]  # ... or, before an object's first, a right one
        if len(act_l) == 0:
            return np.full(nq, INF, np.int64), np.full(nq, -1, np.int64)
        obj = np.asarray(self.obj_of, np.int64)
        lo = np.concatenate([np.asarray(self.key_l, np.int64)[act_l], np.full(len(lead), -far)])
        hi = np.concatenate([ends[act_l], np.asarray(self.key_r, np.int64)[lead]])
        ob = np.concatenate([obj[np.asarray(self.rec_l)[act_l]], obj[np.asarray(self.rec_r)[lead]]])
        o1 = np.lexsort((-ob, lo))  # ties: higher object first, so the last hit is the lowest
        lo1, hi1, ob1 = lo[o1], hi[o1], ob[o1]
        j = last_above(hi1, np.searchsorted(lo1, qf, side="left"), ql)
        jl = np.maximum(j, 0)
        dl = np.where((j >= 0) & (lo1[jl] > -far), qf - lo1[jl], INF)
        objl = np.where(j >= 0, ob1[jl], -1)
        o2 = np.lexsort((ob, hi))  # ties: lower object first
        lo2, hi2, ob2 = lo[o2], hi[o2], ob[o2]
        k = first_below(lo2, np.searchsorted(hi2, ql, side="right"), qf)
        kr = np.maximum(k, 0)
        dr = np.where((k >= 0) & (hi2[kr] < far), hi2[kr] - ql, INF)
        objr = np.where(k >= 0, ob2[kr], -1)
        bd = np.minimum(dl, dr)
        bo = np.where(dl < dr, objl, objr)
        bo = np.where(dl == dr, np.minimum(objl, objr), bo)
        return bd, np.where(bd < INF, bo, -1)


@register("tflite-gpu-objects-greedy-in-order", family="replica",
          reproduces=_REPRO + "greedy_in_order_assignment.h (GreedyInOrderAssignment)")
def objects_greedy_in_order(problem: Problem, options: PlanOptions, *, alignment: int = 1) -> Plan:
    """TFLite GPU GreedyInOrderAssignment: records in first-use order share released objects.

    Kept from the original: before each record, objects whose last record ended before it
    starts are released (heap by (last task, object id)); the record takes the smallest free
    object at least its size (lowest id on ties) unless the largest smaller one is strictly
    closer in size, which then grows; no free object: a new one. ``alignment`` (bytes, default
    1) aligns each object's offset with its members' and pool's alignments.
    """
    return objects_plan(problem, "tflite-gpu-objects-greedy-in-order",
                        lambda b, g: _in_order(b, g, equality=False),
                        alignment=check_alignment(alignment))


@register("tflite-gpu-objects-equality", family="replica",
          reproduces=_REPRO + "equality_assignment.h (EqualityAssignment)")
def objects_equality(problem: Problem, options: PlanOptions, *, alignment: int = 1) -> Plan:
    """TFLite GPU EqualityAssignment: reuse a released object only of exactly the same size.

    Kept from the original: records in first-use order; released objects are kept per size and
    the most recently released one of the record's exact size is reused; otherwise a new
    object. ``alignment`` as for the other object strategies.
    """
    return objects_plan(problem, "tflite-gpu-objects-equality",
                        lambda b, g: _in_order(b, g, equality=True),
                        alignment=check_alignment(alignment))


@register("tflite-gpu-objects-greedy-by-breadth", family="replica",
          reproduces=_REPRO + "greedy_by_breadth_assignment.cc (GreedyByBreadthAssignment)")
def objects_greedy_by_breadth(problem: Problem, options: PlanOptions, *,
                              alignment: int = 1) -> Plan:
    """TFLite GPU GreedyByBreadthAssignment: widest tasks first, biggest records first.

    Kept from the original: tasks by breadth (sum of live sizes) descending, ties by task;
    inside a task its records by size descending (ties by index), skipping assigned ones; a
    record joins, among objects none of whose records intersects it, the smallest that holds
    it, else the largest (which grows), lowest id on ties; else a new object. Tasks are
    compressed time steps (same live sets, same outcome).
    """
    return objects_plan(problem, "tflite-gpu-objects-greedy-by-breadth", _by_breadth,
                        alignment=check_alignment(alignment))


@register("tflite-gpu-objects-greedy-by-size", family="replica",
          reproduces=_REPRO + "greedy_by_size_assignment.cc "
          "(GreedyBySizeDistPriorityAssignment)")
def objects_greedy_by_size(problem: Problem, options: PlanOptions, *, alignment: int = 1) -> Plan:
    """TFLite GPU GreedyBySizeDistPriorityAssignment: the GREEDY_BY_SIZE object strategy.

    Kept from the original: each record's *position* in the positional maximums (the k-th
    largest sizes over all tasks); records are taken by position, then by the smallest
    distance (in tasks) to an object none of whose records intersects them, then by size
    descending, then by index; a record with such an object joins the nearest one (first on
    ties), which grows; otherwise it opens a new object. Deviation: TFLite keeps every record's
    nearest object up to date all along, so among equally near objects it may keep an older
    choice; here a record's nearest object is computed afresh when its position comes up and
    then kept up to date the same way (a tie-break difference only).
    """
    return objects_plan(problem, "tflite-gpu-objects-greedy-by-size", _by_size_dist,
                        alignment=check_alignment(alignment))
