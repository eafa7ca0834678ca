"""Peak-first packing: an exact window at the load's peak, a greedy fill around it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import cpplan.exact.peak as peak_module
from cpplan import Buffer, Problem, check, make_blocks, objective_lower_bound
from cpplan.deadline import PlanOptions
from cpplan.exact.peak import peak_first
from cpplan.io import read_problem
from cpplan.planners import get
from cpplan.solve import SolverParams, solve
from tests.bruteforce import brute_force
from tests.shared import benchmark
from tests.strategies import problems


def _greedy(problem: Problem):
    blocks = make_blocks(problem)
    _pools, offsets = blocks.arrays(get("best-fit")(problem).placements)
    return blocks, offsets


def test_pangu_reaches_its_max_load():
    # idealloc's pangu_2.6B (18692 buffers): best-fit ends 0.76 % above the max-load, with two
    # 20 MiB holes in the column of the peak moment. Packing the blocks alive around the peak
    # exactly, then the others around them, reaches the max-load: a proof of optimality.
    problem = read_problem(benchmark("idealloc", "pangu_2.6B.csv"))
    blocks, offsets = _greedy(problem)
    lower = objective_lower_bound(blocks) // blocks.scale
    assert (offsets + blocks.size).max() > lower
    control = PlanOptions(60).budget()
    out = peak_first(blocks, np.arange(len(blocks)), offsets, control,
                     target=lower)
    assert out.status == "feasible" and out.bound is None
    assert (out.offsets + blocks.size).max() == lower
    plan = blocks.to_plan(np.zeros(len(blocks), np.int64), out.offsets, planner="peak",
                          lower_bound=objective_lower_bound(blocks))
    assert plan.status == "optimal" and not check(problem, plan)


def test_a_window_that_cannot_fit_proves_the_target_out_of_reach():
    # b (2 bytes) cannot sit under a, fixed at byte 1 over the same moments: the max-load is 3,
    # the optimum 4. The whole problem is its own peak window, and the probe proves it.
    problem = Problem((Buffer("a", 1, 0, 2, offset=1), Buffer("b", 2, 0, 2),
                       Buffer("c", 1, 2, 4)))
    blocks, offsets = _greedy(problem)
    assert objective_lower_bound(blocks) == 3 and brute_force(problem).objective == 4
    control = PlanOptions(10).budget()
    out = peak_first(blocks, np.arange(len(blocks)), offsets, control,
                     target=3)
    assert out.bound == 4
    assert (out.offsets + blocks.size).max() == 4  # the plan given, kept


@pytest.fixture
def narrow_windows():
    # Windows of a moment or two, so that small problems have blocks outside them to fill.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(peak_module, "SPANS", (0, 1))
        mp.setattr(peak_module, "GROWTH_SPAN", 0)
        yield mp


@pytest.mark.usefixtures("narrow_windows")
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(problems(max_buffers=9, max_pools=1, capacities=False))
def test_packings_are_valid_and_never_higher_than_the_plan_given(problem):
    problem = replace(problem, pools=(replace(problem.pools[0], cost=1),))  # objective = height
    blocks, offsets = _greedy(problem)
    if len(blocks) == 0:
        return
    lower = objective_lower_bound(blocks) // blocks.scale
    control = PlanOptions(5).budget()
    out = peak_first(blocks, np.arange(len(blocks)), offsets, control,
                     target=lower)
    height = (out.offsets + blocks.size).max()
    assert height <= (offsets + blocks.size).max()
    plan = blocks.to_plan(np.zeros(len(blocks), np.int64), out.offsets, planner="peak")
    assert not check(problem, plan)
    best = brute_force(problem).objective
    if out.bound is not None:
        assert out.bound == lower + 1 <= best // blocks.scale


@pytest.mark.usefixtures("narrow_windows")
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(problems(max_buffers=7, max_pools=1, gaps=True))
def test_solve_through_peak_first_agrees_with_brute_force(problem):
    # Every component goes the way of the large ones (peak first, then LNS), from the naive
    # stacking or from no plan at all when the capacity is tight: plans stay valid, never below
    # the optimum, and every bound and verdict holds.
    plan = solve(problem, time_limit=1, planners=["naive"], explain=False,
                 params=SolverParams(lns_above=0))
    best = brute_force(problem).objective
    if plan.status == "infeasible":
        assert best is None
        return
    if plan.status == "unknown":
        return
    assert not check(problem, plan)
    assert best is not None and plan.lower_bound <= best <= plan.objective
    if plan.status == "optimal":
        assert plan.objective == best


def test_the_large_blocks_of_the_peaks_region_join_its_windows():
    # The load peaks at moment 5 (10 bytes); moments 2 to 8 stay within 10 % of it. Of the
    # blocks alive there, those of at least LARGE_SHARE of the target join the windows: "big"
    # and "wide" do, "tiny" (too small) and "early" (alive only where the load is low) do not.
    problem = Problem((Buffer("base", 8, 2, 9), Buffer("big", 1, 2, 4), Buffer("wide", 1, 4, 9),
                       Buffer("peak", 1, 5, 6), Buffer("tiny", 1, 7, 8),
                       Buffer("early", 5, 0, 2)))
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    t0, t1 = int(blocks.start.min()), int(blocks.end.max())
    load = np.zeros(t1 - t0 + 1, np.int64)
    np.add.at(load, blocks.start - t0, blocks.size)
    np.add.at(load, blocks.end - t0, -blocks.size)
    load = np.cumsum(load)[:-1]
    peak = t0 + int(np.argmax(load))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(peak_module, "LARGE_SHARE", 0.1)  # blocks of at least one byte of ten
        mask = peak_module._large_near_peak(blocks, ids, load, t0, peak, target=10)
        names = {problem.buffers[blocks.root[i]].id for i in np.flatnonzero(mask)}
        assert names == {"base", "big", "wide", "peak", "tiny"}
        mp.setattr(peak_module, "LARGE_SHARE", 0.5)  # five bytes or more: only the base
        mask = peak_module._large_near_peak(blocks, ids, load, t0, peak, target=10)
        assert {problem.buffers[blocks.root[i]].id for i in np.flatnonzero(mask)} == {"base"}


def test_a_window_packed_the_same_way_is_filled_once():
    # Spans restart after each improvement and windows grow back over the same blocks: the
    # packings they come back with are remembered, so no (window, packing) is filled twice.
    problem = read_problem(benchmark("minimalloc-challenging", "D.1048576.csv"))
    blocks, offsets = _greedy(problem)
    seen = []
    fill = peak_module._fill

    def counting(blocks_, ids, window, orders, placer, packed, *rest):
        seen.append(window.tobytes() + packed.tobytes())
        return fill(blocks_, ids, window, orders, placer, packed, *rest)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(peak_module, "_fill", counting)
        mp.setattr(peak_module, "SPANS", (0, 1, 2))
        mp.setattr(peak_module, "GROWTH_SPAN", 1)
        control = PlanOptions(5).budget()
        peak_first(blocks, np.arange(len(blocks)), offsets, control,
                   target=objective_lower_bound(blocks) // blocks.scale)
    assert len(seen) > 1 and len(seen) == len(set(seen))
