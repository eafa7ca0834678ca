"""Lower bounds: the max-load per pool (with its moment), the total load, capacity conflicts."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from cpplan import Alias, Buffer, LoadBound, Pool, Problem, make_blocks, max_load
from cpplan.bounds import capacity_conflict, load_profile, objective_lower_bound, total_load
from tests.strategies import brute_max_load, problems, valid_plans


def test_max_load_and_its_moment():
    p = Problem((Buffer("a", 64, 0, 2), Buffer("b", 32, 1, 3), Buffer("c", 64, 2, 4),
                 Buffer("d", 8, 9, 10)))
    assert max_load(p) == {"default": LoadBound("default", 96, 1, 2)}  # first step with 96
    assert objective_lower_bound(p) == 96
    assert max_load(make_blocks(p)) == max_load(p)


def test_max_load_of_nothing():
    assert max_load(Problem(())) == {"default": LoadBound("default", 0, None, 0)}
    assert max_load(Problem((Buffer("z", 0, 0, 3),)))["default"].bytes == 0


def test_max_load_is_scaled_back_to_bytes():
    p = Problem((Buffer("a", 1 << 20, 5, 7), Buffer("b", 3 << 20, 6, 8)))
    assert make_blocks(p).scale == 1 << 20
    assert max_load(p)["default"] == LoadBound("default", 4 << 20, 6, 2)


def test_load_profile():
    p = Problem((Buffer("a", 64, 0, 2), Buffer("b", 32, 1, 3)))
    b = make_blocks(p)  # scale 32, ranks at steps 0, 1, 2, 3
    load, live = load_profile(b)
    assert b.times.tolist() == [0, 1, 2, 3]
    assert load.tolist() == [2, 3, 1, 0] and live.tolist() == [1, 2, 1, 0]
    load, _ = load_profile(b, np.array([False, True]))
    assert load.tolist() == [0, 1, 1, 0]


def test_aliases_are_counted_once():
    # In place: y overwrites x; they share bytes, so 64 bytes, not 128.
    p = Problem((Buffer("x", 64, 0, 3), Buffer("y", 64, 2, 5)), aliases=(Alias("y", "x"),))
    assert max_load(p)["default"].bytes == 64
    # Concat: two slices of 'out' alive with it count by their union (the whole of 'out').
    p = Problem((Buffer("out", 64, 2, 4), Buffer("l", 32, 0, 3), Buffer("r", 32, 1, 3)),
                aliases=(Alias("l", "out", 0), Alias("r", "out", 32)))
    assert max_load(p)["default"] == LoadBound("default", 64, 1, 1)
    # An alias that outlives its root keeps only its own bytes.
    p = Problem((Buffer("a", 64, 0, 2), Buffer("v", 16, 1, 5), Buffer("c", 40, 2, 6)),
                aliases=(Alias("v", "a", 48),))
    assert max_load(p)["default"] == LoadBound("default", 64, 0, 1)
    assert max_load(p.replace(buffers=(*p.buffers[:2], Buffer("c", 49, 2, 6))))[
        "default"] == LoadBound("default", 65, 2, 2)


def test_several_pools_count_single_candidate_buffers_only():
    pools = (Pool("sram", 128, cost=1), Pool("dram", None, cost=10))
    p = Problem((Buffer("a", 64, 0, 2, pools=("sram",)), Buffer("b", 100, 0, 2, pools=("dram",)),
                 Buffer("c", 32, 0, 2), Buffer("d", 16, 0, 2, pools=("dram", "sram"))), pools)
    loads = max_load(p)
    assert loads["sram"].bytes == 64 and loads["dram"].bytes == 100
    assert total_load(p).bytes == 64 + 100 + 32 + 16
    # c and d must go somewhere: the cheap pool takes them (room 128 - 64 = 64 >= 48).
    assert objective_lower_bound(p) == 1 * (64 + 48) + 10 * 100
    # With less room in sram, the rest goes to dram.
    q = p.with_capacity({"sram": 80})
    assert objective_lower_bound(q) == 1 * 80 + 10 * (100 + 32)


@given(problems(max_buffers=8))
def test_max_load_agrees_with_brute_force(problem):
    blocks = make_blocks(problem)
    block_pools = {problem.buffers[r].id: tuple(problem.pools[k].name for k in blocks.pools[i])
                   for i, r in enumerate(blocks.root.tolist())}
    single = len(problem.pools) == 1
    for name, bound in max_load(problem).items():
        want, at = brute_max_load(problem, lambda r, name=name: single or block_pools[r] == (name,))
        assert (bound.bytes, bound.moment) == (want, at)
        if at is not None:
            live = sum(int(blocks.times[blocks.start[i]]) <= at < int(blocks.times[blocks.end[i]])
                       for i in range(len(blocks)) if single or blocks.pools[i] == (
                           problem.pool_index[name],))
            assert bound.live == live
    total, at = brute_max_load(problem, lambda r: True)
    assert (total_load(problem).bytes, total_load(problem).moment) == (total, at)


@given(st.data())
def test_lower_bound_is_below_every_valid_plan(data):
    problem = data.draw(problems(max_buffers=7))
    plan = data.draw(valid_plans(problem))
    lb = objective_lower_bound(problem)
    assert lb <= plan.objective
    assert plan.lower_bound == lb
    assert (plan.status == "optimal") == (plan.objective == lb)
    for name, bound in max_load(problem).items():
        assert bound.bytes <= plan.heights[name]
    assert capacity_conflict(problem) is None  # a plan exists, so no conflict


def test_capacity_conflict():
    pools = (Pool("sram", 90),)
    p = Problem((Buffer("a", 64, 0, 2), Buffer("b", 32, 1, 3)), pools)
    why = capacity_conflict(p)
    assert why is not None
    assert "'sram'" in why and "96" in why and "step 1" in why and "90" in why
    assert capacity_conflict(p.with_capacity({"sram": 96})) is None


def test_capacity_conflict_over_all_pools():
    pools = (Pool("x", 50), Pool("y", 50))
    p = Problem((Buffer("a", 40, 0, 2), Buffer("b", 40, 0, 2), Buffer("c", 40, 1, 2)), pools)
    assert max_load(p)["x"].bytes == 0  # nothing is bound to x alone
    why = capacity_conflict(p)
    assert why is not None and "120" in why and "100" in why
    assert capacity_conflict(p.with_capacity({"y": None})) is None


def test_the_bound_adds_each_buffers_cheapest_traffic():
    p = Problem((Buffer("hot", 64, 0, 2, traffic=1000), Buffer("dram-only", 8, 0, 2, traffic=10,
                                                               pools=("dram",))),
                (Pool("sram", 64, traffic_cost=1), Pool("dram", cost=0, traffic_cost=10)))
    # heights: sram's own load 0, dram's 8 at cost 0; the total load 72 fits in dram (cost 0)
    assert objective_lower_bound(p) == 0 + 1000 * 1 + 10 * 10
    assert make_blocks(p).settled_traffic_cost == 100
