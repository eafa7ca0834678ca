"""Lower bounds: what no plan can beat.

The first bound is the **max-load**: at every moment the live buffers of a pool need at least
the sum of their sizes, so a pool's height is at least the largest such sum. Aliased buffers are
counted once, by the bytes their block covers at that moment (an in-place output over its input
counts once; concat slices count by their union).

Buffers with several candidate pools are not counted in any single pool's max-load, since the
planner may send them elsewhere. They are counted in the **total load** (all pools together), and
:func:`objective_lower_bound` combines both: every pool needs at least its own max-load, and the
pools together need at least the total load, filled from the cheapest pools first.
"""

from __future__ import annotations

import numpy as np

from . import load
from .blocks import Blocks, make_blocks
from .load import LoadBound, load_profile
from .problem import Problem

__all__ = ["LoadBound", "max_load", "total_load", "objective_lower_bound", "capacity_conflict",
           "load_profile", "stacking_height"]


def _as_blocks(problem: Problem | Blocks) -> Blocks:
    return problem if isinstance(problem, Blocks) else make_blocks(problem)


def max_load(problem: Problem | Blocks) -> dict[str, LoadBound]:
    """Per pool, the max-load of the blocks whose only candidate is that pool."""
    return load.max_load(_as_blocks(problem))


def total_load(problem: Problem | Blocks) -> LoadBound:
    """The max-load of all blocks together, whatever their pools."""
    return load.total_load(_as_blocks(problem))


def objective_lower_bound(problem: Problem | Blocks) -> int:
    """A lower bound on ``sum(cost[p] * height[p])``.

    Every pool's height is at least its own max-load; together they are at least the total load.
    The cheapest heights meeting both (cheapest pools filled first, within capacities) are a lower
    bound. With one pool it is simply the max-load.
    """
    return load.objective_lower_bound(_as_blocks(problem))


def stacking_height(blocks: Blocks, ids: np.ndarray, pool: int) -> int:
    """A height (scaled) within which pool ``pool`` can always hold an optimal plan's blocks.

    Of blocks ``ids`` that may go to ``pool``: the highest top of the fixed ones, plus, for every
    free one, its size and the ``alignment - 1`` bytes of padding it may need. Why no optimum is
    lost under this cap: any valid plan whose height in ``pool`` is above it can restack that
    pool's free blocks one above the other over its fixed ones, each at the next aligned offset;
    the result is valid (disjoint byte ranges), lower in ``pool`` and unchanged elsewhere, so its
    objective is no larger (and capacities still hold). A model may therefore cap the pool's
    height here without losing every optimum, and without turning a feasible problem infeasible.
    """
    top = 0
    pad = 0
    for i in np.asarray(ids, np.int64).tolist():
        if pool not in blocks.pools[i]:
            continue
        if blocks.fixed[i] >= 0:
            top = max(top, int(blocks.fixed[i] + blocks.size[i]))
        else:
            pad += int(blocks.size[i]) + blocks.align_in(i, pool) - 1
    return top + pad


def capacity_conflict(problem: Problem | Blocks) -> str | None:
    """Why the capacities cannot be met by any plan, or ``None`` when the max-load allows it.

    ``None`` does not prove a plan exists; it only says the max-load does not rule one out.
    """
    blocks = _as_blocks(problem)
    pools = blocks.problem.pools
    for name, bound in max_load(blocks).items():
        cap = blocks.problem.pool(name).capacity
        if cap is not None and bound.bytes > cap:
            return (f"pool {name!r} needs {bound.bytes} bytes at step {bound.moment} "
                    f"({bound.live} buffers live), over its capacity {cap}")
    caps = [p.capacity for p in pools if p.capacity is not None]
    if len(caps) == len(pools):
        total = total_load(blocks)
        cap = sum(caps)
        if total.bytes > cap:
            return (f"{total.bytes} bytes are live at step {total.moment} ({total.live} buffers),"
                    f" over the {cap} bytes of all pools together")
    return None
