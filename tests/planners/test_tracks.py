"""Finishing a partial plan in tracks (:mod:`cpplan.planners.tracks`): whatever best-fit placed
before its time ran out, the blocks it left go above, and the plan is valid."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cpplan.blocks import make_blocks
from cpplan.errors import CapacityError
from cpplan.plan import check
from cpplan.planners.placer import Placer
from cpplan.planners.tracks import finish_in_tracks
from cpplan.problem import Buffer, Problem
from tests.strategies import problems


@settings(max_examples=150, deadline=None)
@given(problems(max_buffers=14, fixed=False, capacities=False), st.data())
def test_the_blocks_left_go_above_and_the_plan_is_valid(problem, data):
    blocks = make_blocks(problem)
    placer = Placer(blocks)
    order = data.draw(st.permutations(range(len(blocks))))
    cut = data.draw(st.integers(0, len(blocks)))  # where the time ran out
    placer.place_order(order[:cut])
    pool_of, offset = placer.pool_of.copy(), placer.offset.copy()
    finish_in_tracks(blocks, pool_of, offset)
    assert (pool_of >= 0).all()
    plan = blocks.to_plan(pool_of, offset, planner="tracks")  # (raises on a broken plan)
    assert check(problem, plan) == []


def test_a_track_holds_blocks_of_one_size_class_one_after_another_and_is_as_tall_as_its_tallest():
    # Blocks of 3 and 4 bytes (one size class), two at a time: two tracks, one after the other.
    # The first holds the two blocks of 3 bytes and is 3 bytes tall, not the class's 4.
    problem = Problem(tuple(Buffer(f"b{k}", 3 + k % 2, 2 * (k // 2), 2 * (k // 2) + 2)
                            for k in range(4)))
    blocks = make_blocks(problem)
    pool_of = np.full(len(blocks), -1, np.int64)
    offset = np.zeros(len(blocks), np.int64)
    finish_in_tracks(blocks, pool_of, offset)
    assert offset.tolist() == [0, 3, 0, 3]
    assert blocks.objective(pool_of, offset) == 7


def test_tracks_keep_the_alignment():
    # Sizes 5 to 7 with alignment 4: tracks 8 bytes tall (7 rounded up), offsets multiples of 4;
    # c reuses a's track once a has ended.
    problem = Problem((Buffer("a", 5, 0, 2, 4), Buffer("b", 7, 1, 3, 4), Buffer("c", 6, 2, 4, 4)))
    blocks = make_blocks(problem)
    pool_of = np.full(len(blocks), -1, np.int64)
    offset = np.zeros(len(blocks), np.int64)
    finish_in_tracks(blocks, pool_of, offset)
    plan = blocks.to_plan(pool_of, offset, planner="tracks")
    assert check(problem, plan) == []
    assert [plan.placements[b].offset for b in "abc"] == [0, 8, 0]
    assert plan.objective == 15


def test_a_band_hangs_over_a_hollow_of_the_bands_below():
    # Two blocks of 8 bytes live in [0, 10); blocks of 4 bytes: one then, three in [10, 20).
    # The 8s stand first (16 bytes early, nothing late). The 4s' band (three tracks, 12
    # bytes) hangs from 20: its one early block at 16, its three late ones at 8, 12 and 16.
    # Standing, the band would start at 16 and end at 28.
    problem = Problem((Buffer("a", 8, 0, 10), Buffer("b", 8, 0, 10), Buffer("c", 4, 0, 10),
                       *(Buffer(f"d{k}", 4, 10, 20) for k in range(3))))
    blocks = make_blocks(problem)
    pool_of = np.full(len(blocks), -1, np.int64)
    offset = np.zeros(len(blocks), np.int64)
    finish_in_tracks(blocks, pool_of, offset)
    plan = blocks.to_plan(pool_of, offset, planner="tracks")
    assert plan.objective == 20  # the most bytes live at one moment
    assert plan.placements["c"].offset == 16
    assert sorted(plan.placements[f"d{k}"].offset for k in range(3)) == [8, 12, 16]


def test_tracks_past_a_capacity_are_an_error():
    problem = Problem((Buffer("a", 8, 0, 2), Buffer("b", 8, 1, 3)))
    problem = problem.with_capacity({"default": 12})
    blocks = make_blocks(problem)
    pool_of = np.full(len(blocks), -1, np.int64)
    try:
        finish_in_tracks(blocks, pool_of, np.zeros(len(blocks), np.int64))
    except CapacityError as e:
        assert "do not fit" in str(e)
    else:
        raise AssertionError("two blocks of 8 live together cannot sit within 12 bytes")
