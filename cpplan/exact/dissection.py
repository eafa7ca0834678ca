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
stacks of them. Perfect packings of 10000 buffers reduce to one block in under half a second,
and the tiling search packs what is left at once.

Every merge places its parts inside its rectangle without overlap, so a packing of the merged
blocks gives one of the original blocks at the same height (:meth:`Dissection.offsets`).
Alignment: where the parts' alignments differ, which offsets of the merged block keep every part
aligned depends on the layout (the order of a stack, which way up a pinwheel is), so a merged
block keeps a *variant* per class of offsets (``(modulus, residue)``, by the Chinese remainder
theorem) that some layout allows, and the search may place it in any of them.

The converse can fail: blocks that match by chance (sizes coincide) merged where no tiling puts
them side by side leave merged blocks that do not fit. So the reduction is a heuristic: a packing
of the merged blocks is a packing, their "does not fit" proves nothing. Chance matches are
rarer where fewer blocks start and end: a size is matched only where one candidate on each side
has it, and held back where other blocks there add up to it as well; moments with few events go
first (their number times each other at most :data:`WALL_FIRST`, then twice that, and so on),
which lets most cuts close from the bottom up before the crowded moments (a long cut across the
strip) are looked at. Late merges being the likelier chance matches, :func:`dissections` also
gives the blocks after a share of the merges.

The patterns are cpplan's own reading of how perfect packings are built (a strip cut by straight
and pinwheel cuts, as in :mod:`cpplan.perfect`); the pinwheel is the smallest rectangle
dissection that is not a guillotine cut.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import time
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

__all__ = ["Dissection", "dissect", "dissections"]

# A group of blocks sharing a lifetime offers every subset of its members as a stack up to this
# many members; larger groups offer single members and the whole group.
SUBSETS_UP_TO = 8
# Layout variants (classes of offsets) a merged block keeps at most: with mixed alignments
# the order of stacked blocks, or a pinwheel's way up, decides which offsets keep every part
# aligned, and a class the tiling needs may be any of them. (Aligned perfect packings of 2000
# buffers: with 4 or 16 variants a class the cutting used is dropped and the merged blocks do
# not fit; with 64, 7 of 8 fit at once.)
VARIANTS = 64
ORDER_STEPS = 4096  # steps of the search for orders of stacked blocks that keep them aligned
# Moments whose blocks ending times blocks starting are at most this are matched first (see
# the module docstring); the limit doubles whenever nothing below it is left to merge.
WALL_FIRST = 4
SUMS_UP_TO = 24
BITS_UP_TO = 1 << 22  # bytes at a moment up to which its subset sums are a bit set
DIFFERENCES_UP_TO = 1 << 14  # beyond, a size is assumed to have an alternative
# Candidates starting at a pinwheel's centre beyond which the scan for its S and Q runs in
# numpy (same pairs, same order): grid-like dissections have hundreds there (stacks of blocks
# sharing a lifetime), and the scan, quadratic in them, took 25 s of 26 on a mosaic of 2000
# blocks (cpplan.perfect.mosaic_packing).
VECTOR_FROM = 48
# Blocks looked at (per block) after which merging stops where it is (still sound): perfect
# packings take 3 to 4; idealloc's Y_1 (62185 buffers, not tight) would take 40, 5 s.
WORK_PER_BLOCK = 10


@dataclass(frozen=True)
class Dissection:
    """Merged blocks (``size``, ``start``, ``end``: one entry per merged block) and where each
    original block lies in its merged block.

    A merged block may sit at offsets of several *classes* (``classes[r]``: ``(modulus,
    residue)`` pairs, one per layout of its parts that keeps every part aligned); an original
    block's only class is ``(alignment, 0)``. ``align[r]`` is the largest modulus. Block ``i``
    lies in merged block ``root[i]``, ``dy[i, v]`` bytes above its offset when that offset is
    in class ``v``. ``merges`` counts the patterns merged, by kind."""

    size: np.ndarray
    start: np.ndarray
    end: np.ndarray
    align: np.ndarray
    classes: tuple[tuple[tuple[int, int], ...], ...]
    root: np.ndarray
    dy: np.ndarray
    merges: dict

    def __len__(self) -> int:
        return len(self.size)

    def offsets(self, merged: np.ndarray) -> np.ndarray:
        """The original blocks' offsets, given the merged blocks' (each in one of its classes):
        overlap-free and aligned whenever the merged blocks' packing is."""
        merged = np.asarray(merged, np.int64)
        variant = np.zeros(len(self.size), np.int64)
        for r, (y, classes) in enumerate(zip(merged.tolist(), self.classes, strict=True)):
            variant[r] = next((v for v, (m, res) in enumerate(classes) if y % m == res), -1)
            if variant[r] < 0:
                raise ValueError(f"merged block {r} at {y}: in none of its classes {classes}")
        return merged[self.root] + self.dy[np.arange(len(self.root)), variant[self.root]]


