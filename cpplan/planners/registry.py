"""Planners by name: one signature, ``plan(problem, **options) -> Plan``.

Registering a planner makes it available to ``cpplan solve --planner``, to the portfolio and to
the grader with no other change. ``family`` says what it is: ``replica`` (a faithful copy of a
production allocator), ``own`` (cpplan's heuristics) or ``exact``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import CpplanError
from ..plan import Plan

__all__ = ["PlannerInfo", "register", "get", "info", "names", "PLANNERS"]

Planner = Callable[..., Plan]


@dataclass(frozen=True)
class PlannerInfo:
    name: str
    function: Planner
    family: str
    summary: str
    reproduces: str = ""  # project and source file, for replicas


PLANNERS: dict[str, PlannerInfo] = {}


def register(name: str, *, family: str, reproduces: str = "") -> Callable[[Planner], Planner]:
    """Decorator: register ``function`` under ``name`` (its docstring's first paragraph is the
    summary)."""
    if family not in ("replica", "own", "exact"):
        raise ValueError(f"unknown planner family {family!r}")

    def deco(function: Planner) -> Planner:
        if name in PLANNERS and PLANNERS[name].function is not function:
            raise ValueError(f"planner {name!r} registered twice")
        # The docstring's first paragraph, whole (a first line alone stops mid-sentence).
        summary = " ".join((function.__doc__ or "").strip().split("\n\n")[0].split())
        PLANNERS[name] = PlannerInfo(name, function, family, summary, reproduces)
        return function

    return deco


def _load_all() -> None:
    from . import load_all

    load_all()


def get(name: str) -> Planner:
    """The planner registered as ``name``; a clear error naming the known ones otherwise."""
    return info(name).function


def info(name: str) -> PlannerInfo:
    _load_all()
    try:
        return PLANNERS[name]
    except KeyError:
        raise CpplanError(f"unknown planner {name!r}; known: {', '.join(sorted(PLANNERS))}") \
            from None


def names(family: str | None = None) -> list[str]:
    """Registered planner names (of one family), sorted."""
    _load_all()
    return sorted(n for n, p in PLANNERS.items() if family is None or p.family == family)
