"""Replica of Glow's static memory allocator.

Reproduces pytorch/glow, ``lib/CodeGen/MemoryAllocator.cpp`` (``MemoryAllocator::allocateAll``,
``allocateAllWithStrategy`` and its three strategies ``MaxLiveSizeMaxBuffSize``,
``MaxLiveSizeMaxBuffTime``, ``SameOrder``), with ``TensorAlignment = 64`` from
``include/glow/Support/Memory.h``.
"""

from __future__ import annotations

import time

import numpy as np

from ..blocks import Blocks
from ..deadline import PlanOptions
from ..plan import Plan
from ..planners.fit import peak_first
from ..planners.registry import register
from ..problem import Problem
from ._greedy import Arena, check_alignment, choose_first_fit, finish, padded_sizes, prepare

NAME = "glow-best-of-3"
STRATEGIES = ("max-live-size-max-buff-size", "max-live-size-max-buff-time", "same-order")


@register(NAME, family="replica", reproduces="pytorch/glow, lib/CodeGen/MemoryAllocator.cpp "
          "(allocateAll)")
def plan(problem: Problem, options: PlanOptions, *, alignment: int = 64) -> Plan:
    """Glow allocateAll: three orderings, lowest first fit, keep the best, stop at the max-load.

    Kept from the original:

    * three runs, in Glow's order: (1) at the step with the largest *remaining* live size
      (first such step), take the largest live block (ties: longer, then first allocated);
      (2) the same step, the longest live block (ties: larger, then first allocated);
      (3) allocation order. The first run that reaches the max-load (``liveSizeMax``) stops the
      search; otherwise the smallest wins (strict ``<``: the earlier run on ties).
    * placement: the lowest offset among 0 and the ends of the time-overlapping placed blocks
      where the block overlaps none of them (lowest first fit).
    * ``alignment`` (bytes, default 64 = ``TensorAlignment``): sizes are rounded up to it
      (``alignedSize``) for planning and offsets aligned to it (lcm with each block's and
      pool's alignment); durations in schedule events (compressed time ranks).

    Extensions: the live-size profile counts all blocks whatever their pool and "used" is the
    sum of the pool heights; fixed offsets, aliases (blocks, counted over their span) and
    zero-size blocks as in :mod:`cpplan.replicas._greedy`. Glow refuses up front when the
    max-load exceeds the memory; here a block that fits no pool raises CapacityError.
    """
    started = time.perf_counter()
    align_b = check_alignment(alignment)
    blocks, extra = prepare(problem, align_b)
    top = padded_sizes(blocks, align_b)
    nt = max(len(blocks.times), 1)
    # Remaining live size per step over the blocks to place (+ all blocks for liveSizeMax).
    delta = np.zeros(nt + 1, np.int64)
    np.add.at(delta, blocks.start, top)
    np.add.at(delta, blocks.end, -top)
    live_max = int(np.cumsum(delta)[:nt].max()) if len(blocks) else 0
    alloc_order = np.lexsort((np.arange(len(blocks)), blocks.start))
    best = None
    for strategy in STRATEGIES:
        arena = Arena(blocks, top=top, extra=extra, merged=True)
        todo = arena.place_fixed_and_empty(NAME)
        order = _order(blocks, top, todo, alloc_order, strategy)
        arena.place_in_order(order, choose_first_fit, NAME)
        used = int(arena.height.sum())
        if best is None or used < best[0]:
            best = (used, arena.pool_of.copy(), arena.offset.copy(), strategy)
        if used <= live_max:
            break
    assert best is not None  # (STRATEGIES is not empty)
    _, pool_of, offset, strategy = best
    return finish(blocks, problem, pool_of, offset, planner=NAME, started=started,
                  stats={"strategy": strategy})


def _order(blocks: Blocks, top: np.ndarray, todo: np.ndarray, alloc_order: np.ndarray,
           strategy: str) -> np.ndarray:
    """The sequence in which one strategy picks the blocks of ``todo``."""
    is_todo = np.zeros(len(blocks), bool)
    is_todo[todo] = True
    seq = alloc_order[is_todo[alloc_order]]
    if strategy == "same-order" or len(seq) == 0:
        return seq
    rank_alloc = np.empty(len(blocks), np.int64)
    rank_alloc[alloc_order] = np.arange(len(blocks))
    dur = blocks.end - blocks.start
    if strategy == "max-live-size-max-buff-size":
        keys = (rank_alloc[seq], -dur[seq], -top[seq])
    else:
        keys = (rank_alloc[seq], -top[seq], -dur[seq])
    return peak_first(blocks, seq[np.lexsort(keys)], top)  # the preferred block first
