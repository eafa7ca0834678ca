"""Where each node of a PQ-tree may start, modulo the blocks' alignments: the hole search's
check of alignments, and the aligned order it reads back.

In a tiling a block's offset is the sum of the sizes below it (:mod:`.refill`), so whether an
order keeps every alignment depends on sums modulo the alignments. With ``A`` the least common
multiple of the alignments above 1, a block of alignment ``a`` (a divisor of ``A``) is aligned
exactly where its offset modulo ``A`` is a multiple of ``a``; so for each node of a PQ-tree
:meth:`Residues.start` gives the set of residues modulo ``A`` at which the node may start with
every leaf below it aligned, in some order the node allows (a bit mask of ``A`` bits), and the
tree keeps every alignment in some frontier only if its root may start at 0:

- a leaf: the multiples of its alignment;
- a Q-node: the residues at which every child, in the node's order or its reverse, starts
  where it may (exact: the children's orders are independent of one another);
- a P-node of at most :data:`EXACT_CHILDREN` children: by dynamic programming over the subsets
  placed first (exact); of more, the residues at which each child, after some subset of the
  children, starts where it may (a superset: the subsets are not tied to one order).

The blocks that end at an event keep their alignments after they end: the hole's starters
start where the enders did, so the residues the enders' run may start at (:meth:`run_start`)
bind the starters' node too (:meth:`hold`), as long as its leaves make up one node. Where the
bound is lost (the starters split up by a later reduction, or a child of a large P-node) the
sets only grow, so a tree without 0 at its root has no aligned frontier (the check is sound
and the hole search's "no" stays a proof), but a tree with it may still have none:
:meth:`order` then fails to read one back, and the search goes on to its next tiling.

The residue sets are cpplan's own; MiniMalloc (ASPLOS 2023) and the tiling search
(:mod:`.tiling`) instead place blocks at offsets one by one and check each.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable

import numpy as np

from .pqtree import LEAF, Node, Q, locate

__all__ = ["Residues", "EXACT_CHILDREN", "MODULUS_MAX"]

# Children of a P-node up to which its residues come from the subsets placed first (2 ** 7
# subsets); beyond, from each child alone, a superset.
EXACT_CHILDREN = 7
# Multisets of alike children (:meth:`Residues._coarse`) up to which a larger P-node's residues
# are exact modulo a divisor of the modulus.
COARSE_STATES = 1 << 10
# The least common multiple of the alignments (scaled) beyond which the check is not made:
# its residue sets would be bit masks of more bits than this.
MODULUS_MAX = 1 << 14
# Nodes whose residues are kept before the cache is emptied (a long search makes millions).
_CACHED = 200_000


class Residues:
    """The residue sets of one search's trees (see the module docstring): blocks' sizes and
    alignments by position, and the bounds that ended blocks left on the nodes of starters
    (:meth:`hold`)."""

    def __init__(self, size: np.ndarray, align: np.ndarray, modulus: int) -> None:
        self.modulus = modulus
        self.full = (1 << modulus) - 1
        self.size = [int(z) % modulus for z in size]
        self.leaf = [self._multiples(int(a)) for a in align]
        self.bound: dict[frozenset[int], int] = {}  # a starters' node's leaves: its residues
        self._cache: dict[int, tuple[Node, int, int]] = {}
        self._coarse_memo: dict[tuple[int, int, tuple], int] = {}
        # (the divisors of the modulus above 1, the largest first: :meth:`_coarse`'s moduli)
        self._divisors = [d for d in range(modulus, 1, -1) if modulus % d == 0]

    @classmethod
    def of(cls, size: np.ndarray, align: np.ndarray) -> Residues | None:
        """The residue sets for blocks of these sizes and alignments (by position); None where
        no alignment is above 1 or their least common multiple is beyond :data:`MODULUS_MAX`."""
        above = [int(a) for a in align if a > 1]
        if not above:
            return None
        modulus = math.lcm(*above)
        return cls(size, align, modulus) if modulus <= MODULUS_MAX else None

    def _multiples(self, a: int) -> int:
        if a <= 1:
            return self.full
        return sum(1 << r for r in range(0, self.modulus, a))

    def _shift(self, mask: int, k: int) -> int:
        """``mask``'s residues plus ``k`` (rotated modulo the modulus)."""
        k %= self.modulus
        if not k:
            return mask
        return ((mask << k) | (mask >> (self.modulus - k))) & self.full

    def start(self, t: Node) -> tuple[int, int]:
        """The residues at which ``t`` may start with its leaves aligned, and its size modulo
        the modulus."""
        got = self._cache.get(id(t))
        if got is not None and got[0] is t:
            return got[1], got[2]
        if t.kind == LEAF:
            j = next(iter(t.leaves))
            mask, z = self.leaf[j], self.size[j]
        else:
            kids = [self.start(c) for c in t.children]
            z = sum(k[1] for k in kids) % self.modulus
            mask = self._run(kids, z) if t.kind == Q else self._any_order(kids)
        bound = self.bound.get(t.leaves)
        if bound is not None:
            mask &= bound
        if len(self._cache) >= _CACHED:
            self._cache.clear()
        self._cache[id(t)] = (t, mask, z)
        return mask, z

    def _run(self, kids: list[tuple[int, int]], total: int) -> int:
        """Residues of children in this order or its reverse (a Q-node's)."""
        forwards = backwards = self.full
        below = 0
        for mask, z in kids:
            if mask != self.full:
                forwards &= self._shift(mask, -below)
                backwards &= self._shift(mask, below + z - total)
            below += z
        return forwards | backwards

    def _any_order(self, kids: list[tuple[int, int]]) -> int:
        """Residues of children in any order (a P-node's)."""
        if all(mask == self.full for mask, _ in kids):
            return self.full
        n = len(kids)
        if n <= EXACT_CHILDREN:
            # first[s]: where the children of subset s may start, placed first in some order
            first = [self.full] + [0] * ((1 << n) - 1)
            sums = [0] * (1 << n)
            for s in range(1, 1 << n):
                low = s & -s
                sums[s] = sums[s ^ low] + kids[low.bit_length() - 1][1]
                out, rest = 0, s
                while rest:
                    bit = rest & -rest
                    rest ^= bit
                    before = first[s ^ bit]
                    if before:
                        out |= before & self._shift(kids[bit.bit_length() - 1][0], -sums[s ^ bit])
                first[s] = out
            return first[-1]
        # Each child after some subset of the children (its own included: a superset, cheap),
        # every residue once the subsets' sums reach them all (as many children soon do).
        reach = 1  # (the sums of the subsets)
        for _mask, z in kids:
            reach |= self._shift(reach, z)
        if reach == self.full:
            out = self.full if all(mask for mask, _z in kids) else 0
        else:
            out = self.full
            for mask, _z in kids:
                if mask != self.full:
                    at = 0
                    for r in _bits(reach):
                        at |= self._shift(mask, -r)
                    out &= at
        return self._coarse(kids, out) if out else 0

    def _coarse(self, kids: list[tuple[int, int]], among: int) -> int:
        """Residues of children in any order, exact modulo the largest divisor ``m`` of the
        modulus at which the children, grouped alike (residues and size modulo ``m``), make at
        most :data:`COARSE_STATES` multisets: by dynamic programming over the multisets placed
        first. Modulo ``m`` is a relaxation (an order aligned modulo the modulus is aligned
        modulo ``m``), so the residues returned (those whose remainder modulo ``m`` is allowed)
        hold every residue allowed; on the last tree of aligned perfect packings it already
        says "none" modulo 2, where the check above passes them. Only the residues ``among``
        are asked about (those the check above allows): the multisets that cannot start at any
        of them are passed over, most of them on the trees of aligned packings."""
        for m in self._divisors:
            count: dict[tuple[int, int], int] = {}
            for mask, z in kids:
                key = (self._fold(mask, m), z % m)
                count[key] = count.get(key, 0) + 1
            states = math.prod(c + 1 for c in count.values())
            if states <= COARSE_STATES:
                break
        else:
            return among
        start = self._fold(among, m)
        memo = (m, start, tuple(sorted(count.items())))
        got = self._coarse_memo.get(memo)
        if got is None:
            got = self._multisets(m, count, start)
            if len(self._coarse_memo) >= _CACHED:
                self._coarse_memo.clear()
            self._coarse_memo[memo] = got
        return among & got

    def _fold(self, mask: int, m: int) -> int:
        """``mask``'s residues modulo ``m`` (a divisor of the modulus)."""
        out = 0
        for k in range(0, self.modulus, m):
            out |= mask >> k
        return out & ((1 << m) - 1)

    def _multisets(self, m: int, count: dict[tuple[int, int], int], start: int) -> int:
        """The residues modulo the modulus whose remainder modulo ``m`` lets children of these
        kinds (``(residues modulo m, size modulo m)``: how many) be placed in some order, each
        where it may start, the first at a residue of ``start`` (modulo ``m``)."""
        full_m = (1 << m) - 1

        def shift(mask: int, k: int) -> int:
            k %= m
            return ((mask << k) | (mask >> (m - k))) & full_m if k else mask

        kinds = list(count.items())
        radix = [1]
        for (_key, c) in kinds:
            radix.append(radix[-1] * (c + 1))
        # Each kind's digit place, count and size, its residues and their shifts back by the
        # sums below it (made as met): the loop below is the whole cost of the check.
        steps = [(radix[k], radix[k + 1], radix[k] * c, z % m, mask, [-1] * m)
                 for k, ((mask, z), c) in enumerate(kinds)]
        first = [0] * radix[-1]  # per multiset (mixed radix): where it may start, placed first
        below = [0] * radix[-1]  # (the sum of its sizes modulo m)
        first[0] = start
        for s in range(radix[-1]):
            here = first[s]
            if not here:
                continue
            b = below[s]
            for place, period, last, z, mask, back in steps:
                if s % period < last:  # (fewer of this kind than there are)
                    at = back[b]
                    if at < 0:
                        at = back[b] = shift(mask, -b)
                    first[s + place] |= here & at
                    below[s + place] = (b + z) % m
        allowed = first[-1]  # (repeated over the modulus: a residue's remainder allowed)
        return sum(allowed << k for k in range(0, self.modulus, m))

    def run_start(self, tree: Node, run: frozenset[int]) -> int:
        """The residues at which ``run`` (contiguous in ``tree``: a node, or a range of a
        Q-node's children) may start with its leaves aligned."""
        t, span = locate(tree, run)
        if span is None:
            return self.start(t)[0]
        kids = [self.start(t.children[k]) for k in span]
        return self._run(kids, sum(k[1] for k in kids))

    def hold(self, leaves: frozenset[int], mask: int) -> int | None:
        """Bind the node of ``leaves`` (a hole's starters, before their node is made) to start
        at residues of ``mask``; what it was bound to before, for :meth:`release`."""
        before = self.bound.get(leaves)
        self.bound[leaves] = mask if before is None else before & mask
        return before

    def release(self, leaves: frozenset[int], before: int | None) -> None:
        if before is None:
            del self.bound[leaves]
        else:
            self.bound[leaves] = before

    def fits(self, tree: Node) -> bool:
        """Whether ``tree`` may keep every alignment: its root may start at 0."""
        return bool(self.start(tree)[0] & 1)

    def order(self, t: Node, at: int, work: list[int],
              rng: random.Random | None = None) -> list[int] | None:
        """A frontier of ``t`` in which every leaf is aligned when ``t`` starts at offset
        ``at``; None where none is found within ``work[0]`` steps (spent from it). The first
        found in the nodes' own orders (a Q-node forwards first, a P-node's children as they
        come), or with ``rng`` in orders drawn from it: another frontier, where the one read
        first puts a node that a bound no longer holds where its alignment fails
        (:func:`cpplan.exact.refill._offsets`)."""
        mask, _z = self.start(t)
        if not mask >> (at % self.modulus) & 1:
            return None
        work[0] -= 1
        if work[0] < 0:
            return None
        if t.kind == LEAF:
            return [next(iter(t.leaves))]
        if t.kind == Q:
            ways = [t.children, t.children[::-1]]
            if rng is not None and rng.random() < 0.5:
                ways.reverse()
            for kids in ways:
                got = self.in_order(kids, at, work, rng)
                if got is not None:
                    return got
            return None
        return self._some_order(t.children, at, work, rng)

    def in_order(self, kids: Iterable[Node], at: int, work: list[int],
                 rng: random.Random | None = None) -> list[int] | None:
        """Frontiers of ``kids`` one after the other from offset ``at``, every leaf aligned
        (each as :meth:`order` reads it, ``rng`` included)."""
        out: list[int] = []
        for c in kids:
            got = self.order(c, at, work, rng)
            if got is None:
                return None
            out += got
            at += self.start(c)[1]
        return out

    def _some_order(self, kids: tuple[Node, ...], at: int, work: list[int],
                    rng: random.Random | None) -> list[int] | None:
        """The children in some order, each aligned: a search over the next child (in a
        random order with ``rng``), children alike (the same residues and size modulo the
        modulus) tried once, and the sets of children left that failed at a residue
        remembered."""
        keys = [self.start(c) for c in kids]
        failed: set[tuple[tuple[tuple[int, int], ...], int]] = set()

        def rest(left: int, at: int) -> list[int] | None:
            if not left:
                return []
            memo = (tuple(sorted(keys[i] for i in _bits(left))), at % self.modulus)
            if memo in failed:
                return None
            tried = set()
            ways = list(_bits(left))
            if rng is not None:
                rng.shuffle(ways)
            for i in ways:
                if keys[i] in tried or not keys[i][0] >> (at % self.modulus) & 1:
                    continue
                tried.add(keys[i])
                got = self.order(kids[i], at, work, rng)
                if got is not None:
                    after = rest(left ^ (1 << i), at + keys[i][1])
                    if after is not None:
                        return got + after
                if work[0] < 0:
                    return None
            failed.add(memo)
            return None

        return rest((1 << len(kids)) - 1, at)


def _bits(mask: int) -> Iterable[int]:
    """The positions of ``mask``'s set bits, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low