def dissect(size: np.ndarray, start: np.ndarray, end: np.ndarray,
            align: np.ndarray) -> Dissection:
    """Merge the blocks (positive sizes, lifetimes ``[start, end)``, alignments) that form
    chains, stacks and pinwheels, until no pattern is left (module docstring)."""
    return dissections(size, start, end, align)[0]


def dissections(size: np.ndarray, start: np.ndarray, end: np.ndarray, align: np.ndarray,
                shares: tuple[float, ...] = (1.0,), *,
                deadline: float = float("inf")) -> list[Dissection]:
    """:func:`dissect`, and the blocks as they were after the first ``share`` of its merges,
    one per share: merges made late (at crowded moments, or held back at first) are the likelier
    to be chance matches, and any earlier state is a dissection too. Merging stops where it is
    at ``deadline`` (``time.perf_counter()``; the blocks merged so far are a dissection too)."""
    merger = _Merger(size, start, end, align)
    merger.run(deadline)
    merged = len(merger.S) - merger.n
    return [merger.flatten(merger.n + round(share * merged)) for share in shares]


def _crt(classes: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The class ``(modulus, residue)`` of the numbers in every one of ``classes``, or None
    when there are none (the Chinese remainder theorem, moduli not necessarily coprime)."""
    m, r = 1, 0
    for m2, r2 in classes:
        g = math.gcd(m, m2)
        if (r2 - r) % g:
            return None
        lcm = m // g * m2
        if m2 // g > 1:
            r += m * ((r2 - r) // g * pow(m // g, -1, m2 // g) % (m2 // g))
        m, r = lcm, r % lcm
    return m, r


def _s_of_c(starting: list[tuple], q_by_size: dict[int, list]) -> dict[int, list[int]]:
    """For the candidates ``starting`` at a moment (``(bytes, end, members)``), which of them
    may be a pinwheel's S for each one as its C: ``c -> [s, ...]`` (indices, ascending) where
    ``s`` ends after ``c`` and some Q (``q_by_size``: candidates ending there, by size) has
    the bytes of both. In numpy, rows of C at a time."""
    size = np.fromiter((c[0] for c in starting), np.int64, len(starting))
    end = np.fromiter((c[1] for c in starting), np.int64, len(starting))
    q_sizes = np.fromiter(sorted(q_by_size), np.int64, len(q_by_size))
    out: dict[int, list[int]] = {}
    rows = max(1, (1 << 20) // len(starting))
    for c0 in range(0, len(starting), rows):
        want = size[None, :] + size[c0:c0 + rows, None]
        at = np.minimum(np.searchsorted(q_sizes, want), len(q_sizes) - 1)
        cs, ss = np.nonzero((q_sizes[at] == want) & (end[None, :] > end[c0:c0 + rows, None]))
        for c, s in zip((cs + c0).tolist(), ss.tolist(), strict=True):
            out.setdefault(c, []).append(s)
    return out


class _Merger:
    """Blocks as they merge: per node, its size, lifetime and layout variants (``(modulus,
    residue, parts)``, ``parts`` ``None`` for an original block, else ``(part, dy, part's
    variant)`` triples); the live nodes by start and by end."""

    def __init__(self, size: np.ndarray, start: np.ndarray, end: np.ndarray,
                 align: np.ndarray) -> None:
        self.n = len(size)
        self.S = [int(v) for v in size]
        self.A = [int(v) for v in start]
        self.B = [int(v) for v in end]
        self.V: list[list[tuple]] = [[(max(1, int(v)), 0, None)] for v in align]
        # each node's classes (of V)
        self.C: list[tuple[tuple[int, int], ...]] = [((m, r),) for [(m, r, _parts)] in self.V]
        self.ends_at: dict[int, set[int]] = defaultdict(set)
        self.starts_at: dict[int, set[int]] = defaultdict(set)
        for i in range(self.n):
            self.ends_at[self.B[i]].add(i)
            self.starts_at[self.A[i]].add(i)
        self.merges: dict[str, int] = defaultdict(int)
        # Candidates by moment, until a merge changes the blocks ending or starting there.
        self.ending_cache: dict[int, list] = {}
        self.starting_cache: dict[int, list] = {}
        self.stacks: dict[tuple[int, ...], list[tuple]] = {}  # members -> layout variants
        self.work = 0  # blocks looked at, to bound the time merging takes
        self.dirty: set[int] = set()
        self.relaxed = False
        self.ambiguous: list[tuple[int, int]] = []
        self.refused: set[tuple[int, int]] = set()
        self.parent: dict[int, int] = {}  # node -> the node it was merged into
        # Moments whose blocks starting or ending there changed, counted (each merge moves
        # them on); a pinwheel looked for in vain at x1 stays so while the moments it looked
        # at are as they were: x1 -> ((moment, its version then), ...).
        self.version: dict[int, int] = defaultdict(int)
        self.no_pinwheel: dict[int, tuple[tuple[int, int], ...]] = {}
        self.no_chain: dict[int, tuple[int, list[tuple[int, int]]]] = {}  # likewise, at t

    # -- nodes --------------------------------------------------------------------------------

    def _add(self, size: int, a: int, b: int, parts: list[int], variants: list[tuple]) -> int:
        for p in parts:
            self.ends_at[self.B[p]].discard(p)
            self.starts_at[self.A[p]].discard(p)
            self.dirty.update((self.A[p], self.B[p]))
            self.ending_cache.pop(self.B[p], None)
            self.starting_cache.pop(self.A[p], None)
            self.version[self.A[p]] += 1
            self.version[self.B[p]] += 1
        self.ending_cache.pop(b, None)
        self.starting_cache.pop(a, None)
        self.version[a] += 1
        self.version[b] += 1
        k = len(self.S)
        for p in parts:
            self.parent[p] = k
        self.S.append(size)
        self.A.append(a)
        self.B.append(b)
        self.V.append(variants)
        self.C.append(tuple((m, r) for m, r, _parts in variants))
        self.ends_at[b].add(k)
        self.starts_at[a].add(k)
        self.dirty.update((a, b))
        return k

    def _classes(self, i: int) -> tuple[tuple[int, int], ...]:
        return self.C[i]

    def _layouts(self, parts: list[tuple[list[tuple], int]]) -> list[tuple]:
        """Variants ``(modulus, residue, [(part index, dy, part's variant)])`` of a layout
        whose parts (``(their variants, dy)``) keep their classes: one per class of offsets
        that allows it (every class, as long as there are at most :data:`VARIANTS`), found
        part by part, the classes reachable so far as the state."""
        if all(len(v) == 1 and v[0][0] == 1 for v, _dy in parts):  # (no alignments)
            return [(1, 0, [(k, dy, 0) for k, (_v, dy) in enumerate(parts)])]
        states: dict[tuple[int, int], list] = {(1, 0): []}
        for k, (variants, dy) in enumerate(parts):
            reached: dict[tuple[int, int], list] = {}
            for cls, layout in states.items():
                for j, (m, r, _parts) in enumerate(variants):
                    both = _crt([cls, (m, (r - dy) % m)])
                    if both is not None and both not in reached and len(reached) < VARIANTS:
                        reached[both] = [*layout, (k, dy, j)]
            states = reached
        return [(m, r, layout) for (m, r), layout in states.items()]

    def _stacked(self, members: tuple[int, ...]) -> list[tuple]:
        """The layout variants of ``members`` (one lifetime) stacked, ``parts`` indexing
        ``members``; empty when no order keeps them aligned. Orders are searched bottom up,
        each member in each of its classes where the offsets so far allow it (interchangeable
        members tried once), for at most :data:`ORDER_STEPS` steps."""
        if members in self.stacks:
            return self.stacks[members]
        ms = {m for i in members for m, _r, _p in self.V[i]}
        if len(ms) == 1 and all(len(self.V[i]) == 1 and self.V[i][0][1] == 0
                                and self.S[i] % next(iter(ms)) == 0 for i in members):
            # One alignment dividing every size: every order alike.
            m = next(iter(ms))
            y, layout = 0, []
            for k, i in enumerate(members):
                layout.append((k, y, 0))
                y += self.S[i]
            self.stacks[members] = [(m, 0, layout)]
            return self.stacks[members]
        out: dict[tuple[int, int], list] = {}
        steps = [ORDER_STEPS]
        seen: set[tuple[frozenset, tuple[int, int]]] = set()  # (members placed, class)

        def extend(layout: list, used: set[int], y: int, cls: tuple[int, int]) -> None:
            if len(layout) == len(members):
                out.setdefault(cls, list(layout))
                return
            state = (frozenset(used), cls)
            if state in seen:
                return
            seen.add(state)
            tried = set()
            for k, i in enumerate(members):
                key = (self.S[i], self._classes(i))
                if k in used or key in tried:
                    continue
                tried.add(key)
                for j, (m, r, _parts) in enumerate(self.V[i]):
                    if len(out) >= VARIANTS or steps[0] <= 0:
                        return
                    steps[0] -= 1
                    both = _crt([cls, (m, (r - y) % m)])
                    if both is not None:
                        layout.append((k, y, j))
                        used.add(k)
                        extend(layout, used, y + self.S[i], both)
                        used.discard(k)
                        layout.pop()

        extend([], set(), 0, (1, 0))
        self.stacks[members] = [(m, r, layout) for (m, r), layout in out.items()]
        return self.stacks[members]

    def _node(self, members: tuple[int, ...]) -> int:
        """One node for a candidate: its block, or its members stacked."""
        if len(members) == 1:
            return members[0]
        self.merges["stack"] += 1
        i = members[0]
        variants = [(m, r, [(members[k], dy, j) for k, dy, j in layout])
                    for m, r, layout in self._stacked(members)]
        return self._add(sum(self.S[m] for m in members), self.A[i], self.B[i], list(members),
                         variants)

    def _candidate_variants(self, members: tuple[int, ...]) -> list[tuple]:
        return self.V[members[0]] if len(members) == 1 else self._stacked(members)

    def _merge(self, kind: str, size: int, a: int, b: int, cands: list[tuple],
               dys: list[list[int]]) -> bool:
        """Merge candidates ``cands`` (their members) laid out at ``dys`` (one list per
        mirror image tried), when some variant keeps every part aligned."""
        variants: dict[tuple[int, int], list] = {}
        for layout_dys in dys:
            parts = [(self._candidate_variants(c), dy)
                     for c, dy in zip(cands, layout_dys, strict=True)]
            for m, r, layout in self._layouts(parts):
                if (m, r) not in variants and len(variants) < VARIANTS:
                    variants[(m, r)] = layout
        if not variants:
            return False
        nodes = [self._node(c) for c in cands]
        self.merges[kind] += 1
        self._add(size, a, b, nodes, [(m, r, [(nodes[k], dy, j) for k, dy, j in layout])
                                      for (m, r), layout in variants.items()])
        return True

    # -- candidates ---------------------------------------------------------------------------

    def _candidates(self, nodes: set[int], other: list[int]) -> list[tuple[int, int, tuple]]:
        """``(bytes, other end, members)`` for each way to stack live ``nodes`` that share
        both ends (``other``: their other end), one per multiset of (size, classes):
        interchangeable blocks make one candidate, not several."""
        self.work += len(nodes)
        groups: dict[int, list[int]] = defaultdict(list)
        for i in nodes:
            groups[other[i]].append(i)
        out = []
        for o, group in groups.items():
            group.sort(key=lambda i: (self.S[i], self._classes(i), i))
            if len(group) > SUBSETS_UP_TO:
                subsets = [(i,) for i in group] + [tuple(group)]
            else:
                subsets = [sub for r in range(1, len(group) + 1)
                           for sub in itertools.combinations(group, r)]
            seen = set()
            for sub in subsets:
                key = tuple((self.S[i], self._classes(i)) for i in sub)
                if key in seen or (len(sub) > 1 and not self._stacked(sub)):
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
        and exactly one starting there have. A search in vain is not repeated while the
        blocks at ``t`` stay as they were (it only notes its ambiguous sizes again)."""
        if self.relaxed:
            return self._chain_at(t, [])
        seen = self.no_chain.get(t)
        if seen is not None and seen[0] == self.version[t]:
            self.ambiguous.extend(zt for zt in seen[1] if zt not in self.refused)
            return False
        ambiguous: list[tuple[int, int]] = []
        if self._chain_at(t, ambiguous):
            return True
        self.no_chain[t] = (self.version[t], ambiguous)
        return False

    def _chain_at(self, t: int, ambiguous: list[tuple[int, int]]) -> bool:
        """:meth:`_chain`'s search; the ambiguous sizes it notes go into ``ambiguous`` too."""
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
                    ambiguous.append((z, t))
                    if (z, t) not in self.refused:
                        self.ambiguous.append((z, t))
                    continue
                if self._merge("chain", z, a, b, [lm, rm], [[0, 0]]):
                    return True
        return False

    def _alternative(self, t: int, members: tuple[int, ...], z: int) -> bool:
        """Whether a chain of ``z`` bytes at moment ``t`` (``members``: both sides) has an
        alternative: the other blocks ending and starting at ``t`` (but the members' twins:
        same size, lifetime and classes) could free and fill holes so that the left side's
        bytes are filled, or the right side's freed, by others: ``z + e = s`` or ``z + s = e``
        for subset sums ``e`` of the others ending and ``s`` of those starting (sums as bit
        sets). Past :data:`SUMS_UP_TO` blocks at ``t``, assumed so."""
        ending, starting = self.ends_at.get(t, ()), self.starts_at.get(t, ())
        if len(ending) + len(starting) > SUMS_UP_TO:
            return True
        twins = {(self.S[i], self.A[i], self.B[i], self._classes(i)) for i in members}
        others = [[self.S[i] for i in nodes
                   if (self.S[i], self.A[i], self.B[i], self._classes(i)) not in twins]
                  for nodes in (ending, starting)]
        if sum(map(sum, others)) <= BITS_UP_TO:
            e, s = (functools.reduce(lambda bits, z: bits | bits << z, sizes, 1)
                    for sizes in others)
            return bool((e << z) & s or (s << z) & e)
        # Large sizes: the differences s - e as a set, while it stays small.
        diffs = {0}
        for sign, sizes in zip((-1, 1), others, strict=True):
            for size in sizes:
                diffs |= {d + sign * size for d in diffs}
                if len(diffs) > DIFFERENCES_UP_TO:
                    return True
        return z in diffs or -z in diffs

    def _pinwheel(self, x1: int) -> bool:
        """Merge one pinwheel whose centre starts at ``x1`` (module docstring). A search in
        vain is not repeated while the moments it looked at stay as they were (the blocks
        merge at other moments many times in between)."""
        seen = self.no_pinwheel.get(x1)
        if seen is not None and all(self.version[m] == v for m, v in seen):
            return False
        looked = {x1}
        if self._pinwheel_at(x1, looked):
            return True
        self.no_pinwheel[x1] = tuple((m, self.version[m]) for m in looked)
        return False

    def _pinwheel_at(self, x1: int, looked: set[int]) -> bool:
        """:meth:`_pinwheel`'s search; every moment whose blocks it looked at goes into
        ``looked``."""
        starting = self._starting(x1)
        if len(starting) < 2:
            return False
        ending = self._ending(x1)
        if not ending:
            return False
        q_by_size: dict[int, list] = defaultdict(list)
        for q in ending:
            q_by_size[q[0]].append(q)
        # S for each C (by index in ``starting``): starts with it, ends later, and Q = C + S
        # in bytes for some Q. Past VECTOR_FROM candidates, every C's in numpy at once.
        s_of = _s_of_c(starting, q_by_size) if len(starting) > VECTOR_FROM else None
        at_x2: dict[int, tuple[dict, dict]] = {}
        for c, (e, x2, cm) in enumerate(starting):
            if s_of is not None:  # (the same pairs in the same order)
                pairs = [(q, starting[j]) for j in s_of.get(c, ())
                         for q in q_by_size[starting[j][0] + e]]
            else:
                pairs = [(q, s) for s in starting if s[1] > x2
                         for q in q_by_size.get(s[0] + e, ())]
            if not pairs:
                continue
            looked.add(x2)
            if x2 not in at_x2:  # T by size, P by start (each in the candidates' order)
                t_by_size: dict[int, list] = defaultdict(list)
                for t in self._starting(x2):
                    t_by_size[t[0]].append(t)
                p_by_start: dict[int, list] = defaultdict(list)
                if t_by_size:  # (only then are P looked for)
                    for p in self._ending(x2):
                        p_by_start[p[1]].append(p)
                at_x2[x2] = (t_by_size, p_by_start)
            t_by_size, p_by_start = at_x2[x2]
            if not t_by_size:
                continue
            centre = set(cm)
            for q, s in pairs:
                for p in p_by_start.get(q[1], ()):
                    if centre.intersection(p[2]):
                        continue
                    for t in t_by_size.get(p[0] + e, ()):
                        if t[1] == s[1] and self._pinwheel_merge(p, q, (e, x2, cm), s, t):
                            return True
        return False

    def _pinwheel_merge(self, p: tuple, q: tuple, c: tuple, s: tuple, t: tuple) -> bool:
        a, d, e = p[0], q[0], c[0]
        height = a + d
        # P at the bottom, Q on it; C on P, S on C; T at the bottom after P; or upside down.
        up = [0, a, a, a + e, 0]
        sizes = [a, d, e, s[0], t[0]]
        down = [height - y - z for y, z in zip(up, sizes, strict=True)]
        return self._merge("pinwheel", height, p[1], t[1], [m[2] for m in (p, q, c, s, t)],
                           [up, down])

    # -- driver -------------------------------------------------------------------------------

    def run(self, deadline: float = float("inf")) -> None:
        """Merge until no pattern is left (or the work allowed is spent, or ``deadline``)."""
        moments = set(self.ends_at) | set(self.starts_at)
        heap = sorted(moments)
        queued = set(heap)
        deferred: set[int] = set()
        wall = WALL_FIRST
        most = WORK_PER_BLOCK * self.n
        timed = deadline < float("inf")
        while self.work <= most:
            if timed and time.perf_counter() > deadline:
                break
            if not heap:
                if deferred:
                    wall *= 2
                    heap, deferred = sorted(deferred), set()
                elif self.ambiguous:
                    # Stuck: one chain whose size other blocks there add up to as well, the
                    # largest (the least likely by chance), then unique ones again. (One that
                    # cannot be merged, its parts' alignments at odds, is not tried again.)
                    z, t = max(self.ambiguous)
                    heap = sorted({m for _z, m in self.ambiguous})
                    self.ambiguous.clear()
                    self.relaxed, self.dirty = True, set()
                    if not self._chain(t):
                        self.refused.add((z, t))
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
        if len(full) < 2:
            return
        # At the floor (where a tiling puts them) first: the order search may not reach that
        # class among the many a long stack of aligned blocks has.
        floor = self._stacked_from_floor(full)
        variants = self._stacked(full)
        if floor is not None and not any(r == 0 for _m, r, _layout in variants):
            self.stacks[full] = [floor, *variants][:VARIANTS]
        if self.stacks[full]:
            self._node(full)

    def _stacked_from_floor(self, members: tuple[int, ...]) -> tuple | None:
        """A layout variant of ``members`` (one lifetime) stacked from offset 0, every member
        at an offset of one of its classes, or None (searched bottom up, each set of members
        below once, for at most :data:`ORDER_STEPS` steps)."""
        seen: set[frozenset] = set()
        steps = [ORDER_STEPS]

        def extend(layout: list, used: frozenset, y: int) -> list | None:
            if len(layout) == len(members):
                return layout
            if used in seen or steps[0] <= 0:
                return None
            seen.add(used)
            for k, i in enumerate(members):
                if k in used:
                    continue
                for j, (m, r, _parts) in enumerate(self.V[i]):
                    steps[0] -= 1
                    if y % m == r:
                        found = extend([*layout, (k, y, j)], used | {k}, y + self.S[i])
                        if found is not None:
                            return found
            return None

        layout = extend([], frozenset(), 0)
        if layout is None:
            return None
        return (math.lcm(*(self.V[members[k]][j][0] for k, _y, j in layout)), 0, layout)

    def flatten(self, made: int) -> Dissection:
        """The dissection of the nodes made so far, up to node ``made`` (not included)."""
        roots = [k for k in range(made) if self.parent.get(k, made) >= made]
        root = np.full(self.n, -1, np.int64)
        dy = np.zeros((self.n, VARIANTS), np.int64)
        for r, k in enumerate(roots):
            for v in range(len(self.V[k])):
                todo = [(k, 0, v)]
                while todo:
                    node, y, j = todo.pop()
                    parts = self.V[node][j][2]
                    if parts is None:
                        root[node], dy[node, v] = r, y
                    else:
                        todo.extend((p, y + d, pj) for p, d, pj in parts)
        classes = tuple(self._classes(k) for k in roots)
        pick = np.asarray(roots, np.int64)

        def of(values: list[int]) -> np.ndarray:
            return np.asarray(values, np.int64)[pick] if len(roots) else np.zeros(0, np.int64)

        align = np.asarray([max(m for m, _r in c) for c in classes], np.int64)
        return Dissection(of(self.S), of(self.A), of(self.B), align, classes, root, dy,
                          dict(self.merges))
