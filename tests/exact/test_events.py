"""Holes refilled at each event (:mod:`cpplan.exact.events`): where they apply, that every tiling
chooses among their candidates, and that the model with them rebuilds tilings."""

from __future__ import annotations

import numpy as np
import pytest
from ortools.sat.python import cp_model

from cpplan import Buffer, Problem, make_blocks
from cpplan.deadline import Budget
from cpplan.exact import events
from cpplan.exact.events import add_holes, holes_of, tiling_holes, zero_slack
from cpplan.exact.model import build_model
from cpplan.exact.search import probe
from cpplan.perfect import mosaic_packing, realloc_packing

# Two buffers freed at step 2 (3 and 5 bytes, apart) and two made there (5 and 3 bytes), over
# one that lives throughout: the load is 10 at every moment.
SWAP = Problem((Buffer("a", 3, 0, 2), Buffer("keep", 2, 0, 4), Buffer("b", 5, 0, 2),
                Buffer("c", 5, 2, 4), Buffer("d", 3, 2, 4)))


def _all(problem: Problem) -> tuple:
    blocks = make_blocks(problem)
    return blocks, np.arange(len(blocks))


def test_zero_slack_is_the_load_at_every_moment():
    blocks, ids = _all(SWAP)
    assert zero_slack(blocks, ids, 10) == 10
    assert zero_slack(blocks, ids, 11) is None  # (a byte free at every moment)
    gap = Problem(SWAP.buffers[:4] + (Buffer("d", 3, 2, 3),))  # (nothing in d's bytes at 3)
    assert zero_slack(*_all(gap), 10) is None
    fixed = Problem(SWAP.buffers[:4] + (Buffer("d", 3, 2, 4, offset=0),))
    assert zero_slack(*_all(fixed), 10) is None


def test_the_candidates_are_the_pairs_with_equal_sums():
    blocks, ids = _all(SWAP)
    holes = holes_of(blocks, ids)
    name = {j: SWAP.buffers[blocks.root[j]].id for j in range(len(blocks))}
    (event,) = holes.events
    pairs = {(tuple(name[j] for j in h.enders), tuple(name[j] for j in h.starters), h.size)
             for h in event}
    assert pairs == {(("a",), ("d",), 3), (("b",), ("c",), 5), (("a", "b"), ("c", "d"), 8)}
    assert holes.complete


