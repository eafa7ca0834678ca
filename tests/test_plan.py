"""Plans and the plan checker: every violation is found, named, and nothing valid is refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpplan import Alias, Buffer, Placement, Plan, PlanError, Pool, Problem, check, ensure_valid
from cpplan.problem import MAX_VALUE
from cpplan.sweep import find_overlaps, first_overlap
from tests.strategies import (
    BREAKS,
    break_plan,
    brute_overlaps,
    naive_plan,
    problems,
    valid_plans,
)


def kinds(problem: Problem, placements: dict) -> list[str]:
    return [v.kind for v in check(problem, Plan.build(problem, placements))]


TWO = Problem((Buffer("a", 64, 0, 4), Buffer("b", 32, 2, 6, alignment=16)))


# -- the plan record ------------------------------------------------------------------------------

def test_build_computes_heights_objective_and_status():
    pools = (Pool("sram", 1024, cost=4), Pool("dram", cost=1))
    p = Problem((Buffer("a", 64, 0, 2, pools=("sram",)), Buffer("b", 32, 0, 2, pools=("dram",))),
                pools)
    plan = Plan.build(p, {"a": ("sram", 0), "b": ("dram", 32)}, lower_bound=4 * 64 + 32)
    assert plan.heights == {"sram": 64, "dram": 64}
    assert plan.objective == 4 * 64 + 64
    assert plan.height == 128
    assert plan.status == "feasible"
    assert plan.gap == pytest.approx(32 / 320)
    best = Plan.build(p, {"a": ("sram", 0), "b": ("dram", 0)}, lower_bound=4 * 64 + 32)
    assert best.status == "optimal" and best.gap == 0.0
    assert "optimal" in best.summary() and "sram=64" in best.summary()
    assert Plan.build(p, {"a": ("sram", 0), "b": ("dram", 0)}).gap is None


def test_infeasible_plan():
    plan = Plan.infeasible(TWO, "needs 96 bytes, capacity 80")
    assert plan.status == "infeasible" and plan.gap is None
    assert check(TWO, plan) == []
    assert "needs 96 bytes" in plan.summary()


def test_a_plan_without_placements_or_proof_says_so():
    # What solve returns when it found no plan within the capacities and proved nothing.
    plan = Plan.infeasible(TWO, "no plan within the capacity found in the time limit",
                           planner="cpplan.solve").with_record(status="unknown")
    assert plan.summary().startswith("unknown: no plan within the capacity found")
    assert "height" not in plan.summary() and "lower bound" not in plan.summary()


def test_unknown_status():
    with pytest.raises(ValueError, match="status"):
        Plan.build(TWO, {"a": ("default", 0), "b": ("default", 64)}, status="great")


# -- the checker, one violation at a time --------------------------------------------------------

def test_accepts_a_valid_plan():
    assert kinds(TWO, {"a": ("default", 0), "b": ("default", 64)}) == []
    assert ensure_valid(TWO, Plan.build(TWO, {"a": ("default", 0), "b": ("default", 64)}))


def test_overlap_by_one_byte_names_both_buffers_the_moments_and_the_bytes():
    p = Problem((Buffer("a", 64, 0, 4), Buffer("b", 32, 2, 6)))
    (v,) = check(p, Plan.build(p, {"a": ("default", 0), "b": ("default", 63)}))
    assert v.kind == "overlap"
    assert set(v.buffers) == {"a", "b"}
    assert "'a'" in v.message and "'b'" in v.message
    assert "bytes [63, 64)" in v.message
    assert "steps [2, 4)" in v.message
    assert kinds(p, {"a": ("default", 0), "b": ("default", 64)}) == []


def test_lifetimes_are_half_open():
    p = Problem((Buffer("a", 64, 0, 4), Buffer("b", 64, 4, 6)))
    assert kinds(p, {"a": ("default", 0), "b": ("default", 0)}) == []


def test_buffers_in_different_pools_never_overlap():
    p = Problem((Buffer("a", 64, 0, 4), Buffer("b", 64, 0, 4)), (Pool("x"), Pool("y")))
    assert kinds(p, {"a": ("x", 0), "b": ("y", 0)}) == []
    assert kinds(p, {"a": ("x", 0), "b": ("x", 0)}) == ["overlap"]


def test_one_byte_off_alignment():
    (v,) = check(TWO, Plan.build(TWO, {"a": ("default", 0), "b": ("default", 65)}))
    assert v.kind == "alignment" and v.buffers == ("b",)
    assert "alignment 16" in v.message and "off by 1" in v.message


def test_pool_base_alignment():
    p = Problem((Buffer("a", 8, 0, 1, alignment=2),), (Pool("sram", alignment=12),))
    assert kinds(p, {"a": ("sram", 12)}) == []
    assert kinds(p, {"a": ("sram", 6)}) == ["alignment"]  # lcm(2, 12) = 12


def test_negative_or_non_integer_offset():
    assert kinds(TWO, {"a": ("default", -64), "b": ("default", 64)}) == ["alignment"]
    assert "alignment" in kinds(TWO, {"a": ("default", 0.0), "b": ("default", 64)})


def test_numpy_integer_offsets_are_integers():
    np = pytest.importorskip("numpy")
    assert kinds(TWO, {"a": ("default", np.int64(0)), "b": ("default", np.int64(64))}) == []
    assert kinds(TWO, {"a": ("default", np.int64(0)), "b": ("default", np.int64(48))}) == [
        "overlap"]


def test_pool_not_a_candidate():
    p = Problem((Buffer("a", 8, 0, 1, pools=("sram",)),), (Pool("sram"), Pool("dram")))
    (v,) = check(p, Plan.build(p, {"a": ("dram", 0)}))
    assert v.kind == "pool" and "'a'" in v.message and "dram" in v.message
    (v,) = check(p, Plan.build(p, {"a": ("l3", 0)}))
    assert v.kind == "pool" and "unknown pool 'l3'" in v.message


def test_capacity():
    p = Problem((Buffer("a", 64, 0, 2), Buffer("b", 64, 1, 3)), (Pool("sram", 100),))
    (v,) = check(p, Plan.build(p, {"a": ("sram", 0), "b": ("sram", 64)}))
    assert v.kind == "capacity" and v.buffers == ("b",)
    assert "128" in v.message and "100" in v.message
    assert kinds(p.with_capacity({"sram": 128}), {"a": ("sram", 0), "b": ("sram", 64)}) == []


def test_fixed_offset_moved():
    p = Problem((Buffer("w", 16, 0, 2, offset=32), Buffer("x", 16, 0, 2)))
    assert kinds(p, {"w": ("default", 32), "x": ("default", 0)}) == []
    (v,) = check(p, Plan.build(p, {"w": ("default", 0), "x": ("default", 16)}))
    assert v.kind == "fixed" and "32" in v.message and v.buffers == ("w",)


def test_alias_misplaced():
    p = Problem((Buffer("a", 64, 0, 2), Buffer("v", 16, 0, 2)), aliases=(Alias("v", "a", 16),))
    assert kinds(p, {"a": ("default", 64), "v": ("default", 80)}) == []
    (v,) = check(p, Plan.build(p, {"a": ("default", 64), "v": ("default", 64)}))
    assert v.kind == "alias" and set(v.buffers) == {"v", "a"} and "80" in v.message


def test_alias_in_another_pool_than_its_root():
    p = Problem((Buffer("a", 64, 0, 2), Buffer("v", 16, 0, 2)), (Pool("x"), Pool("y")),
                aliases=(Alias("v", "a", 16),))
    assert kinds(p, {"a": ("x", 0), "v": ("y", 16)}) == ["alias"]


def test_aliased_buffer_needs_its_own_alignment_only():
    # The pool's base alignment binds the root; a slice at displacement 8 is fine.
    p = Problem((Buffer("a", 64, 0, 2), Buffer("v", 16, 0, 2, alignment=8)),
                (Pool("x", alignment=64),), aliases=(Alias("v", "a", 8),))
    assert kinds(p, {"a": ("x", 64), "v": ("x", 72)}) == []
    assert naive_plan(p).offset("v") % 8 == 0


def test_missing_and_unknown_buffers():
    (v,) = check(TWO, Plan.build(TWO, {"a": ("default", 0)}))
    assert v.kind == "missing" and v.buffers == ("b",)
    got = check(TWO, Plan.build(TWO, {"a": ("default", 0), "b": ("default", 64),
                                      "ghost": ("default", 0)}))
    assert [(v.kind, v.buffers) for v in got] == [("unknown", ("ghost",))]


def test_wrong_recorded_height():
    plan = Plan.build(TWO, {"a": ("default", 0), "b": ("default", 64)})
    lying = plan.with_record(heights={"default": 64})
    assert [v.kind for v in check(TWO, lying)] == ["height"]


def test_heights_and_objective_that_lie_together_are_caught():
    # (the recorded objective agrees with the recorded height: only the height test can tell)
    plan = Plan.build(TWO, {"a": ("default", 0), "b": ("default", 64)})
    lying = plan.with_record(heights={"default": 64}, objective=64)
    assert [v.kind for v in check(TWO, lying)] == ["height"]


def test_an_offset_of_exactly_two_to_the_62_is_beyond_any_arena():
    p = Problem((Buffer("a", 64, 0, 4), Buffer("b", 32, 2, 6)))
    v = check(p, Plan.build(p, {"a": ("default", 0), "b": ("default", MAX_VALUE)}))[0]
    assert v.kind == "capacity" and v.buffers == ("b",) and "2**62" in v.message
    assert kinds(p, {"a": ("default", 0), "b": ("default", MAX_VALUE - 64)}) == []


def test_a_buffer_that_overlaps_another_before_and_after_its_gap_is_one_violation():
    p = Problem((Buffer("a", 64, 0, 10, gaps=((4, 6),)), Buffer("b", 64, 0, 10)))
    (v,) = check(p, Plan.build(p, {"a": ("default", 0), "b": ("default", 0)}))
    assert v.kind == "overlap" and v.buffers == ("a", "b")
    assert kinds(p, {"a": ("default", 0), "b": ("default", 64)}) == []


def test_members_of_one_block_may_overlap_but_not_other_blocks():
    p = Problem((Buffer("x", 32, 0, 3), Buffer("y", 32, 1, 4), Buffer("z", 8, 2, 5)),
                aliases=(Alias("y", "x"),))
    assert kinds(p, {"x": ("default", 0), "y": ("default", 0), "z": ("default", 32)}) == []
    got = check(p, Plan.build(p, {"x": ("default", 0), "y": ("default", 0),
                                  "z": ("default", 24)}))
    assert sorted(sorted(v.buffers) for v in got) == [["x", "z"], ["y", "z"]]


def test_every_overlap_is_listed():
    p = Problem(tuple(Buffer(f"b{i}", 8, 0, 2) for i in range(4)))
    got = check(p, Plan.build(p, {f"b{i}": ("default", 0) for i in range(4)}))
    assert len(got) == 6 and {v.kind for v in got} == {"overlap"}


def test_ensure_valid_raises_listing_the_violations():
    plan = Plan.build(TWO, {"a": ("default", 0), "b": ("default", 48)}, planner="mine")
    with pytest.raises(PlanError, match="plan from mine is invalid: buffers 'a' and 'b'") as e:
        ensure_valid(TWO, plan)
    assert [v.kind for v in e.value.violations] == ["overlap"]


# -- the sweep ------------------------------------------------------------------------------------

def test_sweep_on_rectangles():
    assert find_overlaps([]) == []
    assert find_overlaps([(0, 2, 0, 8, 0), (1, 3, 7, 9, 1)]) == [(0, 1)]
    assert find_overlaps([(0, 2, 0, 8, 0), (2, 3, 0, 8, 1)]) == []  # half-open time
    assert find_overlaps([(0, 2, 0, 8, 0), (0, 2, 8, 9, 1)]) == []  # half-open bytes
    assert find_overlaps([(0, 2, 0, 8, 0), (0, 2, 0, 8, 0)]) == []  # same group
    assert find_overlaps([(0, 2, 4, 4, 0), (0, 2, 0, 8, 1)]) == []  # empty
    assert first_overlap([(0, 5, 0, 8, 0), (1, 2, 8, 16, 1), (3, 4, 4, 12, 2)]) is not None


def test_touching_a_rectangle_that_already_overlaps_is_no_overlap():
    # b overlaps a when it starts (the sweep keeps it aside); then r touches b's top or bottom,
    # meeting nothing else, or also overlapping f (the sweep's two paths)
    top, bottom = (0, 9, 0, 8, 0), (0, 9, 10, 20, 0)
    b = (1, 9, 4, 12, 1)
    assert find_overlaps([top, b, (2, 9, 12, 20, 2)]) == [(0, 1)]
    assert find_overlaps([bottom, b, (2, 9, 0, 4, 2)]) == [(0, 1)]
    assert sorted(find_overlaps([top, b, (0, 9, 14, 16, 2), (2, 9, 12, 20, 3)])) == [(0, 1), (2, 3)]
    assert sorted(find_overlaps([bottom, b, (0, 9, -4, -2, 2), (2, 9, -6, 4, 3)])) == [(0, 1),
                                                                                     (2, 3)]
    assert sorted(find_overlaps([top, b, (2, 9, 8, 20, 2)])) == [(0, 1), (1, 2)]


def test_the_limit_is_the_number_of_pairs_returned():
    rects = [(0, 2, 0, 8, i) for i in range(4)]
    assert len(find_overlaps(rects)) == 6
    assert [len(find_overlaps(rects, limit=k)) for k in (1, 2, 5)] == [1, 2, 5]
    p = Problem(tuple(Buffer(f"b{i}", 8, 0, 2) for i in range(4)))
    plan = Plan.build(p, {f"b{i}": ("default", 0) for i in range(4)})
    assert len(check(p, plan, max_overlaps=2)) == 2


rects = st.lists(st.tuples(st.integers(0, 8), st.integers(1, 4), st.integers(0, 24),
                           st.integers(0, 10), st.integers(0, 5)), max_size=14).map(
    lambda rs: [(s, s + d, lo, lo + h, g) for s, d, lo, h, g in rs])


@given(rects)
def test_sweep_agrees_with_all_pairs(rs):
    want = {frozenset((i, j)) for i in range(len(rs)) for j in range(i + 1, len(rs))
            if rs[i][4] != rs[j][4] and rs[i][0] < rs[j][1] and rs[j][0] < rs[i][1]
            and rs[i][2] < rs[i][3] and rs[j][2] < rs[j][3]
            and rs[i][2] < rs[j][3] and rs[j][2] < rs[i][3]}
    got = find_overlaps(rs)
    assert len(got) == len(want)
    assert {frozenset(p) for p in got} == want
    assert (first_overlap(rs) is None) == (not want)


# -- properties -----------------------------------------------------------------------------------

@given(st.data())
def test_random_valid_plans_pass(data):
    problem = data.draw(problems())
    plan = data.draw(valid_plans(problem))
    assert check(problem, plan) == []
    assert brute_overlaps(problem, plan) == set()


@given(st.data())
def test_naive_plans_pass(data):
    problem = data.draw(problems(capacities=False))
    assert check(problem, naive_plan(problem)) == []


@pytest.mark.parametrize("how", sorted(BREAKS))
@settings(max_examples=30)
@given(data=st.data())
def test_broken_plans_are_caught(data, how):
    problem = data.draw(problems(capacities=how == "capacity", min_buffers=1))
    plan = data.draw(valid_plans(problem, respect_capacity=False))
    broken = break_plan(problem, plan, how, data.draw)
    if broken is None:
        return
    got = check(problem, broken)
    assert BREAKS[how] in {v.kind for v in got}, (how, got)
    with pytest.raises(PlanError):
        ensure_valid(problem, broken)


@given(st.data())
def test_overlaps_agree_with_brute_force(data):
    """On random valid and broken plans, the sweep reports exactly the all-pairs overlaps."""
    problem = data.draw(problems(capacities=False, max_buffers=10))
    plan = data.draw(valid_plans(problem))
    placements = dict(plan.placements)
    # Move a few buffers to small random offsets (breaking some plans, not others).
    for b in problem.buffers:
        if data.draw(st.integers(0, 3)) == 0:
            placements[b.id] = Placement(data.draw(st.sampled_from(problem.candidates(b))),
                                         data.draw(st.integers(0, 40)))
    moved = Plan.build(problem, placements)
    got = [v for v in check(problem, moved) if v.kind == "overlap"]
    pairs = [frozenset(v.buffers) for v in got]
    assert len(pairs) == len(set(pairs))  # every pair once
    assert set(pairs) == brute_overlaps(problem, moved)


def test_ensure_valid_trusts_a_repeat_only_when_it_is_the_same_plan():
    # A plan checked once is not checked again when written; a plan changed since is.
    problem = Problem((Buffer("a", 8, 0, 2), Buffer("b", 8, 1, 3)))
    plan = ensure_valid(problem, Plan.build(problem, {"a": ("default", 0), "b": ("default", 8)}))
    assert ensure_valid(problem, plan.with_record(seconds=1.0)) is not None
    plan.placements["b"] = Placement("default", 4)  # changed after the check
    with pytest.raises(PlanError, match="share bytes"):
        ensure_valid(problem, plan)
    twin = Problem((Buffer("a", 8, 0, 2), Buffer("b", 4, 1, 3)))  # another problem object
    ok = Plan.build(twin, {"a": ("default", 0), "b": ("default", 8)})
    assert ensure_valid(twin, ok) is ok


# -- traffic --------------------------------------------------------------------------------------

TIERS = Problem((Buffer("hot", 64, 0, 2, traffic=1000), Buffer("cold", 64, 1, 3, traffic=100)),
                (Pool("sram", 64, traffic_cost=1), Pool("dram", cost=0, traffic_cost=10)))


def test_the_objective_counts_what_the_traffic_costs_in_each_pool():
    plan = Plan.build(TIERS, {"hot": ("sram", 0), "cold": ("dram", 0)})
    assert plan.heights == {"sram": 64, "dram": 64}
    assert plan.traffic == {"sram": 1000, "dram": 100}
    assert plan.traffic_cost == {"sram": 1000, "dram": 1000}
    assert plan.objective == 64 * 1 + 0 + 1000 + 1000
    assert plan.fast_share == pytest.approx(1000 / 1100)
    assert "traffic cost 2000, 90.9% served fast" in plan.summary()
    assert not check(TIERS, plan)
    swapped = Plan.build(TIERS, {"hot": ("dram", 0), "cold": ("sram", 0)})
    assert swapped.objective == 64 + 10000 + 100 and swapped.fast_share == pytest.approx(1 / 11)


def test_a_plan_that_misstates_its_objective_is_caught():
    plan = Plan.build(TIERS, {"hot": ("sram", 0), "cold": ("dram", 0)})
    (v,) = check(TIERS, plan.with_record(objective=64))
    assert v.kind == "objective" and "2064" in v.message


def test_plans_without_traffic_report_none():
    plan = Plan.build(TWO, {"a": ("default", 0), "b": ("default", 64)})
    assert plan.traffic == {} and plan.fast_share is None and "traffic" not in plan.summary()


def test_no_share_served_fast_where_every_pool_costs_the_same():
    p = Problem((Buffer("a", 64, 0, 4, traffic=128), Buffer("b", 32, 2, 6, traffic=64)),
                (Pool("sram", traffic_cost=2), Pool("dram", traffic_cost=2)))
    plan = Plan.build(p, {"a": ("sram", 0), "b": ("dram", 0)})
    assert plan.traffic == {"sram": 128, "dram": 64} and plan.fast_share is None
    cheaper = p.replace(pools=(Pool("sram", traffic_cost=1), Pool("dram", traffic_cost=2)))
    assert Plan.build(cheaper, {"a": ("sram", 0), "b": ("dram", 0)}).fast_share == 128 / 192
