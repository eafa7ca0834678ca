"""The hole search (:mod:`cpplan.exact.refill`): tilings it rebuilds, and its "no" against an
exact search on small strips where it may be right."""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pytest
from ortools.sat.python import cp_model

from cpplan import Buffer, Problem, make_blocks
from cpplan.deadline import Budget
from cpplan.exact.events import PAIRS_ENUMERATED, holes_of
from cpplan.exact.model import build_model
from cpplan.exact.pqtree import P, leaf, node
from cpplan.exact.refill import _Event, _Search, _splits, refill
from cpplan.exact.search import probe
from cpplan.perfect import (
    mosaic_packing,
    multiscale_packing,
    perfect_packing,
    realloc_packing,
    regroup_packing,
    ring_packing,
    serving_packing,
    stack_packing,
)


def _zero_slack(seed: int, height: int = 60) -> Problem:
    """A strip at zero slack: at each of 9 steps one to four of the buffers alive end and their
    bytes, in total, are cut at random into one to four new buffers. For every third seed the
    buffers that end are neighbours in a tiling that the strip follows, so it tiles; for the
    others they are any (no geometry: whether some order tiles the strip is left to chance,
    and about one in five does not)."""
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, height), 5))
    alive = [(b - a, 0) for a, b in zip([0, *cuts], [*cuts, height], strict=True)]  # in order
    buffers: list[Buffer] = []
    for t in range(1, 10):
        many = rng.randint(1, min(4, len(alive) - 1))
        if seed % 3 == 0:
            first = rng.randrange(len(alive) - many + 1)
            ending = list(range(first, first + many))
        else:
            ending = rng.sample(range(len(alive)), many)
        total = sum(alive[k][0] for k in ending)
        for k in ending:
            buffers.append(Buffer(f"b{len(buffers)}", alive[k][0], alive[k][1], t))
        parts = sorted(rng.sample(range(1, total), min(rng.randint(1, 4), total - 1)))
        made = [(b - a, t) for a, b in zip([0, *parts], [*parts, total], strict=True)]
        at = min(ending)
        alive = [a for k, a in enumerate(alive[:at]) if k not in ending] + made + \
            [a for k, a in enumerate(alive) if k >= at and k not in ending]
    buffers += [Buffer(f"b{len(buffers) + k}", size, t0, 10)
                for k, (size, t0) in enumerate(alive)]
    return Problem(tuple(buffers))


def _exact(problem: Problem, height: int) -> bool:
    """Whether it fits at ``height``: CP-SAT on the plain model, to a proof."""
    blocks = make_blocks(problem)
    pm = build_model(blocks, np.arange(len(blocks)), height_max={0: height // blocks.scale},
                     minimise=False, strategy=None)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.solve(pm.model)
    assert status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE)
    return status != cp_model.INFEASIBLE


@pytest.mark.parametrize("seed", range(60))
def test_its_yes_is_a_tiling_and_its_no_a_proof(seed):
    problem = _zero_slack(seed)
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    height = 60 // blocks.scale
    out = refill(blocks, ids, height, Budget(20.0))
    assert out.status in ("feasible", "infeasible")  # (complete candidates: it decides)
    assert (out.status == "feasible") == _exact(problem, 60)
    if out.status == "feasible":
        plan = blocks.to_plan(out.pools, out.offsets, planner="refill")  # (checked)
        assert plan.height == 60


def test_the_random_strips_are_both_kinds():
    # (else the test above would check only one side of the search's answers)
    assert {_exact(_zero_slack(seed), 60) for seed in range(60)} == {True, False}


def test_a_strip_that_cannot_tile_is_proven_so():
    # p (3 bytes) and q (12) are cut, one after the other, into a + a' and b + b'; then a and b
    # end together (their 5 bytes go to m, which lives on), then a' and b' (10 bytes, to n).
    # a and b must touch, so each sits at its pair's edge next to the other pair, and then m
    # sits between a' and b', which can no longer touch: no tiling at 15 bytes. Every event
    # has one way to split, so the search's "no" is a proof.
    problem = Problem((Buffer("p", 3, 0, 1), Buffer("q", 12, 0, 2),
                       Buffer("a", 1, 1, 3), Buffer("a'", 2, 1, 4),
                       Buffer("b", 4, 2, 3), Buffer("b'", 8, 2, 4),
                       Buffer("m", 5, 3, 5), Buffer("n", 10, 4, 5)))
    blocks = make_blocks(problem)
    out = refill(blocks, np.arange(len(blocks)), 15, Budget(10.0))
    assert out.status == "infeasible"
    assert not _exact(problem, 15)
    assert _exact(problem, 16)  # (one byte of slack, and it fits)


