"""Blocks: the planner's view (gcd scaling, time compression, components, alias footprints)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cpplan import Alias, Buffer, PlanError, Pool, Problem, make_blocks
from cpplan.blocks import _scale
from tests.strategies import lcm, naive_plan, problems


def single(*buffers: Buffer, pools=()) -> Problem:
    return Problem(tuple(buffers), tuple(pools))


# -- gcd scaling ----------------------------------------------------------------------------------

def test_scale_divides_sizes():
    b = make_blocks(single(Buffer("a", 1024, 0, 2), Buffer("b", 3072, 1, 3)))
    assert b.scale == 1024
    assert b.size.tolist() == [1, 3]
    assert b.alignment.tolist() == [1, 1]


def test_scale_and_alignments():
    # An alignment that divides the scale is met by every scaled offset: it becomes 1.
    b = make_blocks(single(Buffer("a", 1024, 0, 2, alignment=512), Buffer("b", 2048, 1, 3)))
    assert (b.scale, b.alignment.tolist()) == (1024, [1, 1])
    # One the scale divides is kept, scaled.
    b = make_blocks(single(Buffer("a", 1024, 0, 2, alignment=4096), Buffer("b", 2048, 1, 3)))
    assert (b.scale, b.alignment.tolist()) == (1024, [4, 1])
    # Neither: the scale shrinks until one divides the other (gcd(1024, 768) = 256).
    b = make_blocks(single(Buffer("a", 1024, 0, 2, alignment=768), Buffer("b", 2048, 1, 3)))
    assert (b.scale, b.alignment.tolist()) == (256, [3, 1])
    # Pool base alignments count too.
    b = make_blocks(single(Buffer("a", 1024, 0, 2), pools=(Pool("x", alignment=48),)))
    assert (b.scale, b.pool_alignment.tolist()) == (16, [3])


def test_scale_counts_fixed_offsets_displacements_and_floors_capacities():
    b = make_blocks(single(Buffer("a", 1024, 0, 2, offset=512)))
    assert (b.scale, b.fixed.tolist()) == (512, [1])
    p = Problem((Buffer("a", 1024, 0, 2), Buffer("v", 256, 0, 1)), (Pool("x", 5000),),
                (Alias("v", "a", 256),))
    b = make_blocks(p)
    assert b.scale == 256
    assert b.pool_capacity.tolist() == [5000 // 256]
    b = make_blocks(single(Buffer("a", 64, 0, 2, hint=100)))
    assert (b.scale, b.hint.tolist()) == (64, [1])  # a hint is only a hint: floored


def test_scale_of_nothing():
    assert make_blocks(Problem(())).scale == 1
    assert make_blocks(single(Buffer("z", 0, 0, 1))).scale == 1


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@given(st.lists(st.integers(0, 96), min_size=1, max_size=5),
       st.lists(st.integers(0, 96), max_size=3), st.lists(st.integers(1, 96), max_size=4))
def test_scale_is_the_largest_that_keeps_offsets_on_its_grid(sizes, fixed, alignments):
    g = _scale(np.array(sizes), np.zeros(0, np.int64), np.array([f for f in fixed if f > 0]),
               np.array(alignments, np.int64))
    values = [*sizes, *fixed]

    def ok(x: int) -> bool:
        return all(v % x == 0 for v in values) and all(a % x == 0 or x % a == 0
                                                        for a in alignments)

    assert ok(g)
    top = math.gcd(*values)
    if top:
        assert all(not ok(d) for d in divisors(top) if d > g)


# -- time compression -----------------------------------------------------------------------------

@given(problems(aliases=False))
def test_time_compression_preserves_overlaps(problem):
    b = make_blocks(problem)
    assert b.single_piece
    bufs = problem.buffers
    assert b.times[b.start].tolist() == [x.start for x in bufs]
    assert b.times[b.end].tolist() == [x.end for x in bufs]
    assert np.all(np.diff(b.times) > 0)
    for i in range(len(bufs)):
        for j in range(len(bufs)):
            want = bufs[i].start < bufs[j].end and bufs[j].start < bufs[i].end
            assert b.time_overlap(i, j) == want


@given(problems())
def test_time_overlap_of_blocks_is_overlap_of_pieces(problem):
    b = make_blocks(problem)
    for i in range(len(b)):
        for j in range(len(b)):
            want = any(p[0] < q[1] and q[0] < p[1] for p in b.pieces(i) for q in b.pieces(j))
            assert b.time_overlap(i, j) == want


# -- components -----------------------------------------------------------------------------------

def test_components_split_where_nothing_is_live():
    p = single(Buffer("a", 8, 0, 2), Buffer("b", 8, 1, 3), Buffer("c", 8, 3, 5),
               Buffer("d", 8, 7, 9), Buffer("e", 8, 4, 6))
    comps = [c.tolist() for c in make_blocks(p).components()]
    assert comps == [[0, 1], [2, 4], [3]]


@given(problems())
def test_components_partition_and_share_no_moment(problem):
    b = make_blocks(problem)
    comps = b.components()
    flat = sorted(int(i) for c in comps for i in c)
    assert flat == list(range(len(b)))
    span = [(int(b.start[c].min()), int(b.end[c].max())) for c in comps]
    assert span == sorted(span)
    for before, after in zip(span, span[1:], strict=False):
        assert before[1] <= after[0]  # time order, no shared moment
    for c in comps:  # connected: each component cannot be split further
        order = sorted(c.tolist(), key=lambda i: b.start[i])
        reach = b.end[order[0]]
        for i in order[1:]:
            assert b.start[i] < reach
            reach = max(reach, b.end[i])


# -- blocks and alias footprints ------------------------------------------------------------------

def test_plain_buffer_is_one_piece():
    b = make_blocks(single(Buffer("a", 64, 3, 5, alignment=4, offset=8, hint=16)))
    assert b.scale == 8  # gcd(64, 8); the alignment 4 divides it
    assert b.pieces(0).tolist() == [[0, 1, 0, 8]]
    assert (b.fixed.tolist(), b.hint.tolist(), b.alignment.tolist()) == ([1], [2], [1])


def test_block_of_an_in_place_chain():
    # x -> y in place (same bytes, y outlives x), z a slice of y that outlives both.
    p = Problem((Buffer("x", 64, 0, 3), Buffer("y", 64, 2, 5, alignment=8),
                 Buffer("z", 16, 4, 8, alignment=16), Buffer("w", 8, 0, 9)),
                aliases=(Alias("y", "x"), Alias("z", "y", 16)))
    b = make_blocks(p)
    assert len(b) == 2 and not b.single_piece
    assert b.root.tolist() == [0, 3]
    assert b.member[b.member_ptr[0]:b.member_ptr[1]].tolist() == [0, 1, 2]
    assert b.member_disp[b.member_ptr[0]:b.member_ptr[1]].tolist() == [0, 0, 16]
    assert b.scale == 8
    assert b.alignment.tolist() == [2, 1]  # lcm(1, 8, 16) / 8
    t = b.times.tolist()
    pieces = [(t[s], t[e], lo * 8, hi * 8) for s, e, lo, hi in b.pieces(0).tolist()]
    assert pieces == [(0, 5, 0, 64), (5, 8, 16, 32)]
    assert b.size[0] == 8 and (t[b.start[0]], t[b.end[0]]) == (0, 8)


def test_block_candidates_are_the_roots_filtered_by_its_members():
    pools = (Pool("a"), Pool("b"), Pool("c"))
    p = Problem((Buffer("r", 8, 0, 1, pools=("c", "a", "b")), Buffer("v", 8, 0, 1,
                                                                     pools=("b", "c"))),
                pools, (Alias("v", "r"),))
    assert make_blocks(p).pools == ((2, 1),)


def test_block_of_zero_size_buffers_keeps_its_lifetime():
    p = Problem((Buffer("r", 0, 2, 4), Buffer("v", 0, 1, 6)), aliases=(Alias("v", "r"),))
    b = make_blocks(p)
    t = b.times.tolist()
    assert [(t[s], t[e], lo, hi) for s, e, lo, hi in b.pieces(0).tolist()] == [(1, 6, 0, 0)]


@given(problems(max_buffers=7))
def test_pieces_are_disjoint_and_cover_the_union_of_members(problem):
    b = make_blocks(problem)
    g = b.scale
    t = b.times.tolist()
    for i in range(len(b)):
        pieces = [(t[s], t[e], lo, hi) for s, e, lo, hi in b.pieces(i).tolist()]
        nonempty = [q for q in pieces if q[3] > q[2]]
        for x, p in enumerate(nonempty):
            for q in nonempty[x + 1:]:
                assert not (p[0] < q[1] and q[0] < p[1] and p[2] < q[3] and q[2] < p[3])
        members = [(problem.buffers[m], int(d)) for m, d in zip(
            b.member[b.member_ptr[i]:b.member_ptr[i + 1]].tolist(),
            b.member_disp[b.member_ptr[i]:b.member_ptr[i + 1]].tolist(), strict=True)]
        assert members[0][1] == 0 and members[0][0].id not in problem.root_of
        steps = range(min(m.start for m, _ in members), max(m.end for m, _ in members))
        for step in steps:
            want = set()
            for m, d in members:
                if m.start <= step < m.end:
                    want.update(range(d // g, (d + m.size) // g))
            got = set()
            for s, e, lo, hi in nonempty:
                if s <= step < e:
                    got.update(range(lo, hi))
            assert got == want, (step, pieces, members)
        assert b.size[i] == max([hi for *_, hi in pieces] + [0])
        assert b.alignment[i] == max(lcm(*(m.alignment for m, _ in members)) // g, 1)


# -- back to a plan -------------------------------------------------------------------------------

@given(problems(capacities=False))
def test_to_plan_round_trips_block_offsets(problem):
    b = make_blocks(problem)
    plan = naive_plan(problem)
    names = [p.name for p in problem.pools]
    pool = [names.index(plan.pool(problem.buffers[r].id)) for r in b.root.tolist()]
    off = [plan.offset(problem.buffers[r].id) for r in b.root.tolist()]
    assert all(o % b.scale == 0 for o in off)
    again = b.to_plan(pool, [o // b.scale for o in off], planner="again")
    assert again.placements == plan.placements
    assert again.heights == plan.heights
    for i in range(len(b)):
        for k in range(b.member_ptr[i], b.member_ptr[i + 1]):
            m = problem.buffers[b.member[k]]
            assert again.offset(m.id) == off[i] + b.member_disp[k]


def test_to_plan_checks_and_sets_the_status():
    p = single(Buffer("a", 64, 0, 2), Buffer("b", 64, 1, 3), Buffer("c", 64, 2, 4))
    b = make_blocks(p)
    assert b.scale == 64
    plan = b.to_plan([0, 0, 0], [0, 1, 0], planner="t", seconds=0.5)
    assert (plan.status, plan.lower_bound, plan.objective, plan.seconds) == ("optimal", 128, 128,
                                                                             0.5)
    assert b.to_plan([0, 0, 0], [0, 1, 2], planner="t").status == "feasible"
    with pytest.raises(PlanError, match="buffers 'a' and 'b'"):
        b.to_plan([0, 0, 0], [0, 0, 2], planner="t")
