"""The no-reuse stacking: every block bytes of its own, in one pass.

The baseline of the memory-planning papers (the ``naive`` replica registers it) and the last
resort of a planner out of time (:mod:`cpplan.planners.registry`) or of a solve whose heuristics
were cut short (:mod:`cpplan.solve`).
"""

from __future__ import annotations

import numpy as np

from ..blocks import Blocks
from ..deadline import tick
from .placer import capacity_error

__all__ = ["stack"]


def stack(blocks: Blocks, *, ticking: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The no-reuse placement of ``blocks`` as (pool, scaled offset) arrays: fixed blocks at
    their offsets, every other block, in block order, stacked above its first candidate pool's
    top with room for it, at the next aligned offset. Raises :class:`CapacityError` when no
    candidate pool has room. With ``ticking`` each block reports to the active time budget
    (:func:`cpplan.deadline.tick`); a last resort after the time ran out passes False."""
    n = len(blocks)
    pool_of = np.zeros(n, np.int64)
    offset = np.zeros(n, np.int64)
    top = np.zeros(blocks.n_pools, np.int64)
    for i in np.nonzero(blocks.fixed >= 0)[0].tolist():
        p = _fixed_pool(blocks, i)
        pool_of[i], offset[i] = p, blocks.fixed[i]
        top[p] = max(top[p], blocks.fixed[i] + blocks.size[i])
    for i in np.nonzero(blocks.fixed < 0)[0].tolist():
        if ticking:
            tick()
        for p in blocks.pools[i]:
            a = blocks.align_in(i, p)
            off = -(-int(top[p]) // a) * a
            cap = blocks.pool_capacity[p]
            if cap < 0 or off + blocks.size[i] <= cap:
                pool_of[i], offset[i] = p, off
                top[p] = off + blocks.size[i]
                break
        else:
            raise capacity_error(blocks, i, "naive")
    return pool_of, offset


def _fixed_pool(blocks: Blocks, i: int) -> int:
    for p in blocks.pools[i]:
        cap = blocks.pool_capacity[p]
        if cap < 0 or blocks.fixed[i] + blocks.size[i] <= cap:
            return p
    return blocks.pools[i][0]
