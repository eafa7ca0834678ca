"""The shared segment trees and sparse tables, against plain loops over lists."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cpplan.segtree import (
    RangeAddTree,
    SlotTree,
    canonical_nodes,
    first_below,
    last_above,
)

values = st.lists(st.integers(-50, 50), min_size=1, max_size=40)


def _leaves(size: int, node: int) -> range:
    depth = size.bit_length() - node.bit_length()
    return range((node << depth) - size, ((node + 1) << depth) - size)


@given(st.integers(0, 6), st.data())
def test_canonical_nodes_cover_a_range_exactly_in_order(log, data):
    size = 1 << log
    a = data.draw(st.integers(0, size))
    b = data.draw(st.integers(a, size))
    covered = [leaf for node in canonical_nodes(size, a, b) for leaf in _leaves(size, node)]
    assert covered == list(range(a, b))
    assert len(canonical_nodes(size, a, b)) <= 2 * max(log, 1)


@settings(max_examples=60)
@given(values, st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(-9, 9),
                                  st.integers(0, 40), st.integers(0, 40)), max_size=30))
def test_range_add_tree_agrees_with_a_list(start, ops):
    tree, plain = RangeAddTree(start), list(start)
    n = len(plain)
    for a, b, d, qa, qb in ops:
        a, b = sorted((a % (n + 1), b % (n + 1)))
        tree.add(a, b, d)
        for i in range(a, b):
            plain[i] += d
        qa, qb = sorted((qa % (n + 1), qb % (n + 1)))
        if qa < qb:
            assert tree.min(qa, qb) == min(plain[qa:qb])
            assert tree.max(qa, qb) == max(plain[qa:qb])


@settings(max_examples=60)
@given(st.integers(1, 30), st.sampled_from([max, min]), st.data())
def test_slot_tree_searches_agree_with_a_list(n, op, data):
    absent = 1 << 40
    empty = -1000 if op is max else 1000
    tree = SlotTree(n, empty, op, absent)
    value, key = [empty] * n, [None] * n
    for _ in range(data.draw(st.integers(0, 40))):
        i = data.draw(st.integers(0, n - 1))
        value[i], key[i] = data.draw(st.integers(-20, 20)), data.draw(st.integers(0, 99))
        tree.set(i, value[i], key[i])
        x = data.draw(st.integers(-20, 20))
        p = data.draw(st.integers(0, n))
        a = data.draw(st.integers(0, n))
        b = data.draw(st.integers(a, n))
        if op is max:
            assert tree.last_above(p, x) == max((j for j in range(p) if value[j] > x),
                                                default=-1)
        else:
            assert tree.first_below(p, x) == min((j for j in range(p, n) if value[j] < x),
                                                 default=-1)
        keys = [key[j] for j in range(a, b) if key[j] is not None
                and (value[j] > x if op is max else value[j] < x)]
        assert tree.min_at(a, b, x) == min(keys, default=absent)


@given(st.lists(st.integers(-20, 20), min_size=1, max_size=40), st.data())
def test_sparse_table_searches_agree_with_a_list(vals, data):
    n = len(vals)
    queries = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(-20, 20)),
                                 min_size=1, max_size=10))
    p = np.array([q for q, _ in queries], np.int64)
    x = np.array([v for _, v in queries], np.int64)
    values_a = np.array(vals, np.int64)
    assert last_above(values_a, p, x).tolist() == [
        max((j for j in range(q) if vals[j] > v), default=-1) for q, v in queries]
    assert first_below(values_a, p, x).tolist() == [
        min((j for j in range(q, n) if vals[j] < v), default=-1) for q, v in queries]
