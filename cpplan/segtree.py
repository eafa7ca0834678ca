"""Segment trees and sparse tables: cpplan's one module of trees over ranges of slots.

Every tree here is over ``size`` leaves, a power of two, numbered the classic way: node 1 is the
root, node ``v`` has children ``2v`` and ``2v + 1``, leaf ``i`` is node ``size + i``. A range
``[a, b)`` of leaves is covered exactly by its *canonical nodes* (:func:`canonical_nodes`, at
most two per level). Who uses what:

* :class:`RangeAddTree` (range add, range min and max): the slack of the tiling search
  (:mod:`cpplan.exact.tiling_search`);
* :class:`SlotTree` (set one slot; max or min with searches beyond a threshold): the gap trees
  of the TFLite GPU replica (:mod:`cpplan.replicas.tflite_gpu`);
* :func:`sparse_table`, :func:`sparse_range`, :func:`last_above`, :func:`first_below` (static
  values, queries in batches): the TFLite GPU replica's batched searches.

The one exception is the placer's occupancy tree (:mod:`cpplan.planners.occupancy`: unions of
byte runs per node), written in C with the placement loop over it (``planners/_occupancy.c``):
best-fit's placement on 62185 buffers takes a third of a second there (``python
benchmarks/segtree.py`` prints it against the same rule in numpy).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["canonical_nodes", "RangeAddTree", "SlotTree", "sparse_table", "sparse_range",
           "last_above", "first_below"]

_INF = 1 << 62


def canonical_nodes(size: int, a: int, b: int) -> list[int]:
    """The nodes of a segment tree over ``size`` leaves (a power of two; node 1 is the root,
    leaf ``i`` is node ``size + i``) that together cover leaves ``[a, b)`` exactly, left to
    right: at most two per level."""
    lefts: list[int] = []
    rights: list[int] = []
    lo, hi = a + size, b + size
    while lo < hi:
        if lo & 1:
            lefts.append(lo)
            lo += 1
        if hi & 1:
            hi -= 1
            rights.append(hi)
        lo >>= 1
        hi >>= 1
    rights.reverse()
    return lefts + rights


class RangeAddTree:
    """Values per slot with range add and range min / max, O(log n) each: every node holds its
    subtree's extremes plus its own pending add (never pushed down: a query adds the pending
    adds of the nodes it passes)."""

    def __init__(self, values: list[int]) -> None:
        n = 1
        while n < len(values):
            n *= 2
        self.n = n
        self.lo = [_INF] * (2 * n)
        self.hi = [-_INF] * (2 * n)
        self.add_ = [0] * (2 * n)
        for i, v in enumerate(values):
            self.lo[n + i] = self.hi[n + i] = v
        for i in range(n - 1, 0, -1):
            self.lo[i] = min(self.lo[2 * i], self.lo[2 * i + 1])
            self.hi[i] = max(self.hi[2 * i], self.hi[2 * i + 1])

    def add(self, a: int, b: int, d: int, node: int = 1, na: int = 0, nb: int = -1) -> None:
        """Add ``d`` to slots ``[a, b)``."""
        if nb < 0:
            nb = self.n
        if b <= na or nb <= a:
            return
        if a <= na and nb <= b:
            self.lo[node] += d
            self.hi[node] += d
            self.add_[node] += d
            return
        mid = (na + nb) // 2
        self.add(a, b, d, 2 * node, na, mid)
        self.add(a, b, d, 2 * node + 1, mid, nb)
        self.lo[node] = min(self.lo[2 * node], self.lo[2 * node + 1]) + self.add_[node]
        self.hi[node] = max(self.hi[2 * node], self.hi[2 * node + 1]) + self.add_[node]

    def min(self, a: int, b: int, node: int = 1, na: int = 0, nb: int = -1) -> int:
        """The least value of slots ``[a, b)`` (a huge number when the range is empty)."""
        if nb < 0:
            nb = self.n
        if b <= na or nb <= a:
            return _INF
        if a <= na and nb <= b:
            return self.lo[node]
        mid = (na + nb) // 2
        return min(self.min(a, b, 2 * node, na, mid),
                   self.min(a, b, 2 * node + 1, mid, nb)) + self.add_[node]

    def max(self, a: int, b: int, node: int = 1, na: int = 0, nb: int = -1) -> int:
        """The largest value of slots ``[a, b)`` (a huge negative number when it is empty)."""
        if nb < 0:
            nb = self.n
        if b <= na or nb <= a:
            return -_INF
        if a <= na and nb <= b:
            return self.hi[node]
        mid = (na + nb) // 2
        return max(self.max(a, b, 2 * node, na, mid),
                   self.max(a, b, 2 * node + 1, mid, nb)) + self.add_[node]


class SlotTree:
    """A segment tree over ``n`` slots combining values with ``op`` (``max`` or ``min``), with
    searches: the last slot above a threshold before a point, the first below one after a
    point, the smallest key among slots beyond a threshold. Each node also keeps, over its
    *active* slots (set at least once), the opposite combination of values and the smallest
    key, so that the last search takes a whole node at once when all of its slots qualify.
    ``absent`` is the key :meth:`min_at` gives when no slot qualifies."""

    def __init__(self, n: int, empty: int, op: Callable[[int, int], int], absent: int) -> None:
        size = 1
        while size < max(n, 1):
            size *= 2
        self.size = size
        self.op = op
        self.other = min if op is max else max
        self.absent = absent
        self.t = [empty] * (2 * size)
        self.u = [-empty] * (2 * size)  # opposite combination over active slots
        self.k = [absent] * (2 * size)  # smallest key over active slots
        self.leaf = [empty] * n

    def set(self, i: int, v: int, key: int) -> None:
        """Slot ``i`` takes value ``v`` and key ``key`` (and is active from now on)."""
        self.leaf[i] = v
        t, u, kk, op, other = self.t, self.u, self.k, self.op, self.other
        n = i + self.size
        t[n] = u[n] = v
        kk[n] = key
        n >>= 1
        while n:
            a, b = 2 * n, 2 * n + 1
            t[n] = op(t[a], t[b])
            u[n] = other(u[a], u[b])
            kk[n] = kk[a] if kk[a] < kk[b] else kk[b]
            n >>= 1

    def last_above(self, p: int, x: int) -> int:
        """The largest slot ``j < p`` whose value is above ``x`` (a max tree), or -1."""
        t = self.t
        for node in reversed(canonical_nodes(self.size, 0, p)):
            if t[node] > x:
                return self._down(node, x, True)
        return -1

    def first_below(self, q: int, x: int) -> int:
        """The smallest slot ``k >= q`` whose value is below ``x`` (a min tree), or -1."""
        t = self.t
        for node in canonical_nodes(self.size, q, self.size):
            if t[node] < x:
                return self._down(node, x, False)
        return -1

    def min_at(self, a: int, b: int, x: int) -> int:
        """The smallest key of the slots in ``[a, b)`` whose value is beyond ``x`` (above it
        in a max tree, below it in a min tree); ``absent`` if none."""
        t, u, kk, size = self.t, self.u, self.k, self.size
        above = self.op is max
        nodes = canonical_nodes(size, a, b)
        best = self.absent
        while nodes:
            node = nodes.pop()
            if above:
                if t[node] <= x:
                    continue  # no slot beyond x
                whole = u[node] > x
            else:
                if t[node] >= x:
                    continue
                whole = u[node] < x
            if whole or node >= size:  # every active slot is beyond x
                if kk[node] < best:
                    best = kk[node]
            else:
                nodes.append(2 * node)
                nodes.append(2 * node + 1)
        return best

    def _down(self, node: int, x: int, above: bool) -> int:
        """The rightmost leaf above ``x`` (``above``) or leftmost below it, under ``node``."""
        t, size = self.t, self.size
        while node < size:
            if above:
                node = 2 * node + 1 if t[2 * node + 1] > x else 2 * node
            else:
                node = 2 * node if t[2 * node] < x else 2 * node + 1
        return node - size


def sparse_table(values: np.ndarray, op: np.ufunc) -> list[np.ndarray]:
    """Sparse table of ``values`` under ``op`` (``np.maximum`` or ``np.minimum``): level ``k``
    holds ``op`` over windows of ``2**k`` values."""
    table = [values]
    w = 1
    while 2 * w <= len(values):
        prev = table[-1]
        table.append(op(prev[:-w], prev[w:]))
        w *= 2
    return table


def sparse_range(table: list[np.ndarray], a: np.ndarray, b: np.ndarray, op: np.ufunc
                 ) -> np.ndarray:
    """``op`` over ``values[a:b]`` (``b > a``) for every pair, from a sparse table."""
    k = np.floor(np.log2(b - a)).astype(np.int64)
    out = np.empty(len(a), table[0].dtype)
    for lev in np.unique(k).tolist():
        m = k == lev
        t = table[lev]
        out[m] = op(t[a[m]], t[b[m] - (1 << lev)])
    return out


def last_above(values: np.ndarray, p: np.ndarray, x: np.ndarray) -> np.ndarray:
    """For each query, the largest ``j < p`` with ``values[j] > x``, or -1 (a sparse table and
    a bisection per query, all queries at once)."""
    table = sparse_table(values, np.maximum)
    j = np.full(len(p), -1, np.int64)
    live = p > 0
    if not live.any():
        return j
    live[live] = sparse_range(table, np.zeros(int(live.sum()), np.int64), p[live],
                              np.maximum) > x[live]
    a = np.zeros(len(p), np.int64)
    b = p.copy()
    idx = np.nonzero(live)[0]
    # Invariant: some value of [a, b) is above x, and none of [b, p).
    while len(idx):
        m = (a[idx] + b[idx]) // 2
        hit = sparse_range(table, m, b[idx], np.maximum) > x[idx]
        a[idx[hit]] = m[hit]
        b[idx[~hit]] = m[~hit]
        idx = idx[b[idx] - a[idx] > 1]
    j[live] = a[live]
    return j


def first_below(values: np.ndarray, q: np.ndarray, x: np.ndarray) -> np.ndarray:
    """For each query, the smallest ``k >= q`` with ``values[k] < x``, or -1 (as
    :func:`last_above`)."""
    n = len(values)
    table = sparse_table(values, np.minimum)
    k = np.full(len(q), -1, np.int64)
    live = q < n
    if not live.any():
        return k
    live[live] = sparse_range(table, q[live], np.full(int(live.sum()), n, np.int64),
                              np.minimum) < x[live]
    a = q.copy()
    b = np.full(len(q), n, np.int64)
    idx = np.nonzero(live)[0]
    # Invariant: some value of [a, b) is below x, and none of [q, a).
    while len(idx):
        m = (a[idx] + b[idx] + 1) // 2
        hit = sparse_range(table, a[idx], m, np.minimum) < x[idx]
        b[idx[hit]] = m[hit]
        a[idx[~hit]] = m[~hit]
        idx = idx[b[idx] - a[idx] > 1]
    k[live] = a[live]
    return k
