"""Replicas of ExecuTorch's memory planners built on shared objects: the default greedy and
the capacity-aware banked planner that spills from the fastest memory to the next.

Reproduce pytorch/executorch, ``exir/memory_planning.py`` (``greedy``, ``pick_shared_obj``,
``_compute_total_sizes``; ExecuTorch 1.5), as ``MemoryPlanningPass`` runs it by default, and
``exir/banked_memory_planning.py`` (``BankedGreedy``, ExecuTorch 1.5.1), as
``banked_memory_planning_pass`` runs it. The Cadence backend's planners are in
:mod:`cpplan.replicas.cadence`.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..deadline import PlanOptions, tick
from ..plan import Plan
from ..planners.placer import capacity_error
from ..planners.registry import register
from ..problem import Problem
from ._greedy import align_up, check_alignment, finish, prepare

NAME = "executorch-greedy"
BANKED = "executorch-banked-greedy"


@register(NAME, family="replica", reproduces="pytorch/executorch, exir/memory_planning.py "
          "(greedy, pick_shared_obj)")
def plan(problem: Problem, options: PlanOptions, *, alignment: int = 16,
         allow_overlapping_allocations: bool = True) -> Plan:
    """ExecuTorch greedy: size descending, each tensor into the first shared object that takes it.

    Kept from the original:

    * sizes are the tensors' ``allocated_memory``: rounded up to ``alignment`` (bytes, default
      16 = ``executorch.exir.tensor.ALIGNMENT``); here to the lcm of every alignment of the pool,
      which is ``alignment`` itself on problems extracted from ExecuTorch.
    * order: ``bisect.insort`` by size and then reversed, so size descending with equal sizes in
      *reverse* problem order.
    * a tensor goes into the first shared object (in creation order) none of whose tensors it
      meets in time, at offset 0; failing that (``allow_overlapping_allocations``), into the
      first object where it fits on top of the highest tensor it meets there (when that top is
      above 0); failing that, into a new object of its own size. Objects never grow.
    * objects are laid end to end in creation order, above the space reserved at the bottom of
      the pool; the pool's height is their sum (``_compute_total_sizes``).
    * lifetimes are whole blocks: a root's lifetime covers its aliases
      (``_extend_storage_base_lifetimes``), and aliases follow their root
      (``_resolve_storage_base_specs``).

    Extensions: fixed offsets are ExecuTorch's reserved space (``input_mem_buffer_sizes``, what
    sub-graphs of ``torch.cond`` use): fixed blocks keep their offsets and every object goes
    above the highest of them. A block tries its candidate pools in order and takes the first
    where the height stays within the capacity (ExecuTorch's ``mem_id`` is given, one pool).
    """
    return _shared_objects(problem, NAME, alignment, allow_overlapping_allocations)


@register(BANKED, family="replica", reproduces="pytorch/executorch, "
          "exir/banked_memory_planning.py (BankedGreedy)")
def banked(problem: Problem, options: PlanOptions, *, alignment: int = 16,
           extra_padding: int = 0, allow_overlapping_allocations: bool = True) -> Plan:
    """ExecuTorch's capacity-aware banked planner: largest first, each tensor into the fastest
    bank (pool) that can hold it, spilling to the next.

    Reproduces ``exir/banked_memory_planning.py`` (``BankedGreedy``: ``__call__``,
    ``_place_free``, ``_packing_order``, ``_reusable_object``, ``_submodule_reserved``;
    ``banked_memory_planning_pass`` with a ``TargetMemoryMap`` of banks), ExecuTorch
    1.5.1. The banks are the pools in problem order (the map's preference order): a bank's
    ``size`` is the pool's capacity (``None``: a pool the map does not declare, laid out but
    never budgeted), its ``alignment`` the pool's.

    Kept from the original:

    * order: size descending at the graph's ``alignment`` (bytes, default 16), equal sizes in
      reverse problem order (``bisect.insort`` then reversed, as ``greedy``).
    * pins first: in a problem of several pools, a tensor with one candidate pool is pinned to
      that bank (a ``mem_id`` set by a custom pool pass): pins go down before everything else,
      with ``pick_shared_obj``, and one that would take its bank past its size aborts.
    * then each other tensor is offered to its pools in order (the map's order when it lists
      none): a bank takes it if it fits in a shared object already there, at offset 0 in the
      first object none of whose tensors it meets and that is large enough, else on top of the
      highest tensor it meets in the first object where that leaves room
      (``allow_overlapping_allocations``): that costs the bank nothing; else if the bank has
      headroom for a new object of its size. Fits nowhere: :class:`CapacityError` (the original
      raises ``BankPlacementError``).
    * what a bank has used: the space reserved at its bottom for sub-graphs, the sizes of its
      objects, and ``extra_padding`` (bytes; XNNPACK's 64) once it holds an object; the arena
      is not allowed past the bank's size. Objects are never resized, and are laid end to end
      above the reserved space.
    * sizes are realigned to the bank a tensor is offered to (the pool's alignment): a larger
      bank alignment rounds the tensor up in that bank only.
    * with one bank it is ``executorch-greedy`` exactly.

    Extensions: a tensor whose candidate list names several pools (but not all) tries those in
    its own order; the reserved space is rounded up to the bank's alignment (the original lays
    objects right above it); aliases (``storage_base``) follow their root, as in the original.
    """
    return _shared_objects(problem, BANKED, alignment, allow_overlapping_allocations,
                           banked=True, extra_padding=extra_padding)


def _shared_objects(problem: Problem, name: str, alignment: int, overlapping: bool, *,
                    banked: bool = False, extra_padding: int = 0) -> Plan:
    """ExecuTorch's shared-object greedy in ``greedy``'s form (``banked`` False) or
    ``BankedGreedy``'s (pins first, sorted at the graph's alignment, ``extra_padding``)."""
    started = time.perf_counter()
    align_b = check_alignment(alignment)
    if isinstance(extra_padding, bool) or not isinstance(extra_padding, int) \
            or extra_padding < 0:
        raise ValueError(f"extra_padding must be a number of bytes >= 0, got {extra_padding!r}")
    blocks, extra = prepare(problem, align_b)
    n = len(blocks)
    g = blocks.scale
    pool_of = np.full(n, -1, np.int64)
    offset = np.zeros(n, np.int64)
    n_pools = blocks.n_pools
    cap = [None if c is None else (c - extra_padding) // g
           for c in (p.capacity for p in problem.pools)]

    # One size unit per pool: every alignment that can meet there, so that sums of sizes keep
    # every offset aligned.
    unit = [math.lcm(extra, int(blocks.pool_alignment[p])) for p in range(n_pools)]
    for i in range(n):
        for p in blocks.pools[i]:
            unit[p] = math.lcm(unit[p], int(blocks.alignment[i]))

    # Reserved space: the fixed blocks, at their offsets, in their first pool that holds them.
    base = [0] * n_pools
    for i in np.nonzero(blocks.fixed >= 0)[0].tolist():
        top = int(blocks.fixed[i] + blocks.size[i])
        p = next((q for q in blocks.pools[i] if (c := cap[q]) is None or top <= c),
                 blocks.pools[i][0])
        pool_of[i], offset[i] = p, blocks.fixed[i]
        base[p] = max(base[p], top)
    base = [align_up(b, u) for b, u in zip(base, unit, strict=True)]

    free = np.nonzero(blocks.fixed < 0)[0]
    objects = [_Objects() for _ in range(n_pools)]
    padded = {int(i): [align_up(int(blocks.size[i]), unit[p]) for p in blocks.pools[i]]
              for i in free.tolist()}
    if banked:  # sorted by the size at the graph's alignment
        key = align_up(blocks.size[free], extra)
    else:  # by the size in the first candidate pool
        key = np.array([padded[int(i)][0] for i in free], np.int64)
    # Size descending; equal sizes in reverse problem order (insort keeps them in order, the
    # reverse flips them).
    order = free[np.lexsort((-blocks.root[free], -key))] if len(free) else free
    pinned = np.zeros(len(order), bool)
    if banked and n_pools > 1:
        pinned = np.asarray([len(blocks.pools[i]) == 1 for i in order.tolist()], bool)
    for i in [*order[pinned].tolist(), *order[~pinned].tolist()]:
        tick()  # one placement: the replica honours the active time budget
        s0, e0 = int(blocks.start[i]), int(blocks.end[i])
        for k, p in enumerate(blocks.pools[i]):
            got = objects[p].pick(padded[i][k], s0, e0, overlapping,
                                  room=None if cap[p] is None else cap[p] - base[p])
            if got is not None:
                objects[p].commit(i, *got, padded[i][k], s0, e0)
                pool_of[i] = p
                break
        else:
            raise capacity_error(blocks, i, name)
    for p in range(n_pools):
        for i, off in objects[p].offsets(base[p]):
            offset[i] = off
    return finish(blocks, problem, pool_of, offset, planner=name, started=started)


class _Objects:
    """The shared objects of one pool: each a size and its tensors (offset in the object, size,
    lifetime), kept as flat arrays so one numpy pass answers each question of the original."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.block: list[int] = []
        self.obj: list[int] = []
        self.at: list[int] = []
        self.top: list[int] = []
        self.start: list[int] = []
        self.end: list[int] = []

    def pick(self, size: int, start: int, end: int, overlapping: bool,
             room: int | None) -> tuple[int, int] | None:
        """(object, offset in it) for a tensor; a new object is ``len(sizes)``. ``None`` when
        a new object would take the pool past ``room``."""
        n_obj = len(self.sizes)
        if n_obj:
            meets = (np.asarray(self.start) < end) & (start < np.asarray(self.end))
            obj = np.asarray(self.obj)
            busy = np.bincount(obj[meets], minlength=n_obj)
            # (the original asserts the size fits: it does, sizes come in descending order)
            idle = np.nonzero((busy == 0) & (np.asarray(self.sizes) >= size))[0]
            if len(idle):
                return int(idle[0]), 0
            if overlapping:
                highest = np.zeros(n_obj, np.int64)
                np.maximum.at(highest, obj[meets], np.asarray(self.top)[meets])
                ok = np.nonzero((highest > 0) & (highest + size <= np.asarray(self.sizes)))[0]
                if len(ok):
                    return int(ok[0]), int(highest[ok[0]])
        if room is not None and sum(self.sizes) + size > room:
            return None
        return n_obj, 0

    def commit(self, i: int, obj: int, at: int, size: int, start: int, end: int) -> None:
        if obj == len(self.sizes):
            self.sizes.append(size)
        self.block.append(i)
        self.obj.append(obj)
        self.at.append(at)
        self.top.append(at + size)
        self.start.append(start)
        self.end.append(end)

    def offsets(self, base: int) -> list[tuple[int, int]]:
        """(block, offset in the pool) with the objects laid end to end from ``base``."""
        where = np.concatenate([[0], np.cumsum(self.sizes, dtype=np.int64)]) + base
        return [(i, int(where[o]) + a) for i, o, a in zip(self.block, self.obj, self.at,
                                                          strict=True)]
