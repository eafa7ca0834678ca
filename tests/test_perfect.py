"""Perfect packings: every generator's construction is a valid plan at the max-load, which is
the strip's width; the new families are not made by straight cuts."""

from __future__ import annotations

import numpy as np
import pytest

from cpplan import Plan, check, make_blocks, max_load
from cpplan.perfect import FAMILIES, HELD_OUT, perfect_packing, thinned

NEW = ("mosaic", "realloc", "regroup", "serving", "multiscale", "repeated", "stack", "ring",
       "fragments")


def _construction(problem) -> Plan:
    offsets = problem.meta["offsets"]
    pool = problem.pools[0].name
    return Plan.build(problem, {b.id: (pool, o) for b, o in zip(problem.buffers, offsets,
                                                                   strict=True)})


def _load(problem) -> np.ndarray:
    """Bytes live per time step, from 0 to the last end."""
    horizon = max(b.end for b in problem.buffers)
    load = np.zeros(horizon + 1, np.int64)
    for b in problem.buffers:
        load[b.start] += b.size
        load[b.end] -= b.size
    return np.cumsum(load)[:-1]


def _straight_cuts(problem) -> tuple[list[int], list[int]]:
    """Moments strictly inside the strip that no buffer's lifetime crosses, and byte
    positions strictly inside it that no buffer of the construction crosses."""
    offsets = np.asarray(problem.meta["offsets"], np.int64)
    start = np.array([b.start for b in problem.buffers], np.int64)
    end = np.array([b.end for b in problem.buffers], np.int64)
    size = np.array([b.size for b in problem.buffers], np.int64)

    def uncrossed(lo: np.ndarray, hi: np.ndarray) -> list[int]:
        # Points strictly inside (lo.min(), hi.max()) where no [lo, hi) has lo < p < hi.
        points = np.unique(np.concatenate([lo, hi]))
        points = points[(points > lo.min()) & (points < hi.max())]
        inside = np.zeros(len(points) + 1, np.int64)
        np.add.at(inside, np.searchsorted(points, lo, side="right"), 1)
        np.add.at(inside, np.searchsorted(points, hi, side="left"), -1)
        return points[np.cumsum(inside)[:-1] == 0].tolist()

    return uncrossed(start, end), uncrossed(offsets, offsets + size)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize(("n", "seed", "aligned"), [(1, 0, False), (7, 1, False),
                                                    (250, 2, False), (250, 3, True),
                                                    (2000, 4, False), (2000, 5, True)])
def test_the_construction_is_a_plan_at_the_max_load_which_is_the_width(family, n, seed,
                                                                        aligned):
    problem = FAMILIES[family](n, seed=seed, aligned=aligned)
    width = problem.meta["optimum"]
    plan = _construction(problem)
    assert check(problem, plan) == []
    assert plan.height == width
    (bound,) = max_load(make_blocks(problem)).values()
    assert bound.bytes == width
    # Every moment of the strip is covered (the slack is zero everywhere).
    assert (_load(problem) == width).all()
    assert abs(len(problem.buffers) - n) <= max(2, 0.05 * n)
    assert problem.meta["seed"] == seed
    assert problem.meta["generator"].startswith("cpplan.perfect")
    if aligned:
        assert all(o % b.alignment == 0 for b, o in zip(problem.buffers,
                                                        problem.meta["offsets"], strict=True))
        assert len({b.alignment for b in problem.buffers}) > 1


@pytest.mark.parametrize("family", NEW)
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [60, 250, 2000])
def test_the_new_families_have_no_straight_cut_through_the_strip(family, seed, n):
    # Perfect packings made by straight cuts have one through the whole strip (their first);
    # these constructions have none, in time or in bytes.
    problem = FAMILIES[family](n, seed=seed)
    assert _straight_cuts(problem) == ([], [])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_thinned_perfect_packing_keeps_its_optimum_with_slack_elsewhere(family):
    whole = FAMILIES[family](250, seed=1)
    problem = thinned(whole, 0.2, seed=1)
    width = problem.meta["optimum"]
    assert 0 < len(problem.buffers) < len(whole.buffers)
    plan = _construction(problem)  # (the construction's offsets of the buffers kept)
    assert check(problem, plan) == [] and plan.height == width
    load = _load(problem)
    assert load.max() == width  # (the middle moment, whose buffers all stay)
    assert (load < width).any()
    assert thinned(whole, 0.0).buffers == whole.buffers
    with pytest.raises(ValueError, match="share"):
        thinned(whole, 1.0)


def test_perfect_packings_have_their_first_cut():
    # (What the test above would find if a construction were made by straight cuts.)
    problem = perfect_packing(250, seed=0, pinwheels=0.0)
    in_time, in_bytes = _straight_cuts(problem)
    assert in_time or in_bytes


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_same_seed_gives_the_same_problem_and_another_seed_another(family):
    make = FAMILIES[family]
    assert make(250, seed=3).buffers == make(250, seed=3).buffers
    assert make(250, seed=3).buffers != make(250, seed=4).buffers


def test_the_held_out_family_is_one_of_the_new_ones():
    assert HELD_OUT in NEW


def test_a_stack_packing_nests_its_activations():
    # Training steps: an activation pushed at the bottom lives around the ones pushed above it
    # (the lifetimes of the buffers at the strip's bottom nest, longest first), and some
    # buffer above the first lives within its lifetime, pushed after it and popped before.
    problem = FAMILIES["stack"](250, seed=0)
    offsets = problem.meta["offsets"]
    bottom = [b for b, o in zip(problem.buffers, offsets, strict=True) if o == 0]
    longest = max(bottom, key=lambda b: b.end - b.start)
    inside = [b for b, o in zip(problem.buffers, offsets, strict=True)
              if o == longest.size and longest.start < b.start and b.end < longest.end
              and b.end - b.start > 2]
    assert inside


@pytest.mark.parametrize("seed", range(3))
def test_a_ring_packing_sweeps_the_arena_from_the_bottom_up(seed):
    # A ring buffer: the buffers starting at successive steps lie higher and higher until the
    # head comes back to the bottom, once a sweep (a random cutting falls half the time).
    problem = FAMILIES["ring"](250, seed=seed)
    lowest: dict[int, int] = {}
    for b, o in zip(problem.buffers, problem.meta["offsets"], strict=True):
        if b.start > 0:
            lowest[b.start] = min(lowest.get(b.start, o), o)
    climb = [lowest[t] for t in sorted(lowest)]
    falls = sum(b < a for a, b in zip(climb[:-1], climb[1:], strict=True))
    assert 2 <= falls < 0.2 * len(climb)



def test_a_fragments_packing_is_as_high_as_its_first_programs_plan_not_as_wide_as_asked():
    # Two programs share an arena: the first's buffers are drawn and placed by first-fit, the
    # second's fill the holes up to the first's peak, which is the optimum (the width asked
    # for only scales the sizes drawn).
    heights = {FAMILIES["fragments"](250, seed=seed, width=1 << 20).meta["optimum"]
               for seed in range(3)}
    assert len(heights) == 3 and 1 << 20 not in heights
    wider = FAMILIES["fragments"](250, seed=0, width=1 << 24).meta["optimum"]
    assert wider > 8 * min(heights)
