"""The tier relaxation: a proven lower bound when blocks choose their memory, and what solve
makes of it, against exhaustive search on small problems with traffic."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpplan import Buffer, Pool, Problem, check, make_blocks
from cpplan.deadline import PlanOptions
from cpplan.exact.tiers import tier_bound
from cpplan.solve import solve
from tests.bruteforce import brute_force


@st.composite
def two_tiers(draw) -> Problem:
    """A small fast memory with a capacity and a large slow one; buffers move bytes."""
    n = draw(st.integers(1, 6))
    buffers = []
    for i in range(n):
        start = draw(st.integers(0, 6))
        size = draw(st.integers(1, 12))
        buffers.append(Buffer(f"b{i}", size, start, start + draw(st.integers(1, 4)),
                              alignment=draw(st.sampled_from((1, 1, 2, 4))),
                              traffic=size * draw(st.integers(1, 4))))
    fast = Pool("sram", draw(st.integers(4, 24)), traffic_cost=1, cost=draw(st.integers(0, 1)))
    slow = Pool("dram", None, traffic_cost=draw(st.integers(2, 6)), cost=draw(st.integers(0, 1)))
    return Problem(tuple(buffers), (fast, slow))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(two_tiers())
def test_the_relaxation_never_claims_more_than_the_optimum(problem):
    blocks = make_blocks(problem)
    got = tier_bound(blocks, PlanOptions(10, deterministic=True).budget())
    best = brute_force(problem).objective
    assert got is not None and best is not None
    assert got.bound + blocks.settled_traffic_cost <= best


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(two_tiers())
def test_solve_reaches_and_proves_the_optimum_of_small_two_tier_problems(problem):
    plan = solve(problem, time_limit=10, deterministic=True)
    best = brute_force(problem).objective
    assert not check(problem, plan)
    assert plan.lower_bound <= best <= plan.objective
    assert plan.status == "optimal" and plan.objective == best


def test_where_fragmentation_costs_traffic_the_bound_stays_below_and_solve_proves_it():
    # Fourteen buffers whose load is 10 bytes at every step, yet no packing fits in 10 bytes
    # (tests/test_solve.py, _fragmented). With 10 bytes of sram, the relaxation puts them all
    # there (each moment's load fits); a plan must send some to dram.
    rows = [(5, 0, 1), (1, 0, 3), (4, 0, 2), (1, 1, 8), (3, 1, 5), (1, 1, 3), (1, 2, 5),
            (2, 2, 8), (1, 2, 5), (2, 3, 7), (4, 5, 7), (1, 5, 8), (3, 7, 8), (3, 7, 8)]
    problem = Problem(tuple(Buffer(f"b{i}", z, s, e, traffic=z) for i, (z, s, e) in
                            enumerate(rows)),
                      (Pool("sram", 10, cost=0, traffic_cost=1),
                       Pool("dram", cost=0, traffic_cost=3)))
    blocks = make_blocks(problem)
    got = tier_bound(blocks, PlanOptions(10, deterministic=True).budget())
    everything_fast = sum(z for z, _, _ in rows)
    assert got.optimal and got.bound == everything_fast and (got.pools == 0).all()
    plan = solve(problem, time_limit=20, deterministic=True)
    assert not check(problem, plan)
    assert plan.objective > everything_fast and plan.fast_share < 1
    assert plan.status == "optimal" and plan.lower_bound == plan.objective  # proven by CP-SAT


def _sram_tiled(n: int, decoys: int, seed: int, k: int = 4) -> tuple[Problem, int]:
    """sram (capacity W) exactly tiled by a perfect packing of width W whose buffers move k
    times their size; decoys (anywhere in time) move once their size. Evicting tiled buffers
    for a decoy frees, at some moment, at least the decoy's size of buffers that move k times
    more per byte: the optimum keeps the tiling in sram and the decoys in dram."""
    import random

    from cpplan.perfect import perfect_packing

    width, horizon = 64, 40
    tiled = perfect_packing(n, seed=seed, width=width, horizon=horizon)
    rng = random.Random(seed)
    buffers = [Buffer("t" + b.id, b.size, b.start, b.end, traffic=k * b.size)
               for b in tiled.buffers]
    for d in range(decoys):
        start = rng.randrange(horizon - 1)
        size = rng.randrange(1, width // 2)
        buffers.append(Buffer(f"d{d}", size, start, rng.randrange(start + 1, horizon + 1),
                              traffic=size))
    optimum = sum(k * b.size for b in tiled.buffers) + 4 * sum(
        b.size for b in buffers if b.id.startswith("d"))
    return Problem(tuple(buffers), (Pool("sram", width, cost=0, traffic_cost=1),
                                    Pool("dram", cost=0, traffic_cost=4))), optimum


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 1000))
def test_a_tiled_fast_memory_is_found_and_proven(seed):
    problem, optimum = _sram_tiled(12, 4, seed)
    plan = solve(problem, time_limit=10, deterministic=True)
    assert not check(problem, plan)
    assert plan.lower_bound <= optimum <= plan.objective  # the bound is true
    assert plan.status == "optimal" and plan.objective == optimum
