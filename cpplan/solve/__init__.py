"""What users call: the best plan cpplan can find in the time given, with its certificate.

:func:`solve` is a pipeline of stages (DESIGN.md, "The exact engine"), each one starting from
the best plan so far (:class:`~cpplan.solve.incumbent.Incumbent`), which only ever gets better:

1. **bounds** (:mod:`.stages`): the max-load per pool; a capacity below it ends the solve
   (``infeasible``, naming the pool, the moment and the bytes live then);
2. **first plan**: best-fit in size order, finishing its smallest blocks in tracks if its
   share of the time runs out (then a large pool's tight components go to the tiling search);
3. **heuristics**: cpplan's other greedy orders, the cheap replicas and the local search;
4. **exact** (one pool, :mod:`.components`): per component, probes and a bisection (the tiling
   search for tight ones) or peak-first packing and LNS for large ones; (several pools): the
   tier relaxation's bound and its choice of pools packed (:mod:`.tiers`), then one CP-SAT
   model choosing pools and offsets, or pool by pool (:mod:`.pools`);
5. **finish**: where heights cost nothing, each memory's blocks packed again as low as a short
   one-pool solve makes them (the objective unchanged); the checked plan, ``optimal`` only
   when it reaches a proven bound, otherwise
   ``feasible`` with the gap; ``infeasible`` only with a proof (and the buffers that cannot fit
   together); ``unknown`` when there is neither a plan nor a proof.

The time limit is one :class:`~cpplan.deadline.Budget`, split by the named shares of
:class:`~cpplan.solve.params.SolverParams`; the time to build and check the final plan is kept
out of the search, so that the limit holds. Ctrl-C stops the search and returns the best plan
found so far.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from ..blocks import make_blocks
from ..bounds import objective_lower_bound
from ..deadline import Budget, PlanOptions, current, finishing
from ..errors import CpplanError
from ..plan import Plan, finish_seconds_per_buffer
from ..planners import registry
from ..problem import Problem
from .components import solve_components
from .context import GOALS, Component, Context
from .incumbent import Incumbent, Progress, Proof
from .params import DEFAULT_PARAMS, SolverParams
from .pools import pool_by_pool, solve_pools
from .stages import (
    bounds,
    first_plan,
    heuristics,
    heuristics_share,
    heuristics_stage,
    hints,
    tight_first,
)
from .tiers import solve_tiers

__all__ = ["solve", "Progress", "Proof", "SolverParams"]


def solve(
    problem: Problem,
    options: PlanOptions | Budget | None = None,
    *,
    goal: str = "minimise",
    planners: list[str] | None = None,
    exact: bool = True,
    explain: bool = True,
    progress: Callable[[Progress], None] | None = None,
    params: SolverParams = DEFAULT_PARAMS,
    time_limit: float | None = None,
    workers: int | None = None,
    seed: int | None = None,
    deterministic: bool | None = None,
) -> Plan:
    """The best checked plan found within the time limit, with its certificate.

    ``options`` (:class:`~cpplan.deadline.PlanOptions`: time limit, default 60 s; seed;
    ``deterministic``, the same plan on every run: one thread, deterministic time; workers),
    or the keywords of the same names; or a :class:`~cpplan.deadline.Budget` when the solve is a
    stage of a larger run. ``goal="minimise"`` minimises ``sum(cost * height) + sum(traffic *
    traffic_cost)``; ``goal="fit"`` stops at the first plan within the pools' capacities
    (MiniMalloc's question). ``planners`` replaces the heuristics (the first plan included); the
    buffers' hints, when they make a valid plan, are a warm start. ``exact=False`` skips the
    exact engine. ``progress`` receives a :class:`Progress` whenever the bound or the best plan
    moves. With ``explain``, a proven ``infeasible`` verdict comes with ``plan.conflict``:
    buffers that cannot fit together (:mod:`cpplan.exact.conflict`).

    Args:
        problem: The problem to plan.
        options: The run's :class:`~cpplan.deadline.PlanOptions`, or the
            :class:`~cpplan.deadline.Budget` of a larger run; ``None`` for the defaults (60 s).
        goal: ``"minimise"`` the objective, or ``"fit"``: the first plan within the
            capacities.
        planners: Registered planner names to run instead of the default heuristics.
        exact: Whether the exact engine (probes, CP-SAT, the searches) runs after the
            heuristics.
        explain: Whether a proven ``infeasible`` verdict looks for the buffers that cannot fit
            together.
        progress: Called with a :class:`Progress` whenever the bound or the best plan moves.
        params: The solver's tuning constants (:class:`SolverParams`).
        time_limit: Seconds (overrides the options'; the time to build and check the plan is
            kept within it).
        workers: Threads the search may use (overrides the options').
        seed: The seed of the random choices (overrides the options').
        deterministic: One thread on a deterministic clock: the same plan on every run
            (overrides the options').

    Returns:
        A plan that has passed :func:`~cpplan.plan.check`; ``optimal`` when its objective
        reaches a proven lower bound, else ``feasible`` with ``lower_bound`` and ``gap``;
        ``infeasible`` only with a proof (``explanation``, and ``conflict`` when found);
        ``unknown`` with no placements when there is neither a plan nor a proof. Its
        ``stats`` record the proofs, the best planner, the heuristics' offers and whether
        the solve was interrupted.

    Raises:
        CpplanError: An unknown ``goal`` or planner name, a ``Budget`` given together with
            keywords, or options out of range (a negative time limit, say).
    """
    if goal not in GOALS:
        raise CpplanError(f"unknown goal {goal!r}; expected one of {', '.join(GOALS)}")
    budget = _budget(problem, options, time_limit=time_limit, workers=workers, seed=seed,
                     deterministic=deterministic)
    started = time.perf_counter()
    blocks = make_blocks(problem)
    incumbent = Incumbent(blocks, Proof("max-load", "the most bytes live at one moment",
                                        objective_lower_bound(blocks)), progress, started)
    components = [Component(c) for c in blocks.components()] if blocks.n_pools == 1 else []
    # Where heights cost nothing (memories chosen for traffic alone), a little time is kept to
    # make the arenas small at the end.
    free_heights = blocks.n_pools > 1 and not blocks.pool_cost.any()
    search = budget.share(1 - params.compact) if free_heights else budget
    ctx = Context(problem, blocks, goal, search, params, incumbent, components)
    with _interruptible(budget):
        if bounds(ctx):
            began = budget.elapsed()
            hints(ctx)
            if not ctx.settled() and planners is None:
                first_plan(ctx)
            spent = budget.elapsed() - began
            tiled = tight_first(ctx) if exact and not ctx.settled() else []
            if not ctx.settled():
                heuristics(ctx, heuristics_stage(budget, heuristics_share(ctx, exact), spent),
                           planners)
            for comp, offsets, planner in tiled:  # (into the heuristics' plan)
                if incumbent.offer_packing(comp.ids, offsets, planner):
                    incumbent.emit(planner)
            if exact and not ctx.settled():
                if ctx.one_pool:
                    solve_components(ctx)
                else:
                    solve_tiers(ctx)
                    if not ctx.settled():
                        solve_pools(ctx)
            if free_heights:  # (the arenas packed again: the objective stays)
                pool_by_pool(ctx, budget)
    return _finish(ctx, started, explain)


#: The time limit of a solve whose options give none.
TIME_LIMIT = 60.0


@registry.register("cpplan", family="exact")
def plan(problem: Problem, options: PlanOptions, *, goal: str = "minimise",
         planners: list[str] | None = None, exact: bool = True,
         progress: Callable[[Progress], None] | None = None) -> Plan:
    """cpplan's solver: bounds, heuristics, raced CP-SAT probes and searches, anytime
    minimisation, with a proven lower bound (see :func:`cpplan.solve.solve`).

    Registered as the planner ``cpplan`` (family ``exact``); call it through the registry
    (``cpplan.planners.get("cpplan")(problem, time_limit=10)``), which makes the options'
    budget active. Without a time limit in ``options`` it runs for 60 s.

    Args:
        problem: The problem to plan.
        options: Time limit, seed, determinism, workers.
        goal: As for :func:`solve`.
        planners: As for :func:`solve`.
        exact: As for :func:`solve`.
        progress: As for :func:`solve`.

    Returns:
        The checked plan, as :func:`solve` returns it.
    """
    budget = current()  # the registry's, from the options (within the caller's)
    assert budget is not None
    if options.time_limit is None:
        budget = budget.within(TIME_LIMIT)
    return solve(problem, budget, goal=goal, planners=planners, exact=exact,
                 progress=progress)


def _budget(problem: Problem, options: PlanOptions | Budget | None,
            **keywords: float | int | bool | None) -> Budget:
    """The search's budget: the options' time limit, less the time to build and check the final
    plan (:func:`cpplan.deadline.finishing`); or, when ``options`` is the budget of a larger run
    (which kept that time already), a child of it."""
    given: dict[str, Any] = {k: v for k, v in keywords.items() if v is not None}
    if isinstance(options, Budget):
        if given:
            raise CpplanError(f"solve: give a Budget or {', '.join(given)}, not both")
        return options.within(None)
    base = options if options is not None else PlanOptions(TIME_LIMIT)
    parent = replace(base, **given).budget()
    limit = parent.remaining()
    return parent.within(limit - finishing(limit, len(problem.buffers),
                                           finish_seconds_per_buffer(problem)))


@contextmanager
def _interruptible(budget: Budget) -> Iterator[None]:
    """Ctrl-C (in the main thread) stops the search; the best plan so far is returned."""
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, lambda *_: budget.stop())
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _finish(ctx: Context, started: float, explain: bool) -> Plan:
    """The solve's answer: the checked best plan with its bound and status, or the verdict."""
    inc, problem, budget = ctx.incumbent, ctx.problem, ctx.budget
    deterministic = budget.deterministic

    def seconds() -> float:
        # In deterministic mode the time reported is deterministic too, so that the whole
        # output is the same on every machine.
        return budget.elapsed() if deterministic else time.perf_counter() - started

    stats = {"proofs": [str(p) for p in inc.proofs[1:]], "interrupted": budget.stopped,
             "best_planner": inc.planner, "offered": dict(inc.offered)}
    refuted = inc.infeasible
    if refuted is not None or inc.pools is None or inc.offsets is None:
        why = str(refuted) if refuted is not None else "no plan found in the time limit"
        verdict = Plan.infeasible(problem, why, planner="cpplan.solve", seconds=seconds())
        if refuted is None:
            return verdict.with_record(status="unknown", stats=stats)
        if explain:
            verdict = _explained(ctx, verdict, started)
        return verdict.with_record(stats=stats)
    plan = ctx.blocks.to_plan(inc.pools, inc.offsets, planner=f"cpplan.solve:{inc.planner}",
                              seconds=seconds(), lower_bound=inc.lower, stats=stats)
    if not deterministic:  # the time to build and check the plan counts too
        plan = plan.with_record(seconds=time.perf_counter() - started)
    inc.emit("done", plan.status)
    return plan


def _explained(ctx: Context, plan: Plan, started: float) -> Plan:
    """The infeasible ``plan`` with the buffers that cannot fit together, when found: with what
    is left of the time limit, and at most ``explain_extra`` seconds past it (a max-load
    conflict needs no search; a refuted probe may run short)."""
    from ..exact.conflict import irreducible_conflict

    budget = ctx.budget
    extra = ctx.params.explain_extra
    seconds = max(budget.remaining(), min(budget.options.time_limit or extra, extra))
    found = irreducible_conflict(ctx.blocks, Budget(seconds, options=budget.options))
    if budget.deterministic:
        return plan.with_record(conflict=found)
    return plan.with_record(conflict=found, seconds=time.perf_counter() - started)
