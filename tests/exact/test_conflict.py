"""Irreducible infeasible subsets (cpplan.exact.conflict) against brute force.

The property: the set returned cannot be placed, and every set with one buffer removed can
(both decided by :func:`tests.bruteforce.fits`, which tries every pool and offset), on
random small problems with several pools, capacities, alignments and fixed offsets. A problem
for which no set is returned must fit.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from cpplan import Alias, Buffer, Pool, Problem, ProblemError
from cpplan.bounds import max_load
from cpplan.deadline import PlanOptions
from cpplan.exact.conflict import irreducible_conflict
from cpplan.solve import solve
from tests.bruteforce import fits as brute_fits


@st.composite
def tight_problems(draw: st.DrawFn) -> Problem:
    """Up to 7 buffers in up to 3 small bounded pools: often infeasible, and often not by the
    load at one moment alone; cheap to brute-force."""
    n_pools = draw(st.integers(1, 3))
    pools = tuple(Pool(f"p{k}", draw(st.integers(2, 5)), draw(st.sampled_from((1, 1, 1, 2, 3))),
                       draw(st.integers(0, 3))) for k in range(n_pools))
    names = [p.name for p in pools]
    buffers = []
    for i in range(draw(st.integers(2, 7))):
        start = draw(st.integers(0, 3))
        align = draw(st.sampled_from((1, 1, 1, 2, 4, 3)))
        cands = ()
        if n_pools > 1 and draw(st.booleans()):
            cands = tuple(draw(st.permutations(names))[:draw(st.integers(1, n_pools))])
        offset = None
        if draw(st.integers(0, 5)) == 0:
            offset = align * draw(st.integers(0, 6 // align))
        buffers.append(Buffer(f"b{i}", draw(st.sampled_from((1, 2, 3, 0))), start,
                              start + draw(st.integers(1, 3)), align, cands, offset))
    try:
        problem = Problem(tuple(buffers), pools)
    except ProblemError:
        assume(False)
        raise  # unreachable
    if draw(st.booleans()):
        # At the load: every pool's capacity is the max-load of the buffers bound to it (or one
        # more), so the load alone rarely proves anything and the exact engine must.
        loads = max_load(problem)
        try:
            problem = problem.with_capacity(
                {p.name: max(loads[p.name].bytes + draw(st.integers(0, 1)), 1) for p in pools})
        except ProblemError:  # a fixed buffer beyond the new capacity
            assume(False)
    return problem


@settings(max_examples=80)
@given(tight_problems())
def test_conflicts_are_irreducible_against_brute_force(problem):
    found = irreducible_conflict(problem, PlanOptions(30, deterministic=True))
    event("fits" if found is None else f"{found.how}, {len(found.buffers)} buffers")
    if found is None:
        assert brute_fits(problem), "infeasible, but no conflict found"
        return
    assert found.irreducible and found.buffers
    ids = set(found.buffers)
    assert not brute_fits(problem, ids), f"{sorted(ids)} fit together"
    for b in ids:
        assert brute_fits(problem, ids - {b}), f"{sorted(ids - {b})} do not fit either"


def test_a_conflict_of_blocks_with_buffers_aliased_into_them():
    # a and b cannot share the pool; c fits beside either; a2 and b2 live inside a and b
    problem = Problem((Buffer("a", 6, 0, 4), Buffer("a2", 6, 2, 5), Buffer("b", 6, 1, 3),
                       Buffer("b2", 4, 2, 6), Buffer("c", 2, 0, 6)),
                      (Pool("sram", 10),), aliases=(Alias("a2", "a"), Alias("b2", "b", 2)))
    found = irreducible_conflict(problem, PlanOptions(30, deterministic=True))
    assert found is not None and found.irreducible
    assert set(found.buffers) == {"a", "b"}
    assert not brute_fits(problem, {"a", "b"})
    assert brute_fits(problem, {"a", "c"}) and brute_fits(problem, {"b", "c"})


def test_minimallocs_iis_example():
    """google/minimalloc tests/solver_test.cc, ComputeIrreducibleInfeasibleSubset (and
    python/tests/test_solver.py, test_compute_iis): buffers 2, 3 and 4."""
    lives = [(0, 2), (0, 2), (2, 5), (3, 6), (4, 7)]
    problem = Problem(tuple(Buffer(f"b{i}", 2, s, e) for i, (s, e) in enumerate(lives)),
                      (Pool("default", 4),))
    found = irreducible_conflict(problem)
    assert (found.buffers, found.irreducible, found.how) == (("b2", "b3", "b4"), True, "max-load")


def test_a_refuted_probe_is_explained_too():
    """The load fits everywhere, the packing does not (MiniMalloc's InfeasibleTricky): the set
    comes from the exact engine, and solve returns it with the verdict."""
    rows = [(0, 1, 3), (0, 3, 1), (4, 5, 3), (2, 5, 1), (1, 2, 2), (3, 4, 2), (1, 4, 1)]
    problem = Problem(tuple(Buffer(f"b{i}", z, s, e) for i, (s, e, z) in enumerate(rows)),
                      (Pool("default", 4),))
    found = irreducible_conflict(problem, PlanOptions(10, deterministic=True))
    assert found.how == "exact" and found.irreducible
    assert not brute_fits(problem, set(found.buffers))
    plan = solve(problem, time_limit=10, deterministic=True, goal="fit")
    assert plan.status == "infeasible" and plan.conflict == found
    assert "cannot fit together (irreducible): b" in plan.summary()


def test_alignment_and_a_fixed_buffer_make_the_conflict():
    # 'f' is fixed at 4 in a pool of 8; 'a' (alignment 4, size 2) and 'b' (size 3) share its
    # moment: a at 0 leaves [2, 4) for b, too small. Neither alone conflicts with f.
    problem = Problem((Buffer("f", 4, 0, 2, offset=4), Buffer("a", 2, 0, 2, alignment=4),
                       Buffer("b", 3, 1, 2), Buffer("c", 8, 3, 4)), (Pool("default", 8),))
    found = irreducible_conflict(problem)
    assert set(found.buffers) == {"f", "a", "b"} and found.irreducible


def test_several_pools():
    # Two pools of 4: three buffers of 3 live at once that may go anywhere cannot fit; two can.
    problem = Problem(tuple(Buffer(f"b{i}", 3, 0, 2) for i in range(3))
                      + (Buffer("d", 4, 0, 1, pools=("y",)),), (Pool("x", 4), Pool("y", 4)))
    found = irreducible_conflict(problem, PlanOptions(10, deterministic=True))
    assert found.irreducible
    assert set(found.buffers) in ({"b0", "b1", "d"}, {"b0", "b2", "d"}, {"b1", "b2", "d"},
                                  {"b0", "b1", "b2"})
    assert not brute_fits(problem, set(found.buffers))


def test_aliases_are_named_by_their_root():
    problem = Problem((Buffer("x", 4, 0, 3), Buffer("y", 4, 2, 5), Buffer("z", 4, 1, 4)),
                      (Pool("default", 7),), (Alias("y", "x"),))
    found = irreducible_conflict(problem)
    assert found.buffers == ("x", "z") and found.irreducible


def test_a_problem_that_fits_has_no_conflict():
    problem = Problem((Buffer("a", 4, 0, 2), Buffer("b", 4, 1, 3)), (Pool("default", 8),))
    assert irreducible_conflict(problem) is None


def test_the_summary_names_at_most_eight():
    problem = Problem(tuple(Buffer(f"b{i:02}", 1, 0, 1) for i in range(12)), (Pool("default", 11),))
    plan = solve(problem, time_limit=5)
    assert plan.conflict.buffers == tuple(f"b{i:02}" for i in range(12))
    assert plan.summary().endswith("b00, b01, b02, b03, b04, b05, b06, b07 +4 more")


@pytest.mark.parametrize("explain", [True, False])
def test_solve_can_skip_the_explanation(explain):
    problem = Problem((Buffer("a", 4, 0, 2), Buffer("b", 4, 1, 3)), (Pool("default", 7),))
    plan = solve(problem, time_limit=5, explain=explain)
    assert plan.status == "infeasible" and (plan.conflict is not None) == explain


def test_identical_buffers_may_spread_over_pools():
    """Two copies of a buffer, two pools each just large enough for one: it fits. (The model's
    symmetry breaking once stacked copies in one pool whatever pools they chose: a false "no".)"""
    import numpy as np

    from cpplan.blocks import make_blocks
    from cpplan.deadline import PlanOptions
    from cpplan.exact.search import probe

    problem = Problem((Buffer("a", 4, 0, 1), Buffer("b", 4, 0, 1)), (Pool("x", 4), Pool("y", 4)))
    blocks = make_blocks(problem)
    out = probe(blocks, np.arange(2), {0: 1, 1: 1}, PlanOptions(10, deterministic=True).budget())
    assert out.status == "feasible" and sorted(out.pools.tolist()) == [0, 1]
    assert irreducible_conflict(problem) is None
