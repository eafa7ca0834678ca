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
:func:`cpplan.planners._greedy.lay_out_objects`. TFLite sorts with ``std::sort``; remaining ties
go by block index here (what libstdc++ does for the small inputs of TFLite's tests).
"""

from __future__ import annotations

import bisect
import heapq

import numpy as np

from ..plan import Plan
from ..problem import Problem
from ._greedy import INF, best_fit, check_alignment, objects_plan, offset_plan
from .registry import register

_REPRO = "tensorflow/tensorflow, tensorflow/lite/delegates/gpu/common/memory_management/"


@register("tflite-gpu-greedy-by-size", family="replica",
          reproduces=_REPRO + "greedy_by_size_assignment.cc (GreedyBySizeAssignment)")
def greedy_by_size(problem: Problem, *, alignment: int = 1, **options: object) -> Plan:
    """TFLite GPU GreedyBySizeAssignment: size descending, best-fit gap (offsets).

    Kept from the original: records by size descending (stable: block index on ties); the
    time-overlapping placed records in offset order with the running maximum end (rounded up to
    ``base_addr_align_bytes``); the smallest gap that holds the record wins (strict ``<``:
    lowest on ties); none: right after the highest overlapping end. ``alignment`` (bytes,
    default 1, as the unit tests call it) aligns offsets, never sizes, together with each
    block's and pool's alignment. Extensions (pools, fixed offsets, aliases, zero-size blocks)
    as in :mod:`cpplan.planners._greedy`.
    """
    align_b = check_alignment(alignment)

    def order(blocks, arena, todo):
        return todo[np.argsort(-blocks.size[todo], kind="stable")]

    def choose(arena, i, pool):
        lo, hi, _ = arena.obstacles(i, pool)
        return best_fit(lo, hi, int(arena.top[i]), arena.align(i, pool))[0]

    return offset_plan(problem, "tflite-gpu-greedy-by-size", order=order, choose=choose,
                       alignment=align_b)


# -- shared objects ------------------------------------------------------------------------------
def _in_order(blocks, group: np.ndarray, equality: bool) -> list[list[int]]:
    """GreedyInOrderAssignment / EqualityAssignment over records in first-use order."""
    recs = group[np.lexsort((group, blocks.start[group]))]
    size = blocks.size
    objects: list[list[int]] = []
    osize: list[int] = []
    in_use: list[tuple[int, int]] = []  # (end of the object's last record, object)
    free_sorted: list[tuple[int, int]] = []  # in-order: (size, object)
    free_by_size: dict[int, list[int]] = {}  # equality: size -> stack of objects
    for i in recs.tolist():
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


def _by_breadth(blocks, group: np.ndarray) -> list[list[int]]:
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


def _assign_free_objects(blocks, recs: np.ndarray) -> list[list[int]]:
    n = len(recs)
    a_obj = np.empty(n, np.int64)
    a_start = np.empty(n, np.int64)
    a_end = np.empty(n, np.int64)
    osize = np.empty(n, np.int64)
    objects: list[list[int]] = []
    for k, i in enumerate(recs.tolist()):
        s, st, en = int(blocks.size[i]), int(blocks.start[i]), int(blocks.end[i])
        nobj = len(objects)
        o = -1
        if nobj:
            busy = np.zeros(nobj, bool)
            hit = (a_start[:k] < en) & (a_end[:k] > st)
            busy[a_obj[:k][hit]] = True
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
        a_obj[k], a_start[k], a_end[k] = o, st, en
    return objects


def _by_size_dist(blocks, group: np.ndarray) -> list[list[int]]:
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
            r = order[j]
            count[rs[r]:re[r]] += 1
            best_count = max(best_count, int(count[rs[r]:re[r]].max()))
            j += 1
        position[order[k:j]] = best_count - 1
        k = j
    # Assigned records, by object.
    a_rec: list[int] = []
    a_obj: list[int] = []
    osize: list[int] = []
    objects: list[list[int]] = []
    unassigned = np.ones(n, bool)

    def rows(recs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Fresh (best_dist, best_obj) of records ``recs``: min distance over objects, first
        object on ties; INF/-1 when every object intersects."""
        bd = np.full(len(recs), INF, np.int64)
        bo = np.full(len(recs), -1, np.int64)
        if not objects:
            return bd, bo
        ar = np.asarray(a_rec, np.int64)
        ao = np.asarray(a_obj, np.int64)
        srt = np.argsort(ao, kind="stable")
        ar, ao = ar[srt], ao[srt]
        cuts = np.searchsorted(ao, np.arange(len(objects)))
        step = max(1, 2_000_000 // max(len(ar), 1))
        for c in range(0, len(recs), step):
            rr = recs[c:c + step]
            f, la = first[rr][:, None], last[rr][:, None]
            of, ol = first[ar][None, :], last[ar][None, :]
            inter = ~((la < of) | (f > ol))
            d = np.where(la < of, of - la, f - ol)
            d = np.where(inter, INF, d)
            forb = np.maximum.reduceat(inter, cuts, axis=1)
            dist = np.minimum.reduceat(d, cuts, axis=1)
            dist[forb] = INF
            k = np.argmin(dist, axis=1)
            v = dist[np.arange(len(rr)), k]
            bd[c:c + step] = v
            bo[c:c + step] = np.where(v < INF, k, -1)
        return bd, bo

    for pos in np.unique(position).tolist():
        members = np.nonzero(position == pos)[0]
        bd, bo = rows(members)
        left = np.ones(len(members), bool)
        for _ in range(len(members)):
            # Highest priority: smallest best_dist, then larger size, then lower index.
            cand = np.nonzero(left)[0]
            key_d = bd[cand]
            m = cand[key_d == key_d.min()]
            m = m[size[members[m]] == size[members[m]].max()]
            t = int(m[0])
            r = int(members[t])
            left[t] = False
            unassigned[r] = False
            if bd[t] >= INF:
                o = len(objects)
                objects.append([])
                osize.append(int(size[r]))
                new = True
            else:
                o = int(bo[t])
                osize[o] = max(osize[o], int(size[r]))
                new = False
            objects[o].append(int(group[r]))
            a_rec.append(r)
            a_obj.append(o)
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
                better = ~inter & (d < bd[w])
                if better.any():
                    # An object some record of which already intersects stays forbidden.
                    mine = np.asarray([q for q, oq in zip(a_rec, a_obj, strict=True)
                                       if oq == o and q != r], np.int64)
                    if len(mine):
                        rb = rr[better]
                        hit = ~((last[rb][:, None] < first[mine][None, :])
                                | (first[rb][:, None] > last[mine][None, :]))
                        better[np.nonzero(better)[0][hit.any(axis=1)]] = False
            bd[w[better]] = d[better]
            bo[w[better]] = o
    return objects


@register("tflite-gpu-objects-greedy-in-order", family="replica",
          reproduces=_REPRO + "greedy_in_order_assignment.h (GreedyInOrderAssignment)")
def objects_greedy_in_order(problem: Problem, *, alignment: int = 1, **options: object) -> Plan:
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
def objects_equality(problem: Problem, *, alignment: int = 1, **options: object) -> Plan:
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
def objects_greedy_by_breadth(problem: Problem, *, alignment: int = 1,
                              **options: object) -> Plan:
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
def objects_greedy_by_size(problem: Problem, *, alignment: int = 1, **options: object) -> Plan:
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
