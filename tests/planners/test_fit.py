"""cpplan's own best-fit and first-fit: hand examples with known offsets, a brute-force
reference for the fit rules, the placement engine's two indexes agreeing, and property tests on
random problems with alignment, pools, capacities, fixed offsets and aliases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cpplan.blocks import make_blocks
from cpplan.bounds import max_load, objective_lower_bound
from cpplan.errors import CapacityError, CpplanError
from cpplan.plan import check
from cpplan.planners import get, names
from cpplan.planners.decoder import Decoder
from cpplan.planners.fit import ORDERS, conflicts, order_blocks, peak_order
from cpplan.planners.placer import Placer, choose, choose_shifted, choose_small
from cpplan.problem import Alias, Buffer, Pool, Problem
from cpplan.random_problems import random_problem
from tests.shared import benchmark
from tests.strategies import problems, round_up

OWN_FIT = ["best-fit", "first-fit"] + [f"{m}-fit-{o}" for m in ("best", "first") for o in ORDERS]


def landscape(*extra: Buffer, pools: tuple[Pool, ...] = ()) -> Problem:
    """Two fixed buffers alive over [0, 10) leave gaps [0, 6) and [8, 11) and the open top
    from 15."""
    return Problem((Buffer("f1", 2, 0, 10, offset=6), Buffer("f2", 4, 0, 10, offset=11),
                    *extra), pools)


# -- hand examples ---------------------------------------------------------------------------

def test_best_fit_takes_the_smallest_gap_first_fit_the_lowest():
    p = landscape(Buffer("q", 3, 2, 5))
    assert get("best-fit")(p).offset("q") == 8  # gap [8, 11) is the tightest
    assert get("first-fit")(p).offset("q") == 0  # lowest offset that fits


def test_a_block_too_big_for_every_gap_goes_on_top():
    p = landscape(Buffer("q", 7, 2, 5))
    assert get("best-fit")(p).offset("q") == 15
    assert get("first-fit")(p).offset("q") == 15


def test_alignment_can_rule_a_gap_out():
    # Aligned to 16, the gap [8, 11) offers no offset; [0, 6) does.
    p = landscape(Buffer("q", 3, 2, 5, alignment=16))
    plan = get("best-fit")(p)
    assert plan.offset("q") == 0
    # Aligned to 4, [8, 11) still offers 8.
    assert get("best-fit")(landscape(Buffer("q", 3, 2, 5, alignment=4))).offset("q") == 8


def test_equal_gaps_tie_to_the_lowest():
    p = Problem((Buffer("f1", 2, 0, 10, offset=4), Buffer("f2", 2, 0, 10, offset=10),
                 Buffer("q", 3, 2, 5)))
    # Gaps [0, 4) and [6, 10) have the same length.
    assert get("best-fit")(p).offset("q") == 0


def test_size_order_best_fit_reuses_freed_gaps():
    p = Problem((Buffer("a", 8, 0, 2), Buffer("b", 6, 1, 4), Buffer("c", 4, 3, 6),
                 Buffer("d", 2, 3, 6)))
    plan = get("best-fit")(p, order="size")
    # a at 0; b above a (they overlap) at 8; c overlaps b only: gap [0, 8) below b -> 0;
    # d: gaps [4, 8) (between c and b) is the tightest -> 4.
    assert [plan.offset(x) for x in "abcd"] == [0, 8, 0, 4]
    assert plan.height == 14 and plan.lower_bound == 14 and plan.status == "optimal"


def test_orders_are_deterministic_and_documented():
    p = Problem((Buffer("a", 4, 0, 10), Buffer("b", 8, 2, 3), Buffer("c", 8, 0, 1),
                 Buffer("d", 1, 0, 20), Buffer("z", 0, 0, 1)))
    b = make_blocks(p)
    ids = lambda order: [p.buffers[int(b.root[i])].id for i in order]  # noqa: E731
    assert ids(order_blocks(b, "size")) == ["c", "b", "a", "d", "z"]
    assert ids(order_blocks(b, "start")) == ["c", "a", "d", "z", "b"]
    assert ids(order_blocks(b, "lifetime")) == ["d", "a", "c", "b", "z"]
    assert ids(order_blocks(b, "area")) == ["a", "d", "c", "b", "z"]
    assert conflicts(b).tolist() == [4, 2, 3, 4, 3]
    assert ids(order_blocks(b, "conflicts")) == ["a", "d", "c", "z", "b"]
    # Peak: steps 0 (c, a, d: 13 bytes) then b's step 2 (b, a, d); zero-size last.
    assert ids(peak_order(b)) == ["c", "b", "a", "d", "z"]


def test_options_select_orders_and_report_them():
    p = landscape(Buffer("q", 3, 2, 5), Buffer("r", 5, 1, 3))
    plan = get("best-fit")(p, orders=["start", "size"])
    assert set(plan.stats["orders"]) == {"start", "size"}
    assert plan.stats["order"] in ("start", "size") and plan.stats["mode"] == "best"
    assert get("first-fit-area")(p).stats["orders"].keys() == {"area"}
    with pytest.raises(CpplanError, match="unknown order"):
        get("best-fit")(p, order="sideways")
    with pytest.raises(CpplanError, match="unknown option"):
        get("best-fit")(p, colour="red")


def test_aliases_place_the_block_where_no_piece_collides():
    # Root r [0, 4) of 8 bytes; alias a (4 bytes at displacement 4) lives on until 8.
    # Obstacle o sits on bytes [4, 8) during [5, 7): it hits a's piece unless the block moves.
    p = Problem((Buffer("o", 4, 5, 7, offset=4), Buffer("r", 8, 0, 4), Buffer("a", 4, 3, 8)),
                aliases=(Alias("a", "r", 4),))
    for name in ("best-fit", "first-fit"):
        plan = get(name)(p)
        assert plan.offset("r") == 4 and plan.offset("a") == 8
        assert check(p, plan) == []
    # With the obstacle on bytes [0, 4) the block fits at 0 (the piece [4, 8) is free).
    q = Problem((Buffer("o", 4, 5, 7, offset=0), Buffer("r", 8, 0, 4), Buffer("a", 4, 3, 8)),
                aliases=(Alias("a", "r", 4),))
    assert get("best-fit")(q).offset("r") == 0


def test_zero_size_buffers_sit_at_zero():
    p = landscape(Buffer("z", 0, 2, 5, alignment=8))
    for name in ("best-fit", "first-fit"):
        assert get(name)(p).offset("z") == 0


def test_capacity_sends_a_buffer_to_its_next_pool_or_raises_clearly():
    pools = (Pool("sram", capacity=14), Pool("dram"))
    p = landscape(Buffer("q", 7, 2, 5, pools=("sram", "dram")), pools=pools)
    assert get("best-fit")(p).pool("q") == "dram"
    only = landscape(Buffer("q", 7, 2, 5, pools=("sram",)), pools=pools)
    for name in ("best-fit", "first-fit"):
        with pytest.raises(CapacityError, match=r"best-fit|first-fit") as err:
            get(name)(only)
        assert "'q'" in str(err.value) and "'sram' (capacity 14)" in str(err.value)


# -- the fit rules against a brute-force reference -------------------------------------------

def reference(problem: Problem, order: list[int], mode: str) -> list[tuple[int, int]]:
    """(pool, scaled offset) per block: the fit rules spelled out one candidate at a time. A
    placed piece ``[o' + lo', o' + hi')`` sharing a moment with a piece ``[lo, hi)`` of the block
    forbids the offsets ``[o' + lo' - hi + 1, o' + hi' - lo)``; the free regions lie between
    the forbidden intervals sorted by low (the fixed blocks first, then ``order``)."""
    b = make_blocks(problem)
    n = len(b)
    placed: dict[int, tuple[int, int]] = {}

    def pieces(i):
        return [(int(b.piece_start[q]), int(b.piece_end[q]), int(b.piece_lo[q]),
                 int(b.piece_hi[q])) for q in range(b.piece_ptr[i], b.piece_ptr[i + 1])
                if b.piece_hi[q] > b.piece_lo[q]]

    def forbidden(i, pool):
        out = []
        for j, (pj, oj) in placed.items():
            if pj != pool:
                continue
            for s, e, lo, hi in pieces(i):
                for s2, e2, lo2, hi2 in pieces(j):
                    if s < e2 and s2 < e:
                        out.append((oj + lo2 - hi + 1, oj + hi2 - lo))
        return sorted(out)

    def fits(i, pool, off):
        cap = int(b.pool_capacity[pool])
        if cap >= 0 and off + b.size[i] > cap:
            return False
        return not any(f <= off < h for f, h in forbidden(i, pool))

    def best_offset(i, pool):
        a = b.align_in(i, pool)
        cap = int(b.pool_capacity[pool])
        top = (1 << 60) if cap < 0 else cap - int(b.size[i])
        if top < 0:
            return -1
        regions, cur = [], 0  # free regions [r0, r1] bounded above by a forbidden interval
        for f, h in forbidden(i, pool):
            if f - 1 >= cur:
                regions.append((cur, f - 1))
            cur = max(cur, h)
        if mode == "first":
            cands = [round_up(r0, a) for r0, r1 in regions if round_up(r0, a) <= min(r1, top)]
            cands.append(round_up(cur, a))
            off = min(cands)
            return off if off <= top else -1
        fitting = [(min(r1, top) - r0, r0) for r0, r1 in regions
                   if round_up(r0, a) <= min(r1, top)]
        if fitting:
            return round_up(min(fitting)[1], a)
        off = round_up(cur, a)
        return off if off <= top else -1

    for i in np.nonzero(b.fixed >= 0)[0].tolist():
        for pool in b.pools[i]:
            if fits(i, pool, int(b.fixed[i])):
                placed[i] = (pool, int(b.fixed[i]))
                break
        else:
            return []
    for i in order:
        if i in placed:
            continue
        for pool in b.pools[i]:
            off = best_offset(i, pool)
            if off >= 0:
                assert fits(i, pool, off)
                placed[i] = (pool, off)
                break
        else:
            return []
    return [placed[i] for i in range(n)]


def placed_by(placer: Placer) -> list[tuple[int, int]]:
    return list(zip(placer.pool_of.tolist(), placer.offset.tolist(), strict=True))


@given(problems(max_buffers=10), st.sampled_from(ORDERS), st.sampled_from(["best", "first"]))
def test_fit_matches_the_reference(problem, order_name, mode):
    b = make_blocks(problem)
    order = order_blocks(b, order_name).tolist()
    want = reference(problem, order, mode)
    placer = Placer(b)
    try:
        placer.place_fixed()
        placer.place_order(order, mode)
    except CapacityError:
        assert want == []
        return
    assert placed_by(placer) == want


@given(problems(max_buffers=14, max_time=40), st.sampled_from(ORDERS),
       st.sampled_from(["best", "first"]), st.integers(1, 4))
def test_blocks_taken_out_free_their_bytes(problem, order_name, mode, per_bucket):
    # Small buckets make deep trees even on a few blocks. Taking the second half of the order
    # out leaves the placement of the first half alone, so putting it back reversed gives what
    # placing the first half, then the second reversed, gives.
    b = make_blocks(problem)
    order = order_blocks(b, order_name)
    half = order[len(b) // 2:]
    half = half[b.fixed[half] < 0]
    rest = [i for i in order.tolist() if i not in set(half.tolist())]
    want = reference(problem, rest + half[::-1].tolist(), mode)
    placer = Placer(b, per_bucket=per_bucket)
    try:
        placer.place_fixed()
        placer.place_order(order, mode)
        placer.unplace(half)
        placer.place_order(half[::-1], mode)
    except CapacityError:
        assert want == []
        return
    assert placed_by(placer) == want


@given(st.lists(st.tuples(st.integers(-5, 40), st.integers(1, 12)), max_size=12),
       st.integers(0, 60), st.integers(1, 6), st.sampled_from(["best", "first"]))
def test_python_and_numpy_choosers_agree(intervals, top, align, mode):
    flo = [lo for lo, _ in intervals]
    fhi = [lo + w for lo, w in intervals]
    want = choose(np.asarray(flo, np.int64), np.asarray(fhi, np.int64), top, align, mode)
    assert choose_small(flo, fhi, top, align, mode) == want
    if want >= 0:
        assert want % align == 0 and want <= top
        assert not any(f <= want < h for f, h in zip(flo, fhi, strict=True))


@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 12)), max_size=12),
       st.one_of(st.integers(0, 60), st.just(10**9)), st.integers(1, 6),
       st.sampled_from(["best", "first"]), st.integers(0, 3), st.integers(1, 8))
def test_shifted_chooser_agrees_with_the_python_one(intervals, top, align, mode, lo, width):
    # Occupied bytes and a piece [lo, lo + width) of the block: the shifts of Placer.find_offset
    # (an unbounded top takes the fast path without clipping or rounding when align is 1).
    olo = [a for a, _ in intervals]
    ohi = [a + w for a, w in intervals]
    dlo, dhi = lo + width - 1, lo
    want = choose_small(olo, ohi, top, align, mode, dlo, dhi)
    got = choose_shifted(np.asarray(olo, np.int64), np.asarray(ohi, np.int64), top, align, mode,
                         dlo, dhi)
    assert got == want


# -- properties on random problems -----------------------------------------------------------

@given(problems(max_buffers=10), st.sampled_from(OWN_FIT))
def test_plans_are_valid_and_never_below_the_max_load(problem, name):
    try:
        plan = get(name)(problem)
    except CapacityError as e:
        assert "buffer" in str(e) and "capacity" in str(e)
        assert any(p.capacity is not None for p in problem.pools)
        return
    assert check(problem, plan) == []
    lb = objective_lower_bound(problem)
    assert plan.objective >= lb and plan.lower_bound == lb
    assert (plan.status == "optimal") == (plan.objective == lb)
    for pool, bound in max_load(problem).items():
        assert plan.heights[pool] >= bound.bytes
    assert get(name)(problem).placements == plan.placements  # deterministic


def test_registered_as_own():
    assert {"best-fit", "first-fit", "best-fit-size", "first-fit-peak"} <= set(names("own"))


def test_best_fit_on_a_real_network():
    from cpplan.io import read_problem

    problem = read_problem(benchmark("idealloc", "G_1.csv"))
    plan = get("best-fit")(problem, order="size")
    assert check(problem, plan) == []
    assert plan.objective <= 1.001 * plan.lower_bound


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("mode", ["best", "first"])
def test_the_placer_places_a_large_problem_as_the_local_searchs_decoder_does(aligned, mode):
    # Thousands of blocks: many buckets, deep trees, run lists joined across nodes, against the
    # decoder's own conflict lists (the same fit rules, computed another way).
    b = make_blocks(random_problem(1500, seed=3, aligned=aligned))
    order = order_blocks(b, "size")
    placer = Placer(b)
    placer.place_order(order, mode)
    decoder = Decoder(b, order, mode)
    assert placer.pool_of.tolist() == decoder.pool_of
    assert placer.offset.tolist() == decoder.off
