"""The stages before the exact engine: bounds, the first plan, the heuristics.

Each stage offers its plans to the incumbent, which keeps only a better one: a stage can never
make the answer worse than what the stages before it found.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..bounds import capacity_conflict
from ..deadline import Budget, OutOfTime
from ..errors import CapacityError, CpplanError, PlanError
from ..exact.tiling import is_tight
from ..planners import registry
from ..planners.fit import fit_blocks
from ..planners.portfolio import REPLICAS_UP_TO, SEARCHES, default_planners
from ..planners.stacking import stack
from .components import tile_tight
from .context import Component, Context
from .incumbent import Proof

__all__ = ["bounds", "tight_first", "hints", "first_plan", "heuristics", "heuristics_share",
           "heuristics_stage"]


def bounds(ctx: Context) -> bool:
    """The max-load per pool against the capacities: False (and the proof) when a capacity is
    below it, so that no plan exists."""
    conflict = capacity_conflict(ctx.blocks)
    if conflict is not None:
        ctx.incumbent.prove(Proof("max-load", conflict))
        return False
    ctx.incumbent.emit("bounds")
    return True


def tight_first(ctx: Context) -> list[tuple[Component, np.ndarray, str]]:
    """One pool of more than ``lns_above`` blocks: its components tight at the lower bound,
    packed there by the tiling search (and, at zero slack, the hole search) right after the
    first plan (``large_tile`` of the time in all, shared by size; the other heuristics on
    tens of thousands of blocks take seconds, such a packing often less), with their packings
    (or, where alignments differ, the realigned plans above the bound:
    :func:`.components.tile_tight`) and what made them, to put into the heuristics' plan. Each
    is tried once."""
    b, params = ctx.blocks, ctx.params
    if not ctx.one_pool or len(b) <= params.lns_above or ctx.goal != "minimise":
        return []
    target = ctx.incumbent.lower_height()
    tight = [c for c in ctx.components if len(c) > 1 and is_tight(b, c.ids, target)]
    total = ctx.budget.share(params.large_tile)
    done = []
    for k, comp in enumerate(tight):
        left = sum(map(len, tight[k:]))
        got = tile_tight(ctx, comp, total.within(total.remaining() * len(comp) / left), target)
        if got is not None and got[0].offsets is not None:
            done.append((comp, got[0].offsets, got[1]))
    return done


def hints(ctx: Context) -> None:
    """The plan the buffers' hints describe (each block at its root's hint, in its first
    candidate pool), when every block has a hint and that plan is valid: a warm start only."""
    b, inc = ctx.blocks, ctx.incumbent
    if len(b) == 0 or (b.hint[b.fixed < 0] < 0).any():
        return
    pools = np.fromiter((c[0] for c in b.pools), np.int64, len(b))
    offsets = np.where(b.fixed >= 0, b.fixed, b.hint)
    try:
        b.to_plan(pools, offsets, planner="hints", lower_bound=inc.lower)
    except PlanError:
        return
    if inc.offer(pools, offsets, "hints"):
        inc.emit("heuristic", "the problem's hints")


def first_plan(ctx: Context) -> None:
    """Best-fit as it runs alone (in as many orders as the problem's size allows, size order
    first: the largest blocks first, O(n log n) on the overlap index each), with all of the
    search's time it needs: when that runs out, the best order done stands, or the first one
    finishes its smallest blocks in tracks (:mod:`cpplan.planners.tracks`). So a solve starts
    from what best-fit alone gives in the same limit, and never from the no-reuse stacking
    where a greedy can place the blocks. (The time to finish and check that plan is the
    solve's own reserve: the plan it checks is the one the solve returns, unless a better one
    comes.)"""
    inc = ctx.incumbent
    try:
        with ctx.budget.active():  # (arrays: the solve's final plan is the one built and checked)
            pools, offsets, stats = fit_blocks(ctx.blocks, "best", "best-fit")
    except (CapacityError, OutOfTime):
        return  # (the heuristics try other orders and planners)
    if inc.offer(pools, offsets, "best-fit"):
        left = stats.get("finished_in_tracks")
        inc.emit("heuristic", f"best-fit, {stats['order']} order" + (
            f" ({left} blocks finished in tracks at the time limit)" if left else ""))


def heuristics(ctx: Context, budget: Budget, planners: list[str] | None) -> None:
    """The heuristic portfolio (or ``planners``) within ``budget``: first-fit in every order the
    problem's size allows (best-fit ran first), the cheap replicas of production allocators,
    the local search with the time left. Should nothing give a plan, the no-reuse stacking (one
    pass, no search) is the fallback, so that a solve has a plan whenever one is easy to have.
    """
    inc = ctx.incumbent
    failures = []
    # (best-fit ran first, in every order its size allows)
    names = planners or [n for n in default_planners(ctx.problem) if n != "best-fit"]
    for name in names:
        if budget.expired():
            break
        # A greedy planner runs until the budget stops it; a search gets the time left.
        limit = budget.remaining() if name in SEARCHES else None
        try:
            with budget.active():
                plan = registry.get(name)(ctx.problem, replace(budget.options, time_limit=limit))
        except OutOfTime:
            break
        except CpplanError as e:  # (a capacity it cannot meet; a replica refusing a problem)
            failures.append(f"{name}: {e}")
            continue
        if plan.placements and inc.offer(*ctx.blocks.arrays(plan.placements), plan.planner):
            inc.emit("heuristic", plan.planner or name)
    if inc.objective is None:
        try:
            inc.offer(*stack(ctx.blocks, ticking=False), "naive")  # (checked with the final plan)
        except CapacityError as e:
            failures.append(f"naive: {e}")
        else:
            inc.emit("heuristic", "naive (the heuristics were cut short)")
    if inc.objective is None and failures:
        inc.emit("heuristic", "no heuristic met the capacities (" + "; ".join(failures[:2])
                 + ")")


def heuristics_stage(budget: Budget, share: float, spent: float) -> Budget:
    """The heuristics' budget once the first plan took ``spent`` of their ``share`` seconds:
    what is left of the share, and never less than the first plan took, so that first-fit,
    which costs about what best-fit does, runs to its end in every order best-fit ran in
    (on tilings of 2000 buffers it is often the better of the two, by up to 6 %)."""
    return budget.within(max(share - spent, spent))


def heuristics_share(ctx: Context, exact: bool) -> float:
    """The seconds the heuristics (the first plan included) may take before the exact engine
    starts: a quick plan is all the exact engine needs (an upper bound and a hint). Exceptions:
    no exact engine (all the time), and problems where the exact engine only improves a plan
    (LNS, several pools beyond ``max_exact_blocks``), where the greedy plan must be there first.
    """
    b, params, budget = ctx.blocks, ctx.params, ctx.budget
    left = budget.remaining()
    if not exact:
        return left
    if b.n_pools > 1 and len(b) > params.max_exact_blocks:
        return left * params.heuristics_pools
    if any(len(c) > params.lns_above for c in ctx.components):
        if len(b) > REPLICAS_UP_TO:
            return left * params.heuristics_huge
        return min(left * params.heuristics_large, params.heuristics_large_max)
    return min(max(left * params.heuristics, params.heuristics_min), params.heuristics_max)

