"""Replica of TVM's graph executor memory planner (shared storage tokens).

Reproduces apache/tvm, ``src/relay/backend/graph_plan_memory.cc`` (``StorageAllocator``) and
``src/relay/backend/token_allocator.cc`` (``TokenAllocator1D::Request`` / ``Alloc`` /
``CheckForRelease``).
"""

from __future__ import annotations

import bisect
from itertools import count

import numpy as np

from ..blocks import Blocks
from ..deadline import PlanOptions
from ..plan import Plan
from ..planners.registry import register
from ..problem import Problem
from ._greedy import check_alignment, objects_plan, replay

NAME = "tvm-graph-plan-memory"


@register(NAME, family="replica", reproduces="apache/tvm, src/relay/backend/graph_plan_memory.cc"
          " + src/relay/backend/token_allocator.cc (TokenAllocator1D)")
def plan(problem: Problem, options: PlanOptions, *, alignment: int = 1,
         match_range: int = 16) -> Plan:
    """TVM GraphPlanMemory: storage tokens shared in execution order, within a factor of 16.

    Kept from the original (``TokenAllocator1D``):

    * blocks are requested in schedule order (start, then block index); tokens of blocks that
      ended are released first, in block order, into a free list keyed by token size; a block
      starting at a step never takes a token still held by a block alive at that step, so an
      operator never reuses its own inputs (TVM requests outputs before releasing inputs).
    * request: the smallest free token with size in ``[size, size * match_range]`` (the
      earliest released among equal sizes); else the largest free token with size in
      ``[size // match_range, size)`` (the latest released among equal sizes), which grows to
      the block's size; else a new token. ``match_range = 0`` never reuses.
    * memory = the tokens laid end to end in token order (the graph executor allocates one
      storage per token).
    * ``alignment`` (bytes, default 1: the planner itself does not align) aligns each token's
      offset with its members' and pool's alignments.

    Extensions: tokens are shared only among blocks with the same candidate pools (TVM's
    device check); fixed offsets, aliases (a block with its span) and zero-size blocks as in
    :mod:`cpplan.replicas._greedy`. Sizes are compared in bytes.
    """
    align_b = check_alignment(alignment)
    if isinstance(match_range, bool) or not isinstance(match_range, int) or match_range < 0:
        raise ValueError(f"match_range must be a non-negative integer, got {match_range!r}")

    def assign(blocks: Blocks, group: np.ndarray) -> list[list[int]]:
        g = blocks.scale
        objects: list[list[int]] = []
        tsize: list[int] = []
        free: list[tuple[int, int, int]] = []  # (size in bytes, release seq, token)
        seq = count()
        for i, ended in replay(blocks, group):
            for j in ended:
                tok = token_of[j]
                bisect.insort(free, (tsize[tok], next(seq), tok))
            size = int(blocks.size[i]) * g
            tok = -1
            if match_range and free:
                k = bisect.bisect_left(free, (size, -1, -1))
                if k < len(free) and free[k][0] <= size * match_range:
                    tok = free.pop(k)[2]
                elif k > 0 and free[k - 1][0] >= size // match_range:
                    tok = free.pop(k - 1)[2]
                    tsize[tok] = max(tsize[tok], size)
            if tok < 0:
                tok = len(objects)
                objects.append([])
                tsize.append(size)
            objects[tok].append(i)
            token_of[i] = tok
        return objects

    token_of: dict[int, int] = {}
    return objects_plan(problem, NAME, assign, alignment=align_b)
