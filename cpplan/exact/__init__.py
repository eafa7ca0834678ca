"""The exact engine: the CP-SAT packing model (:mod:`.model`) and the search around it
(:mod:`.search`). Users call :func:`cpplan.solve.solve`; it is also registered as the planner
``cpplan`` (family ``exact``) so that the grader and ``cpplan solve --planner`` see it."""

from __future__ import annotations

from ..plan import Plan
from ..planners.registry import register
from ..problem import Problem


@register("cpplan", family="exact", reproduces="")
def plan(problem: Problem, **options: object) -> Plan:
    """cpplan's solver: bounds, heuristic portfolio, raced CP-SAT probes, anytime minimisation."""
    from ..solve import solve

    return solve(problem, **options)  # type: ignore[arg-type]
