"""Replica of ONNX Runtime's memory-pattern planner.

Reproduces microsoft/onnxruntime, ``onnxruntime/core/framework/mem_pattern_planner.h``
(``MemPatternPlanner::TraceAllocation`` / ``TraceFree``), fed as
``onnxruntime/core/framework/session_state.cc`` replays the execution plan, with sizes rounded
as ``IAllocator::CalcMemSizeForArrayWithAlignment<kAllocAlignment>`` does
(``onnxruntime/core/framework/allocator.h``).
"""

from __future__ import annotations

import numpy as np

from ..blocks import Blocks
from ..deadline import PlanOptions
from ..plan import Plan
from ..planners.registry import register
from ..problem import Problem
from ._greedy import Arena, align_up, best_fit, check_alignment, offset_plan

NAME = "ort-online-best-fit"


@register(NAME, family="replica", reproduces="microsoft/onnxruntime, onnxruntime/core/framework/"
          "mem_pattern_planner.h")
def plan(problem: Problem, options: PlanOptions, *, alignment: int = 256) -> Plan:
    """ONNX Runtime MemPatternPlanner: replay the schedule, best-fitting hole on first use.

    Kept from the original:

    * online: blocks are allocated in schedule order (start, then block index as the execution
      plan lists outputs); a block is freed after its last use, so at each step the frees of
      the blocks that ended come before the new allocations, and an operator's outputs never
      take its inputs' bytes (their lifetimes overlap).
    * placement: walk the live blocks in offset order with the running maximum end; every gap
      that holds the block is a candidate and the least waste wins (strict ``<``: lowest on
      ties); the space between the top of the live blocks and the current peak competes too
      (newer ORT); no candidate: on top of the live blocks (the peak grows only by the excess).
    * ``alignment`` (bytes, default 256 = ``kAllocAlignment``): ORT rounds every size up to it
      before planning; here the padded size is placed and offsets are aligned to it (lcm with
      each block's and pool's alignment). This is ORT's own cost, kept on purpose: on tiny
      buffers it dominates (three live 4-byte buffers take 2 * 256 + 4 = 516 bytes, 43 times
      the lower bound, on ``instances/tiny.csv``); ``alignment=1`` plans without it.

    Extensions: one peak per pool (ORT has one pattern per allocator location), fixed offsets,
    aliases and zero-size blocks (ORT gives those offset 0, untraced) as in
    :mod:`cpplan.replicas._greedy`.
    """
    align_b = check_alignment(alignment)

    def order(blocks: Blocks, arena: Arena, todo: np.ndarray) -> np.ndarray:
        return todo[np.lexsort((todo, blocks.start[todo]))]

    return offset_plan(problem, NAME, order=order, choose=_choose, alignment=align_b,
                       round_to=align_b)


def _choose(arena: Arena, i: int, pool: int) -> int:
    lo, hi, _ = arena.obstacles(i, pool)
    S = int(arena.top[i])
    A = arena.align(i, pool)
    peak = int(arena.height[pool])
    off, gap = best_fit(lo, hi, S, A)
    tail = int(align_up(max(int(hi.max()), 0), A)) if gap >= 0 else off
    tail_gap = peak - tail
    if tail_gap >= S and (gap < 0 or tail_gap < gap):
        return tail
    return off
