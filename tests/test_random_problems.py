from __future__ import annotations

import pytest

from cpplan import check
from cpplan.planners import get
from cpplan.random_problems import ALIGNMENTS, LARGEST, SMALLEST, random_problem
from cpplan.solve import solve


def test_a_seed_gives_the_same_problem_and_every_field_stays_in_its_range():
    problem = random_problem(400, seed=3, aligned=True)
    assert problem == random_problem(400, seed=3, aligned=True)
    assert problem != random_problem(400, seed=4, aligned=True)
    assert len(problem.buffers) == 400 and problem.name == "aligned-random-400-3"
    for b in problem.buffers:
        assert SMALLEST <= b.size <= LARGEST and b.end > b.start
        assert ALIGNMENTS[0] <= b.alignment <= ALIGNMENTS[1]
        assert b.alignment & (b.alignment - 1) == 0  # (a power of two)
    assert {b.alignment for b in random_problem(400, seed=3).buffers} == {1}


@pytest.mark.parametrize("aligned", [False, True])
def test_the_solver_plans_one_no_worse_than_best_fit(aligned):
    problem = random_problem(200, seed=1, aligned=aligned)
    plan = solve(problem, time_limit=5)
    assert not check(problem, plan)
    assert plan.objective <= get("best-fit")(problem).objective


def test_no_buffers_is_an_error():
    with pytest.raises(ValueError, match="n: at least 1"):
        random_problem(0)
