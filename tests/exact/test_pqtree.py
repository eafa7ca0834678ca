"""PQ-trees (:mod:`cpplan.exact.pqtree`): the orders a tree stands for, against every
permutation."""

from __future__ import annotations

import itertools
import random

import pytest

from cpplan.exact.pqtree import (
    LEAF,
    Node,
    P,
    Q,
    contiguous,
    digest,
    forced,
    frontier,
    leaf,
    locate,
    node,
    replace,
    without,
)


def _frontiers(t: Node) -> set[tuple[int, ...]]:
    """Every order the tree stands for: a P-node's children in any order, a Q-node's in theirs
    or its reverse."""
    if t.kind == LEAF:
        return {tuple(t.leaves)}
    kids = [_frontiers(c) for c in t.children]
    ways = itertools.permutations(range(len(kids))) if t.kind == P else \
        [tuple(range(len(kids))), tuple(reversed(range(len(kids))))]
    return {tuple(x for part in combo for x in part)
            for way in ways for combo in itertools.product(*(kids[k] for k in way))}


def _contiguous(order: tuple[int, ...], s: frozenset[int]) -> bool:
    at = [k for k, x in enumerate(order) if x in s]
    return not at or at[-1] - at[0] + 1 == len(at)


def test_a_contiguous_pair_and_an_overlapping_one_leave_a_path():
    # Of 1 2 3 4 in any order, those where {1, 2} and {2, 3} are contiguous: 1 2 3 in a row
    # (or backwards), 4 at either end.
    t = node(P, [leaf(x) for x in (1, 2, 3, 4)])
    t = contiguous(contiguous(t, frozenset({1, 2})), frozenset({2, 3}))
    assert _frontiers(t) == {(1, 2, 3, 4), (3, 2, 1, 4), (4, 1, 2, 3), (4, 3, 2, 1)}
    assert contiguous(t, frozenset({1, 3})) is None  # (2 is always between them)


def test_replacing_a_block_puts_the_new_node_in_its_place():
    t = contiguous(node(P, [leaf(x) for x in (1, 2, 3)]), frozenset({1, 2}))
    t = replace(t, frozenset({1, 2}), node(P, [leaf(7), leaf(8)]))
    assert _frontiers(t) == {(7, 8, 3), (8, 7, 3), (3, 7, 8), (3, 8, 7)}
    assert frontier(t) in [list(f) for f in _frontiers(t)]


@pytest.mark.parametrize("seed", range(8))
def test_contiguous_and_replace_keep_exactly_the_orders_allowed(seed):
    # Random subsets made contiguous and blocks replaced, on up to 7 items: the tree's orders
    # are exactly the permutations that satisfy every step (or the tree is None when none do).
    rng = random.Random(seed)
    for _trial in range(150):
        n = rng.randint(2, 7)
        t: Node | None = node(P, [leaf(x) for x in range(n)])
        orders = set(itertools.permutations(range(n)))
        alive, fresh = list(range(n)), n
        for _step in range(rng.randint(1, 5)):
            s = frozenset(rng.sample(alive, rng.randint(1, len(alive))))
            assert t is not None
            t = contiguous(t, s)
            orders = {o for o in orders if _contiguous(o, s)}
            if t is None:
                assert not orders
                break
            assert _frontiers(t) == orders
            if rng.random() < 0.5 and len(s) < len(alive):
                new = list(range(fresh, fresh + rng.randint(1, 3)))
                fresh += len(new)
                t = replace(t, s, leaf(new[0]) if len(new) == 1 else
                            node(P, [leaf(x) for x in new]))
                orders = {o[:min(k for k, x in enumerate(o) if x in s)] + way +
                          o[max(k for k, x in enumerate(o) if x in s) + 1:]
                          for o in orders for way in itertools.permutations(new)}
                alive = [x for x in alive if x not in s] + new
                assert _frontiers(t) == orders


def test_locate_finds_a_block_as_a_node_or_as_a_range_of_q_children():
    inner = node(P, [leaf(4), leaf(5)])
    tree = node(P, [node(Q, [leaf(0), leaf(1), leaf(2), leaf(3)]), inner])
    assert locate(tree, frozenset({4, 5})) == (inner, None)
    assert locate(tree, frozenset({5})) == (inner.children[1], None)
    q, span = locate(tree, frozenset({1, 2}))
    assert q is tree.children[0] and span == range(1, 3)


@pytest.mark.parametrize("seed", range(4))
def test_a_subset_is_forced_exactly_where_every_order_has_it_contiguous(seed):
    # Trees made by random reductions of up to 6 items, every subset of their leaves asked.
    rng = random.Random(seed)
    for _trial in range(60):
        n = rng.randint(1, 6)
        t: Node | None = node(P, [leaf(x) for x in range(n)])
        for _step in range(rng.randint(0, 3)):
            reduced = contiguous(t, frozenset(rng.sample(range(n), rng.randint(1, n))))
            t = reduced if reduced is not None else t
        assert t is not None
        orders = _frontiers(t)
        for k in range(1, n + 1):
            for s in map(frozenset, itertools.combinations(range(n), k)):
                assert forced(t, s) == all(_contiguous(o, s) for o in orders), (s, orders)



def _random_tree(rng: random.Random, items: int) -> Node:
    """A tree over ``items`` leaves made by random contiguous subsets (those that reduce)."""
    t = node(P, [leaf(x) for x in range(items)])
    for _ in range(items):
        s = frozenset(rng.sample(range(items), rng.randint(2, items - 1)))
        t = contiguous(t, s) or t
    return t


def _shuffled(t: Node, rng: random.Random) -> Node:
    """The same tree stored otherwise: a P-node's children in another order, a Q-node's
    perhaps reversed."""
    if t.kind == LEAF:
        return t
    kids = [_shuffled(c, rng) for c in t.children]
    if t.kind == P:
        rng.shuffle(kids)
    elif rng.random() < 0.5:
        kids.reverse()
    return node(t.kind, kids)


@pytest.mark.parametrize("seed", range(8))
def test_a_digest_names_the_orders_not_the_way_they_are_stored(seed):
    rng = random.Random(seed)
    trees = [_random_tree(rng, 6) for _ in range(12)]
    for t in trees:
        assert digest(_shuffled(t, rng)) == digest(t)
    for a, b in itertools.combinations(trees, 2):
        assert (digest(a) == digest(b)) == (_frontiers(a) == _frontiers(b))
    pair = [leaf(1), node(P, [leaf(2), leaf(3)])]
    assert digest(node(Q, pair)) == digest(node(P, pair[::-1]))


@pytest.mark.parametrize("seed", range(8))
def test_taking_leaves_out_keeps_the_orders_the_rest_had(seed):
    rng = random.Random(seed)
    t = _random_tree(rng, 7)
    drop = frozenset(rng.sample(range(7), rng.randint(1, 4)))
    rest = without(t, drop)
    assert rest is not None and rest.leaves == t.leaves - drop
    assert _frontiers(rest) == {tuple(x for x in order if x not in drop)
                                for order in _frontiers(t)}
    assert without(t, t.leaves) is None
