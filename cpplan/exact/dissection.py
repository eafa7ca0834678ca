"""Dissections: blocks that fill a rectangle together, merged into one block.

A tight component's packing (:mod:`.tiling`) is often a *dissection* of its strip: a rectangle
cut, recursively, in two side by side in time, in two stacked in bytes, or in five around a
centre (a pinwheel, which no sequence of straight cuts makes). Perfect packings
(:mod:`cpplan.perfect`) are built exactly so, and such structure is common where buffers are
made by splitting others. Bottom up, each cut leaves a pattern among the blocks that is easy to
see and unlikely by chance:

* **chain**: two blocks of one size, one starting at the moment the other ends: side by side,
  they fill a rectangle with the first's start and the second's end;
* **stack**: blocks with the same lifetime, one on another;
* **pinwheel**: five blocks ``P, Q, C, S, T`` around a centre ``C = [x1, x2)``: ``P`` and ``Q``
  start together and end at ``x2`` and ``x1``, ``S`` and ``T`` start at ``x1`` and ``x2`` and
  end together, with ``Q = C + S`` and ``T = P + C`` in bytes; they fill a rectangle of
  ``P + Q`` bytes.

:func:`dissect` merges such patterns into single blocks until none is left: where a part of a
chain or a pinwheel is itself a stack, the stack is one *candidate* (a subset of the blocks
sharing a lifetime), so that each cut is found as soon as all its parts are single blocks or
stacks of them. Perfect packings of 10000 buffers reduce to one block in about a second, and
the tiling search packs what is left at once.

Every merge places its parts inside its rectangle without overlap, each at an offset its
alignment divides (the merged block's alignment is their least common multiple), so a packing of
the merged blocks gives one of the original blocks at the same height (:meth:`Dissection.offsets`).
The converse can fail: blocks that match by chance (sizes coincide) merged where no tiling puts
them side by side leave merged blocks that do not fit. So the reduction is a heuristic: a packing
of the merged blocks is a packing, their "does not fit" proves nothing. Chance matches are
rarer where fewer blocks start and end: matches are taken only where one candidate on each side
has the size, at moments with few events first (their number times each other at most
:data:`WALL_FIRST`, then twice that, and so on), which lets most cuts close from the bottom up
before the crowded moments (a long cut across the strip) are looked at.

The patterns are cpplan's own reading of how perfect packings are built (a strip cut by straight
and pinwheel cuts, as in :mod:`cpplan.perfect`); the pinwheel is the smallest rectangle
dissection that is not a guillotine cut.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

__all__ = ["Dissection", "dissect"]

# A group of blocks sharing a lifetime offers every subset of its members as a stack up to this
# many members; larger groups offer single members and the whole group.
SUBSETS_UP_TO = 8
# Moments whose blocks ending times blocks starting are at most this are matched first (see
# the module docstring); the limit doubles whenever nothing below it is left to merge.
WALL_FIRST = 4
SUMS_UP_TO = 24
BITS_UP_TO = 1 << 22  # bytes at a moment up to which its subset sums are a bit set
DIFFERENCES_UP_TO = 1 << 14  # beyond, a size is assumed to have an alternative
# Blocks looked at (per block) after which merging stops where it is (still sound): perfect
# packings take 3 to 4; idealloc's Y_1 (62185 buffers, not tight) would take 40, 5 s.
WORK_PER_BLOCK = 10


@dataclass(frozen=True)
class Dissection:
    """Merged blocks (``size``, ``start``, ``end``, ``align``: one entry per merged block) and
    where each original block lies in its merged block: ``root[i]``, at ``dy[i]`` bytes above
    the merged block's offset. ``merges`` counts the patterns merged, by kind."""

    size: np.ndarray
    start: np.ndarray
    end: np.ndarray
    align: np.ndarray
    root: np.ndarray
    dy: np.ndarray
    merges: dict

    def __len__(self) -> int:
        return len(self.size)

    def offsets(self, merged: np.ndarray) -> np.ndarray:
        """The original blocks' offsets, given the merged blocks' (each a multiple of its
        ``align``): overlap-free and aligned whenever the merged blocks' packing is."""
        return np.asarray(merged, np.int64)[self.root] + self.dy


