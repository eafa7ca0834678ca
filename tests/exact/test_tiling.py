"""The tiling search: perfect packings rebuilt, and its proofs on tight problems."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpplan import Buffer, Problem, check, make_blocks, objective_lower_bound
from cpplan.deadline import Budget, PlanOptions
from cpplan.exact import tiling
from cpplan.exact.outcome import Outcome
from cpplan.exact.tiling import is_tight, tight_share, tile
from cpplan.exact.tiling_search import POLL_EVERY, TilingSearch
from cpplan.exact.twin import Twin
from cpplan.perfect import perfect_packing
from cpplan.solve import solve
from tests.bruteforce import brute_force


def _tile(problem: Problem, height: int | None = None, **options):
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    if height is None:
        height = objective_lower_bound(blocks) // blocks.scale
    control = PlanOptions(options.pop("seconds", 30), deterministic=True).budget()
    return blocks, tile(blocks, ids, height, control.within(30), **options)


def _valid(problem: Problem, blocks, out, height: int) -> bool:
    plan = blocks.to_plan(out.pools, out.offsets, planner="tiling")
    return not check(problem, plan) and plan.heights[problem.pools[0].name] <= height


@pytest.mark.parametrize(("n", "seed", "aligned"), [(60, 0, False), (120, 1, False),
                                                    (300, 2, False), (1000, 3, False),
                                                    (60, 4, True), (120, 0, True)])
@pytest.mark.parametrize("merge", [False, True])
def test_perfect_packings_are_rebuilt_at_their_optimum(n, seed, aligned, merge):
    # A strip cut into rectangles: every moment has the strip's width live, so the slack is
    # zero everywhere and the search's inferences hold at every step (without merging the
    # blocks into rectangles first, the search of the blocks themselves does it all).
    problem = perfect_packing(n, seed=seed, aligned=aligned)
    width = problem.meta["optimum"]
    blocks, out = _tile(problem, node_budget=600_000, merge=merge)
    assert tight_share(blocks, np.arange(len(blocks)), width // blocks.scale) == 1.0
    assert out.status == "feasible", out.detail
    assert _valid(problem, blocks, out, width)


@st.composite
def tight_problems(draw):
    """Random buffers, then one-step fillers that bring every moment's load up to the max-load:
    a problem with zero slack everywhere at its max-load (tileable or not)."""
    n = draw(st.integers(1, 5))
    horizon = draw(st.integers(1, 5))
    buffers = []
    for k in range(n):
        start = draw(st.integers(0, horizon - 1))
        end = draw(st.integers(start + 1, horizon))
        buffers.append(Buffer(f"b{k}", draw(st.integers(1, 6)), start, end,
                              alignment=draw(st.sampled_from([1, 1, 2]))))
    load = [sum(b.size for b in buffers if b.start <= t < b.end) for t in range(horizon)]
    for t, live in enumerate(load):
        if live < max(load):
            buffers.append(Buffer(f"f{t}", max(load) - live, t, t + 1))
    return Problem(tuple(buffers))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(tight_problems())
def test_on_tight_problems_the_search_is_complete_and_its_proofs_hold(problem):
    # Zero slack everywhere: the search decides (never "unknown" with nodes to spare), a
    # "yes" is a valid packing at the max-load, a "no" agrees with the exhaustive search.
    blocks, out = _tile(problem, node_budget=100_000)
    height = objective_lower_bound(blocks)  # bytes
    optimum = brute_force(problem).objective
    assert out.status in ("feasible", "infeasible"), out.detail
    if out.status == "feasible":
        assert _valid(problem, blocks, out, height)
        assert optimum == height
    else:
        assert optimum > height


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(tight_problems(), st.integers(0, 3))
def test_with_slack_a_yes_is_valid_and_a_no_is_never_claimed(problem, extra):
    # Above the max-load the slack is positive: the search may waste bytes (a heuristic), so
    # "infeasible" is never claimed where a packing exists.
    blocks = make_blocks(problem)
    height = objective_lower_bound(blocks) // blocks.scale + extra + 1
    blocks, out = _tile(problem, height, node_budget=20_000)
    if out.status == "feasible":
        assert _valid(problem, blocks, out, height * blocks.scale)
    if out.status == "infeasible":
        assert brute_force(problem).objective > height * blocks.scale


def test_the_solver_proves_a_perfect_packing_optimal():
    # solve: the bound is the max-load, the first probe is tight and goes to the tiling search.
    problem = perfect_packing(300, seed=5)
    blocks = make_blocks(problem)
    assert is_tight(blocks, np.arange(len(blocks)), objective_lower_bound(blocks))
    plan = solve(problem, time_limit=30)
    assert plan.status == "optimal" and not check(problem, plan)
    assert plan.heights["default"] == problem.meta["optimum"]


@pytest.mark.parametrize("deterministic", [False, True])
def test_the_solver_packs_a_component_too_large_for_probes_at_its_optimum(deterministic):
    # One component of 3500 blocks (above solve.LNS_ABOVE): tight, so the tiling search packs
    # it (the blocks merged into rectangles) before peak-first packing and LNS get their turn.
    # Merging them takes a quarter of a second: at 15 s the first glance of the search alone
    # could not finish it, and the glance's merges were the resumed search's too.
    problem = perfect_packing(3500, seed=0)
    assert len(make_blocks(problem).components()) == 1
    plan = solve(problem, time_limit=15, deterministic=deterministic)
    assert plan.status == "optimal" and plan.planner == "cpplan.solve:tiling"
    assert not check(problem, plan)
    assert plan.heights["default"] == problem.meta["optimum"]


def test_blocks_are_merged_for_a_share_of_the_searches_time_at_most_a_cost_per_block():
    began = time.perf_counter()
    few = tiling.merge_deadline(Budget(10.0), 100) - began
    many = tiling.merge_deadline(Budget(10.0), 10**6) - began
    assert 0 < few <= tiling.MERGE_SECONDS_PER_BLOCK * 100 + 0.01
    assert tiling.MERGE_SECONDS_PER_BLOCK * 100 < many <= tiling.MERGED_SHARE * 10 + 0.01
    assert tiling.merge_deadline(Budget(10.0, deterministic=True), 100) == float("inf")


@pytest.mark.parametrize("deterministic", [False, True])
def test_a_component_probed_several_times_merges_its_blocks_once_for_all_the_probes(
        deterministic):
    # 2500 blocks (below solve.LNS_ABOVE: probes, a first look first). Merging them into
    # rectangles takes about 0.2 s; when each probe merged anew within its own share, a 5 s
    # solve's first look let it 0.06 s, and the solve ended 1.31 x above the optimum.
    problem = perfect_packing(2500, seed=0)
    assert len(make_blocks(problem).components()) == 1
    plan = solve(problem, time_limit=5, deterministic=deterministic)
    assert plan.status == "optimal" and not check(problem, plan)
    assert plan.heights["default"] == problem.meta["optimum"]


def test_perfect_packings_of_10000_buffers_are_packed_merged_into_rectangles():
    # The blocks merged into rectangles (cpplan.exact.dissection) are few, and their packing
    # is one of the blocks at the max-load; the search of 10000 blocks alone gets nowhere.
    problem = perfect_packing(10_000, seed=3)
    stats: dict = {}
    blocks, out = _tile(problem, node_budget=50_000, stats=stats)
    assert out.status == "feasible" and "merged blocks" in out.detail, out.detail
    assert stats["nodes"] < 1000
    assert _valid(problem, blocks, out, problem.meta["optimum"])


def test_a_glance_merges_for_as_long_as_it_is_told_and_later_calls_go_on_from_it():
    # A short first call (the probe's glance) would stop merging at its own share of the time,
    # and the calls that resume from it would search fewer merges; with merge_until, merging
    # runs as long as without a limit, and the second call answers from the merged blocks.
    problem = perfect_packing(2000, seed=6, aligned=True)
    blocks = make_blocks(problem)
    ids, height = np.arange(len(blocks)), problem.meta["optimum"] // blocks.scale
    merged = {}
    for until in (None, time.perf_counter() + 60):
        memo: dict = {}
        tile(blocks, ids, height, Budget(0.02), resume=memo, merge_until=until)
        attempts = memo[height, ids.tobytes(), True]
        # (cut short, merging may not have finished one dissection: then nothing is merged)
        merged[until is None] = min((len(d) for d, _search, _done in attempts.tries),
                                    default=len(blocks))
    assert merged[False] < merged[True]  # (cut short without it)
    out = tile(blocks, ids, height, Budget(30.0), resume=memo)
    assert out.status == "feasible" and "merged blocks" in out.detail, out.detail
    assert _valid(problem, blocks, out, problem.meta["optimum"])


def test_a_probe_at_another_height_searches_the_blocks_merged_for_the_first():
    # A bisection probes the same blocks at several heights; merging them into rectangles does
    # not depend on the height, so the second probe searches what the first merged, even
    # where its own time would not let it merge (here: none at all).
    problem = perfect_packing(2000, seed=0, aligned=True)
    blocks = make_blocks(problem)
    ids, height = np.arange(len(blocks)), problem.meta["optimum"] // blocks.scale
    memo: dict = {}
    tile(blocks, ids, height, Budget(0.02), resume=memo, merge_until=time.perf_counter() + 60)
    out = tile(blocks, ids, height + 1, Budget(5.0), resume=memo,
               merge_until=time.perf_counter())
    assert out.status == "feasible" and "merged blocks" in out.detail, out.detail
    assert _valid(problem, blocks, out, (height + 1) * blocks.scale)


def test_a_twin_search_in_its_own_process_rebuilds_a_perfect_packing():
    # The twin (a plain subprocess, its own random choices) answers with a packing that is a
    # valid tiling; its process is gone once closed.
    problem = perfect_packing(300, seed=7)
    blocks = make_blocks(problem)
    width = problem.meta["optimum"] // blocks.scale
    moments, local = np.unique(np.concatenate([blocks.start, blocks.end]), return_inverse=True)
    n = len(blocks)
    search = TilingSearch(blocks.size.astype(np.int64), np.ones(n, np.int64), local[:n], local[n:],
                     len(moments) - 1, width)
    helper = Twin(search, (0, 1), time.perf_counter() + 60)
    waited = time.perf_counter() + 60
    while not helper.answered() and time.perf_counter() < waited:
        time.sleep(0.05)
    status, solution = helper.close()
    assert helper.proc.returncode is not None
    assert status == "feasible"
    out = Outcome("feasible", np.zeros(n, np.int64), np.asarray(solution, np.int64))
    assert _valid(problem, blocks, out, problem.meta["optimum"])


def _recorded_twins(monkeypatch: pytest.MonkeyPatch) -> list[Twin]:
    """Every twin :func:`tile` starts from now on, recorded."""
    twins: list[Twin] = []

    class Recorded(Twin):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            twins.append(self)

    monkeypatch.setattr(tiling, "Twin", Recorded)
    return twins


@pytest.mark.parametrize("stop", ["node budget", "stopped before"])
def test_a_stopped_search_answers_within_its_budget_and_closes_its_twin(monkeypatch, stop):
    # Wall-clock mode with two workers: the search of 300 blocks or more runs with a twin in a
    # process of its own. Stopped (by its node budget, or by a stop made before it starts), it
    # answers within its nodes whatever the machine's speed, and its twin's process has ended
    # by then. 2000 blocks take 2000 nodes at least: the search alone cannot answer "feasible"
    # (only the twin could, with a valid packing).
    problem = perfect_packing(2000, seed=4)
    blocks = make_blocks(problem)
    height = problem.meta["optimum"] // blocks.scale
    twins = _recorded_twins(monkeypatch)
    control = PlanOptions(60, workers=2).budget()
    nodes = 1000 if stop == "node budget" else None
    if stop == "stopped before":
        control.stop()
    stats: dict = {}
    out = tile(blocks, np.arange(len(blocks)), height, control, merge=False, node_budget=nodes,
               stats=stats)
    assert len(twins) == 1 and twins[0].proc.returncode is not None
    # (the node a search stops at is counted: one more than the budget; a stop is seen at the
    # first look at the flags, after POLL_EVERY nodes)
    assert stats["nodes"] <= (nodes + 1 if nodes is not None else POLL_EVERY)
    if out.status == "feasible":
        assert "answered by the helper process" in out.detail
        assert _valid(problem, blocks, out, problem.meta["optimum"])
    else:
        assert out.status == "unknown", out.detail
