"""The CP-SAT packing model on its own: cliques, formulations, what a probe answers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from cpplan import Buffer, Problem, make_blocks
from cpplan.deadline import PlanOptions
from cpplan.exact.model import build_model, maximal_cliques, pair_count, variant
from cpplan.exact.search import probe
from cpplan.perfect import realloc_packing

from ..strategies import problems


def test_maximal_cliques_of_intervals():
    starts = np.array([0, 1, 2, 5, 5])
    ends = np.array([3, 4, 3, 6, 7])
    cliques = [sorted(c.tolist()) for c in maximal_cliques(starts, ends)]
    assert cliques == [[0, 1, 2], [3, 4]]


def test_half_open_intervals_touching_are_not_a_clique():
    assert maximal_cliques(np.array([0, 2]), np.array([2, 4])) == []


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(1, 5)), max_size=12))
def test_pair_count_is_the_number_of_pairs_that_share_a_moment(spans):
    starts = np.array([s for s, _ in spans], np.int64)
    ends = np.array([s + d for s, d in spans], np.int64)
    brute = sum(1 for a in range(len(spans)) for b in range(a)
                if starts[a] < ends[b] and starts[b] < ends[a])
    assert pair_count(starts, ends) == brute


def _staircase() -> Problem:
    # Max-load 3 at every step, but only one arrangement fits at height 3.
    return Problem((Buffer("a", 1, 0, 4), Buffer("b", 2, 0, 2), Buffer("c", 2, 2, 4),
                    Buffer("d", 1, 4, 6), Buffer("e", 2, 4, 6)))


@pytest.mark.parametrize("overlap", ["cliques", "2d", "pairs"])
def test_both_formulations_find_the_same_optimum(overlap):
    blocks = make_blocks(_staircase())
    pm = build_model(blocks, np.arange(len(blocks)), height_max={0: 10}, overlap=overlap)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.solve(pm.model) == cp_model.OPTIMAL
    assert solver.objective_value == 3
    pools, offs = pm.read(solver)
    plan = blocks.to_plan(pools, offs, planner="test")  # checked
    assert plan.height == 3


def test_probe_answers_yes_with_a_packing_and_no_with_a_proof():
    blocks = make_blocks(_staircase())
    ids = np.arange(len(blocks))
    control = PlanOptions(workers=1, deterministic=True).budget()
    yes = probe(blocks, ids, {0: 3}, control.within(10))
    assert yes.status == "feasible"
    blocks.to_plan(yes.pools, yes.offsets, planner="probe")
    no = probe(blocks, ids, {0: 2}, control.within(10))
    assert no.status == "infeasible"


def test_alignment_is_an_affine_offset():
    problem = Problem((Buffer("a", 3, 0, 2, alignment=4), Buffer("b", 5, 0, 2, alignment=8)))
    blocks = make_blocks(problem)
    pm = build_model(blocks, np.arange(2), height_max={0: 64})
    solver = cp_model.CpSolver()
    assert solver.solve(pm.model) == cp_model.OPTIMAL
    pools, offs = pm.read(solver)
    plan = blocks.to_plan(pools, offs, planner="test")
    assert plan.offset("a") % 4 == 0 and plan.offset("b") % 8 == 0
    assert plan.height == 11  # b at 0 (5 bytes), a at the next multiple of 4: 8..11


@settings(max_examples=40, deadline=None)
@given(problems(max_buffers=6, gaps=True))
def test_the_pairs_formulation_has_the_optimum_of_the_cliques(problem):
    # Pools, alignments, fixed offsets, gaps: the order literals must forbid what the cliques
    # forbid and nothing more.
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    heights = {p: int(c) if c >= 0 else 1 << 12 for p, c in enumerate(blocks.pool_capacity)}
    values = []
    for overlap in ("cliques", "pairs"):
        pm = build_model(blocks, ids, height_max=heights, overlap=overlap)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        status = solver.solve(pm.model)
        assert status in (cp_model.OPTIMAL, cp_model.INFEASIBLE)
        values.append(round(solver.objective_value) if status == cp_model.OPTIMAL else None)
        if status == cp_model.OPTIMAL:
            blocks.to_plan(*pm.read(solver), planner="test")  # checked
    assert values[0] == values[1]


def test_a_tight_probe_races_the_pairs_formulation_beside_the_tiling_search():
    # An allocator's reuse of freed bytes: the tiling search thrashes on this one (in 8 s),
    # CP-SAT over the pairs' orders rebuilds it in about a second.
    problem = realloc_packing(60, seed=0)
    blocks = make_blocks(problem)
    height = problem.meta["optimum"] // blocks.scale
    out = probe(blocks, np.arange(len(blocks)), {0: height},
                PlanOptions(30, workers=2).budget().within(30))
    assert out.status == "feasible"
    plan = blocks.to_plan(out.pools, out.offsets, planner="probe")
    assert plan.height == problem.meta["optimum"]


@settings(max_examples=40, deadline=None)
@given(problems(max_buffers=6, gaps=True), st.floats(0.3, 1.0), st.sampled_from(["size", "end"]))
def test_a_variant_at_a_lower_height_answers_as_the_model_built_there(problem, part, order):
    # A copy of a model built high (no strategy), brought down to other heights with a strategy
    # of its own: it finds a packing within them exactly where the model built at them does.
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    high = {p: int(c) if c >= 0 else 1 << 12 for p, c in enumerate(blocks.pool_capacity)}
    low = {p: int(h * part) for p, h in high.items()}
    base = build_model(blocks, ids, height_max=high, minimise=False, strategy=None)
    answers = []
    for pm in (build_model(blocks, ids, height_max=low, minimise=False, order_by=order),
               variant(base, blocks, order_by=order, height_max=low)):
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        status = solver.solve(pm.model)
        assert status in (cp_model.OPTIMAL, cp_model.INFEASIBLE)
        answers.append(status)
        if status == cp_model.OPTIMAL:
            plan = blocks.to_plan(*pm.read(solver), planner="test")  # checked
            for p, h in low.items():
                assert plan.heights.get(problem.pools[p].name, 0) <= h * blocks.scale
    assert answers[0] == answers[1]


def test_a_variant_is_made_from_a_model_with_no_strategy():
    blocks = make_blocks(_staircase())
    with_one = build_model(blocks, np.arange(len(blocks)), height_max={0: 10})
    with pytest.raises(ValueError, match="no strategy"):
        variant(with_one, blocks, order_by="size")
