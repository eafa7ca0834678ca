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
    top = [0] * blocks.n_pools
    for i in np.nonzero(blocks.fixed >= 0)[0].tolist():
        p = _fixed_pool(blocks, i)
        pool_of[i], offset[i] = p, blocks.fixed[i]
        top[p] = max(top[p], int(blocks.fixed[i] + blocks.size[i]))
    # (plain ints: a last resort on 62185 blocks must not take a tenth of a second)
    size, balign, caps = (blocks.size.tolist(), blocks.alignment.tolist(),
                          blocks.pool_capacity.tolist())
    aligns: dict[tuple[int, int], int] = {}
    free = np.nonzero(blocks.fixed < 0)[0].tolist()
    pools_of, offsets = [], []
    for i in free:
        if ticking:
            tick()
        for p in blocks.pools[i]:
            a = aligns.get((balign[i], p))
            if a is None:
                a = aligns[balign[i], p] = blocks.align_in(i, p)
            off = -(-top[p] // a) * a
            if caps[p] < 0 or off + size[i] <= caps[p]:
                pools_of.append(p)
                offsets.append(off)
                top[p] = off + size[i]
                break
        else:
            raise capacity_error(blocks, i, "naive")
    pool_of[free], offset[free] = pools_of, offsets
    return pool_of, offset


def _fixed_pool(blocks: Blocks, i: int) -> int:
    for p in blocks.pools[i]:
        cap = blocks.pool_capacity[p]
        if cap < 0 or blocks.fixed[i] + blocks.size[i] <= cap:
            return p
    return blocks.pools[i][0]
