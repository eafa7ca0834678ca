"""Air (:mod:`cpplan.exact.air`): the bytes left free, cut into blocks, close every moment's slack
exactly, whatever the problem; with them, a perfect packing thinned of a few buffers is at zero
slack, and the hole search rebuilds it."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

from cpplan import Buffer, Problem, check, make_blocks, objective_lower_bound
from cpplan.deadline import PlanOptions
from cpplan.exact.air import RULES, air_rectangles, with_air
from cpplan.exact.events import zero_slack
from cpplan.exact.refill import REFILL_NODES_PER_SECOND, refill
from cpplan.perfect import mosaic_packing, thinned
from tests.strategies import problems


def _plain(problem: Problem) -> Problem:
    """``problem``'s buffers in one pool, without what air does not take (fixed offsets)."""
    return Problem(tuple(Buffer(id=b.id, size=b.size, start=b.start, end=b.end,
                                alignment=b.alignment) for b in problem.buffers))


def test_a_buffer_taken_away_leaves_air_of_its_own_size_and_lifetime():
    # Two buffers tile the height 10 over [0, 6) but one of them, bytes 4..10 over [2, 4), is
    # gone: the air is that buffer.
    problem = Problem((Buffer("a", 4, 0, 6), Buffer("b", 6, 0, 2), Buffer("c", 6, 4, 6)))
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    rects = air_rectangles(blocks, ids, 10 // blocks.scale)
    assert rects is not None
    # (compressed time: the steps 0, 2, 4, 6 are ranks 0 to 3)
    assert [(int(blocks.times[s]), int(blocks.times[e]), z * blocks.scale)
            for s, e, z in rects] == [(2, 4, 6)]


def test_where_the_free_bytes_shrink_by_an_air_blocks_size_that_block_ends_first():
    # Free bytes 3 over [0, 4), 3 + 5 over [1, 3): they shrink by 5 at 3, and the block of 5
    # ends there, the one of 3 at 4, whichever is younger.
    problem = Problem((Buffer("a", 7, 0, 1), Buffer("b", 2, 1, 3), Buffer("c", 7, 3, 4)))
    blocks = make_blocks(problem)
    rects = air_rectangles(blocks, np.arange(3), 10, rule=(1, False, False))
    assert sorted((int(blocks.times[s]), int(blocks.times[e]), z) for s, e, z in rects) == \
        [(0, 4, 3), (1, 3, 5)]
    # Sliced where the free bytes change (at 1 and 3), the block of 3 may move there.
    rects = air_rectangles(blocks, np.arange(3), 10, rule=(1, False, True))
    assert sorted((int(blocks.times[s]), int(blocks.times[e]), z) for s, e, z in rects) == \
        [(0, 1, 3), (1, 3, 3), (1, 3, 5), (3, 4, 3)]


def test_where_two_air_blocks_add_up_to_the_bytes_freed_both_end_there():
    # Height 12: free bytes 2 over [0, 6), 2 + 3 over [1, 6), 2 + 3 + 4 over [2, 4): they shrink
    # by 2 + 4 at 4 (two buffers taken away ending together). With pairs matched, the blocks
    # of 2 and 4 end there; with single blocks only, the youngest (4) ends and the next (3) is
    # cut.
    problem = Problem((Buffer("a", 10, 0, 1), Buffer("b", 7, 1, 2), Buffer("c", 3, 2, 4),
                       Buffer("d", 9, 4, 6)))
    blocks = make_blocks(problem)
    times = blocks.times

    def cut(rule):
        rects = air_rectangles(blocks, np.arange(4), 12, rule=rule)
        return sorted((int(times[s]), int(times[e]), z) for s, e, z in rects)

    assert cut((3, True, False)) == [(0, 4, 2), (1, 6, 3), (2, 4, 4)]
    assert cut((1, True, False)) == [(0, 6, 2), (1, 4, 2), (1, 6, 1), (2, 4, 4)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_buffers=12, max_pools=1, capacities=False))
def test_with_its_air_every_problem_is_at_zero_slack_at_any_height_above_its_load(problem):
    problem = _plain(problem)
    blocks = make_blocks(problem)
    if not len(blocks):
        return
    ids = np.arange(len(blocks))
    height = objective_lower_bound(blocks) // blocks.scale + 3
    for rule in RULES:
        got = with_air(blocks, ids, height, most=10**6, rule=rule)
        if got is None:  # (no air: already at zero slack, or blocks of several pieces)
            continue
        more, both = got
        air = both[len(ids):]
        assert (more.size[air] > 0).all() and (more.start[air] < more.end[air]).all()
        assert zero_slack(more, both, height) == height
        # (the blocks themselves are unchanged)
        assert (more.size[ids] == blocks.size[ids]).all()


def test_a_load_above_the_height_has_no_air():
    problem = Problem((Buffer("a", 8, 0, 2), Buffer("b", 8, 1, 3)))
    blocks = make_blocks(problem)
    assert air_rectangles(blocks, np.arange(2), 15 // blocks.scale) is None


def test_air_of_more_blocks_than_allowed_is_declined():
    problem = thinned(mosaic_packing(250, seed=0), 0.05, seed=0)
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    height = problem.meta["optimum"] // blocks.scale
    rects = air_rectangles(blocks, ids, height)
    assert rects
    assert with_air(blocks, ids, height, most=len(rects) - 1) is None
    assert with_air(blocks, ids, height, most=len(rects)) is not None


def test_the_hole_search_rebuilds_a_thinned_perfect_packing_with_its_air():
    problem = thinned(mosaic_packing(250, seed=0), 0.05, seed=0)
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    height = problem.meta["optimum"] // blocks.scale
    assert zero_slack(blocks, ids, height) is None  # (thinned: the hole search alone declines)
    more, both = with_air(blocks, ids, height, most=len(ids) // 10)
    budget = PlanOptions(10.0, deterministic=True).budget()
    out = refill(more, both, height, budget, node_budget=budget.nodes(REFILL_NODES_PER_SECOND))
    assert out.status == "feasible"
    plan = blocks.to_plan(np.zeros(len(ids), np.int64), out.packing[:len(ids)], planner="air")
    assert not check(problem, plan)
    assert plan.heights[problem.pools[0].name] == problem.meta["optimum"]
