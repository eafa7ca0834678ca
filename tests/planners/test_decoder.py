"""The incremental order decoder: its placements are exactly those of the Placer over the same
order (pools, capacities, alignment, fixed offsets, aliases), and stay so after moves, swaps,
reorders and undos."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpplan.blocks import make_blocks
from cpplan.errors import CapacityError
from cpplan.planners.decoder import Decoder, conflict_lists
from cpplan.planners.fit import order_blocks
from cpplan.planners.placer import Placer
from cpplan.problem import Buffer, Pool, Problem
from tests.strategies import problems


def placer_state(blocks, order, mode):
    """(pool_of, offset) of the Placer over ``order``, or None when a block fits nowhere."""
    placer = Placer(blocks)
    try:
        placer.place_fixed()
        placer.place_order(order, mode)
    except CapacityError:
        return None
    return placer.pool_of.tolist(), placer.offset.tolist()


def same(decoder, expected) -> bool:
    if expected is None:
        return decoder.unfit > 0
    pools, offsets = expected
    return decoder.unfit == 0 and decoder.pool_of == pools and decoder.off == offsets


@settings(max_examples=60)
@given(problems(max_buffers=9), st.sampled_from(["best", "first"]), st.integers(0, 9))
def test_matches_the_placer_after_any_change(problem, mode, seed):
    blocks = make_blocks(problem)
    try:
        decoder = Decoder(blocks, order_blocks(blocks, "size"), mode)
    except CapacityError:
        with pytest.raises(CapacityError):
            Placer(blocks).place_fixed()
        return
    assert same(decoder, placer_state(blocks, decoder.order, mode))
    rng = random.Random(seed)
    m = len(decoder.order)
    if m < 2:
        return
    for step in range(12):
        before = (list(decoder.order), list(decoder.pool_of), list(decoder.off), decoder.unfit)
        kind = step % 3
        if kind == 0:
            decoder.move(decoder.order[rng.randrange(m)], rng.randrange(m))
        elif kind == 1:
            decoder.swap(rng.randrange(m), rng.randrange(m))
        else:
            lo = rng.randrange(m)
            segment = decoder.order[lo:lo + 3]
            rng.shuffle(segment)
            decoder.reorder(lo, segment)
        assert not decoder.aborted
        assert same(decoder, placer_state(blocks, decoder.order, mode))
        if rng.random() < 0.5:
            decoder.undo()
            assert (decoder.order, decoder.pool_of, decoder.off, decoder.unfit) == before


def test_conflict_lists_give_the_forbidden_offsets():
    # b (size 3) shares moments with a (size 5); c lives later.
    p = Problem((Buffer("a", 5, 0, 4), Buffer("b", 3, 2, 6), Buffer("c", 7, 6, 8)))
    nbr, dlo, dhi = conflict_lists(make_blocks(p))
    assert nbr == [[1], [0], []]
    # b at o collides with a at o_a iff o_a - 2 <= o < o_a + 5.
    assert (dlo[1], dhi[1]) == ([-2], [5])
    assert (dlo[0], dhi[0]) == ([-4], [3])


def test_limit_stops_a_change_that_can_only_be_worse():
    p = Problem(tuple(Buffer(f"b{k}", 4 - k % 2, 0, 2) for k in range(4)))
    blocks = make_blocks(p)
    decoder = Decoder(blocks, [0, 1, 2, 3], "best")
    height = max(decoder.heights())
    decoder.limit = height - 1  # nothing can move while every block is alive together
    decoder.swap(0, 3)
    assert decoder.aborted
    decoder.undo()
    assert decoder.off == Decoder(blocks, [0, 1, 2, 3], "best").off


def test_many_conflicts_use_numpy_and_agree():
    # 200 buffers alive at once, with pools and a capacity: the numpy path (many conflicts).
    rng = np.random.default_rng(0)
    bufs = tuple(Buffer(f"b{k}", int(rng.integers(1, 9)), int(rng.integers(0, 3)),
                        int(rng.integers(3, 6)), alignment=int(rng.choice([1, 2, 4])),
                        pools=("small", "big")) for k in range(200))
    p = Problem(bufs, (Pool("small", capacity=300), Pool("big")))
    blocks = make_blocks(p)
    order = order_blocks(blocks, "size")
    for mode in ("best", "first"):
        decoder = Decoder(blocks, order, mode)
        assert any(decoder._big)
        assert same(decoder, placer_state(blocks, order, mode))
        decoder.move(decoder.order[150], 3)
        assert same(decoder, placer_state(blocks, decoder.order, mode))
