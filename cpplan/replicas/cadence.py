"""Replicas of the memory planners of ExecuTorch's Cadence (Xtensa DSP) backend, which put
every tensor in one of several memories, fastest first.

Reproduces pytorch/executorch, ``backends/cadence/aot/memory_planning.py``
(``PositionBasedGreedyWithHierarchy`` and ``GreedyWithHeuristic``: ``plan``, ``plan_spec``)
and ``backends/cadence/aot/memory_planning_algo.py`` (``MemoryPlanningAlgo``:
``plan_with_constraints``, ``_place_pinned_specs``, ``_place_memory_id_pinned_specs``,
``block_memories_except``, ``is_valid_placement``, ``get_aligned_offset``;
``MemoryPlanningState``: ``get_overlapping_spec``, ``place_spec``), ExecuTorch 1.5.1, as
``CadenceMemoryPlanning`` runs them (``mem_algo`` 0 and 1) for a ``MemoryConfig``. The pools
of the problem are the memories in ``mem_id`` order (1, 2, ...): a pool's capacity is the
memory's size, its alignment the memory's alignment.

Kept from the original, in both:

* order: tensors by size, largest first; equal sizes keep the order they come in (a stable
  ``sorted(..., reverse=True)``), here problem order.
* the hierarchy: each tensor walks the memories in ``mem_id`` order and takes the first where
  the rule gives a valid offset, whatever order its own candidate list has; a pool that is
  not among its candidates is a blocked memory (``MemConstraints`` block list) and skipped.
* what fits: the tensor's end *rounded up to the memory's alignment* is at most the memory's
  size (``is_valid_placement``), a little stricter than the end itself.
* pins: in a problem of several pools, a tensor with one candidate pool is pinned to that
  memory (an ``AbsolutePlacementConstraint`` without offset): pins are placed before every
  other tensor, memory by memory in ``mem_id`` order, each memory's pins by size.
* a tensor that fits in no memory aborts: :class:`CapacityError` (the original raises
  ``MemoryPlanningAlgoFailure``, "Cannot fit ... in any memory hierarchy").

Extensions: aliases are placed as blocks (the originals place every tensor on its own and know
no ``storage_base``); a fixed offset is a pin with an offset, placed first in the first
candidate pool where it is free and within capacity (the original checks neither); offsets are
also aligned to the buffer's own alignment (the original aligns to the memory's only; the same
offsets whenever the two alignments divide one another, as ExecuTorch's 16 bytes and the
usual memory alignments do). ``alignment`` (bytes, default 1) joins every memory's alignment,
as a ``MemoryConfig`` whose alignments are all multiples of it would. The constraint passes
of ``CadenceMemoryPlanning`` that place the inputs of a concatenation inside its output, or a
slice inside its input, in ``CompileMode.DEFAULT``, change the program, not the planner: with
``CompileMode.MINIMAL`` (views only) the problem of
:func:`cpplan.runtimes.executorch.problem_in_memories` is exactly what the planner sees, and
the replica gives every tensor the memory and offset the original gives it
(``tests/replicas/test_tier_replicas.py`` runs both on real programs and random problems).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..deadline import PlanOptions
from ..plan import Plan
from ..planners.placer import capacity_error
from ..planners.registry import register
from ..problem import Problem
from ._greedy import INF, Arena, align_up, check_alignment, finish, first_fit, prepare

POSITION = "cadence-position-greedy"
HEURISTIC = "cadence-greedy-heuristic"


@register(POSITION, family="replica", reproduces="pytorch/executorch, backends/cadence/aot/"
          "memory_planning.py (PositionBasedGreedyWithHierarchy)")
def position_greedy(problem: Problem, options: PlanOptions, *, alignment: int = 1) -> Plan:
    """ExecuTorch Cadence ``PositionBasedGreedyWithHierarchy``: largest first, each tensor in
    the first memory where it fits, at the lowest offset free of the tensors it meets.

    The offset starts at 0 and jumps past the first placed tensor (in placement order) that it
    overlaps, to that tensor's end rounded up to the memory's alignment, until it overlaps
    none: the lowest aligned free offset (first fit). When that offset no longer fits, the
    next memory is tried. A zero-size tensor overlaps nothing and lands at offset 0. See the
    module docstring for what both Cadence planners share.
    """
    return _plan(problem, POSITION, alignment, heuristic=False)


@register(HEURISTIC, family="replica", reproduces="pytorch/executorch, backends/cadence/aot/"
          "memory_planning.py (GreedyWithHeuristic)")
def greedy_heuristic(problem: Problem, options: PlanOptions, *, alignment: int = 1) -> Plan:
    """ExecuTorch Cadence ``GreedyWithHeuristic`` (greedy by size for offset calculation,
    arXiv 2001.03288): largest first, each tensor in the first memory where it fits, in the
    smallest gap between the tensors it meets.

    The placed tensors of the memory that share a moment with it are scanned in offset order
    (ties: placement order); a gap runs from the highest end so far, rounded up to the
    memory's alignment, to the next one's offset. The smallest gap that holds the tensor wins
    (ties: the lowest); if none does, the tensor goes above the highest end. A zero-size tensor
    ends a gap like any other (a gap may be split by one), and itself takes the smallest gap,
    which need not be at offset 0. See the module docstring for what both Cadence planners
    share.
    """
    return _plan(problem, HEURISTIC, alignment, heuristic=True)


def _plan(problem: Problem, name: str, alignment: int, heuristic: bool) -> Plan:
    started = time.perf_counter()
    blocks, extra = prepare(problem, check_alignment(alignment))
    arena = Arena(blocks, extra=extra)
    n = len(blocks)
    top = arena.top
    palign = [math.lcm(a, extra) for a in blocks.pool_alignment.tolist()]
    cap = arena.cap
    walk = [tuple(sorted(c)) for c in blocks.pools]  # memories in mem_id order
    seq = np.full(n, -1, np.int64)  # placement order
    placed = [0]
    empty: list[list[int]] = [[] for _ in range(blocks.n_pools)]  # zero-size blocks placed

    def commit(i: int, p: int, off: int) -> None:
        seq[i] = placed[0]
        placed[0] += 1
        arena.commit(i, p, off)
        if top[i] == 0:
            empty[p].append(i)

    def valid(i: int, p: int, off: int) -> bool:
        return int(align_up(off + int(top[i]), palign[p])) <= cap[p]

    def choose(i: int, p: int) -> int:
        if not heuristic:
            lo, hi, _ = arena.obstacles(i, p)
            return first_fit(lo, hi, int(top[i]), arena.align(i, p))
        return _smallest_gap(arena, i, p, seq, empty[p])

    for i in np.nonzero(blocks.fixed >= 0)[0].tolist():
        off = int(blocks.fixed[i])
        p = next((q for q in walk[i] if arena.fits(i, q, off) and arena.is_free(i, q, off)),
                 None)
        if p is None:
            raise capacity_error(blocks, i, name)
        commit(i, p, off)
    todo = np.nonzero(blocks.fixed < 0)[0]
    pinned = np.asarray([len(walk[i]) == 1 and blocks.n_pools > 1 for i in todo.tolist()], bool)
    order: list[int] = []
    for p in range(blocks.n_pools):  # pins first, memory by memory
        mine = todo[pinned][[walk[i][0] == p for i in todo[pinned].tolist()]]
        order += mine[np.argsort(-top[mine], kind="stable")].tolist()
    rest = todo[~pinned] if len(todo) else todo
    order += rest[np.argsort(-top[rest], kind="stable")].tolist()
    for i in order:
        for p in walk[i]:
            off = choose(i, p)
            if valid(i, p, off):
                commit(i, p, off)
                break
        else:
            raise capacity_error(blocks, i, name)
    return finish(blocks, problem, arena.pool_of, arena.offset, planner=name, started=started)


def _smallest_gap(arena: Arena, i: int, p: int, seq: np.ndarray, empty: list[int]) -> int:
    """``GreedyWithHeuristic``'s offset for block ``i`` in pool ``p``: the smallest gap that
    holds it between the placed blocks it meets, scanned in offset order (ties: placement
    order), each gap starting at the highest end so far rounded up to the alignment; else
    above the highest end."""
    blocks = arena.blocks
    lo, hi, owner = arena.obstacle_blocks(i, p)
    if empty:  # zero-size blocks placed in this pool end gaps too
        e = np.asarray(empty, np.int64)
        a, b = blocks.piece_ptr[i], blocks.piece_ptr[i + 1]
        S = int(arena.top[i])
        for q in range(a, b):
            ps, pe = blocks.piece_start[q], blocks.piece_end[q]
            meet = e[(blocks.start[e] < pe) & (ps < blocks.end[e])]
            if len(meet):
                at = arena.offset[meet]
                lo = np.concatenate([lo, at - (arena.piece_hi[q] - S)])
                hi = np.concatenate([hi, at - blocks.piece_lo[q]])
                owner = np.concatenate([owner, meet])
    if len(lo) == 0:
        return 0
    order = np.lexsort((seq[owner], lo))
    lo = lo[order]
    ends = align_up(hi[order], arena.align(i, p))
    prev = np.maximum(np.concatenate([[0], np.maximum.accumulate(ends)[:-1]]), 0)
    gap = lo - prev
    gap = np.where(gap >= int(arena.top[i]), gap, INF)
    k = int(np.argmin(gap))
    if gap[k] < INF:
        return int(prev[k])
    return max(int(ends.max()), 0)
