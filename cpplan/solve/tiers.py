"""Several pools that blocks choose between (memory tiers): the tier relaxation first.

Before the whole model (:mod:`.pools`), the tier relaxation (:mod:`cpplan.exact.tiers`: each
moment's load cut anywhere) gives a proven lower bound on the objective, often close to the
optimum since fragmentation costs little next to what the choice of pools costs, and a choice
of pools worth packing: it is packed with best-fit and repaired where fragmentation leaves a
block no room (:func:`cpplan.planners.tiers.pack_choice`), in two orders, and offered.
"""

from __future__ import annotations

from ..errors import CapacityError
from ..exact.lazy import tier_bound
from ..planners.fit import order_blocks
from ..planners.tiers import density_order, pack_choice
from .context import Context
from .incumbent import Proof

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