@pytest.mark.parametrize("family", [mosaic_packing, realloc_packing])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_tilings_holes_are_among_the_candidates(family, seed):
    # The generator's own tiling: at each event, its maximal runs of enders (and the starters
    # in them) must be one of the candidates, else the model would have cut off that tiling.
    problem = family(60, seed=seed)
    blocks, ids = _all(problem)
    assert zero_slack(blocks, ids, problem.meta["optimum"] // blocks.scale) is not None
    holes = holes_of(blocks, ids)
    assert holes.complete
    offset = np.asarray(problem.meta["offsets"])[blocks.root] // blocks.scale
    truth = tiling_holes(blocks, offset)
    by_event = {}
    for cands in holes.events:
        t = int(blocks.end[cands[0].enders[0]])
        by_event[t] = {(frozenset(h.enders), frozenset(h.starters)) for h in cands}
    assert by_event  # (the packings have events inside their span)
    assert set(truth) == set(by_event)
    for t, cands in by_event.items():
        assert truth[t] and all(hole in cands for hole in truth[t])


@pytest.mark.parametrize("family", [mosaic_packing, realloc_packing])
def test_the_model_with_holes_rebuilds_a_tiling(family):
    problem = family(120, seed=3)
    blocks, ids = _all(problem)
    height = problem.meta["optimum"] // blocks.scale
    pm = build_model(blocks, ids, height_max={0: height}, minimise=False, strategy=None)
    add_holes(pm, holes_of(blocks, ids), height)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 60
    assert solver.solve(pm.model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    plan = blocks.to_plan(*pm.read(solver), planner="holes")  # (checked)
    assert max(plan.placements[b.id].offset + b.size for b in problem.buffers) == \
        problem.meta["optimum"]


@pytest.mark.parametrize("family", [mosaic_packing, realloc_packing])
def test_every_candidate_cut_after_is_the_candidates_cut_while_listing(family):
    # (a probe lists them once for the hole search, every one, and cuts them for CP-SAT)
    blocks, ids = _all(family(250, seed=0))
    every = holes_of(blocks, ids, events.PAIRS_ENUMERATED)
    assert every.cut(5) == holes_of(blocks, ids, 5)
    assert every.cut(events.CANDIDATES_MAX) == holes_of(blocks, ids)
    assert not every.cut(5).complete


def test_candidates_cut_short_prove_nothing(monkeypatch):
    blocks, ids = _all(SWAP)
    monkeypatch.setattr(events, "CANDIDATES_MAX", 2)
    holes = holes_of(blocks, ids)
    assert not holes.complete
    assert len(holes.events[0]) == 2 and max(h.size for h in holes.events[0]) == 8  # (kept)


def test_events_listed_past_the_deadline_get_no_candidates():
    # Past ``until`` the events left are skipped: the holes stay exact (their model's "none"
    # is still a proof where the listed ones are complete), and the hole search declines them.
    from cpplan.exact.refill import refill

    problem = realloc_packing(60, seed=0)
    blocks, ids = _all(problem)
    height = problem.meta["optimum"] // blocks.scale
    full, none = holes_of(blocks, ids), holes_of(blocks, ids, until=0.0)
    assert len(full.events) > 0 and full.skipped == 0
    assert none.events == () and none.skipped == len(full.events) and none.complete
    assert none.members() == 0 < full.members()
    assert refill(blocks, ids, height, Budget(5.0), holes=none).status == "unknown"
    assert refill(blocks, ids, height, Budget(5.0), holes=full).status == "feasible"


def test_probes_of_the_same_blocks_list_their_holes_once():
    problem = realloc_packing(250, seed=1)
    blocks, ids = _all(problem)
    height = problem.meta["optimum"] // blocks.scale
    keep: dict = {}
    assert probe(blocks, ids, {0: height}, Budget(30.0), keep=keep).status == "feasible"
    assert keep["holes"] == holes_of(blocks, ids, events.PAIRS_ENUMERATED)


def test_a_tight_probe_rebuilds_an_allocators_reuse():
    # An allocator's exact reuse of freed bytes, 250 buffers: the skyline and the pairs
    # formulation gave no answer in 10 s; the holes answer in well under a second alone.
    problem = realloc_packing(250, seed=1)
    blocks, ids = _all(problem)
    height = problem.meta["optimum"] // blocks.scale
    budget = Budget(30.0)  # (two workers: the holes race the skyline on a core of their own)
    out = probe(blocks, ids, {0: height}, budget)
    assert out.status == "feasible"
    blocks.to_plan(out.pools, out.offsets, planner="probe")  # (checked)


def test_blocks_of_no_bytes_have_nothing_to_tile():
    empty = Problem((Buffer("a", 0, 0, 2), Buffer("b", 0, 1, 3)))
    blocks, ids = _all(empty)
    assert zero_slack(blocks, ids, 0) is None
    assert holes_of(blocks, ids).events == ()


def test_an_event_of_many_blocks_gets_its_small_and_lopsided_holes_and_the_whole():
    # 20 buffers end at step 2 (powers of two: no two subsets sum alike) and 12 start: ten
    # take one's bytes each, one two's, one eight's. Too many to pair every subset: the holes
    # of at most BIG_MEMBERS a side are kept, the one of 8 enders for one starter too (every
    # subset of a side of at most LOPSIDED_SIDE against one or two of the other), and the
    # whole event; the candidates are cut (no proof from them).
    ends = [Buffer(f"e{i}", 1 << i, 0, 2) for i in range(20)]
    groups = [[i] for i in range(10)] + [[10, 11], list(range(12, 20))]
    starts = [Buffer(f"s{k}", sum(1 << i for i in g), 2, 4) for k, g in enumerate(groups)]
    problem = Problem(tuple(ends + starts))
    blocks, ids = _all(problem)
    assert len(ends) > events.SIDE_MAX and events.BIG_MEMBERS < 8 <= events.LOPSIDED_SIDE
    holes = holes_of(blocks, ids)
    name = {j: problem.buffers[blocks.root[j]].id for j in range(len(blocks))}
    (event,) = holes.events
    got = {(frozenset(name[j] for j in h.enders), frozenset(name[j] for j in h.starters))
           for h in event}
    want = {(frozenset(f"e{i}" for i in g), frozenset([f"s{k}"])) for k, g in enumerate(groups)}
    whole = (frozenset(b.id for b in ends), frozenset(b.id for b in starts))
    assert want <= got and whole in got
    # Unions of two holes are left out (their blocks split into two pairs of equal sums).
    assert (frozenset(["e0", "e1"]), frozenset(["s0", "s1"])) not in got
    assert not holes.complete


def test_an_event_with_too_many_equal_sums_gets_no_candidates(monkeypatch):
    blocks, ids = _all(SWAP)
    monkeypatch.setattr(events, "PAIRS_ENUMERATED", 2)  # (SWAP's event has 3)
    holes = holes_of(blocks, ids)
    assert holes.events == () and holes.complete  # (exact: no constraint at all)


def test_an_event_with_too_many_equal_sums_gets_its_smallest_holes(monkeypatch):
    # Six buffers of one size end at step 2 and six of it start: 923 pairs of equal sums.
    # Past PAIRS_ENUMERATED (500 here) the pairs of fewer members are tried (FEWER_MEMBERS):
    # those of at most two blocks a side are 262; of them, pairs of two split into two pairs of
    # one, so each ender against each starter is left, and the whole event. Cut: no proof.
    problem = Problem(tuple([Buffer(f"e{i}", 1, 0, 2) for i in range(6)] +
                            [Buffer(f"s{i}", 1, 2, 4) for i in range(6)]))
    blocks, ids = _all(problem)
    monkeypatch.setattr(events, "PAIRS_ENUMERATED", 500)
    holes = holes_of(blocks, ids)
    (event,) = holes.events
    sides = sorted((len(h.enders), len(h.starters)) for h in event)
    assert sides == [(1, 1)] * 36 + [(6, 6)]
    assert not holes.complete and holes.skipped == 0
