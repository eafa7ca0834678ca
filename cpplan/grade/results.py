"""What grading finds: the reference on an instance, one planner's result, and every result on
one instance with the ratios the tables show."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

OUTCOMES = ("ok", "invalid", "capacity", "error", "missing", "timeout")
"""What became of a planner on an instance: a valid plan (``ok``), a plan that breaks the
problem (``invalid``), a :class:`~cpplan.errors.CapacityError` (``capacity``), another error
(``error``), no plan file (``missing``, for ``plans:DIR``), or interrupted (``timeout``)."""


@dataclass(frozen=True)
class Reference:
    """The exact engine's result on one instance: best ``objective`` it found (``None``: none),
    the ``lower_bound`` it proved, its ``status``, which ``engine`` and how long."""

    objective: int | None
    lower_bound: int
    status: str
    engine: str
    time_limit: float
    seconds: float
    planner: str = ""
    cached: bool = False


@dataclass(frozen=True)
class Result:
    """One planner on one instance. ``outcome`` is one of :data:`OUTCOMES`; ``objective`` is
    the height (``sum(cost * height)`` with several pools) when the outcome is ``ok``."""

    planner: str
    outcome: str
    objective: int | None = None
    heights: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    message: str = ""


@dataclass(frozen=True)
class InstanceReport:
    """Every planner's result on one instance, its lower bound and the reference.

    ``error`` is set when the instance itself could not be graded (unreadable file, crash).
    """

    name: str
    path: str
    buffers: int = 0
    lower_bound: int | None = None
    reference: Reference | None = None
    results: tuple[Result, ...] = ()
    seconds: float = 0.0
    error: str = ""

    @property
    def best_known(self) -> int | None:
        """The lowest height of any valid plan seen: the reference's or a graded planner's."""
        values = [r.objective for r in self.results
                  if r.outcome == "ok" and r.objective is not None]
        if self.reference is not None and self.reference.objective is not None:
            values.append(self.reference.objective)
        return min(values) if values else None

    @property
    def proven_optimum(self) -> int | None:
        """The optimum when it is known: some plan reaches the proven lower bound."""
        best = self.best_known
        if best is not None and self.lower_bound is not None and best <= self.lower_bound:
            return best
        return None

    def result(self, planner: str) -> Result | None:
        """The result of the planner labelled ``planner``, if it was graded here."""
        return next((r for r in self.results if r.planner == planner), None)

    def ratio_bound(self, r: Result) -> float | None:
        """``height / lower bound`` of a valid result; ``None`` otherwise."""
        return ratio(r.objective, self.lower_bound) if r.outcome == "ok" else None

    def ratio_best(self, r: Result) -> float | None:
        """``height / best known`` of a valid result; ``None`` otherwise."""
        return ratio(r.objective, self.best_known) if r.outcome == "ok" else None

    def optimal(self, r: Result) -> bool:
        """Whether a valid result reaches the proven lower bound."""
        return (r.outcome == "ok" and self.lower_bound is not None
                and r.objective is not None and r.objective <= self.lower_bound)

    def winners(self) -> set[str]:
        """Graded planners with the lowest height on this instance (ties all win)."""
        heights = [r.objective for r in self.results
                   if r.outcome == "ok" and r.objective is not None]
        if not heights:
            return set()
        low = min(heights)
        return {r.planner for r in self.results if r.outcome == "ok" and r.objective == low}


def ratio(value: int | None, base: int | None) -> float | None:
    """``value / base``; ``None`` when either is unknown, 1 for 0/0, infinite over 0."""
    if value is None or base is None:
        return None
    if base == 0:
        return 1.0 if value == 0 else math.inf
    return value / base
