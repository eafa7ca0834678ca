"""Planners by name, with one contract: ``plan(problem, options, **own) -> Plan``.

Every planner is a function ``plan(problem: Problem, options: PlanOptions, **own) -> Plan``:
``options`` (:class:`cpplan.deadline.PlanOptions`) carries the time limit, the seed, determinism
and the workers, which every planner honours; ``own`` are the planner's own keyword options
(``order=`` for best-fit, ``alignment=`` for a replica). Registering it makes it available to
``cpplan solve --planner``, to the portfolio and to the grader with no other change.

``register`` returns a :class:`PlannerInfo`, which is what callers call: ``info(problem,
options, **own)`` runs the planner under its time limit (a :class:`cpplan.deadline.Budget`
made active, so that the planner's inner loops stop when it expires), names an unknown option
clearly, keeps the time to build and check a plan of that size out of the planner's
(:func:`cpplan.deadline.finishing`), and, when the planner's own time runs out before it has
a plan, returns the fallback:
the no-reuse stacking, status ``unknown`` (or, when even that breaks a capacity, a plan with no
placements, ``unknown``), never an error. When the *caller's* time runs out first (a portfolio,
a solve, the grader's limit), :class:`cpplan.deadline.OutOfTime` goes up to the caller.

``family`` says what a planner is: ``replica`` (a faithful copy of a production allocator),
``own`` (cpplan's heuristics) or ``exact``.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any, Concatenate

from ..deadline import OutOfTime, PlanOptions, current, finishing
from ..errors import CapacityError, CpplanError
from ..plan import Plan, finish_seconds_per_buffer
from ..problem import Problem

__all__ = ["Planner", "PlannerInfo", "register", "get", "info", "names", "PLANNERS"]

FAMILIES = ("replica", "own", "exact")
OPTION_FIELDS = tuple(f.name for f in fields(PlanOptions))


#: The shape of every planner (see the module docstring): ``plan(problem, options, **own)``,
#: its own options keyword-only, with defaults.
Planner = Callable[Concatenate[Problem, PlanOptions, ...], Plan]


@dataclass(frozen=True)
class PlannerInfo:
    """A registered planner: call it as ``info(problem, options=None, **own)``.

    Args:
        name: The name it is registered under (``cpplan solve --planner NAME``).
        function: The planner, ``plan(problem, options, **own) -> Plan``.
        family: ``replica``, ``own`` or ``exact``.
        summary: The first paragraph of its docstring.
        reproduces: For a replica, the project and source file it copies.
        own: The names of its own keyword options; ``None`` when it takes any keyword.
    """

    name: str
    function: Planner
    family: str
    summary: str
    reproduces: str = ""  # project and source file, for replicas
    own: frozenset[str] | None = field(default=None, repr=False)  # None: any keyword

    def __call__(self, problem: Problem, options: PlanOptions | None = None,
                 **own: Any) -> Plan:
        """The planner's checked plan within ``options`` (default: no time limit). The fields
        of :class:`PlanOptions` may also be given as keywords (``time_limit=2, seed=1``).

        Args:
            problem: The problem to plan.
            options: Time limit, seed, determinism, workers; ``None`` for the defaults.
            **own: The planner's own options, and any field of :class:`PlanOptions`.

        Returns:
            The planner's plan; when its time ran out before it had one, the no-reuse
            stacking with status ``unknown`` (or, if even that breaks a capacity, a plan with
            no placements, ``unknown``).

        Raises:
            CpplanError: An option the planner does not take, or options out of range.
            CapacityError: The planner could not place a buffer within its pools' capacities.
            OutOfTime: The *caller's* budget (a portfolio, a solve) expired first.
        """
        given = {k: own.pop(k) for k in OPTION_FIELDS if k in own}
        if given:
            options = replace(options if options is not None else PlanOptions(), **given)
        if self.own is not None:
            unknown = set(own) - self.own
            if unknown:
                takes = ", ".join(sorted(self.own)) or "none"
                raise CpplanError(f"{self.name}: unknown option(s) "
                                  f"{', '.join(sorted(unknown))} (its own options: {takes})")
        options = options if options is not None else PlanOptions()
        outer = current()
        limit = options.time_limit
        if limit is not None:  # (building and checking the plan, or the fallback, counts too)
            limit -= finishing(limit, len(problem.buffers), finish_seconds_per_buffer(problem))
        budget = outer.within(limit) if outer is not None else replace(
            options, time_limit=limit).budget()
        started = time.perf_counter()
        try:
            with budget.active():
                return self.function(problem, options, **own)
        except OutOfTime:
            if outer is not None and outer.expired():
                raise  # the caller's time, not this planner's: the caller decides
            return _fallback(problem, self.name, time.perf_counter() - started)


def _fallback(problem: Problem, name: str, seconds: float) -> Plan:
    """What a planner that ran out of time returns: the no-reuse stacking, ``unknown``."""
    from ..blocks import make_blocks
    from .stacking import stack

    why = f"{name} ran out of time before it had a plan"
    stats = {"out_of_time": True}
    try:
        pools, offsets = stack(make_blocks(problem), ticking=False)
    except CapacityError as e:
        return Plan.infeasible(problem, f"{why}, and the no-reuse stacking breaks a capacity "
                               f"({e})", planner=name, seconds=seconds).with_record(
                                   status="unknown", stats=stats)
    plan = make_blocks(problem).to_plan(pools, offsets, planner=f"{name}:naive",
                                        seconds=seconds, status="unknown",
                                        stats={**stats, "fallback": "naive"})
    return plan.with_record(explanation=f"{why}: the no-reuse stacking")


PLANNERS: dict[str, PlannerInfo] = {}


def register(name: str, *, family: str, reproduces: str = ""
             ) -> Callable[[Planner], PlannerInfo]:
    """Decorator: register ``function`` under ``name`` (its docstring's first paragraph is the
    summary; its keyword-only parameters are its own options) and return its
    :class:`PlannerInfo`.

    Args:
        name: The planner's name, unique.
        family: ``replica`` (a faithful copy of a production allocator), ``own`` (cpplan's
            heuristics) or ``exact``.
        reproduces: For a replica, the project, file and behaviour it copies.

    Returns:
        The decorator; it returns the :class:`PlannerInfo` it registered, which takes the
        function's place.

    Raises:
        ValueError: An unknown family, or (from the decorator) another function registered
            under ``name`` already.

    Examples:
        A planner in a module of ``cpplan/planners/`` (or imported before use):

        ```python
        @register("my-planner", family="own")
        def plan(problem: Problem, options: PlanOptions, *, order: str = "size") -> Plan:
            '''Best-fit in my order (the first paragraph: its summary).'''
            ...
        ```
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown planner family {family!r}")

    def deco(function: Planner) -> PlannerInfo:
        if name in PLANNERS and PLANNERS[name].function is not function:
            raise ValueError(f"planner {name!r} registered twice")
        # The docstring's first paragraph, whole (a first line alone stops mid-sentence).
        summary = " ".join((function.__doc__ or "").strip().split("\n\n")[0].split())
        params = inspect.signature(function).parameters.values()
        own = None if any(p.kind is p.VAR_KEYWORD for p in params) else frozenset(
            p.name for p in params if p.kind is p.KEYWORD_ONLY)
        PLANNERS[name] = PlannerInfo(name, function, family, summary, reproduces, own)
        return PLANNERS[name]

    return deco


def _load_all() -> None:
    from . import load_all

    load_all()


def get(name: str) -> PlannerInfo:
    """The planner registered as ``name`` (call it); a clear error naming the known ones
    otherwise.

    Args:
        name: A registered name (``cpplan planners`` lists them).

    Returns:
        Its :class:`PlannerInfo`, to call as ``info(problem, time_limit=...)``.

    Raises:
        CpplanError: No planner has that name; the message lists the known ones.
    """
    return info(name)


def info(name: str) -> PlannerInfo:
    """The same as :func:`get`.

    Raises:
        CpplanError: No planner has that name.
    """
    _load_all()
    try:
        return PLANNERS[name]
    except KeyError:
        raise CpplanError(f"unknown planner {name!r}; known: {', '.join(sorted(PLANNERS))}") \
            from None


def names(family: str | None = None) -> list[str]:
    """Registered planner names (of one family), sorted.

    Args:
        family: ``replica``, ``own`` or ``exact``; ``None`` for every planner.

    Returns:
        The names, sorted.
    """
    _load_all()
    return sorted(n for n, p in PLANNERS.items() if family is None or p.family == family)
