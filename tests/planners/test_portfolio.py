"""The portfolio: keeps the best checked plan of the planners it runs, says which won, and
fails clearly only when every planner fails."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from cpplan.bounds import objective_lower_bound
from cpplan.errors import CapacityError, CpplanError
from cpplan.plan import check
from cpplan.planners import get
from cpplan.planners.portfolio import default_planners
from cpplan.problem import Buffer, Pool, Problem
from tests.planners.test_local_search import tiling
from tests.strategies import problems

OWN = ["best-fit", "first-fit", "naive"]


def example() -> Problem:
    return Problem((Buffer("a", 8, 0, 2), Buffer("b", 6, 1, 4), Buffer("c", 4, 3, 6),
                    Buffer("d", 2, 3, 6)))


def test_keeps_the_best_and_names_the_winner():
    p = example()
    plan = get("portfolio")(p, planners=["naive", "best-fit"])
    assert plan.planner == "portfolio" and plan.stats["winner"] == "best-fit"
    assert plan.objective == get("best-fit")(p).objective < get("naive")(p).objective
    assert plan.stats["results"]["naive"] == get("naive")(p).objective
    assert check(p, plan) == []


def test_stops_at_the_lower_bound():
    plan = get("portfolio")(example(), planners=["best-fit", "naive"])
    assert plan.status == "optimal" and plan.stats["results"]["naive"] == "skipped"


def test_default_list_starts_with_the_own_planners_and_ends_with_the_search():
    todo = default_planners(example())
    assert todo[:2] == ["best-fit", "first-fit"]
    assert todo[-1] == "local-search"
    assert "portfolio" not in todo and "usmp-hill-climb" not in todo


def test_the_local_search_gets_the_time_left_and_improves_on_the_greedy_planners():
    p = tiling()
    plan = get("portfolio")(p, time_limit=1.0, deterministic=True)
    assert plan.stats["winner"] == "local-search"
    assert plan.objective == plan.lower_bound == 16 < plan.stats["results"]["best-fit"]
    again = get("portfolio")(p, time_limit=1.0, deterministic=True)
    assert again.placements == plan.placements


def test_errors_are_clear():
    p = Problem((Buffer("big", 10, 0, 1, pools=("s",)),), (Pool("s", capacity=4),))
    with pytest.raises(CapacityError, match="'big'"):
        get("portfolio")(p, planners=["best-fit", "first-fit"])
    with pytest.raises(CpplanError, match="unknown planner"):
        get("portfolio")(example(), planners=["best-fit", "no-such-planner"])
    with pytest.raises(CpplanError, match="itself"):
        get("portfolio")(example(), planners=["portfolio"])


@settings(max_examples=30)
@given(problems(max_buffers=8))
def test_plans_are_valid_and_the_best_of_their_planners(problem):
    try:
        plan = get("portfolio")(problem, planners=OWN)
    except CapacityError:
        return
    assert check(problem, plan) == []
    assert plan.objective >= objective_lower_bound(problem)
    objectives = [v for v in plan.stats["results"].values() if isinstance(v, int)]
    assert plan.objective == min(objectives)
