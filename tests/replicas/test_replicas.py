"""Replicas of production allocators: golden cases from their own test suites and papers, and a
property test that every replica's plan passes the checker."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpplan.errors import CapacityError, CpplanError, PlanError
from cpplan.plan import check
from cpplan.planners.registry import get, names
from cpplan.problem import Alias, Buffer, Pool, Problem
from tests.strategies import problems

REPLICAS = [n for n in names("replica") if n != "naive"]
USMP = ["usmp-greedy-by-size", "usmp-greedy-by-conflicts", "usmp-hill-climb"]


def offsets(plan, ids):
    return [plan.placements[i].offset for i in ids]


def records(recs: list[tuple[int, int, int]]) -> Problem:
    """TFLite-style records ``(size, first, last)`` with an INCLUSIVE last step."""
    return Problem([Buffer(f"t{k}", s, f, last + 1) for k, (s, f, last) in enumerate(recs)])


# -- TVM USMP (tests/python/unittest/test_tir_usmp_algo.py) ----------------------------------------
# USMP's buffers carry explicit, possibly asymmetric conflict lists and no time. The cases give
# every buffer its own step (so no lifetimes overlap) and pass the lists as ``conflicts``: the
# placement then sees exactly USMP's conflicts, and the checker still guards the plan.
LINEAR = [("bi_a", 10, ["bi_b"]), ("bi_b", 20, ["bi_a", "bi_c"]), ("bi_c", 100, ["bi_b", "bi_d"]),
          ("bi_d", 40, ["bi_c", "bi_e"]), ("bi_e", 50, ["bi_d", "bi_f"]), ("bi_f", 50, ["bi_e"])]
FANOUT = [("bi_a", 10, ["bi_b", "bi_c"]), ("bi_b", 20, ["bi_a", "bi_c", "bi_e"]),
          ("bi_c", 100, ["bi_e", "bi_a", "bi_b", "bi_d"]),
          ("bi_d", 40, ["bi_b", "bi_f", "bi_c", "bi_e"]),
          ("bi_e", 50, ["bi_c", "bi_f", "bi_b", "bi_d"]), ("bi_f", 60, ["bi_d", "bi_e", "bi_f"]),
          ("bi_g", 70, ["bi_f"])]
THREE = [("bi_a", 10, ["bi_b", "bi_c"]), ("bi_b", 10, ["bi_c", "bi_a"]),
         ("bi_c", 10, ["bi_a", "bi_b"])]


def usmp_case(spec, capacity=None):
    problem = Problem([Buffer(n, s, k, k + 1) for k, (n, s, _) in enumerate(spec)],
                      pools=(Pool("global_workspace", capacity=capacity),))
    return problem, {n: c for n, _, c in spec}


def run_usmp(name, problem, conflicts):
    extra = {"memory_pressure": 0} if name == "usmp-hill-climb" else {}
    return get(name)(problem, conflicts=conflicts, **extra)


@pytest.mark.parametrize("name,spec,expected", [
    *[(n, LINEAR, 140) for n in USMP],
    ("usmp-greedy-by-size", FANOUT, 190),
    ("usmp-greedy-by-conflicts", FANOUT, 320),
    ("usmp-hill-climb", FANOUT, 190),
])
def test_usmp_pool_sizes(name, spec, expected):
    problem, conflicts = usmp_case(spec)
    assert run_usmp(name, problem, conflicts).height == expected


@pytest.mark.parametrize("name", USMP)
def test_usmp_name_based_ordering(name):
    problem, conflicts = usmp_case(THREE)
    plan = run_usmp(name, problem, conflicts)
    assert offsets(plan, ["bi_a", "bi_b", "bi_c"]) == [20, 10, 0]


def test_usmp_mutually_live_buffers_as_lifetimes():
    # The same three buffers with overlapping lifetimes and no explicit lists.
    problem = Problem([Buffer(n, 10, 0, 1) for n in ("bi_a", "bi_b", "bi_c")])
    for name in USMP:
        assert offsets(get(name)(problem), ["bi_a", "bi_b", "bi_c"]) == [20, 10, 0]


def test_usmp_no_pool_error():
    problem, conflicts = usmp_case([("bi_a", 10, ["bi_b"]), ("bi_b", 10, ["bi_c"]),
                                    ("bi_c", 10, ["bi_a"])], capacity=10)
    with pytest.raises(CapacityError, match="global_workspace"):
        get("usmp-greedy-by-size")(problem, conflicts=conflicts)


def test_usmp_two_pools_as_tvm_test_linear():
    """TVM's test_linear (test_tir_usmp_algo.py): a fast pool of 200704 bytes before an
    unbounded slow one; the conflicts of its liveness analysis as lifetimes, alignment 16.
    TVM asserts these pool sizes for both greedy algorithms."""
    problem = Problem([Buffer("sid_9", 301056, 0, 2), Buffer("PaddedInput_7", 314646, 1, 3),
                       Buffer("Conv2dOutput_7", 256, 2, 4), Buffer("sid_8", 802816, 2, 6),
                       Buffer("tensor_2", 200704, 4, 6)],
                      pools=(Pool("fast_memory", capacity=200704), Pool("slow_memory")))
    for name in USMP[:2]:
        plan = get(name)(problem, alignment=16)
        assert plan.heights == {"fast_memory": 200704, "slow_memory": 1418528}


def tiered(spec, fast=100):
    """USMP buffers ``(name, size, conflicts)`` in a fast pool of ``fast`` bytes and an
    unbounded slow one (every buffer its own step: the lists are the only conflicts)."""
    problem = Problem([Buffer(n, s, k, k + 1) for k, (n, s, _) in enumerate(spec)],
                      pools=(Pool("fast", capacity=fast), Pool("slow")))
    return problem, {n: c for n, _, c in spec}


def test_usmp_greedy_takes_back_a_dropped_pool_as_tvm_does():
    """A placed in fast at 0, C above it at 60; B conflicts with both. Walking C first drops
    the fast pool (90 + 30 > 100), and A then takes it back at 60 (operator[] re-inserts it
    at 0): TVM puts B over C, an invalid plan. Walking A first, C drops the pool for good."""
    spec = [("a", 60, ["b", "c"]), ("b", 30, ["c", "a"]), ("c", 30, ["a", "b"])]
    problem, conflicts = tiered(spec)
    with pytest.raises(PlanError, match=r"'b' at fast:60, over buffer 'c'.*'c' dropped"):
        get("usmp-greedy-by-size")(problem, conflicts=conflicts)
    conflicts["b"] = ["a", "c"]
    plan = get("usmp-greedy-by-size")(problem, conflicts=conflicts)
    assert [plan.placements[n] for n in "abc"] == [("fast", 0), ("slow", 0), ("fast", 60)]


def test_usmp_hill_climb_drops_a_pool_despite_a_gap_below():
    """u meets v only, placed in fast at [50, 90): the gap [0, 50) below holds u, but v ends
    too high for u to fit above it (90 + 30 > 100), and TVM's hill climb drops the pool."""
    problem = Problem([Buffer("w", 50, 0, 1), Buffer("v", 40, 0, 2), Buffer("u", 30, 1, 2)],
                      pools=(Pool("fast", capacity=100), Pool("slow")))
    plan = get("usmp-hill-climb")(problem, max_attempts=1)
    assert plan.placements["v"] == ("fast", 50)
    assert plan.placements["u"] == ("slow", 0)


