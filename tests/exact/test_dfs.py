"""The branch-and-bound decision search (cpplan.exact.dfs): right answers, proofs, limits.

References: brute force (best first-fit over every order, optimal for one pool without aliases)
and, for aliases, the CP-SAT probe. Every "feasible" answer is turned into a checked plan.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpplan import Buffer, Pool, Problem, make_blocks
from cpplan.bounds import max_load
from cpplan.deadline import Budget, PlanOptions
from cpplan.exact.dfs import fit
from cpplan.exact.search import probe
from cpplan.io import read_problem
from tests.shared import benchmark
from tests.strategies import problems
from tests.test_solve import brute_force_height


def _control() -> Budget:
    return PlanOptions(workers=1, deterministic=True).budget()


def _fit(problem: Problem, height: int, **kw):
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    h = height // blocks.scale
    out = fit(blocks, ids, h, _control().within(kw.pop("budget", 10.0)), **kw)
    if out.status == "feasible":
        plan = blocks.to_plan(out.pools, out.offsets, planner="dfs")  # checked, raises if invalid
        assert plan.height <= h * blocks.scale
    return out


def _staircase() -> Problem:
    # Max-load 3 at every step, but only one arrangement fits at height 3.
    return Problem((Buffer("a", 1, 0, 4), Buffer("b", 2, 0, 2), Buffer("c", 2, 2, 4),
                    Buffer("d", 1, 4, 6), Buffer("e", 2, 4, 6)))


def test_fits_at_the_optimum_and_proves_nothing_lower_fits():
    assert _fit(_staircase(), 3).status == "feasible"
    assert _fit(_staircase(), 2).status == "infeasible"


def test_a_gap_that_the_max_load_does_not_see_is_proved():
    # Max-load 4, but c (size 2) must sit above a or b, and they are staggered: optimum 5.
    problem = Problem((Buffer("a", 2, 0, 4), Buffer("b", 2, 2, 6), Buffer("c", 2, 3, 5),
                       Buffer("d", 1, 0, 2), Buffer("e", 1, 4, 6)))
    h = brute_force_height(problem)
    assert _fit(problem, h).status == "feasible"
    assert _fit(problem, h - 1).status == "infeasible"


def test_alignment_and_fixed_offsets_are_honoured():
    problem = Problem((Buffer("a", 3, 0, 4, alignment=4), Buffer("b", 5, 0, 4, alignment=8),
                       Buffer("f", 2, 1, 3, offset=14), Buffer("z", 0, 0, 4, offset=6)))
    out = _fit(problem, 16)
    assert out.status == "feasible"
    blocks = make_blocks(problem)
    plan = blocks.to_plan(out.pools, out.offsets, planner="dfs")
    assert plan.offset("f") == 14 and plan.offset("z") == 6
    assert plan.offset("a") % 4 == 0 and plan.offset("b") % 8 == 0
    # b at 0 (5), a at 8 (11): f at 14 leaves 16; at 15 a fixed block pokes out.
    assert _fit(problem, 15).status == "infeasible"


def test_pool_alignment_and_capacity():
    problem = Problem((Buffer("a", 3, 0, 2), Buffer("b", 3, 0, 2)),
                      pools=(Pool("p", capacity=7, alignment=4),))
    assert _fit(problem, 100).status == "feasible"  # a at 0, b at 4: 7 <= capacity
    capped = Problem(problem.buffers, pools=(Pool("p", capacity=6, alignment=4),))
    assert _fit(capped, 100).status == "infeasible"


small_one_pool = problems(max_buffers=7, max_pools=1, aliases=False, capacities=False,
                          max_size=24, max_time=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_one_pool)
def test_agrees_with_brute_force(problem):
    h = brute_force_height(problem)
    assert _fit(problem, h).status == "feasible"
    if h > 0:
        blocks = make_blocks(problem)
        # One scaled unit below the optimum (offsets and tops are multiples of the scale).
        assert _fit(problem, h - blocks.scale).status == "infeasible"


with_aliases = problems(max_buffers=7, max_pools=1, aliases=True, capacities=False,
                        max_size=24, max_time=8)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(with_aliases, st.integers(0, 3))
def test_aliases_never_a_wrong_answer(problem, slack):
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    align = np.fromiter((blocks.align_in(i, 0) for i in ids.tolist()), np.int64, len(ids))
    top = int((blocks.size + align).sum()) + int((blocks.fixed + blocks.size).max(initial=0))
    ref = probe(blocks, ids, {0: top}, _control().within(10))
    # The optimum by CP-SAT: the least height whose probe says yes.
    lo, hi = 0, top
    while lo < hi:
        mid = (lo + hi) // 2
        if probe(blocks, ids, {0: mid}, _control().within(10)).status == "feasible":
            hi = mid
        else:
            lo = mid + 1
    assert ref.status == "feasible"
    for h in (lo - 1 - slack, lo + slack):
        if h < 0:
            continue
        out = fit(blocks, ids, h, _control().within(10))
        if out.status == "feasible":
            assert h >= lo
            blocks.to_plan(out.pools, out.offsets, planner="dfs")
        elif out.status == "infeasible":
            assert h < lo


def test_several_candidate_pools_are_declined():
    problem = Problem((Buffer("a", 3, 0, 2, pools=("p", "q")),),
                      pools=(Pool("p"), Pool("q")))
    blocks = make_blocks(problem)
    assert fit(blocks, np.arange(1), 10, _control().within(1)).status == "unknown"


def test_deterministic_and_bounded_by_nodes():
    path = benchmark("minimalloc-challenging", "G.1048576.csv")
    blocks = make_blocks(read_problem(path))
    ids = np.arange(len(blocks))
    h = 1048576 // blocks.scale
    runs = []
    for _ in range(2):
        stats: dict = {}
        out = fit(blocks, ids, h, _control().within(30), stats=stats)
        assert out.status == "feasible"
        blocks.to_plan(out.pools, out.offsets, planner="dfs")
        runs.append((out.offsets.tolist(), stats["nodes"]))
    assert runs[0] == runs[1]
    short = fit(blocks, ids, h, _control().within(30), node_budget=runs[0][1] // 4)
    assert short.status == "unknown"


def test_a_stop_request_ends_the_search():
    path = benchmark("minimalloc-challenging", "E.1048576.csv")
    blocks = make_blocks(read_problem(path))
    control = _control()
    control.stop()  # as Ctrl-C does, from another thread, while the search runs
    out = fit(blocks, np.arange(len(blocks)), 1048576 // blocks.scale, control.within(60))
    assert out.status == "unknown"


@pytest.mark.parametrize("name", ["J.1048576.csv"])
def test_a_challenging_instance_fits(name):
    blocks = make_blocks(read_problem(benchmark("minimalloc-challenging", name)))
    out = fit(blocks, np.arange(len(blocks)), 1048576 // blocks.scale,
              _control().within(30))
    assert out.status == "feasible"
    plan = blocks.to_plan(out.pools, out.offsets, planner="dfs")
    assert plan.height <= 1048576


def test_aligned_perfect_packings_are_found_with_the_alignment_first_orders():
    # A strip cut into 120 buffers, each aligned to a power of two dividing its cut offset: the
    # optimum is the strip's width. MiniMalloc's three preorders alone do not find most of them
    # within this node budget; with the largest alignments placed first among ties they do.
    from cpplan.perfect import perfect_packing

    found = {"default": 0, "mini": 0}
    for seed in (0, 4, 5):
        problem = perfect_packing(120, seed=seed, aligned=True)
        width = problem.meta["optimum"]
        found["default"] += _fit(problem, width, node_budget=60_000).status == "feasible"
        found["mini"] += _fit(problem, width, node_budget=60_000,
                              heuristics=("WAT", "TAW", "TWA")).status == "feasible"
    assert found["default"] == 3
    assert found["mini"] < found["default"]


def _trace(problem: Problem, height: int) -> tuple:
    blocks = make_blocks(problem)
    stats: dict = {}
    out = fit(blocks, np.arange(len(blocks)), height // blocks.scale, _control().within(30),
              node_budget=20_000, stats=stats)
    offsets = None if out.offsets is None else out.offsets.tolist()
    return out.status, stats.get("nodes"), stats.get("heuristic"), offsets


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(max_buffers=14, max_pools=1), slack=st.integers(0, 2))
def test_the_search_resumes_exactly_after_any_node_and_from_stacks_of_no_room(problem, slack):
    # The compiled loop stops after a chunk of nodes (the driver looks at the clock between
    # chunks) and when a stack is full (the driver enlarges it): stopping after every node,
    # from stacks with room for one entry, must search the same nodes to the same answer.
    from cpplan.exact import dfs

    load = max_load(problem)[problem.pools[0].name].bytes
    height = load + slack * (load // 8)  # (at the max-load often infeasible, above it often not)
    whole = _trace(problem, height)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(dfs, "CHUNK_NODES", 1)
        m.setattr(dfs, "CHUNK_MOST", 1)
        m.setattr(dfs, "ROOM", 0)
        assert _trace(problem, height) == whole


def test_a_challenging_instance_is_searched_the_same_a_node_at_a_time(monkeypatch):
    from cpplan.exact import dfs

    problem = read_problem(benchmark("minimalloc-challenging", "A.1048576.csv"))
    whole = _trace(problem, 1048576)
    monkeypatch.setattr(dfs, "CHUNK_NODES", 1)
    monkeypatch.setattr(dfs, "CHUNK_MOST", 1)
    monkeypatch.setattr(dfs, "ROOM", 0)
    assert _trace(problem, 1048576) == whole
