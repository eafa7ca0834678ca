"""The lookahead of the hole search (:mod:`cpplan.exact.lookahead`): what certain holes to
come ask of the orders now. It must never refuse the orders of a tiling that exists (the
generators' own), and it refuses orders that part a certain hole's enders for good."""

from __future__ import annotations

import numpy as np
import pytest

from cpplan import Buffer, Problem, make_blocks
from cpplan.exact.events import PAIRS_ENUMERATED, holes_of, tiling_holes
from cpplan.exact.lookahead import Lookahead
from cpplan.exact.pqtree import P, Q, contiguous, leaf, node, replace
from cpplan.perfect import FAMILIES


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("seed", [0, 1])
def test_the_orders_of_a_tiling_pass_at_every_event(family, seed):
    # The generator's own tiling, followed event by event as the hole search would (each hole's
    # enders made contiguous and swapped for its starters): the lookahead allows every tree.
    problem = FAMILIES[family](300, seed=seed)
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    holes = holes_of(blocks, ids, PAIRS_ENUMERATED)
    assert not holes.skipped
    truth = tiling_holes(blocks, np.asarray(problem.meta["offsets"]) // blocks.scale)
    times = [t for t in sorted(truth) if truth[t] and any(s for _e, s in truth[t])]
    assert len(times) == len(holes.events)
    first = np.flatnonzero(blocks.start == blocks.start.min())
    tree = node(P, [leaf(int(j)) for j in first])
    look = Lookahead(holes, window=len(holes.events))
    for k, t in enumerate(times):
        for enders, starters in truth[t]:
            made = contiguous(tree, enders)
            assert made is not None
            tree = replace(made, enders, node(P, [leaf(j) for j in sorted(starters)]))
        assert look.allows(tree, k), (family, seed, k)
    assert sum(len(s) for s in look.certain.values()) > 0  # (it had something to check)


def test_a_block_that_lives_on_between_two_enders_of_one_hole_is_refused():
    # a and c end together at 2 as one hole (f takes their bytes: no other sums match), b lives
    # on: no order with b between a and c leads to a tiling. d gives way to e at 1 first.
    problem = Problem((
        Buffer("a", 3, 0, 2), Buffer("c", 5, 0, 2), Buffer("b", 7, 0, 4),
        Buffer("d", 11, 0, 1), Buffer("e", 11, 1, 4), Buffer("f", 8, 2, 4)))
    blocks = make_blocks(problem)
    at = {b.id: k for k, b in enumerate(problem.buffers)}
    look = Lookahead(holes_of(blocks, np.arange(len(blocks))))
    assert look.certain == {1: [frozenset({at["a"], at["c"]})]}
    kept_apart = node(Q, [leaf(at["a"]), leaf(at["b"]), leaf(at["c"]), leaf(at["e"])])
    free = node(P, [leaf(at[x]) for x in "abce"])
    assert not look.allows(kept_apart, 0)
    assert look.allows(free, 0)
    assert look.allows(node(Q, [leaf(at["b"]), leaf(at["a"]), leaf(at["c"]), leaf(at["e"])]), 0)
