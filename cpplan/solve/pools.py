"""Several pools: the pools and the offsets chosen together.

Up to ``max_exact_blocks`` blocks, one CP-SAT model over every block chooses each block's pool
and offset and minimises the whole objective, heights and traffic (:mod:`cpplan.exact.model`),
from the best plan as a hint and under proven caps only. Beyond, the best plan's choice of pools
stays and each pool is solved as a one-pool problem (:func:`pool_by_pool`), which also packs
the arenas again where heights cost nothing.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..bounds import max_load, stacking_height
from ..deadline import Budget
from ..exact.lazy import minimise
from ..problem import Buffer, Problem
from .context import Context
from .incumbent import Proof

__all__ = ["solve_pools", "pool_by_pool", "pool_problem"]


def solve_pools(ctx: Context) -> None:
    """Several pools: one model over all blocks, or pool by pool beyond ``max_exact_blocks``."""
    if len(ctx.blocks) > ctx.params.max_exact_blocks:
        pool_by_pool(ctx, ctx.budget)
    else:
        _whole_model(ctx)


def _whole_model(ctx: Context) -> None:
    """One CP-SAT model over all blocks, choosing pools and offsets, minimising the objective."""
    b, inc = ctx.blocks, ctx.incumbent
    ids = np.arange(len(b))
    own = max_load(b)
    height_min = {p: own[pool.name].bytes // b.scale for p, pool in enumerate(b.problem.pools)}
    # Proven caps only (a cap that loses the optimum is a false proof): the stacking height,
    # the capacity, and what the best plan's objective allows a pool of non-zero cost (the
    # other terms of the objective are never negative).
    height_max = {}
    for p in range(b.n_pools):
        cap = stacking_height(b, ids, p)
        if b.pool_capacity[p] >= 0:
            cap = min(cap, int(b.pool_capacity[p]))
        if inc.objective is not None and b.pool_cost[p] > 0:
            cap = min(cap, inc.objective // (b.scale * int(b.pool_cost[p])))
        height_max[p] = max(cap, height_min[p])
    hint = None if inc.offsets is None or inc.pools is None else (inc.pools, inc.offsets)
    settled = b.settled_traffic_cost  # (the model leaves out what every plan pays)

    def report(objective: float, bound: float) -> None:
        inc.emit("minimise", f"objective {int(objective) + settled}, bound {int(bound) + settled}")

    out = minimise(b, ids, ctx.budget, height_max=height_max, height_min=height_min, hint=hint,
                   report=report)
    if out.offsets is not None and out.pools is not None:
        inc.offer(out.pools, out.offsets, "cp-sat")
    if out.bound is not None:
        inc.prove(Proof("cp-sat", "the whole model", out.bound + settled))
    if out.status == "infeasible":
        inc.prove(Proof("cp-sat", "no plan meets the pools' capacities"))


def pool_by_pool(ctx: Context, budget: Budget) -> None:
    """The best plan's choice of pools stays, and each pool's buffers are solved again as a
    one-pool problem (probes, CP-SAT, large neighbourhood search) from their offsets as hints,
    within ``budget``, the pool with the largest excess first (height above its own load, times
    its cost; times one where no height costs anything). A pool's new packing is kept when it
    is lower and the objective no higher: with the pools fixed the traffic is too, so the
    objective falls with the heights, or (heights that cost nothing) stays while the arenas
    shrink. Nothing here is a proof for the whole problem.

    Used for several pools beyond one model (``max_exact_blocks``), and, where heights cost
    nothing (memories chosen for traffic alone), to pack the arenas again at the end."""
    from . import solve

    b, inc, problem = ctx.blocks, ctx.incumbent, ctx.problem
    if inc.offsets is None or inc.pools is None:
        return
    plan = b.to_plan(inc.pools, inc.offsets, planner="pools", lower_bound=inc.lower)
    placements = dict(plan.placements)
    members: dict[str, list[Buffer]] = {}
    for buf in problem.buffers:
        members.setdefault(placements[buf.id].pool, []).append(buf)
    own = max_load(b)
    heights = dict(plan.heights)
    weighted = any(p.cost for p in problem.pools)

    def excess(name: str) -> int:
        cost = problem.pool(name).cost if weighted else 1
        return cost * (heights[name] - own[name].bytes)

    todo = sorted((n for n in members if excess(n) > 0), key=excess, reverse=True)
    weight = {n: len(members[n]) for n in todo}
    for k, name in enumerate(todo):
        if budget.remaining() <= ctx.params.min_probe:
            break
        share = budget.within(budget.remaining() * weight[name]
                              / sum(weight[m] for m in todo[k:]))
        sub = pool_problem(problem, members[name], name, placements)
        got = solve(sub, share, params=ctx.params, explain=False)
        if got.placements and got.heights[name] < heights[name]:
            placements.update(got.placements)
            if inc.offer_lower(*b.arrays(placements), inc.planner if not weighted else "pools"):
                heights[name] = got.heights[name]
                inc.emit("pools", f"pool {name}: height {got.heights[name]}")


def pool_problem(problem: Problem, buffers: list[Buffer], pool: str,
                 hints: dict | None = None) -> Problem:
    """The one-pool problem of ``buffers`` (whole alias blocks of ``problem``) in ``pool``, with
    their aliases; their offsets in ``hints`` (placements by id), if given, as hints."""
    keep = {buf.id for buf in buffers}
    moved = tuple(replace(buf, pools=(pool,), hint=None if hints is None or buf.offset is not None
                          else hints[buf.id].offset) for buf in buffers)
    return Problem(moved, (problem.pool(pool),),
                   tuple(a for a in problem.aliases if a.buffer in keep),
                   name=f"{problem.name}:{pool}")
