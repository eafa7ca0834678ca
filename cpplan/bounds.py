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

from dataclasses import dataclass

import numpy as np

from .blocks import Blocks, make_blocks
from .problem import Problem

__all__ = ["LoadBound", "max_load", "total_load", "objective_lower_bound", "capacity_conflict",
           "load_profile", "stacking_height"]


@dataclass(frozen=True)
class LoadBound:
    """The max-load of one pool: ``bytes`` live at step ``moment`` (its first such step)."""

    pool: str
    bytes: int
    moment: int | None
    live: int  # number of blocks live at that moment


def _as_blocks(problem: Problem | Blocks) -> Blocks:
    return problem if isinstance(problem, Blocks) else make_blocks(problem)


def load_profile(blocks: Blocks, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Scaled bytes and block count live during each compressed step (only blocks in ``mask``).

    Step ``k`` covers original steps ``[times[k], times[k+1])``.
    """
    nt = max(len(blocks.times), 1)
    piece_block = np.repeat(np.arange(len(blocks)), np.diff(blocks.piece_ptr))
    keep = np.ones(len(piece_block), bool) if mask is None else mask[piece_block]
    h = (blocks.piece_hi - blocks.piece_lo)[keep]
    delta = np.zeros(nt + 1, np.int64)
    np.add.at(delta, blocks.piece_start[keep], h)
    np.add.at(delta, blocks.piece_end[keep], -h)
    load = np.cumsum(delta)[:nt]
    cnt = np.zeros(nt + 1, np.int64)
    bm = np.ones(len(blocks), bool) if mask is None else mask
    np.add.at(cnt, blocks.start[bm], 1)
    np.add.at(cnt, blocks.end[bm], -1)
    return load, np.cumsum(cnt)[:nt]


def _peak(blocks: Blocks, mask: np.ndarray | None, name: str) -> LoadBound:
    load, live = load_profile(blocks, mask)
    if len(load) == 0 or load.max() <= 0:
        return LoadBound(name, 0, None, 0)
    k = int(np.argmax(load))
    return LoadBound(name, int(load[k]) * blocks.scale, int(blocks.times[k]), int(live[k]))


def max_load(problem: Problem | Blocks) -> dict[str, LoadBound]:
    """Per pool, the max-load of the blocks whose only candidate is that pool."""
    blocks = _as_blocks(problem)
    pools = blocks.problem.pools
    out = {}
    for p, pool in enumerate(pools):
        # With one pool every block's only candidate is it: no mask to build.
        mask = None if len(pools) == 1 else np.fromiter((c == (p,) for c in blocks.pools), bool,
                                                        len(blocks))
        out[pool.name] = _peak(blocks, mask, pool.name)
    return out


def total_load(problem: Problem | Blocks) -> LoadBound:
    """The max-load of all blocks together, whatever their pools."""
    return _peak(_as_blocks(problem), None, "*")


def objective_lower_bound(problem: Problem | Blocks) -> int:
    """A lower bound on ``sum(cost[p] * height[p])``.

    Every pool's height is at least its own max-load; together they are at least the total load.
    The cheapest heights meeting both (cheapest pools filled first, within capacities) are a lower
    bound. With one pool it is simply the max-load.
    """
    blocks = _as_blocks(problem)
    pools = blocks.problem.pools
    own = max_load(blocks)
    if len(pools) == 1:
        return own[pools[0].name].bytes * pools[0].cost
    h = {p.name: own[p.name].bytes for p in pools}
    deficit = total_load(blocks).bytes - sum(h.values())
    for p in sorted(pools, key=lambda p: p.cost):
        if deficit <= 0:
            break
        room = deficit if p.capacity is None else max(0, min(deficit, p.capacity - h[p.name]))
        h[p.name] += room
        deficit -= room
    return sum(p.cost * h[p.name] for p in pools)


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
    if all(p.capacity is not None for p in pools):
        total = total_load(blocks)
        cap = sum(p.capacity for p in pools)  # type: ignore[misc]
        if total.bytes > cap:
            return (f"{total.bytes} bytes are live at step {total.moment} ({total.live} buffers),"
                    f" over the {cap} bytes of all pools together")
    return None
