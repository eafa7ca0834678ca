"""What every search of one solve shares: the time budget, the stop flag, the settings, and
the shape of an answer (:class:`Outcome`)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..deadline import Budget

if TYPE_CHECKING:  # OR-Tools loads when a solver runs, not with the module (start-up time)
    from ortools.sat.python import cp_model

__all__ = ["Control", "Outcome", "CP_SAT_UNIT"]

#: Seconds one unit of CP-SAT's deterministic time takes on this kind of machine (measured on
#: the packing models of MiniMalloc's challenging set: 15 to 24 s on a busy machine, less on an
#: idle one), so that deterministic limits are in nominal seconds like everything else.
CP_SAT_UNIT = 12.0


@dataclass
class Control:
    """The time budget (wall or deterministic, with the stop flag) and the settings shared by
    every solver call of one solve."""

    budget: Budget
    workers: int = 2
    seed: int = 0
    _active: set = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def of(cls, seconds: float | None, *, workers: int = 2, seed: int = 0,
           deterministic: bool = False) -> Control:
        return cls(Budget(seconds, deterministic=deterministic), workers, seed)

    @property
    def deterministic(self) -> bool:
        return self.budget.deterministic

    @property
    def stopped(self) -> threading.Event:
        return self.budget.stop_flag

    def remaining(self) -> float:
        return self.budget.remaining()

    def deadline(self, seconds: float) -> float:
        """The wall-clock moment (``time.perf_counter``) at which a search given ``seconds``
        stops: never in deterministic mode, where node budgets end searches instead."""
        if self.deterministic:
            return float("inf")
        return time.perf_counter() + min(seconds, self.remaining())

    def stop(self) -> None:
        """Stop every running solver (they return their best solution so far)."""
        self.budget.stop()
        with self._lock:
            for s in list(self._active):
                s.stop_search()

    def run(self, solver: cp_model.CpSolver, model: cp_model.CpModel,
            callback: cp_model.CpSolverSolutionCallback | None = None, *,
            budget: Budget | None = None) -> int:
        """Solve; in deterministic mode the solver's deterministic time is charged to
        ``budget`` (default: the control's), so every clock of the solve moves with it."""
        from ortools.sat.python import cp_model

        with self._lock:
            if self.stopped.is_set():
                return cp_model.UNKNOWN
            self._active.add(solver)
        try:
            return solver.solve(model, callback)
        finally:
            with self._lock:
                self._active.discard(solver)
            (budget or self.budget).report(solver.response_proto.deterministic_time * CP_SAT_UNIT)

    def solver(self, seconds: float, workers: int = 1) -> cp_model.CpSolver:
        from ortools.sat.python import cp_model

        s = cp_model.CpSolver()
        p = s.parameters
        p.num_workers = 1 if self.deterministic else max(1, workers)
        p.random_seed = self.seed
        p.catch_sigint_signal = False  # cpplan handles Ctrl-C itself (see cpplan.solve)
        if self.deterministic:
            p.max_deterministic_time = max(seconds, 0.01) / CP_SAT_UNIT
        else:
            p.max_time_in_seconds = max(seconds, 0.01)
        return s


@dataclass(frozen=True)
class Outcome:
    """What a search learned about one set of blocks (scaled units)."""

    status: str  # "feasible", "optimal", "infeasible", "unknown"
    pools: np.ndarray | None = None
    offsets: np.ndarray | None = None
    bound: int | None = None  # proven lower bound on the objective of these blocks
    detail: str = ""
