"""The raced probe (:func:`cpplan.exact.search.probe`): its memory ceiling, and its probes
above the height."""

from __future__ import annotations

import math
import time

import numpy as np

from cpplan import Buffer, Problem, check, make_blocks, objective_lower_bound
from cpplan.blocks import Blocks
from cpplan.deadline import Budget
from cpplan.exact.outcome import Outcome
from cpplan.exact.search import probe
from cpplan.random_problems import random_problem


def test_a_race_past_its_memory_ceiling_starts_no_solve():
    # Three buffers that fit in 12 bytes: CP-SAT says so at once. With a ceiling already below
    # the process's memory (a negative growth), no CP-SAT slice starts: the race ends with no
    # answer.
    problem = Problem((Buffer("a", 4, 0, 2), Buffer("b", 8, 1, 3), Buffer("c", 4, 2, 4)))
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    race = {"dfs": False, "dive": False, "tiling": False}
    assert probe(blocks, ids, {0: 12}, Budget(5.0), **race).status == "feasible"
    assert probe(blocks, ids, {0: 12}, Budget(5.0), growth_mb=-1.0, **race).status == "unknown"


def _realloc_probe(seconds: float, **options) -> tuple[Outcome, list, Blocks, int, int]:
    """``probe`` of realloc of 1000 buffers at its optimum, ``above`` best-fit's height, on
    two workers: its outcome, what came to ``near`` (``(by, packing)``), the blocks, the
    optimum and best-fit's height (scaled)."""
    from cpplan.deadline import PlanOptions
    from cpplan.perfect import realloc_packing
    from cpplan.planners.registry import get

    problem = realloc_packing(1000, seed=2)
    blocks = make_blocks(problem)
    optimum = problem.meta["optimum"] // blocks.scale
    best = get("best-fit")(problem).height // blocks.scale
    got: list[tuple[str, np.ndarray]] = []
    out = probe(blocks, np.arange(len(blocks)), {0: optimum},
                Budget(seconds, options=PlanOptions(seconds, workers=2)), above=best,
                near=lambda o, by: got.append((by, o.packing)), **options)
    return out, got, blocks, optimum, best


def _height_above(got: list, blocks: Blocks) -> int:
    """The height (scaled) of the one plan that came to ``near``, a probe above the height,
    checked (to_plan raises on an invalid plan)."""
    assert [by for by, _ in got] == ["probe-above"]
    packing = got[0][1]
    plan = blocks.to_plan(np.zeros(len(packing), np.int64), packing, planner="probe-above")
    return plan.height // blocks.scale


def test_a_tight_probe_that_gets_nowhere_leaves_a_plan_above_its_height():
    # realloc of 1000 buffers: at its optimum the tiling and hole searches get nowhere in a few
    # seconds, while the alongside core's CP-SAT probes above it (the ladder, ``above``: the
    # best height so far, best-fit's 1.39 x the optimum) find a packing between the two in a
    # tenth of a second (twice the machine's cores busy elsewhere: still within the first
    # slice). It comes to ``near`` when the probe ends, as a plan above the height, valid and
    # lower than the best.
    out, got, blocks, optimum, best = _realloc_probe(5.0)
    assert out.status == "unknown"
    assert optimum < _height_above(got, blocks) < best


def test_a_probe_whose_ladder_ends_it_stops_once_the_heights_above_have_met():
    # The same with a minute to spend: the hole search at the optimum would thrash for half
    # of it. With ``above_ends`` (a caller that goes on from the lowest packing, as the
    # solver's LNS does) the probe ends once the probes above the height have nothing left
    # between their two heights: a few rounds of a second or two, not the minute.
    began = time.perf_counter()
    out, got, blocks, optimum, best = _realloc_probe(60.0, above_ends=True)
    assert out.status == "unknown"
    assert time.perf_counter() - began < 30.0
    assert optimum < _height_above(got, blocks) < best


def test_the_tiling_search_glances_at_most_a_few_milliseconds_a_block(monkeypatch):
    # At zero slack the probe glances at the tiling search before the hole search: a share of
    # the probe's time, at most TILE_FIRST_SECONDS_PER_BLOCK a block (with a minute, the share
    # alone made the hole search wait 9 s on 250 aligned blocks it then rebuilt in 0.2 s).
    import cpplan.exact.search as search
    from cpplan.perfect import stack_packing

    problem = stack_packing(250, seed=0, aligned=True)
    blocks = make_blocks(problem)
    glances: list[float] = []
    real = search.tile

    def spy(blocks, ids, height, budget, **options):
        glances.append(budget.remaining())
        return real(blocks, ids, height, budget, **options)

    monkeypatch.setattr(search, "tile", spy)
    out = probe(blocks, np.arange(len(blocks)), {0: problem.meta["optimum"] // blocks.scale},
                Budget(60.0, deterministic=True))
    assert out.status == "feasible"
    assert glances[0] <= search.TILE_FIRST_SECONDS_PER_BLOCK * len(blocks) + 1e-9


def test_the_race_packs_blocks_on_which_every_order_of_the_lowest_offset_strategy_thrashes():
    # Aligned buffers on a random schedule: CP-SAT's own search (no strategy) packs them at
    # 1.0008 x L in 0.4 s (0.6 s with OR-Tools 9.10, the oldest allowed), where the race's
    # orders of the lowest-offset strategy thrash (the best, start, needs 7 s alone with 9.10,
    # none answers in 10 s with 9.15; the probe's race gave it no slice that long in 20 s).
    # The branch-and-bound search, in C, now answers here in 0.5 s: the race runs without it,
    # so that it is CP-SAT's own search that must answer (without it: unknown after 20 s).
    problem = random_problem(250, seed=0, aligned=True)
    blocks = make_blocks(problem)
    height = math.ceil(1.0008 * objective_lower_bound(problem)) // blocks.scale
    out = probe(blocks, np.arange(len(blocks)), {0: height}, Budget(20.0), dfs=False)
    assert out.status == "feasible", out.detail
    plan = blocks.to_plan(out.pools, out.offsets, planner="probe")
    assert not check(problem, plan) and plan.heights["default"] <= height * blocks.scale
