"""Residue sets of PQ-trees (:mod:`cpplan.exact.residues`): where a node may start with every
leaf aligned, against every frontier the tree stands for."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cpplan.exact.pqtree import Node, P, Q, leaf, node
from cpplan.exact.residues import EXACT_CHILDREN, Residues

from .test_pqtree import _frontiers


def _tree(rng: random.Random, items: list[int]) -> Node:
    """A random tree over ``items``: P- and Q-nodes of two to four children."""
    if len(items) == 1:
        return leaf(items[0])
    parts = rng.randint(2, min(4, len(items)))
    cuts = sorted(rng.sample(range(1, len(items)), parts - 1))
    kids = [_tree(rng, items[a:b]) for a, b in zip([0, *cuts], [*cuts, len(items)], strict=True)]
    kind = Q if len(kids) >= 3 and rng.random() < 0.5 else P
    return node(kind, kids)


def _blocks(rng: random.Random, n: int) -> tuple[np.ndarray, np.ndarray]:
    size = np.array([rng.randint(1, 12) for _ in range(n)], np.int64)
    align = np.array([rng.choice((1, 1, 2, 4, 8)) for _ in range(n)], np.int64)
    align[0] = 8  # (so that no tree is free of alignments)
    return size, align


def _aligned_at(order: tuple[int, ...], at: int, size: np.ndarray, align: np.ndarray) -> bool:
    for j in order:
        if at % int(align[j]):
            return False
        at += int(size[j])
    return True


def _truth(t: Node, size: np.ndarray, align: np.ndarray, modulus: int) -> int:
    """The residues at which some frontier of ``t`` keeps every leaf aligned (by brute force)."""
    orders = _frontiers(t)
    return sum(1 << r for r in range(modulus)
               if any(_aligned_at(o, r, size, align) for o in orders))


def _random(seed: int, least: int) -> tuple[Node, np.ndarray, np.ndarray, Residues]:
    """A random tree of ``least`` to 7 blocks, their sizes and alignments, and its residues."""
    rng = random.Random(seed)
    n = rng.randint(least, 7)
    size, align = _blocks(rng, n)
    residues = Residues.of(size, align)
    assert residues is not None and residues.modulus == 8
    return _tree(rng, list(range(n))), size, align, residues


@pytest.mark.parametrize("seed", range(120))
def test_a_tree_of_small_nodes_may_start_exactly_where_some_frontier_keeps_every_alignment(seed):
    tree, size, align, residues = _random(seed, 1)
    assert residues.start(tree)[0] == _truth(tree, size, align, 8)
    assert residues.fits(tree) == bool(_truth(tree, size, align, 8) & 1)


@pytest.mark.parametrize("seed", range(40))
def test_an_order_read_back_keeps_every_alignment_where_the_set_allows_it(seed):
    tree, size, align, residues = _random(seed, 2)
    orders = _frontiers(tree)
    for at in range(8):
        got = residues.order(tree, at, [10_000])
        if residues.start(tree)[0] >> at & 1:
            assert got is not None and tuple(got) in orders
            assert _aligned_at(tuple(got), at, size, align)
        else:
            assert got is None


@pytest.mark.parametrize("seed", range(10))
def test_a_large_p_node_may_start_at_least_wherever_it_can(seed):
    # Beyond EXACT_CHILDREN children the set is a superset: never a residue lost (the check
    # stays sound), though it may keep one that no order reaches.
    rng = random.Random(seed)
    n = EXACT_CHILDREN + 1
    size, align = _blocks(rng, n)
    size[:] = 2 * size  # (even sizes: the subsets' sums reach only even residues)
    tree = node(P, [leaf(j) for j in range(n)])
    residues = Residues.of(size, align)
    assert residues is not None
    truth = _truth(tree, size, align, residues.modulus)
    assert residues.start(tree)[0] & truth == truth


def _truth_p(kids: list[tuple[int, int]], modulus: int) -> int:
    """The residues at which children ``(residues, size)`` in some order each start where
    they may (by dynamic programming over the subsets placed first, every residue tried)."""
    full = (1 << modulus) - 1
    out = 0
    for at in range(modulus):
        reach = {0: True}
        for s in range(1, 1 << len(kids)):
            below = {k: sum(kids[i][1] for i in range(len(kids)) if s >> i & 1 and i != k)
                     for k in range(len(kids)) if s >> k & 1}
            reach[s] = any(reach.get(s ^ (1 << k)) and kids[k][0] >> ((at + b) % modulus) & 1
                           for k, b in below.items())
        out |= reach[(1 << len(kids)) - 1] << at
    return out & full


@pytest.mark.parametrize("seed", range(30))
def test_a_large_p_node_of_subtrees_may_start_at_least_wherever_its_children_can(seed):
    # The children of a large P-node alike modulo a divisor of the modulus are counted, not
    # told apart: exact there, never a residue lost modulo the modulus (the check stays sound).
    rng = random.Random(seed)
    n = rng.randint(EXACT_CHILDREN + 1, 11)
    size, align = _blocks(rng, 2 * n)
    residues = Residues.of(size, align)
    assert residues is not None
    kids = [node(rng.choice((P, Q)), [leaf(2 * k), leaf(2 * k + 1)]) if rng.random() < 0.3
            else leaf(2 * k) for k in range(n)]
    tree = node(P, kids)
    truth = _truth_p([residues.start(c) for c in kids], residues.modulus)
    assert residues.start(tree)[0] & truth == truth


def test_a_large_p_node_that_no_order_aligns_is_refused():
    # Eight blocks of one byte, five of them aligned to 2: whatever the order, only four start
    # at even offsets. Every residue is a sum of some of the sizes, so the check of each
    # child alone passes; counted modulo 2, none is left.
    size = np.ones(EXACT_CHILDREN + 1, np.int64)
    align = np.array([2] * 5 + [1] * (len(size) - 5), np.int64)
    residues = Residues.of(size, align)
    assert residues is not None
    tree = node(P, [leaf(j) for j in range(len(size))])
    assert residues.start(tree)[0] == 0
    assert not residues.fits(tree)
    four = Residues.of(size, np.array([2] * 4 + [1] * (len(size) - 4), np.int64))
    assert four is not None and four.fits(node(P, [leaf(j) for j in range(len(size))]))


def test_a_bound_narrows_a_node_and_its_release_restores_it():
    size, align = np.array([4, 2, 2], np.int64), np.array([4, 2, 2], np.int64)
    tree = node(P, [leaf(0), leaf(1), leaf(2)])
    residues = Residues.of(size, align)
    assert residues is not None
    free = residues.start(tree)[0]
    before = residues.hold(tree.leaves, 0b0001)
    rebuilt = node(P, [leaf(0), leaf(1), leaf(2)])  # (a node made after the bound)
    assert residues.start(rebuilt)[0] == free & 0b0001
    residues.release(tree.leaves, before)
    assert residues.start(node(P, [leaf(0), leaf(1), leaf(2)]))[0] == free


def test_a_run_of_q_children_starts_where_its_children_in_a_row_may():
    # A range of a Q-node's children is no node of its own: its residues are those of the
    # children one after the other, in the node's order or its reverse.
    size, align = np.array([2, 1, 4, 3], np.int64), np.array([1, 1, 4, 1], np.int64)
    tree = node(Q, [leaf(0), leaf(1), leaf(2), leaf(3)])
    residues = Residues.of(size, align)
    assert residues is not None
    run = frozenset({1, 2})
    in_a_row = sum(1 << r for r in range(4)
                   if _aligned_at((1, 2), r, size, align) or _aligned_at((2, 1), r, size, align))
    assert residues.run_start(tree, run) == in_a_row != residues.full


def test_no_residues_without_alignments_or_beyond_the_modulus():
    size = np.array([3, 5], np.int64)
    assert Residues.of(size, np.array([1, 1], np.int64)) is None
    assert Residues.of(size, np.array([1 << 15, 1], np.int64)) is None
