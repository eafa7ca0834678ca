"""Grading one instance, in three steps so that the middle one can run on another machine.

:func:`prepare` (where the files are) reads the problem and looks the reference up in the cache;
:func:`run_job` (anywhere: this process, a child process, a worker of a cluster) solves the
reference if needed and runs the planners; :func:`finish` (where the files are) stores a new
reference in the cache, reads the plan files of ``plans:DIR`` planners, and assembles the
:class:`~cpplan.grade.InstanceReport`. A :class:`Job` holds everything :func:`run_job` needs, so
a worker needs neither the instance file, nor the user's ``file.py``, nor the cache.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from ..bounds import objective_lower_bound
from ..deadline import Budget, OutOfTime
from ..errors import CapacityError, CpplanError, PlanError
from ..plan import Plan
from ..problem import Problem
from .cache import ENGINE, load_cached, problem_key, store
from .instances import plan_file_for
from .reference_solve import solve_reference
from .results import InstanceReport, Reference, Result
from .specs import PlannerSpec, as_plan, load_function, user_source


@dataclass(frozen=True)
class Job:
    """One instance to grade, self-contained. ``specs`` are the planners :func:`run_job` runs
    (``plans:DIR`` ones are graded by :func:`finish`), ``sources`` the text of the user's
    ``file.py`` planners by target, ``cached`` the reference found in the cache (if any)."""

    name: str
    path: str
    problem: Problem
    key: str
    specs: tuple[PlannerSpec, ...]
    time_limit: float
    planner_time_limit: float | None = None
    cached: Reference | None = None
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """What :func:`run_job` sends back: the reference and, when it was solved now, its plan (for
    the cache), the lower bound the ratios use, the planners' results and the time it took."""

    reference: Reference | None
    plan: Plan | None
    lower_bound: int
    results: tuple[Result, ...]
    seconds: float


def prepare(path: str | Path, planners: Sequence[PlannerSpec], *, name: str,
            time_limit: float, cache_dir: str | Path | None,
            planner_time_limit: float | None = None,
            sources: Mapping[str, str] | None = None) -> Job:
    """The job of grading ``planners`` on the problem file ``path``; raises if the file cannot
    be read. ``sources`` (target -> text, from :func:`user_sources`) go in the job, for a
    worker that has not the user's ``file.py`` planners."""
    from ..io import read_problem

    problem = read_problem(path)
    key = problem_key(problem)
    cached = None
    if time_limit > 0 and cache_dir is not None:
        cached = load_cached(Path(cache_dir), key, ENGINE, time_limit)
    specs = tuple(s for s in planners if s.kind != "plans")
    return Job(name, str(path), problem, key, specs, time_limit, planner_time_limit, cached,
               dict(sources or {}))


def user_sources(planners: Sequence[PlannerSpec]) -> dict[str, str]:
    """The text of the user's ``file.py`` planners among ``planners``, by target."""
    return {s.target: text for s in planners if (text := user_source(s)) is not None}


def run_job(job: Job, workers: int = 2) -> Outcome:
    """Solve the reference (unless cached; ``workers`` threads for the exact engine) and run the
    job's planners. Raises only if the reference itself fails; a planner's failure is its cell."""
    started = time.perf_counter()
    problem = job.problem
    lb = objective_lower_bound(problem)
    ref, plan = job.cached, None
    if job.time_limit > 0:
        if ref is None:
            ref, plan = solve_reference(problem, time_limit=job.time_limit, workers=workers)
        lb = max(lb, ref.lower_bound)
    results = tuple(run_planner(s, problem, Path(job.path), lb, job.planner_time_limit,
                                job.sources.get(s.target))
                    for s in job.specs)
    return Outcome(ref, plan, lb, results, time.perf_counter() - started)


def finish(job: Job, outcome: Outcome, planners: Sequence[PlannerSpec], *,
           cache_dir: str | Path | None, seconds: float = 0.0) -> InstanceReport:
    """The instance's report, its results in the order of ``planners``; a reference solved by
    :func:`run_job` is stored in ``cache_dir``. ``seconds`` is added to the job's own time."""
    started = time.perf_counter()
    if outcome.plan is not None and cache_dir is not None:
        assert outcome.reference is not None
        store(Path(cache_dir), job.key, outcome.reference, job.problem, outcome.plan)
    ran = iter(outcome.results)
    results = tuple(
        run_planner(s, job.problem, Path(job.path), outcome.lower_bound, job.planner_time_limit)
        if s.kind == "plans" else next(ran) for s in planners)
    return InstanceReport(job.name, job.path, len(job.problem.buffers), outcome.lower_bound,
                          outcome.reference, results,
                          outcome.seconds + seconds + time.perf_counter() - started)


