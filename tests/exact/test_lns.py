"""Large neighbourhood search: fixed obstacles in the model, windows, and solve's use of it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from ortools.sat.python import cp_model

from cpplan import Buffer, Problem, check, make_blocks, objective_lower_bound
from cpplan.deadline import PlanOptions
from cpplan.exact.lns import improve
from cpplan.exact.model import build_model
from cpplan.perfect import perfect_packing
from cpplan.plan import Placement, Plan
from cpplan.planners import get
from cpplan.solve import SolverParams, solve
from tests.strategies import problems


def _solve(pm, seconds: float = 10.0) -> tuple[int, cp_model.CpSolver]:
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = seconds
    return solver.solve(pm.model), solver


def _b_between_obstacles(b_size: int):
    """The model of b alone (over [0, 6), at most 6 high) with a at 0..2 over [0, 4) and c at
    3..5 over [2, 6) as fixed obstacles."""
    p = Problem((Buffer("a", 2, 0, 4), Buffer("b", b_size, 0, 6), Buffer("c", 3, 2, 6)))
    blocks = make_blocks(p)
    i = {p.buffers[r].id: k for k, r in enumerate(blocks.root.tolist())}
    return build_model(blocks, np.array([i["b"]]), height_max={0: 6}, minimise=True,
                       obstacles=(np.array([i["a"], i["c"]]), np.array([0, 3])))


def test_an_obstacle_leaves_one_slot():
    # a sits at 0..2 over [0, 4), c at 3..5 over [2, 6): b (size 1, [0, 6)) fits at 2 only,
    # under a height of 6.
    pm = _b_between_obstacles(b_size=1)
    status, solver = _solve(pm)
    assert status == cp_model.OPTIMAL
    assert pm.read(solver)[1].tolist() == [2]


def test_no_room_between_obstacles_is_infeasible():
    assert _solve(_b_between_obstacles(b_size=2))[0] == cp_model.INFEASIBLE


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_buffers=9, max_pools=1, capacities=False))
def test_a_window_among_fixed_blocks_gives_a_valid_plan_never_higher(problem):
    blocks = make_blocks(problem)
    if len(blocks) < 2:
        return
    pools, offs = blocks.arrays(get("best-fit")(problem).placements)
    tops = offs + blocks.size
    win = np.arange(0, len(blocks), 2)
    rest = np.setdiff1d(np.arange(len(blocks)), win)
    pm = build_model(blocks, win, height_max={0: int(tops.max())}, minimise=True,
                     hint=(pools[win], offs[win]), obstacles=(rest, offs[rest]))
    status, solver = _solve(pm)
    assert status == cp_model.OPTIMAL  # the current plan is a solution: never infeasible
    new = offs.copy()
    new[win] = pm.read(solver)[1]
    plan = blocks.to_plan(pools, new, planner="window")  # checked here
    assert max(plan.heights.values()) <= int(tops.max()) * blocks.scale


def _perfect_plan(problem: Problem) -> Plan:
    placements = {b.id: Placement("default", off)
                  for b, off in zip(problem.buffers, problem.meta["offsets"], strict=True)}
    return Plan.build(problem, placements, planner="construction")


@pytest.mark.parametrize("aligned", [False, True])
def test_perfect_packings_are_tiled_at_their_max_load(aligned):
    problem = perfect_packing(300, seed=3, aligned=aligned)
    assert len(problem.buffers) == 300
    assert objective_lower_bound(make_blocks(problem)) == problem.meta["optimum"]
    plan = _perfect_plan(problem)
    assert check(problem, plan) == []
    assert max(pl.offset + b.size for b, pl in
               zip(problem.buffers, plan.placements.values(), strict=True)) == 1 << 20
    if aligned:
        assert {b.alignment for b in problem.buffers} > {64}
        assert all(pl.offset % b.alignment == 0
                   for b, pl in zip(problem.buffers, plan.placements.values(), strict=True))


def _lns_run(problem: Problem, seconds: float) -> tuple[np.ndarray, np.ndarray, int]:
    blocks = make_blocks(problem)
    pools, offs = blocks.arrays(get("best-fit")(problem).placements)
    control = PlanOptions(seconds, workers=1, deterministic=True).budget()
    out = improve(blocks, np.arange(len(blocks)), offs, control,
                  lower=objective_lower_bound(blocks) // blocks.scale)
    blocks.to_plan(pools, out.offsets, planner="lns")  # checked
    return offs, out.offsets, int((offs + blocks.size).max())


def test_lns_lowers_a_greedy_plan_and_repeats_itself_in_deterministic_mode():
    problem = perfect_packing(150, seed=1)
    size = make_blocks(problem).size
    before, after, greedy = _lns_run(problem, 3.0)
    assert int((after + size).max()) < greedy
    assert np.array_equal(_lns_run(problem, 3.0)[1], after)


def test_solve_uses_lns_on_large_components_until_the_time_limit():
    problem = perfect_packing(200, seed=2)
    greedy = get("best-fit")(problem).objective
    plan = solve(problem, time_limit=4, deterministic=True, params=SolverParams(lns_above=50))
    assert check(problem, plan) == []
    assert plan.objective <= greedy
    # Anytime: a plan not proven optimal used the time it was given.
    assert plan.status == "optimal" or plan.seconds >= 3.0
