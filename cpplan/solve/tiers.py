"""Several pools that blocks choose between (memory tiers): the tier relaxation first.

Before the whole model (:mod:`.pools`), the tier relaxation (:mod:`cpplan.exact.tiers`: each
moment's load cut anywhere) gives a proven lower bound on the objective, often close to the
optimum since fragmentation costs little next to what the choice of pools costs, and a choice
of pools worth packing: it is packed with best-fit and repaired where fragmentation leaves a
block no room (:func:`cpplan.planners.tiers.pack_choice`), in two orders, and offered; where
that lost traffic, each bounded pool's chosen blocks are asked exactly whether they fit at its
capacity (a one-pool solve, goal ``fit``), which perfect packings need.
"""

from __future__ import annotations

import numpy as np

from ..deadline import Budget
from ..errors import CapacityError
from ..exact.lazy import tier_bound
from ..planners.fit import order_blocks
from ..planners.tiers import density_order, pack_choice
from .context import Context
from .incumbent import Proof
from .pools import pool_problem

__all__ = ["solve_tiers"]


def solve_tiers(ctx: Context) -> None:
    """The tier relaxation's bound and its choice of pools, packed, within ``tier_bound`` of the
    time; nothing when no block has a choice of pools."""
    b, inc = ctx.blocks, ctx.incumbent
    if all(len(c) == 1 for c in b.pools):
        return
    settled = b.settled_traffic_cost

    def report(objective: int, bound: int) -> None:
        inc.emit("tiers", f"relaxation {objective + settled}, bound {bound + settled}")

    got = tier_bound(b, ctx.budget.share(ctx.params.tier_bound), report)
    if got is None:
        return
    inc.prove(Proof("tier relaxation", "each moment's load cut anywhere (no fragmentation)",
                    got.bound + settled))
    if got.pools is None:
        return
    for name, order in (("density", density_order(b)), ("size", order_blocks(b, "size"))):
        try:
            pools, offsets = pack_choice(b, got.pools, order, "tier relaxation")
        except CapacityError:
            continue
        if inc.offer(pools, offsets, f"tier relaxation, packed by {name}"):
            inc.emit("tiers", f"the relaxation's choice packed ({name} order)")
    if got.objective is not None and (inc.objective is None
                                      or inc.objective > got.objective + settled):
        # Best-fit left fragmentation where the relaxation left none: the chosen blocks of each
        # bounded pool asked exactly whether they fit there (probes, the tiling search).
        _fit_choice(ctx, got.pools, ctx.budget.share(ctx.params.tier_fit))


def _fit_choice(ctx: Context, choice: np.ndarray, budget: Budget) -> None:
    """Each bounded pool's blocks of ``choice`` solved as a one-pool problem at its capacity
    (goal ``fit``); where every one fits, the other blocks are packed around them (best-fit,
    in their chosen pools) and the plan offered: the relaxation's choice with no block moved."""
    from . import solve

    b, problem = ctx.blocks, ctx.problem
    bounded = [p for p in range(b.n_pools) if b.pool_capacity[p] >= 0 and (choice == p).any()]
    placed: dict[int, tuple[int, int]] = {}
    for k, p in enumerate(bounded):
        ids = np.flatnonzero(choice == p)
        members = [problem.buffers[m] for i in ids.tolist()
                   for m in b.member[b.member_ptr[i]:b.member_ptr[i + 1]].tolist()]
        name = problem.pools[p].name
        sub = pool_problem(problem, members, name)
        got = solve(sub, budget.within(budget.remaining() / (len(bounded) - k)), goal="fit",
                    params=ctx.params, explain=False)
        if not got.placements:
            return
        for i in ids.tolist():
            placed[i] = (p, got.placements[problem.buffers[b.root[i]].id].offset // b.scale)
    try:
        pools, offsets = pack_choice(b, choice, order_blocks(b, "size"), "tier relaxation",
                                     placed=placed)
    except CapacityError:
        return
    if ctx.incumbent.offer(pools, offsets, "tier relaxation, fitted exactly"):
        ctx.incumbent.emit("tiers", "the relaxation's choice fitted exactly")