def dissect(size: np.ndarray, start: np.ndarray, end: np.ndarray,
            align: np.ndarray) -> Dissection:
    """Merge the blocks (positive sizes, lifetimes ``[start, end)``, alignments) that form
    chains, stacks and pinwheels, until no pattern is left (module docstring)."""
    return _Merger(size, start, end, align).run()


class _Merger:
    """Blocks as they merge: per node, its size, lifetime, alignment and parts (``None`` for an
    original block, else ``(part, dy)`` pairs); the live nodes by start and by end."""

    def __init__(self, size: np.ndarray, start: np.ndarray, end: np.ndarray,
                 align: np.ndarray) -> None:
        self.n = len(size)
        self.S = [int(v) for v in size]
        self.A = [int(v) for v in start]
        self.B = [int(v) for v in end]
        self.AL = [max(1, int(v)) for v in align]
        self.parts: list[list[tuple[int, int]] | None] = [None] * self.n
        self.ends_at: dict[int, set[int]] = defaultdict(set)
        self.starts_at: dict[int, set[int]] = defaultdict(set)
        for i in range(self.n):
            self.ends_at[self.B[i]].add(i)
            self.starts_at[self.A[i]].add(i)
        self.merges: dict[str, int] = defaultdict(int)
        # Candidates by moment, until a merge changes the blocks ending or starting there.
        self.ending_cache: dict[int, list] = {}
        self.work = 0  # blocks looked at, to bound the time merging takes
        self.starting_cache: dict[int, list] = {}
        self.dirty: set[int] = set()
        self.relaxed = False
        self.ambiguous: list[tuple[int, int]] = []

    # -- nodes --------------------------------------------------------------------------------

    def _add(self, size: int, a: int, b: int, parts: list[tuple[int, int]]) -> int:
        for p, _dy in parts:
            self.ends_at[self.B[p]].discard(p)
            self.starts_at[self.A[p]].discard(p)
            self.dirty.update((self.A[p], self.B[p]))
            self.ending_cache.pop(self.B[p], None)
            self.starting_cache.pop(self.A[p], None)
        self.ending_cache.pop(b, None)
        self.starting_cache.pop(a, None)
        k = len(self.S)
        self.S.append(size)
        self.A.append(a)
        self.B.append(b)
        self.AL.append(math.lcm(*(self.AL[p] for p, _dy in parts)))
        self.parts.append(parts)
        self.ends_at[b].add(k)
        self.starts_at[a].add(k)
        self.dirty.update((a, b))
        return k

    def _stacked(self, members: tuple[int, ...]) -> list[tuple[int, int]] | None:
        """The layout of ``members`` (one lifetime) stacked, most aligned at the bottom, or
        None when some member's offset in it would break its alignment."""
        order = sorted(members, key=lambda i: (-self.AL[i], i))
        layout, y = [], 0
        for i in order:
            if y % self.AL[i]:
                return None
            layout.append((i, y))
            y += self.S[i]
        return layout

    def _node(self, members: tuple[int, ...]) -> int:
        """One node for a candidate: its block, or its members stacked."""
        if len(members) == 1:
            return members[0]
        self.merges["stack"] += 1
        i = members[0]
        return self._add(sum(self.S[m] for m in members), self.A[i], self.B[i],
                         self._stacked(members))

    def _fits(self, layout: list[tuple[int, int]]) -> bool:
        return all(dy % self.AL[p] == 0 for p, dy in layout)

    # -- candidates ---------------------------------------------------------------------------

    def _candidates(self, nodes: set[int], other: list[int]) -> list[tuple[int, int, tuple]]:
        """``(bytes, other end, members)`` for each way to stack live ``nodes`` that share
        both ends (``other``: their other end), one per multiset of (size, alignment):
        interchangeable blocks make one candidate, not several."""
        self.work += len(nodes)
        groups: dict[int, list[int]] = defaultdict(list)
        for i in nodes:
            groups[other[i]].append(i)
        out = []
        for o, group in groups.items():
            group.sort(key=lambda i: (self.S[i], self.AL[i], i))
            if len(group) > SUBSETS_UP_TO:
                subsets = [(i,) for i in group] + [tuple(group)]
            else:
                subsets = [sub for r in range(1, len(group) + 1)
                           for sub in itertools.combinations(group, r)]
            seen = set()
            for sub in subsets:
                key = tuple((self.S[i], self.AL[i]) for i in sub)
                if key in seen or (len(sub) > 1 and self._stacked(sub) is None):
                    continue
                seen.add(key)
                out.append((sum(self.S[i] for i in sub), o, sub))
        return out

    def _ending(self, t: int) -> list[tuple[int, int, tuple]]:
        if t not in self.ending_cache:
            self.ending_cache[t] = self._candidates(self.ends_at.get(t, set()), self.A)
        return self.ending_cache[t]

    def _starting(self, t: int) -> list[tuple[int, int, tuple]]:
        if t not in self.starting_cache:
            self.starting_cache[t] = self._candidates(self.starts_at.get(t, set()), self.B)
        return self.starting_cache[t]

    # -- patterns -----------------------------------------------------------------------------

    def _chain(self, t: int) -> bool:
        """Merge one chain at moment ``t``: a size that exactly one candidate ending at ``t``
        and exactly one starting there have."""
        left: dict[int, list] = defaultdict(list)
        right: dict[int, list] = defaultdict(list)
        for c in self._ending(t):
            left[c[0]].append(c)
        for c in self._starting(t):
            right[c[0]].append(c)
        for z in sorted(left.keys() & right.keys(), reverse=True):
            if len(left[z]) == 1 and len(right[z]) == 1:
                (_, a, lm), = left[z]
                (_, b, rm), = right[z]
                if not self.relaxed and self._alternative(t, lm + rm, z):
                    self.ambiguous.append((z, t))
                    continue
                self.merges["chain"] += 1
                self._add(z, a, b, [(self._node(lm), 0), (self._node(rm), 0)])
                return True
        return False

    def _alternative(self, t: int, members: tuple[int, ...], z: int) -> bool:
        """Whether a chain of ``z`` bytes at moment ``t`` (``members``: both sides) has an
        alternative: the other blocks ending and starting at ``t`` (but the members' twins:
        same size, lifetime and alignment) could free and fill holes so that the left side's
        bytes are filled, or the right side's freed, by others: ``z + e = s`` or ``z + s = e``
        for subset sums ``e`` of the others ending and ``s`` of those starting (sums as bit
        sets). Past :data:`SUMS_UP_TO` blocks at ``t``, assumed so."""
        ending, starting = self.ends_at.get(t, ()), self.starts_at.get(t, ())
        if len(ending) + len(starting) > SUMS_UP_TO:
            return True
        twins = {(self.S[i], self.A[i], self.B[i], self.AL[i]) for i in members}

        def sums(nodes) -> int:
            bits = 1
            for i in nodes:
                if (self.S[i], self.A[i], self.B[i], self.AL[i]) not in twins:
                    bits |= bits << self.S[i]
            return bits

        if sum(self.S[i] for i in ending) + sum(self.S[i] for i in starting) <= BITS_UP_TO:
            e, s = sums(ending), sums(starting)
            return bool((e << z) & s or (s << z) & e)
        # Large sizes: the differences s - e as a set, while it stays small.
        diffs = {0}
        for sign, nodes in ((-1, ending), (1, starting)):
            for i in nodes:
                if (self.S[i], self.A[i], self.B[i], self.AL[i]) not in twins:
                    diffs |= {d + sign * self.S[i] for d in diffs}
                    if len(diffs) > DIFFERENCES_UP_TO:
                        return True
        return z in diffs or -z in diffs

    def _pinwheel(self, x1: int) -> bool:
        """Merge one pinwheel whose centre starts at ``x1`` (module docstring)."""
        starting = self._starting(x1)
        if len(starting) < 2:
            return False
        ending = self._ending(x1)
        if not ending:
            return False
        q_by_size: dict[int, list] = defaultdict(list)
        for q in ending:
            q_by_size[q[0]].append(q)
        for e, x2, cm in starting:
            # S: starts with C and ends later, Q = C + S.
            pairs = [(q, s) for s in starting if s[1] > x2
                     for q in q_by_size.get(s[0] + e, ())]
            if not pairs:
                continue
            t_by_size: dict[int, list] = defaultdict(list)
            for t in self._starting(x2):
                t_by_size[t[0] - e].append(t)
            if not t_by_size:
                continue
            ending2 = self._ending(x2)
            for q, s in pairs:
                for p in ending2:
                    if p[1] != q[1] or set(p[2]) & set(cm):
                        continue
                    for t in t_by_size.get(p[0], ()):
                        if t[1] == s[1] and self._pinwheel_merge(p, q, (e, x2, cm), s, t):
                            return True
        return False

    def _pinwheel_merge(self, p: tuple, q: tuple, c: tuple, s: tuple, t: tuple) -> bool:
        a, d, e = p[0], q[0], c[0]
        height = a + d
        # P at the bottom, Q on it; C on P, S on C; T at the bottom after P; or upside down.
        up = [0, a, a, a + e, 0]
        sizes = [a, d, e, s[0], t[0]]
        for dys in (up, [height - y - z for y, z in zip(up, sizes, strict=True)]):
            aligns = [self._align_of(m[2]) for m in (p, q, c, s, t)]
            if all(dy % al == 0 for dy, al in zip(dys, aligns, strict=True)):
                nodes = [self._node(m[2]) for m in (p, q, c, s, t)]
                self.merges["pinwheel"] += 1
                self._add(height, p[1], t[1], list(zip(nodes, dys, strict=True)))
                return True
        return False

    def _align_of(self, members: tuple[int, ...]) -> int:
        return math.lcm(*(self.AL[i] for i in members))

    # -- driver -------------------------------------------------------------------------------

    def run(self) -> Dissection:
        moments = set(self.ends_at) | set(self.starts_at)
        heap = sorted(moments)
        queued = set(heap)
        deferred: set[int] = set()
        wall = WALL_FIRST
        most = WORK_PER_BLOCK * self.n
        while self.work <= most:
            if not heap:
                if deferred:
                    wall *= 2
                    heap, deferred = sorted(deferred), set()
                elif self.ambiguous:
                    # Stuck: one chain whose size other blocks there add up to as well, the
                    # largest (the least likely by chance), then unique ones again.
                    z, t = max(self.ambiguous)
                    heap = sorted({m for _z, m in self.ambiguous})
                    self.ambiguous.clear()
                    self.relaxed, self.dirty = True, set()
                    self._chain(t)
                    self.relaxed = False
                    heap = sorted(set(heap) | self._touched())
                else:
                    break
                queued = set(heap)
                continue
            t = heapq.heappop(heap)
            queued.discard(t)
            if len(self.ends_at.get(t, ())) * len(self.starts_at.get(t, ())) > wall:
                deferred.add(t)
                continue
            self.dirty.clear()
            while self._chain(t) or self._pinwheel(t):
                pass
            for m in self._touched():
                if m not in queued:
                    deferred.discard(m)
                    heapq.heappush(heap, m)
                    queued.add(m)
        self._stack_full_width()
        return self._flatten()

    def _touched(self) -> set[int]:
        """The moments whose candidates the latest merges changed, and the starts of the
        centres ending there (pinwheels are looked for at their centre's start)."""
        return self.dirty | {self.A[i] for m in self.dirty for i in self.ends_at.get(m, ())}

    def _stack_full_width(self) -> None:
        """Blocks spanning every moment stack in any order: one block."""
        live = [i for t in self.starts_at for i in self.starts_at[t]]
        if len(live) < 2:
            return
        t0, t1 = min(self.A[i] for i in live), max(self.B[i] for i in live)
        full = tuple(sorted(i for i in live if self.A[i] == t0 and self.B[i] == t1))
        if len(full) > 1 and self._stacked(full) is not None:
            self._node(full)

    def _flatten(self) -> Dissection:
        roots = sorted(i for t in self.starts_at for i in self.starts_at[t])
        root = np.full(self.n, -1, np.int64)
        dy = np.zeros(self.n, np.int64)
        for r, k in enumerate(roots):
            todo = [(k, 0)]
            while todo:
                node, y = todo.pop()
                parts = self.parts[node]
                if parts is None:
                    root[node], dy[node] = r, y
                else:
                    todo.extend((p, y + d) for p, d in parts)
        pick = np.asarray(roots, np.int64)
        arr = (lambda v: np.asarray(v, np.int64)[pick]) if len(roots) else \
            (lambda v: np.zeros(0, np.int64))
        return Dissection(arr(self.S), arr(self.A), arr(self.B), arr(self.AL), root, dy,
                          dict(self.merges))
