"""The reference: the exact engine's best plan and proven lower bound on an instance, solved
once per problem content (the cache is :mod:`cpplan.grade.cache`)."""

from __future__ import annotations

import time
from pathlib import Path

from ..bounds import objective_lower_bound
from ..errors import CapacityError
from ..plan import Plan
from ..problem import Problem
from .cache import ENGINE, load_cached, problem_key, store
from .results import Reference
from .specs import ensure_checked

SOLVES = 0  # references computed (not read from the cache) by this process; tests read it


def solve_reference(problem: Problem, *, time_limit: float, workers: int = 2
                    ) -> tuple[Reference, Plan]:
    """The exact engine's result on ``problem`` (:func:`cpplan.solve.solve`, seed 0) and its
    plan (checked; an infeasible plan when there is none), without the cache."""
    global SOLVES
    from ..solve import solve

    SOLVES += 1
    started = time.perf_counter()
    try:
        plan = solve(problem, time_limit=time_limit, workers=workers, seed=0)
    except CapacityError as e:
        plan = Plan.infeasible(problem, str(e), planner=ENGINE)
    seconds = time.perf_counter() - started
    lb = max(objective_lower_bound(problem), plan.lower_bound or 0)
    if plan.status == "infeasible":
        return Reference(None, lb, "infeasible", ENGINE, time_limit, seconds, plan.planner), plan
    ensure_checked(problem, plan)
    status = "optimal" if plan.objective <= lb else plan.status
    if status == "optimal":
        lb = plan.objective
    return Reference(plan.objective, lb, status, ENGINE, time_limit, seconds, plan.planner), plan


def reference(problem: Problem, *, time_limit: float = 10.0, cache_dir: str | Path | None = None,
              workers: int = 2, key: str | None = None) -> Reference:
    """The exact engine's result on ``problem``, from the cache when it holds a usable one.

    Uses :func:`solve_reference`; stores the result and its plan in ``cache_dir`` (``None``: no
    cache).
    """
    cdir = Path(cache_dir) if cache_dir is not None else None
    key = key or problem_key(problem)
    if cdir is not None:
        hit = load_cached(cdir, key, ENGINE, time_limit)
        if hit is not None:
            return hit
    ref, plan = solve_reference(problem, time_limit=time_limit, workers=workers)
    if cdir is not None:
        store(cdir, key, ref, problem, plan)
    return ref
