"""cpplan's local search: valid plans on random problems, deterministic with a seed, never
worse than its greedy start, and it stops at the lower bound."""

from __future__ import annotations

import importlib
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpplan.bounds import objective_lower_bound
from cpplan.errors import CapacityError
from cpplan.plan import check
from cpplan.planners import get
from cpplan.planners.fit import ORDERS
from cpplan.planners.placer import MODES
from cpplan.problem import Buffer, Problem
from tests.strategies import problems

local_search_module = importlib.import_module("cpplan.planners.local_search")
FAST = {"max_placements": 300, "deterministic": True}


@pytest.mark.parametrize("engine", ["decoder", "placer"])
@settings(max_examples=30)
@given(problems(max_buffers=10), st.integers(0, 3))
def test_plans_are_valid_and_never_below_the_max_load(engine, problem, seed):
    # Above DECODER_UP_TO blocks the search re-places suffixes with the Placer; a limit of -1
    # forces that engine here.
    up_to = local_search_module.DECODER_UP_TO if engine == "decoder" else -1
    with patch.object(local_search_module, "DECODER_UP_TO", up_to):
        try:
            plan = get("local-search")(problem, seed=seed, **FAST)
        except CapacityError as e:
            assert "buffer" in str(e)
            return
        again = get("local-search")(problem, seed=seed, **FAST)
    assert plan.stats["engine"] == engine
    assert check(problem, plan) == []
    assert plan.objective >= objective_lower_bound(problem)
    assert plan.objective <= plan.stats["start_objective"]
    assert again.placements == plan.placements  # deterministic mode: same seed, same plan


def tiling() -> Problem:
    """A 16-byte x 10-step rectangle cut into 12 buffers (guillotine cuts): the max-load 16 is
    reachable, but no greedy order of best-fit or first-fit finds it (they land at 19)."""
    spec = [(4, 0, 2), (4, 2, 3), (3, 3, 7), (1, 3, 7), (3, 0, 2), (3, 2, 7), (7, 0, 6),
            (1, 0, 6), (1, 0, 4), (1, 4, 6), (9, 6, 7), (16, 7, 10)]
    return Problem(tuple(Buffer(f"b{k}", s, a, e) for k, (s, a, e) in enumerate(spec)))


def test_it_improves_on_the_greedy_start_and_stops_at_the_bound():
    p = tiling()
    greedy = get("best-fit")(p, order="size")
    plan = get("local-search")(p, seed=0, max_placements=20_000, deterministic=True)
    assert check(p, plan) == []
    assert plan.objective <= greedy.objective
    assert greedy.objective == get("best-fit")(p).objective == get("first-fit")(p).objective == 19
    assert plan.objective == plan.lower_bound == 16 and plan.status == "optimal"
    # It stopped early: far fewer placements than allowed.
    assert plan.stats["placements"] < 20_000


def test_both_modes_start_a_chain_and_the_stats_say_so():
    plan = get("local-search")(tiling(), seed=1, max_placements=5_000, deterministic=True)
    assert plan.stats["engine"] == "decoder"
    assert set(plan.stats["chains"]) <= {f"{m}-fit-{o}" for m in MODES for o in ORDERS}
    assert {c.split("-")[0] for c in plan.stats["chains"]} == {"best", "first"}
    assert plan.stats["placements"] <= 5_000 + len(ORDERS) * 2 * 12  # starts are extra
    only = get("local-search")(tiling(), mode="first", max_placements=300, deterministic=True)
    assert [c.split("-")[0] for c in only.stats["chains"]] == ["first"]


def test_a_first_order_cut_short_is_finished_in_tracks_not_given_up():
    # On the Placer engine (past DECODER_UP_TO blocks), a budget too short for one greedy
    # order: the blocks it did not reach go into tracks, and the plan is a valid one at once
    # (the planner once raised, and the registry fell back to the no-reuse stacking).
    problem = Problem(tuple(Buffer(f"b{k}", 1 + k % 7, k % 40, k % 40 + 3) for k in range(600)))
    with patch.object(local_search_module, "DECODER_UP_TO", -1):
        plan = get("local-search")(problem, time_limit=0.01, deterministic=True)
    assert plan.status == "feasible"
    assert 0 < plan.stats["finished_in_tracks"] < len(problem.buffers)
    assert check(problem, plan) == []
    stacked = sum(b.size for b in problem.buffers)
    assert plan.objective < stacked / 2
