"""The load of blocks over time, and the lower bounds it gives (on :class:`Blocks` only).

:mod:`cpplan.bounds` is the public face of these bounds (it also takes problems); this module
sits below :mod:`cpplan.blocks` so that a plan made from blocks can carry its lower bound.
See :mod:`cpplan.bounds` for what each bound means.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .blocks import Blocks

__all__ = ["LoadBound", "load_profile", "max_load", "total_load", "objective_lower_bound",
           "height_lower_bound", "traffic_lower_bound"]


@dataclass(frozen=True)
class LoadBound:
    """The max-load of one pool: ``bytes`` live at step ``moment`` (its first such step)."""

    pool: str
    bytes: int
    moment: int | None
    live: int  # number of blocks live at that moment


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


def max_load(blocks: Blocks) -> dict[str, LoadBound]:
    """Per pool, the max-load of the blocks whose only candidate is that pool."""
    pools = blocks.problem.pools
    out = {}
    for p, pool in enumerate(pools):
        # With one pool every block's only candidate is it: no mask to build.
        mask = None if len(pools) == 1 else np.fromiter((c == (p,) for c in blocks.pools), bool,
                                                        len(blocks))
        out[pool.name] = _peak(blocks, mask, pool.name)
    return out


def total_load(blocks: Blocks) -> LoadBound:
    """The max-load of all blocks together, whatever their pools."""
    return _peak(blocks, None, "*")


def objective_lower_bound(blocks: Blocks) -> int:
    """A lower bound on ``sum(cost[p] * height[p]) + sum(traffic * traffic_cost)``.

    Every pool's height is at least its own max-load; together they are at least the total load.
    The cheapest heights meeting both (cheapest pools filled first, within capacities) are a lower
    bound on the first term; with one pool it is simply the max-load. The second term is at
    least what every block's traffic costs in its cheapest candidate pool. (The two terms are
    bounded apart, each over all plans, so their sum is a bound; a bound that trades one against
    the other needs the exact engine, :mod:`cpplan.exact.tiers`.)
    """
    return height_lower_bound(blocks) + traffic_lower_bound(blocks)


def traffic_lower_bound(blocks: Blocks) -> int:
    """What the blocks' traffic costs at least: each block in its cheapest candidate pool."""
    if not blocks.traffic.any():
        return 0
    rate = blocks.pool_traffic_cost
    cheapest = np.fromiter((min(int(rate[p]) for p in c) for c in blocks.pools), np.int64,
                           len(blocks))
    return int((blocks.traffic * cheapest).sum())


def height_lower_bound(blocks: Blocks) -> int:
    """A lower bound on ``sum(cost[p] * height[p])`` (see :func:`objective_lower_bound`)."""
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
