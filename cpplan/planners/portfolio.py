"""The portfolio: run several planners and keep the best checked plan.

Every plan a planner returns has passed the checker already (planners return through
:meth:`cpplan.blocks.Blocks.to_plan`); the portfolio compares objectives and keeps the smallest,
ties to the planner listed first. It is what :mod:`cpplan.solve` starts from before the exact
engine, and the heuristic answer when there is no time for more.

Default list (:func:`default_planners`): cpplan's own greedy planners first (``best-fit``,
``first-fit``), then every registered replica of a production allocator that is cheap, i.e.
not a search (``usmp-hill-climb`` and ``vela``, hill climbs, are left out), and last
cpplan's ``local-search`` with the time left; the replicas and the local search only while the
problem is small enough (:data:`REPLICAS_UP_TO` blocks; past that the replicas' simple indexes
take tens of seconds each and the local search's moves re-place tens of thousands of blocks).

Time: the options' ``time_limit`` (default :data:`TIME_LIMIT` seconds) bounds the whole call:
the greedy planners run first (a fraction of a second on a few hundred blocks) and the
searches (:data:`SEARCHES`) get what is left, with the same seed and determinism. With
``deterministic=True`` the clock is ignored and the local search gets ``time_limit x``
:data:`SEARCH_SHARE` worth of block placements
(:data:`cpplan.planners.local_search.PLACEMENTS_PER_SECOND` per second).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from ..blocks import make_blocks
from ..deadline import OutOfTime, PlanOptions, current
from ..errors import CapacityError, CpplanError
from ..plan import Plan
from ..problem import Problem
from .registry import info, names, register

__all__ = ["portfolio", "default_planners", "OWN_FAST", "SEARCHES", "REPLICAS_UP_TO",
           "TIME_LIMIT", "SEARCH_SHARE"]

OWN_FAST = ("best-fit", "first-fit")
# Searches (left out of the default list; given the time left when run)
SEARCHES = frozenset({"usmp-hill-climb", "vela", "local-search", "portfolio"})
REPLICAS_UP_TO = 5000  # blocks
TIME_LIMIT = 5.0  # seconds, default for the whole portfolio
SEARCH_SHARE = 0.9  # of time_limit, for the local search in deterministic mode


def default_planners(problem: Problem) -> list[str]:
    """The planners a default portfolio runs on ``problem``, in order."""
    out = list(OWN_FAST)
    if len(make_blocks(problem)) <= REPLICAS_UP_TO:
        out += [n for n in names("replica") if n not in SEARCHES]
        out.append("local-search")
    return out


@register("portfolio", family="own")
def portfolio(problem: Problem, options: PlanOptions, *,
              planners: Sequence[str] | None = None,
              planner_options: dict[str, dict] | None = None) -> Plan:
    """Run several planners and keep the best checked plan (ties: the one listed first).

    ``planners``: names to run, in order (default :func:`default_planners`). The options'
    ``time_limit`` (default :data:`TIME_LIMIT`) bounds the call: a running planner is then
    interrupted and no further planner is started; a search (:data:`SEARCHES`) gets the time
    left, with the options' seed and determinism (deterministic: ``time_limit x
    SEARCH_SHARE``, see the module docstring). ``planner_options``: a planner's own options,
    ``{name: {...}}``.
    Planners that raise :class:`CapacityError` or another :class:`CpplanError` are recorded
    and skipped; if none gives a plan the first error is raised again (or
    :class:`cpplan.deadline.OutOfTime` when time ran out first). ``plan.stats`` holds
    ``winner`` and, per planner, its objective, ``"skipped"``, ``"out of time"`` or the error.

    Args:
        problem: The problem to plan.
        options: The whole call's time limit (default :data:`TIME_LIMIT`), seed, determinism.
        planners: Registered names to run, in order.
        planner_options: Planner name -> its own options.

    Returns:
        The best plan (lowest objective; ties to the planner listed first), as ``portfolio``.

    Raises:
        CpplanError: No planners, an unknown name, ``portfolio`` itself; or, when no planner
            gave a plan, the first planner's error (a :class:`CapacityError` among them).
        OutOfTime: The time ran out before any planner gave a plan.
    """
    started = time.perf_counter()
    todo = list(planners) if planners is not None else default_planners(problem)
    if not todo:
        raise CpplanError("portfolio: no planners to run")
    for name in todo:
        info(name)  # unknown names fail before anything runs
        if name == "portfolio":
            raise CpplanError("portfolio: cannot run itself")
    own = planner_options or {}
    best: Plan | None = None
    results: dict[str, object] = {}
    seconds: dict[str, float] = {}
    first_error: CpplanError | None = None
    # Every planner runs under the portfolio's budget (the registry made it active, within the
    # caller's): one running when it expires is interrupted, and the best plan so far stands.
    time_limit = TIME_LIMIT if options.time_limit is None else options.time_limit
    outer = current()
    budget = outer.within(time_limit) if outer is not None else \
        replace(options, time_limit=time_limit).budget()
    for name in todo:
        if budget.expired():
            results[name] = "skipped"
            continue
        t0 = time.perf_counter()
        share = None  # a greedy planner has no time limit of its own: the portfolio's stops it
        if name in SEARCHES:
            share = time_limit * SEARCH_SHARE if options.deterministic else budget.remaining()
        try:
            with budget.active():
                plan = info(name)(problem, replace(options, time_limit=share),
                                  **own.get(name, {}))
        except OutOfTime:
            results[name] = "out of time"
            continue
        except CapacityError as e:
            results[name] = f"capacity: {e}"
            first_error = first_error or e
            continue
        except CpplanError as e:
            results[name] = f"error: {e}"
            first_error = first_error or e
            continue
        finally:
            seconds[name] = round(time.perf_counter() - t0, 4)
        results[name] = plan.objective
        if best is None or plan.objective < best.objective:
            best = plan
        if best.status == "optimal":
            results.update({n: "skipped" for n in todo if n not in results})
            break
    if best is None:
        if first_error is None:
            raise OutOfTime("portfolio: the time limit ran out before any planner gave a plan")
        raise first_error
    stats = {"winner": best.planner, "results": results, "seconds": seconds,
             "winner_stats": best.stats}
    return best.with_record(planner="portfolio", seconds=time.perf_counter() - started,
                            stats=stats)