def failed(name: str, path: str | Path, error: BaseException | str,
           seconds: float = 0.0) -> InstanceReport:
    """The report of an instance that could not be graded: cpplan's own errors as they read,
    others with their type."""
    if isinstance(error, CpplanError):
        msg = str(error)
    elif isinstance(error, BaseException):
        msg = f"{type(error).__name__}: {error}"
    else:
        msg = error
    return InstanceReport(name, str(path), seconds=seconds, error=msg)


class GradeOptions(TypedDict):
    """The options of :func:`grade_instance` that a runner passes to every instance."""

    time_limit: float
    cache_dir: str | Path | None
    workers: int
    planner_time_limit: float | None


def grade_instance(path: str | Path, planners: Sequence[PlannerSpec], *, name: str | None = None,
                   time_limit: float = 10.0, cache_dir: str | Path | None = None,
                   workers: int = 2, planner_time_limit: float | None = None) -> InstanceReport:
    """Grade ``planners`` on the problem in ``path`` in this process; never raises for a bad
    instance or planner (the report carries the error)."""
    path = Path(path)
    name = name or path.stem
    started = time.perf_counter()
    try:
        job = prepare(path, planners, name=name, time_limit=time_limit, cache_dir=cache_dir,
                      planner_time_limit=planner_time_limit)
        outcome = run_job(job, workers)
        return finish(job, outcome, planners, cache_dir=cache_dir,
                      seconds=time.perf_counter() - started - outcome.seconds)
    except Exception as e:
        return failed(name, path, e, time.perf_counter() - started)


def run_planner(spec: PlannerSpec, problem: Problem, path: Path, lb: int,
                limit: float | None = None, source: str | None = None) -> Result:
    """One planner on one problem, under a time budget of ``limit`` seconds (every registered
    planner honours it; a user's function may, by calling :func:`cpplan.deadline.tick`)."""
    started = time.perf_counter()
    try:
        plan = planner_plan(spec, problem, path, lb, limit, source)
        if isinstance(plan, Result):
            return plan
    except OutOfTime:
        return Result(spec.label, "timeout", seconds=time.perf_counter() - started,
                      message=f"no plan within {limit:g} s")
    except PlanError as e:
        return Result(spec.label, "invalid", seconds=time.perf_counter() - started,
                      message=str(e))
    except CapacityError as e:
        return Result(spec.label, "capacity", seconds=time.perf_counter() - started,
                      message=str(e))
    except Exception as e:  # a planner's bug is reported in its cell, not raised
        return Result(spec.label, "error", seconds=time.perf_counter() - started,
                      message=f"{type(e).__name__}: {e}")
    return Result(spec.label, "ok", plan.objective, dict(plan.heights), plan.seconds)


def planner_plan(spec: PlannerSpec, problem: Problem, path: Path, lb: int,
                 limit: float | None = None, source: str | None = None) -> Plan | Result:
    """The checked plan of the planner of ``spec`` on ``problem`` (the file ``path``), under a
    budget of ``limit`` seconds, or its ``missing`` result; raises what the planner raises, and
    :class:`~cpplan.errors.PlanError` for an invalid plan. :func:`run_planner` grades it; the
    HTML report (:mod:`cpplan.grade_html`) calls it again to draw the plan."""
    started = time.perf_counter()
    with Budget(limit).active():
        got = _call_planner(spec, problem, path, source)
    if isinstance(got, Result):
        return got
    return as_plan(problem, got, planner=spec.label, lower_bound=lb,
                   seconds=time.perf_counter() - started)


def _call_planner(spec: PlannerSpec, problem: Problem, path: Path,
                  source: str | None = None) -> object:
    """What the planner of ``spec`` returns for ``problem`` (a plan file read for ``plans``), or
    a ``missing`` result."""
    if spec.kind == "plans":
        file = plan_file_for(spec.target, path)
        if file is None:
            return Result(spec.label, "missing", message=f"no plan for {path.name} in "
                          f"{spec.target}")
        from ..io import read_plan

        return read_plan(file, problem)
    if spec.kind == "builtin":
        from ..planners import get

        return get(spec.target)(problem)
    return load_function(spec.target, source)(problem)