def test_usmp_hill_climb_is_deterministic():
    problem, conflicts = usmp_case(FANOUT)
    a = run_usmp("usmp-hill-climb", problem, conflicts)
    b = run_usmp("usmp-hill-climb", problem, conflicts)
    assert a.placements == b.placements


# -- TFLite GPU (memory_management_test.cc and Pisarchyk & Lee 2020) -------------------------------
PAPER = [(32, 0, 1), (28, 1, 4), (36, 2, 5), (16, 3, 5), (8, 4, 5), (64, 5, 7), (10, 6, 8),
         (40, 7, 8)]
CHAIN = [(16, 0, 1), (8, 1, 2), (64, 2, 3), (32, 3, 4), (8, 4, 5)]
COMPLEX = [(32, 0, 1), (32, 1, 4), (8, 2, 5), (16, 3, 5), (8, 4, 5), (64, 5, 7), (8, 6, 8),
           (8, 7, 8), (16, 8, 9)]


def test_paper_example_totals():
    problem = records(PAPER)
    assert get("tflite-gpu-greedy-by-size")(problem).height == 124
    assert get("tflite-gpu-objects-greedy-by-size")(problem).height == 128


def test_paper_example_offsets():
    ids = [f"t{k}" for k in range(len(PAPER))]
    plan = get("tflite-gpu-greedy-by-size")(records(PAPER))
    assert offsets(plan, ids) == [0, 32, 64, 100, 116, 0, 104, 64]


