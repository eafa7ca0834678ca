"""Dissections: blocks that fill a rectangle together, merged into one block."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from cpplan import Buffer, Problem, check, make_blocks
from cpplan.exact.dissection import dissect, dissections
from cpplan.perfect import perfect_packing
from tests.strategies import problems


def _dissect(problem: Problem):
    blocks = make_blocks(problem)
    align = np.array([blocks.align_in(i, 0) for i in range(len(blocks))], np.int64)
    return blocks, dissect(blocks.size, blocks.start, blocks.end, align)


def _plan(problem: Problem, blocks, offsets: np.ndarray):
    return blocks.to_plan(np.zeros(len(blocks), np.int64), offsets, planner="dissection")


@pytest.mark.parametrize(("n", "seed"), [(60, 0), (500, 1), (2000, 2), (10_000, 3)])
def test_perfect_packings_merge_into_one_block_that_is_their_packing(n, seed):
    # The strip's cuts, found bottom up: one block as wide as the strip and as long as the
    # horizon, and the layout inside it a packing at the optimum. (10000, seed 3) has a size
    # that two blocks meeting at a moment share by chance: they are not merged, because
    # other blocks there add up to it as well.
    problem = perfect_packing(n, seed=seed)
    blocks, d = _dissect(problem)
    assert len(d) == 1
    assert d.size[0] * blocks.scale == problem.meta["optimum"]
    assert (d.start[0], d.end[0]) == (blocks.start.min(), blocks.end.max())
    plan = _plan(problem, blocks, d.offsets(np.zeros(1, np.int64)))
    assert not check(problem, plan)
    assert plan.heights["default"] == problem.meta["optimum"]
    assert sum(d.merges.values()) >= n // 3


@pytest.mark.parametrize(("n", "seed"), [(120, 4), (2000, 1)])
def test_aligned_perfect_packings_merge_with_the_classes_their_cutting_needs(n, seed):
    # Alignments from 64 to 4096 bytes: which offsets keep a merged block's parts aligned
    # depends on their order, so a merged block keeps every class of offsets that works. The
    # whole strip ends up one block that may sit at 0, its layout a packing at the optimum.
    problem = perfect_packing(n, seed=seed, aligned=True)
    blocks, d = _dissect(problem)
    assert len({b.alignment for b in problem.buffers}) > 1
    assert len(d) == 1 and any(r == 0 for _m, r in d.classes[0])
    plan = _plan(problem, blocks, d.offsets(np.zeros(1, np.int64)))
    assert not check(problem, plan)
    assert plan.heights["default"] == problem.meta["optimum"]


@pytest.mark.parametrize("q_align", [1, 8])
def test_five_blocks_around_a_centre_merge_as_a_pinwheel(q_align):
    # P [0,6) and Q [0,2) start together, C [2,6) is the centre, S [2,9) and T [6,9) end
    # together; Q = C + S and T = P + C in bytes. No two of them make a chain or a stack.
    # Q aligned to 8 cannot sit 4 bytes up: the pinwheel is laid out upside down, Q at 0.
    rows = [("P", 4, 0, 6, 0), ("Q", 5, 0, 2, 4), ("C", 2, 2, 6, 4), ("S", 3, 2, 9, 6),
            ("T", 6, 6, 9, 0)]
    top = 9
    problem = Problem(tuple(Buffer(k, z, a, b, alignment=q_align if k == "Q" else 1)
                            for k, z, a, b, _y in rows))
    blocks, d = _dissect(problem)
    assert len(d) == 1 and d.merges == {"pinwheel": 1}
    assert d.size[0] == top and d.align[0] == q_align
    offsets = d.offsets(np.zeros(1, np.int64)).tolist()
    upright = [y for *_, y in rows]
    mirrored = [top - y - z for (_k, z, _a, _b, y) in rows]
    assert offsets == (upright if q_align == 1 else mirrored)
    assert not check(problem, _plan(problem, blocks, np.asarray(offsets)))


def test_a_merged_block_keeps_its_parts_aligned():
    # Two blocks of one lifetime, one aligned to 8: stacked with the aligned one at the bottom
    # (at 0 in the merged block), the merged block aligned to 8.
    problem = Problem((Buffer("a", 3, 0, 4), Buffer("b", 8, 0, 4, alignment=8),
                       Buffer("c", 11, 4, 6)))
    blocks, d = _dissect(problem)
    assert len(d) == 1 and d.align[0] == 8
    offsets = d.offsets(np.zeros(1, np.int64))
    assert offsets[1] == 0 and offsets[0] == 8
    assert not check(problem, _plan(problem, blocks, offsets))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(problems(min_buffers=1, max_buffers=14, max_pools=1, aliases=False, fixed=False,
                capacities=False, hints=False, max_size=6, max_time=5))
def test_any_packing_of_the_merged_blocks_is_a_packing_of_the_blocks(problem):
    # Random buffers with few distinct sizes and moments (chains, stacks and pinwheels now and
    # then, and blocks that match by chance), merged all the way and after half of the merges
    # (none at all: the blocks themselves). The merged blocks one above another (each at a
    # offset of its first class: nothing shares a byte): the blocks inside them must neither
    # overlap nor break their alignment.
    blocks = make_blocks(problem)
    align = np.array([blocks.align_in(i, 0) for i in range(len(blocks))], np.int64)
    merged = dissections(blocks.size, blocks.start, blocks.end, align, (1.0, 0.5, 0.0))
    assert len(merged[0]) <= len(merged[1]) <= len(merged[2]) == len(blocks)
    for d in merged:
        assert d.root.min() >= 0 and np.bincount(d.root, minlength=len(d)).min() >= 1
        at, y = [], 0
        for size, classes in zip(d.size.tolist(), d.classes, strict=True):
            m, r = classes[0]  # (the first class: each is a valid layout)
            y += (r - y) % m
            at.append(y)
            y += size
        offsets = d.offsets(np.asarray(at, np.int64))
        assert not check(problem, _plan(problem, blocks, offsets))
        # Each merged block is full: its parts' bytes fill it, moment by moment.
        for r in range(len(d)):
            parts = np.flatnonzero(d.root == r)
            for t in range(int(d.start[r]), int(d.end[r])):
                alive = parts[(blocks.start[parts] <= t) & (t < blocks.end[parts])]
                assert int(blocks.size[alive].sum()) == int(d.size[r])


def test_merging_stops_at_its_deadline_with_what_it_merged_so_far():
    # A deadline already past: nothing merged, every block its own (still a dissection); no
    # deadline: the whole strip. (What happens between depends on the clock.)
    problem = perfect_packing(500, seed=1)
    blocks = make_blocks(problem)
    align = np.ones(len(blocks), np.int64)
    (cut,) = dissections(blocks.size, blocks.start, blocks.end, align, deadline=0.0)
    assert len(cut) == len(blocks) and not sum(cut.merges.values())
    (whole,) = dissections(blocks.size, blocks.start, blocks.end, align)
    assert len(whole) == 1
