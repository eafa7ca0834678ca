"""The baseline with no reuse at all: every block gets bytes of its own."""

from __future__ import annotations

import time

import numpy as np

from ..blocks import Blocks, make_blocks
from ..deadline import tick
from ..plan import Plan
from ..planners.placer import capacity_error
from ..planners.registry import register
from ..problem import Problem
from ._greedy import align_up


@register("naive", family="replica", reproduces="the no-reuse baseline of the memory-planning "
          "papers (every tensor its own allocation)")
def plan(problem: Problem, **options: object) -> Plan:
    """No reuse: blocks stacked end to end in buffer order, each in its first candidate pool.

    Fixed blocks keep their offsets; the others are stacked above every fixed block of the
    pool, each at the next aligned offset. Raises :class:`CapacityError` when a pool overflows
    and no later candidate pool has room.
    """
    started = time.perf_counter()
    blocks = make_blocks(problem)
    pool_of, offset = stack(blocks)
    return blocks.to_plan(pool_of, offset, planner="naive", started=started)


def stack(blocks: Blocks) -> tuple[np.ndarray, np.ndarray]:
    """The naive placement of ``blocks`` as (pool, scaled offset) arrays, in one pass: fixed
    blocks at their offsets, every other block stacked above its pool's top, at the next aligned
    offset. Raises :class:`CapacityError` as :func:`plan` does. The solver's last resort."""
    n = len(blocks)
    pool_of = np.zeros(n, np.int64)
    offset = np.zeros(n, np.int64)
    top = np.zeros(blocks.n_pools, np.int64)
    for i in np.nonzero(blocks.fixed >= 0)[0]:
        p = _fixed_pool(blocks, i)
        pool_of[i], offset[i] = p, blocks.fixed[i]
        top[p] = max(top[p], blocks.fixed[i] + blocks.size[i])
    for i in np.nonzero(blocks.fixed < 0)[0]:
        tick()
        for p in blocks.pools[i]:
            a = blocks.align_in(i, p)
            off = align_up(int(top[p]), a)
            cap = blocks.pool_capacity[p]
            if cap < 0 or off + blocks.size[i] <= cap:
                pool_of[i], offset[i] = p, off
                top[p] = off + blocks.size[i]
                break
        else:
            raise capacity_error(blocks, i, "naive")
    return pool_of, offset


def _fixed_pool(blocks, i: int) -> int:
    for p in blocks.pools[i]:
        cap = blocks.pool_capacity[p]
        if cap < 0 or blocks.fixed[i] + blocks.size[i] <= cap:
            return p
    return blocks.pools[i][0]
