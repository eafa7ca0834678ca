"""Time budgets: every planner honours the active budget and its stop flag; deterministic time
depends on the work done alone."""

from __future__ import annotations

import math
import random

import pytest

from cpplan import Buffer, CpplanError, Problem, check
from cpplan.deadline import PLACEMENTS_PER_SECOND, Budget, OutOfTime, check_time_limit, tick
from cpplan.planners import get, names
from cpplan.planners.placer import STRETCH


def _problem(n: int, seed: int = 1) -> Problem:
    rng = random.Random(seed)
    buffers = []
    for i in range(n):
        start = rng.randrange(0, n // 4)
        buffers.append(Buffer(f"b{i}", rng.randrange(1, 4096), start,
                              start + rng.randrange(1, 40), alignment=rng.choice((1, 16, 64))))
    return Problem(tuple(buffers))


@pytest.mark.parametrize("value", [math.nan, math.inf, -1, -0.5, True, "3", None])
def test_a_time_limit_is_a_finite_number_at_least_zero(value):
    with pytest.raises(CpplanError, match="time limit"):
        check_time_limit(value)


def test_children_never_outlive_their_parent_and_charge_it():
    parent = Budget(10.0, deterministic=True)
    child = parent.within(100.0)
    assert child.remaining() == 10.0
    with child.active():
        tick(20_000)  # one nominal second of placements
    assert parent.elapsed() == pytest.approx(1.0) and child.remaining() == pytest.approx(9.0)
    parent.stop()
    assert child.expired() and child.stopped


def test_tick_outside_any_budget_does_nothing():
    for _ in range(1000):
        tick()


PLANNERS = [n for n in names() if n != "cpplan"]


@pytest.mark.parametrize("name", PLANNERS)
def test_every_planner_stops_when_its_budget_is_stopped(name):
    # Ctrl-C sets the stop flag: whatever the planner is, it gives up at its next placement.
    problem = _problem(300)
    budget = Budget(60.0)
    budget.stop()
    with budget.active():
        try:
            plan = get(name)(problem)
        except OutOfTime:
            return
    # best-fit and first-fit finish the blocks they did not place in tracks, with no search:
    # a plan at once, and a valid one.
    assert plan.stats["finished_in_tracks"] == len(problem.buffers)
    assert not check(problem, plan)


@pytest.mark.parametrize("name", ["best-fit", "usmp-hill-climb", "local-search", "glow-best-of-3",
                                  "tflite-gpu-objects-greedy-by-size", "xla-best-fit-spatial"])
def test_a_deterministic_budget_cuts_every_planner_at_the_same_point(name):
    # A tenth of a nominal second is 2000 placements: far less than these planners need here,
    # so each is cut, always at the same placement, or returns its best so far, always the same.
    problem = _problem(3000)
    outcomes = []
    for _ in range(2):
        budget = Budget(0.1, deterministic=True)
        try:
            with budget.active():
                plan = get(name)(problem)
        except OutOfTime:
            outcomes.append(("out of time", budget.elapsed()))
        else:
            assert not check(problem, plan)
            outcomes.append((plan.placements, budget.elapsed()))
    assert outcomes[0] == outcomes[1]
    # (the placer reports its placements a stretch at a time, before placing them)
    assert outcomes[0][1] <= 0.1 + STRETCH / PLACEMENTS_PER_SECOND


def test_the_portfolio_keeps_its_best_plan_when_time_runs_out():
    problem = _problem(3000)
    budget = Budget(0.4, deterministic=True)  # best-fit's first order fits, not much more
    with budget.active():
        plan = get("portfolio")(problem, planners=["best-fit", "first-fit", "local-search"],
                                time_limit=60, deterministic=True)
    assert not check(problem, plan)
    assert "out of time" in plan.stats["results"].values() or \
        "skipped" in plan.stats["results"].values()