@pytest.mark.parametrize(("family", "n"), [(regroup_packing, 250), (realloc_packing, 250),
                                           (regroup_packing, 2000), (mosaic_packing, 250),
                                           (multiscale_packing, 250)])
def test_it_rebuilds_groups_of_neighbours_cut_afresh(family, n):
    # (mosaic-250-0 has an event of 17 enders, multiscale-250-1 one of 20 with a run of 16
    # enders cut into 17 starters: their candidates are cut, and the tilings are found still)
    problem = family(n, seed=0 if family is mosaic_packing else 1)
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    out = refill(blocks, ids, problem.meta["optimum"] // blocks.scale, Budget(60.0))
    assert out.status == "feasible"
    assert blocks.to_plan(out.pools, out.offsets, planner="refill").height == \
        problem.meta["optimum"]


def test_it_stops_at_its_node_budget_and_where_there_is_slack():
    problem = realloc_packing(2000, seed=0)  # (it thrashes on this one)
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    height = problem.meta["optimum"] // blocks.scale
    stats: dict = {}
    out = refill(blocks, ids, height, Budget(60.0), node_budget=500, stats=stats)
    assert out.status == "unknown" and stats["nodes"] <= 500
    assert refill(blocks, ids, height + 1, Budget(60.0)).status == "unknown"  # (slack)


@pytest.mark.parametrize(("problem", "answers"), [
    # (the skyline search thrashes on groups cut afresh: the hole search answers)
    (regroup_packing(250, seed=0), "refill"),
    # (the hole search takes straight cuts too now, and may thrash on them, where the tiling
    # search's glance first answers at once)
    (perfect_packing(2000, seed=2), "tiling"),
], ids=["groups-cut-afresh", "straight-cuts"])
def test_a_probe_at_zero_slack_glances_at_the_tiling_search_then_asks_it(problem, answers):
    blocks = make_blocks(problem)
    out = probe(blocks, np.arange(len(blocks)), {0: problem.meta["optimum"] // blocks.scale},
                Budget(30.0))
    assert out.status == "feasible" and out.detail.startswith(answers)


def _aligned(problem: Problem, seed: int) -> Problem:
    """``problem`` with alignments of 1, 2 or 4 bytes: for even seeds, where it tiles, each
    buffer's the largest that its offset in some tiling keeps (so it still tiles); else at
    random (and it mostly does not)."""
    rng = random.Random(seed)
    offsets = _tiling(problem, 60) if seed % 2 == 0 else None
    return Problem(tuple(dataclasses.replace(b, alignment=rng.choice((1, 2, 4)) if offsets is None
                                             else math.gcd(4, offsets[k]))
                         for k, b in enumerate(problem.buffers)))


def _tiling(problem: Problem, height: int) -> list[int] | None:
    """Offsets of one packing within ``height`` (CP-SAT), None where there is none."""
    blocks = make_blocks(problem)
    pm = build_model(blocks, np.arange(len(blocks)), height_max={0: height // blocks.scale},
                     minimise=False, strategy=None)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    if solver.solve(pm.model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    plan = blocks.to_plan(*pm.read(solver), planner="cp-sat")
    return [plan.placements[b.id].offset for b in problem.buffers]


@pytest.mark.parametrize("seed", range(60))
def test_with_alignments_its_yes_keeps_them_and_its_no_is_a_proof(seed):
    problem = _aligned(_zero_slack(seed), seed)
    blocks = make_blocks(problem)
    out = refill(blocks, np.arange(len(blocks)), 60 // blocks.scale, Budget(20.0))
    if out.status == "unknown":  # (a tiling whose aligned order was not read back)
        assert "refill" in out.detail
        return
    assert (out.status == "feasible") == _exact(problem, 60)
    if out.status == "feasible":
        plan = blocks.to_plan(out.pools, out.offsets, planner="refill")  # (checked: aligned)
        assert plan.height == 60


def test_with_alignments_the_random_strips_are_both_kinds_and_it_decides_most():
    problems = [_aligned(_zero_slack(seed), seed) for seed in range(60)]
    fits = {_exact(p, 60) for p in problems}
    decided = sum(refill(make_blocks(p), np.arange(len(p.buffers)), 60, Budget(20.0)).status
                  != "unknown" for p in problems)
    assert fits == {True, False} and decided >= 55


@pytest.mark.parametrize("family", [regroup_packing, mosaic_packing, realloc_packing])
def test_it_rebuilds_aligned_packings_at_their_optimum(family):
    # (aligned on a 64-byte grain, each buffer to its offset's largest power of two up to
    # 4 KiB: the order alone would break alignments, the residues keep them)
    problem = family(120, seed=0, aligned=True)
    blocks = make_blocks(problem)
    # (on the deterministic clock, the same steps however loaded the machine: regroup needs a
    # quarter of it)
    out = refill(blocks, np.arange(len(blocks)), problem.meta["optimum"] // blocks.scale,
                 Budget(20.0, deterministic=True))
    assert out.status == "feasible"
    plan = blocks.to_plan(out.pools, out.offsets, planner="refill")  # (checked: aligned)
    assert plan.height == problem.meta["optimum"]


@pytest.mark.parametrize("problem", [
    # Reading a tiling's aligned offsets back visits every node of its last tree: with a fixed
    # budget of 2000 steps every tiling of these 2000 blocks was passed over unread, and both
    # directions ran out of tilings without an answer.
    stack_packing(2000, seed=0, aligned=True),
    # The starters of an early hole here are split up by later holes, so no bound keeps their
    # residues: the trees' own orders put them where their enders cannot be aligned, for every
    # tiling the search finds forwards (the backward search finds one after some 10 ** 5
    # nodes). Orders drawn at random read one back within a few thousand.
    serving_packing(2000, seed=1, aligned=True),
], ids=["budget by blocks", "orders at random"])
def test_it_reads_back_the_aligned_offsets_of_tilings_of_thousands_of_blocks(problem):
    blocks = make_blocks(problem)
    out = refill(blocks, np.arange(len(blocks)), problem.meta["optimum"] // blocks.scale,
                 Budget(30.0), node_budget=20_000)
    assert out.status == "feasible"
    plan = blocks.to_plan(out.pools, out.offsets, planner="refill")  # (checked: aligned)
    assert plan.height == problem.meta["optimum"]


def test_the_holes_it_lists_are_kept_for_the_search_without_the_alignments(monkeypatch):
    # (a tight component's hole search runs with the alignments, then without them: the
    # candidate holes do not depend on them, and listing them takes seconds on thousands of
    # blocks, so the caller's ``keep`` holds them from one call to the next)
    import cpplan.exact.refill as module
    from cpplan.exact.realign import unaligned

    problem = stack_packing(250, seed=0, aligned=True)
    blocks = make_blocks(problem)
    ids, height = np.arange(len(blocks)), problem.meta["optimum"] // blocks.scale
    listed: list[int] = []
    real = module.holes_of
    monkeypatch.setattr(module, "holes_of",
                        lambda *args, **options: listed.append(1) or real(*args, **options))
    keep: dict = {}
    first = refill(unaligned(blocks), ids, height, Budget(30.0), keep=keep)
    second = refill(blocks, ids, height, Budget(30.0), keep=keep)
    assert first.status == second.status == "feasible"
    assert listed == [1]


@pytest.mark.parametrize("aligned", [False, True])
def test_a_search_stopped_early_goes_on_where_it_stopped(aligned):
    # (a probe's first look stops its hole search after a share of its time, and the probe
    # after it asks again: with the caller's ``keep`` the second call goes on from the first's
    # state, the two together as many nodes as one call that was never stopped, give or take
    # the step of looking where it stopped; turns of nodes, as in deterministic mode, where
    # a node budget is given: on the clock the two ways take turns of time)
    problem = (ring_packing if aligned else realloc_packing)(250, seed=1, aligned=aligned)
    blocks = make_blocks(problem)
    ids, height = np.arange(len(blocks)), problem.meta["optimum"] // blocks.scale
    whole: dict = {}
    assert refill(blocks, ids, height, Budget(30.0), node_budget=10**9,
                  stats=whole).status == "feasible"
    assert whole["nodes"] > 100
    keep: dict = {}
    first: dict = {}
    second: dict = {}
    cut = refill(blocks, ids, height, Budget(30.0), node_budget=whole["nodes"] // 2,
                 keep=keep, stats=first)
    assert cut.status == "unknown"
    out = refill(blocks, ids, height, Budget(30.0), node_budget=10**9, keep=keep, stats=second)
    assert out.status == "feasible"
    assert abs(first["nodes"] + second["nodes"] - whole["nodes"]) <= 1
    assert np.array_equal(out.offsets, refill(blocks, ids, height, Budget(30.0)).offsets)
    # (a search that found its tiling is not kept: asked again, it searches afresh, and
    # never takes its emptied stack for a proof that none exists)
    assert refill(blocks, ids, height, Budget(30.0), keep=keep).status == "feasible"


def test_an_event_whose_enders_every_order_keeps_together_is_one_hole():
    # a (1 byte) and b (4) end together, d (4) and e (1) start: a->e and b->d are holes, and
    # so is the whole event. Where a and b are all that is alive they are side by side in
    # every order, and the whole event allows every order the two holes do (d and e either
    # way round): it is the only split tried. Beside a third block c, a and b may be apart,
    # and both splits are tried.
    def splits(alive: list[str]) -> list[list[tuple[int, int]]]:
        sizes = {"a": 1, "b": 4, "c": 2}
        problem = Problem(tuple(Buffer(k, sizes[k], 0, 2 if k != "c" else 4) for k in alive)
                          + (Buffer("d", 4, 2, 4), Buffer("e", 1, 2, 4)))
        blocks = make_blocks(problem)
        event = _Event.of(holes_of(blocks, np.arange(len(blocks))).events[0],
                          blocks.size.astype(np.int64))
        tree = node(P, [leaf(j) for j in range(len(alive))])
        return [sorted((len(ends), len(made)) for ends, made, _ in applied)
                for split in _splits(tree, event) if split is not None
                for _tree, applied in [split]]

    assert splits(["a", "b"]) == [[(2, 2)]]
    assert sorted(splits(["a", "b", "c"])) == [[(1, 1), (1, 1)], [(2, 2)]]


def test_a_wrong_split_early_is_found_out_without_searching_its_trees_again():
    # Buffers of every scale: the first events of this strip split hundreds of ways by chance
    # (sums of many sizes alike), and a wrong split there fails only dozens of events later.
    # Chronological backtracking then searches the same trees of orders again and again; the
    # search keeps those it searched to the end (``failed``) and checks each split against the
    # certain holes ahead (:mod:`cpplan.exact.lookahead`), and rebuilds the strip forwards.
    problem = multiscale_packing(400, seed=0)
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    size = blocks.size.astype(np.int64)
    search = _Search(holes_of(blocks, ids, PAIRS_ENUMERATED), blocks.start, size, False)
    assert search.run(300_000, lambda: False) == "found"
    assert search.failed  # (trees it did not search twice)
    assert search.found is not None
    offsets = search.found
    for i in range(len(blocks)):
        for j in range(i):
            if blocks.start[i] < blocks.end[j] and blocks.start[j] < blocks.end[i]:
                assert offsets[i] + size[i] <= offsets[j] or offsets[j] + size[j] <= offsets[i]
    assert (offsets + size).max() == problem.meta["optimum"] // blocks.scale


def test_the_enders_left_to_holes_not_listed_may_free_two_runs():
    # multiscale-500-2: at its 37th event 17 blocks end and 17 start, so only holes of at most
    # five blocks a side are listed, and the generator's tiling has two holes of eight there
    # (and one of a block each, listed). The enders reserved for holes not listed lie in two
    # runs apart: split into a run that some order allows and the rest, each with starters of
    # its sum, the search gets past the event (without it, it runs out of choices there, and
    # :func:`refill` searches that way again with it).
    problem = multiscale_packing(500, seed=2)
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    size = blocks.size.astype(np.int64)
    holes = holes_of(blocks, ids, PAIRS_ENUMERATED)
    assert _Search(holes, blocks.start, size, False).run(100_000, lambda: False) == "exhausted"
    search = _Search(holes, blocks.start, size, False, two=True)
    assert search.run(100_000, lambda: False) == "found"
    offsets = search.found
    assert offsets is not None
    for i in range(len(blocks)):
        for j in range(i):
            if blocks.start[i] < blocks.end[j] and blocks.start[j] < blocks.end[i]:
                assert offsets[i] + size[i] <= offsets[j] or offsets[j] + size[j] <= offsets[i]
    assert (offsets + size).max() == problem.meta["optimum"] // blocks.scale
