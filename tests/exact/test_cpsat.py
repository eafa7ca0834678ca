"""Running CP-SAT (:mod:`cpplan.exact.cpsat`): a failure inside a solve with a hint is not the
end of the search."""

from __future__ import annotations

import pytest
from ortools.sat.python import cp_model

from cpplan.deadline import Budget
from cpplan.exact.cpsat import run


class _FailsWithHints(cp_model.CpSolver):
    """A solver that fails as OR-Tools 9.15 does inside some solves of hinted models."""

    def solve(self, model, callback=None):  # type: ignore[override]
        if len(model.proto.solution_hint.vars):
            raise IndexError("absl::btree_map::at")
        return super().solve(model, callback)


def test_a_solve_that_fails_with_its_hint_is_made_again_without_it():
    m = cp_model.CpModel()
    x = m.new_int_var(0, 10, "x")
    m.add(x >= 3)
    m.minimize(x)
    m.add_hint(x, 7)
    solver = _FailsWithHints()
    assert run(Budget(5.0), solver, m) == cp_model.OPTIMAL
    assert solver.value(x) == 3 and not len(m.proto.solution_hint.vars)


def test_a_failure_without_a_hint_is_raised():
    m = cp_model.CpModel()
    m.new_int_var(0, 10, "x")

    class _Fails(cp_model.CpSolver):
        def solve(self, model, callback=None):  # type: ignore[override]
            raise RuntimeError("broken")

    with pytest.raises(RuntimeError, match="broken"):
        run(Budget(5.0), _Fails(), m)