# Object goldens as offsets: objects laid end to end in object order (ObjectsToOffsets).
@pytest.mark.parametrize("name,recs,expected", [
    ("tflite-gpu-greedy-by-size", CHAIN, [0, 64, 0, 64, 0]),
    ("tflite-gpu-objects-greedy-by-size", CHAIN, [0, 64, 0, 64, 0]),
    ("tflite-gpu-objects-greedy-in-order", CHAIN, [0, 64, 0, 64, 0]),
    ("tflite-gpu-objects-greedy-by-breadth", CHAIN, [0, 64, 0, 64, 0]),
    ("tflite-gpu-objects-equality", CHAIN, [0, 16, 24, 88, 16]),
    ("tflite-gpu-greedy-by-size", COMPLEX, [0, 32, 80, 64, 88, 0, 64, 72, 0]),
    # ids [1,0,2,1,3,0,1,2,0], sizes [64,32,8,8]
    ("tflite-gpu-objects-greedy-by-size", COMPLEX, [64, 0, 96, 64, 104, 0, 64, 96, 0]),
    # ids [0,1,0,2,3,1,3,2,0], sizes [32,64,16,8]
    ("tflite-gpu-objects-greedy-in-order", COMPLEX, [0, 32, 0, 96, 112, 32, 112, 96, 0]),
    # ids [0,4,2,1,3,0,2,3,1], sizes [64,16,8,8,32]
    ("tflite-gpu-objects-greedy-by-breadth", COMPLEX, [0, 96, 80, 64, 88, 0, 80, 88, 64]),
    # ids [0,1,2,3,4,5,4,2,3], sizes [32,32,8,16,8,64]
    ("tflite-gpu-objects-equality", COMPLEX, [0, 32, 64, 72, 88, 96, 88, 64, 72]),
    # GREEDY_IN_ORDER on the paper example: ids [0,1,0,2,3,1,3,0], sizes [40,64,16,10]
    ("tflite-gpu-objects-greedy-in-order", PAPER, [0, 40, 0, 104, 120, 40, 120, 0]),
])
def test_tflite_gpu_goldens(name, recs, expected):
    plan = get(name)(records(recs))
    assert offsets(plan, [f"t{k}" for k in range(len(recs))]) == expected


# -- TFLite CPU (simple_memory_arena_test.cc) and TFLM (greedy_memory_planner_test.cc) ------------
def test_tflite_arena_basic_operations():
    # Allocate(alignment 32) calls in an order the planner's sort reproduces.
    recs = [(2047, 1, 3), (2047, 2, 5), (2047, 3, 6), (2047, 5, 6), (1023, 4, 6), (1023, 6, 6)]
    plan = get("tflite-arena")(records(recs), alignment=32)
    assert offsets(plan, [f"t{k}" for k in range(6)]) == [0, 2048, 4096, 0, 6144, 2048]


def test_tflite_arena_inclusive_last_node():
    recs = [(2047, 0, 2), (2047, 1, 2), (2047, 2, 3)]
    plan = get("tflite-arena")(records(recs), alignment=32)
    assert offsets(plan, ["t0", "t1", "t2"]) == [0, 2048, 4096]


def test_tflm_greedy_medium():
    recs = [(10, 0, 1), (20, 1, 2), (30, 2, 3), (40, 3, 4), (50, 0, 1)]
    plan = get("tflm-greedy")(records(recs), alignment=1)
    assert offsets(plan, [f"t{k}" for k in range(5)]) == [50, 70, 40, 0, 0]
    assert plan.height == 90


def test_tflm_overlap_case_and_size_rounding():
    recs = [(100, 0, 1), (50, 2, 3), (20, 1, 2)]
    assert get("tflm-greedy")(records(recs), alignment=1).height == 120
    # Default: sizes rounded up to 16 bytes, as TFLM's allocator hands them to the planner.
    plan = get("tflm-greedy")(records(recs))
    assert offsets(plan, ["t0", "t1", "t2"]) == [0, 0, 112]


def test_tflm_offline_buffers_come_first():
    problem = Problem([Buffer("a", 16, 0, 2, offset=32), Buffer("b", 32, 0, 2)])
    plan = get("tflm-greedy")(problem)
    assert offsets(plan, ["a", "b"]) == [32, 0]


# -- properties ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", REPLICAS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(max_buffers=9), alignment=st.sampled_from([1, 1, 2, 8, 64]))
def test_every_plan_passes_the_checker(name, problem, alignment):
    extra = {"max_attempts": 20} if name == "usmp-hill-climb" else {}
    try:
        plan = get(name)(problem, alignment=alignment, **extra)
    except CapacityError as err:
        assert "fits in none of its pools" in str(err)
        return
    except PlanError as err:  # TVM's greedy drops a pool and takes it back (see usmp.py)
        assert name in USMP[:2] and "TVM's plan is invalid here" in str(err)
        return
    except CpplanError as err:  # Vela's hill climb stops on one lone swappable range (vela.py)
        assert name == "vela" and "Vela's hill climb fails here" in str(err)
        return
    assert check(problem, plan) == []
    assert plan.planner == name
    for b in problem.buffers:
        pl = plan.placements[b.id]
        assert pl.offset % alignment == 0 or b.id in problem.root_of or b.offset is not None


