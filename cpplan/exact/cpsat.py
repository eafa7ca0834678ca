"""Running CP-SAT under a :class:`cpplan.deadline.Budget`: its time limit, its stop flag, its
options, and its deterministic clock."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..deadline import Budget
from .heap import release, watch

if TYPE_CHECKING:  # OR-Tools loads when a solver runs, not with the module (start-up time)
    from ortools.sat.python import cp_model

__all__ = ["CP_SAT_UNIT", "WINDOW_GROWTH_MB", "new_solver", "run"]

#: Seconds one unit of CP-SAT's deterministic time takes on this kind of machine (measured on
#: the packing models of MiniMalloc's challenging set: 15 to 24 s on a busy machine, less on an
#: idle one), so that deterministic limits are in nominal seconds like everything else.
CP_SAT_UNIT = 12.0

#: The most the solves of a window search of a large component (LNS, a peak window's probe)
#: may grow the process by, in MB, above where it was when that search began: the windows are
#: optional steps, and with what a solve of tens of thousands of blocks already holds this
#: keeps it within the few hundred MB that benchmarks/solve_memory.py checks. A window stopped
#: by it counts as out of time.
WINDOW_GROWTH_MB = 64.0


def new_solver(budget: Budget, seconds: float, workers: int = 1) -> cp_model.CpSolver:
    """A solver limited to ``seconds`` (deterministic seconds in deterministic mode) with the
    budget's seed, ``workers`` threads (one in deterministic mode), and no SIGINT handler of its
    own (cpplan handles Ctrl-C: :mod:`cpplan.solve`)."""
    from ortools.sat.python import cp_model

    s = cp_model.CpSolver()
    p = s.parameters
    p.num_workers = 1 if budget.deterministic else max(1, workers)
    p.random_seed = budget.seed
    p.catch_sigint_signal = False
    if budget.deterministic:
        p.max_deterministic_time = max(seconds, 0.01) / CP_SAT_UNIT
    else:
        p.max_time_in_seconds = max(seconds, 0.01)
    return s


def run(budget: Budget, solver: cp_model.CpSolver, model: cp_model.CpModel,
        callback: cp_model.CpSolverSolutionCallback | None = None, *,
        ceiling_mb: float | None = None) -> cp_model.CpSolverStatus:
    """Solve ``model``; a stop of ``budget`` stops the solver (which keeps its best solution),
    and its deterministic time is charged to ``budget`` (so every clock of the run moves).
    With ``ceiling_mb`` (not in deterministic mode, whose runs must repeat themselves), the
    solver also stops, as if out of time, once the process's resident memory passes it
    (:func:`.heap.watch`; :func:`.heap.ceiling` makes one). What the solve freed goes back to
    the operating system (:func:`.heap.release`)."""
    from ortools.sat.python import cp_model

    if budget.stopped:
        return cp_model.UNKNOWN
    if budget.deterministic:
        ceiling_mb = None
    solved = False
    try:
        with budget.stopping(solver.stop_search), watch(ceiling_mb, solver.stop_search):
            try:
                status = solver.solve(model, callback)
            except (IndexError, RuntimeError):
                # OR-Tools 9.15 fails inside some solves of models with a solution hint
                # ("absl::btree_map::at", an LNS window of realloc_packing(2000, seed=0)); the
                # same model without it solves (and 9.10 solves it with it)
                if not len(model.proto.solution_hint.vars):
                    raise
                model.clear_hints()
                status = solver.solve(model, callback)
            solved = True
            return status
    finally:
        if solved:  # (a solve that raised has no response to read: its error is what counts)
            budget.report(solver.response_proto.deterministic_time * CP_SAT_UNIT)
        release()