@pytest.mark.parametrize("name", REPLICAS)
def test_capacity_failure_names_buffer_and_pool(name):
    problem = Problem([Buffer("x", 64, 0, 2), Buffer("y", 64, 1, 3)],
                      pools=(Pool("sram", capacity=100),))
    with pytest.raises(CapacityError, match=r"buffer '[xy]'.*'sram' \(capacity 100\)"):
        get(name)(problem, alignment=1)


@pytest.mark.parametrize("name", REPLICAS)
def test_second_pool_takes_the_overflow(name):
    problem = Problem([Buffer("x", 64, 0, 2), Buffer("y", 64, 1, 3)],
                      pools=(Pool("sram", capacity=100), Pool("dram")))
    plan = get(name)(problem, alignment=1)
    assert {plan.placements["x"].pool, plan.placements["y"].pool} == {"sram", "dram"}


@pytest.mark.parametrize("name", REPLICAS)
def test_aliases_move_with_their_block(name):
    problem = Problem([Buffer("big", 64, 0, 4), Buffer("view", 16, 2, 6),
                       Buffer("other", 32, 3, 5)], aliases=(Alias("view", "big", 16),))
    plan = get(name)(problem, alignment=1)
    assert plan.placements["view"].offset == plan.placements["big"].offset + 16
    assert check(problem, plan) == []


# -- the fast paths give what the plain definitions give ----------------------------------------
@pytest.mark.parametrize("choose", ["first", "best", "tflite"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(max_buffers=12), alignment=st.sampled_from([1, 2, 8]),
       seed=st.integers(0, 2**16))
def test_merged_obstacles_place_like_the_plain_index(choose, problem, alignment, seed):
    """The arena fed by the placer's merged occupancy runs places every block where the plain
    per-piece index does."""
    import numpy as np

    from cpplan.replicas import _greedy
    from cpplan.replicas.tflite import _choose as tflite_choose

    fn = {"first": _greedy.choose_first_fit, "best": _greedy.choose_best_fit,
          "tflite": tflite_choose}[choose]
    blocks, extra = _greedy.prepare(problem, alignment)
    top = _greedy.padded_sizes(blocks, alignment)
    order = np.random.default_rng(seed).permutation(len(blocks))
    got = []
    for merged in (False, True):
        arena = _greedy.Arena(blocks, top=top, extra=extra, merged=merged)
        try:
            arena.place_fixed_and_empty("test")
            arena.place_in_order(order, fn, "test")
        except CapacityError as err:
            got.append(str(err))
            continue
        got.append((arena.pool_of.tolist(), arena.offset.tolist()))
    assert got[0] == got[1]


@settings(max_examples=60, deadline=None)
@given(spans=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 5)), min_size=1, max_size=40),
       picks=st.lists(st.integers(0, 10**6), max_size=40))
def test_gpu_nearest_objects_match_the_brute_force_definition(spans, picks):
    """TFLite GPU greedy-by-size's nearest-object queries (trees, and sparse tables for large
    batches) against the definition: the smallest distance to an object none of whose records
    intersects the record, the lowest object on ties."""
    import numpy as np

    from cpplan.replicas.tflite_gpu import INF, _Gaps

    first = np.asarray([f for f, _ in spans], np.int64)
    last = first + np.asarray([d for _, d in spans], np.int64)
    n = len(spans)
    gaps = _Gaps(first, last)
    objects: list[list[int]] = []
    for r, pick in zip(range(n), picks, strict=False):  # records join objects they fit, or new
        fits = [o for o, m in enumerate(objects)
                if all(last[r] < first[q] or first[r] > last[q] for q in m)]
        o = fits[pick % len(fits)] if fits and pick % 4 else len(objects)
        if o == len(objects):
            objects.append([])
        gaps.add(o, r, new=not objects[o])
        objects[o].append(r)
    want_d, want_o = [], []
    for r in range(n):
        best, obj = INF, -1
        for o, m in enumerate(objects):
            if any(not (last[r] < first[q] or first[r] > last[q]) for q in m):
                continue
            d = min(first[q] - last[r] if last[r] < first[q] else first[r] - last[q] for q in m)
            if d < best:
                best, obj = d, o
        want_d.append(best)
        want_o.append(obj)
    for got in (gaps.nearest(first, last), gaps._nearest_batch(first, last)):
        assert got[0].tolist() == want_d
        assert got[1].tolist() == want_o
