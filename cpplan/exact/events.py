"""Holes refilled at each event: what a packing with no slack at any moment must do.

Where the load of some blocks equals the height at every moment of their span (a perfect
packing at its optimum), every packing of them within the height is a *tiling*: at each moment
the blocks alive cover every byte, once. Then at each *event* ``t`` (a moment where blocks end
and others start) the blocks that end there free some maximal runs of bytes, *holes*, and the
blocks that start there fill them exactly, since every other block alive goes on. So each hole
is a pair ``(A, B)``: enders ``A`` that tile it and starters ``B`` that tile it, with equal sums
of sizes. Which pairs are holes is unknown, but the candidates are few where sizes vary: the
pairs of subsets of the enders and of the starters with equal sums.

:func:`add_holes` adds this to the CP-SAT packing model (:func:`cpplan.exact.model.build_model`):
per event, a literal per candidate pair, every ender and starter in exactly one chosen pair, and
a chosen pair's blocks within an interval of its size. With the model's own no-overlap at every
moment this is still the packing problem (every tiling chooses its holes), but the search now
decides the holes of one event at a time, and a packing follows from the holes as much as the
holes from the offsets: CP-SAT rebuilds in a second or less tilings of hundreds of blocks that
grow interlocking on a grid or that an allocator made by reusing freed bytes, where the
branch-and-bound searches and the skyline of :mod:`.tiling` thrash
(``benchmarks/versus.py --families mosaic realloc``).

An event with more than :data:`SIDE_MAX` enders or starters has too many subsets to pair: it
gets the pairs of at most :data:`BIG_MEMBERS` blocks a side that do not split into two pairs
of equal sums, and the whole event (a grid of 35 rows ends and starts 35 rectangles at once,
and its holes are small). One with more than :data:`PAIRS_ENUMERATED` pairs (sizes on a coarse
grain, alike by the thousand) gets those of at most :data:`FEWER_MEMBERS` blocks a side in the
same way, and none where even those are too many (the model stays exact, only weaker
there). One with more than :data:`CANDIDATES_MAX` candidate pairs keeps the ones with the
fewest blocks. Either cut makes the model a restriction: a
packing it finds is a packing, but its "none" proves nothing (:attr:`Holes.complete`).

The inference is cpplan's own, in the spirit of the *walls* of :mod:`.tiling` (an event whose
sums no proper subsets match is one hole), here with every way to split an event.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from ..blocks import Blocks
from ..load import load_profile
from .dfs import plain, single_pool
from .model import PackingModel

__all__ = ["Hole", "Holes", "zero_slack", "holes_of", "tiling_holes", "add_holes", "subsets",
           "SIDE_MAX", "SUBSETS_MAX", "SIDE_HARD", "CANDIDATES_MAX", "PAIRS_ENUMERATED"]

# Enders or starters at one event up to which every subset of a side is enumerated (2 ** 16
# sums at most, on arrays); beyond, the subsets of at most a few members (:data:`SUBSETS_MAX`
# of them) and the whole side, and the candidates are cut (a hole with more members is missed).
SIDE_MAX = 16
SUBSETS_MAX = 1 << 16
BIG_MEMBERS = 5  # (and at most so many a side: the holes of tilings are mostly smaller)
BIG_CANDIDATES = 1_000  # candidates kept at such an event, the fewest blocks first
# A side of at most so many blocks has every subset paired with the subsets of at most
# LOPSIDED_FEW blocks of the other (a run of many freed for one or two), 2 ** 20 sums at most.
LOPSIDED_SIDE = 20
LOPSIDED_FEW = 2
# Where an event's pairs of equal sums are beyond PAIRS_ENUMERATED (sizes on a coarse grain,
# alike by the thousand), the pairs of at most so many blocks a side, as for a side of more
# than SIDE_MAX blocks, the fewest first that stay within it; the candidates are then cut.
FEWER_MEMBERS = (BIG_MEMBERS, 3, 2)
# Blocks a side beyond which an event gets no candidates (subsets are bit masks in 64 bits).
SIDE_HARD = 62
# Pairs with equal sums at one event beyond which it gets no candidates (enumerating them would
# take longer than the search they guide).
PAIRS_ENUMERATED = 20_000
# Candidate pairs kept per event (the fewest blocks first); beyond, the model is a restriction.
# Grids of shared row heights make many equal sums (a rectangle of grown grid cells ends where
# others of the same rows start), and every literal slows the search.
CANDIDATES_MAX = 300


@dataclass(frozen=True)
class Hole:
    """A candidate hole at one event: enders and starters (positions in the model's blocks)
    whose sizes add up alike, ``size``."""

    enders: tuple[int, ...]
    starters: tuple[int, ...]
    size: int


@dataclass(frozen=True)
class Holes:
    """The candidate holes of every event of some blocks, whose sizes (scaled, by position)
    are ``size``. ``complete``: no event's candidates were cut at :data:`CANDIDATES_MAX` (so
    the constraints hold for every tiling). ``skipped`` events got no candidates at all, so
    ``events`` holds every event inside the span only where it is 0. ``whole`` says, per
    event, whether its candidates are every pair of equal sums (so that every tiling's holes
    there are among them); empty where not known."""

    events: tuple[tuple[Hole, ...], ...]
    complete: bool
    size: tuple[int, ...]
    skipped: int = 0  # events with no candidates (too many blocks or equal sums)
    whole: tuple[bool, ...] = ()

    def whole_at(self, k: int) -> bool:
        """Whether event ``k``'s candidates are every pair of equal sums there."""
        return k < len(self.whole) and self.whole[k]

    def cut(self, most: int) -> Holes:
        """The same candidates, at most ``most`` an event: the first ones (the fewest blocks
        first) and the whole event's pair, as :func:`holes_of` with ``most`` lists them."""
        events, complete, wholes = [], self.complete, list(self.whole)
        for k, cands in enumerate(self.events):
            if len(cands) > most:
                if k < len(wholes):
                    wholes[k] = False
                enders = {j for h in cands for j in h.enders}
                starters = {j for h in cands for j in h.starters}
                whole = next(h for h in cands
                             if len(h.enders) == len(enders) and len(h.starters) == len(starters))
                cands = cands[:most] if whole in cands[:most] else cands[:most - 1] + (whole,)
                complete = False
            events.append(cands)
        return Holes(tuple(events), complete, self.size, self.skipped, tuple(wholes))

    def members(self) -> int:
        """The blocks of all candidates, counted once per candidate (what :func:`add_holes`
        makes constraints of)."""
        return sum(len(h.enders) + len(h.starters) for event in self.events for h in event)

    def reversed(self) -> Holes:
        """The same holes with time running backwards: the events last first, each hole's
        starters its enders."""
        return Holes(tuple(tuple(Hole(h.starters, h.enders, h.size) for h in event)
                           for event in self.events[::-1]), self.complete, self.size,
                     self.skipped, self.whole[::-1])


def zero_slack(blocks: Blocks, ids: np.ndarray, height: int) -> int | None:
    """The height (``height``, scaled, or the pool's capacity when lower) at which blocks
    ``ids`` load exactly that much at every moment of their span, so that every packing of
    them within it is a tiling and the holes hold; None where they do not, or where they are
    not all plain (one piece each, no gaps, no fixed offset) in one and the same candidate
    pool."""
    ids = np.asarray(ids, np.int64)
    pool = single_pool(blocks, ids) if len(ids) else None
    if pool is None or (blocks.fixed[ids] >= 0).any():
        return None
    if not plain(blocks, ids).all():
        return None
    cap = int(blocks.pool_capacity[pool])
    height = int(height) if cap < 0 else min(int(height), cap)
    if height <= 0:
        return None  # (nothing to tile)
    mask = np.zeros(len(blocks), bool)
    mask[ids] = True
    load, _live = load_profile(blocks, mask)
    t0, t1 = int(blocks.start[ids].min()), int(blocks.end[ids].max())
    steps = np.diff(blocks.times[t0:t1 + 1])
    return height if bool((load[t0:t1][steps > 0] == height).all()) else None


def subsets(sizes: np.ndarray, members: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-empty subsets of ``sizes`` of at most ``members`` members: bit masks, sums and
    numbers of members."""
    masks, bits = _masks(len(sizes), members)
    return masks, bits @ sizes, bits.sum(axis=1)


@functools.lru_cache(maxsize=64)
def _masks(n: int, members: int) -> tuple[np.ndarray, np.ndarray]:
    """The bit masks of the non-empty subsets of ``n`` items of at most ``members`` members,
    and their bits (a row each); shared, so read-only."""
    if members >= n:
        masks = np.arange(1, 1 << n, dtype=np.int64)
    else:
        masks = np.concatenate([(np.int64(1) << np.array(list(itertools.combinations(
            range(n), k)), np.int64).reshape(-1, k)).sum(axis=1) for k in range(1, members + 1)])
    bits = (masks[:, None] >> np.arange(n, dtype=np.int64)) & 1
    masks.flags.writeable = bits.flags.writeable = False
    return masks, bits


def _members_within(n: int) -> int:
    """The most members a subset of ``n`` sizes may have for :data:`SUBSETS_MAX` subsets."""
    count = 0
    for k in range(1, n + 1):
        count += math.comb(n, k)
        if count > SUBSETS_MAX:
            return k - 1
    return n


def _equal_sums(se: np.ndarray, ss: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Every pair (index into ``se``, index into ``ss``) of equal sums; None beyond
    :data:`PAIRS_ENUMERATED` of them."""
    oe, os_ = np.argsort(se, kind="stable"), np.argsort(ss, kind="stable")
    ke, ks = se[oe], ss[os_]
    common = np.intersect1d(ke, ks)
    lo_e, hi_e = np.searchsorted(ke, common), np.searchsorted(ke, common, "right")
    lo_s, hi_s = np.searchsorted(ks, common), np.searchsorted(ks, common, "right")
    le, ls = hi_e - lo_e, hi_s - lo_s
    count = int((le * ls).sum())
    if count > PAIRS_ENUMERATED:
        return None
    # Per common sum, the product of its two runs, laid out row by row.
    group = np.repeat(np.arange(len(common)), le * ls)
    at = np.arange(count) - np.repeat(np.cumsum(le * ls) - le * ls, le * ls)
    return oe[lo_e[group] + at // ls[group]], os_[lo_s[group] + at % ls[group]]


def _split_sums(masks: np.ndarray, sizes: np.ndarray, members: int) -> np.ndarray:
    """Per subset (bit mask, at most ``members`` members), the sums of its non-empty proper
    subsets, and -1 (``2 ** members`` columns)."""
    where = (masks[:, None] >> np.arange(len(sizes), dtype=np.int64)) & 1
    # Each subset's members' sizes, left-aligned in ``members`` columns (0 beyond).
    rank = np.cumsum(where, axis=1) - 1
    row, col = np.nonzero(where)
    held = np.zeros((len(masks), members), np.int64)
    real = np.zeros((len(masks), members), np.int64)
    held[row, rank[row, col]] = sizes[col]
    real[row, rank[row, col]] = 1
    picks = (np.arange(1 << members)[:, None] >> np.arange(members)) & 1  # (every choice)
    sums, chosen = held @ picks.T, real @ picks.T
    proper = (chosen > 0) & (chosen < real.sum(axis=1, keepdims=True))
    return np.where(proper, sums, -1)


# New subsets of one side (bit masks, sums, members) and pairs (index among them, index among
# the other side's subsets).
_Lopsided = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _lopsided(ze: np.ndarray, zs: np.ndarray, se: np.ndarray, ce: np.ndarray, ss: np.ndarray,
              cs: np.ndarray) -> tuple[_Lopsided | None, _Lopsided | None]:
    """Per side of at most :data:`LOPSIDED_SIDE` blocks: its subsets of more than
    :data:`BIG_MEMBERS` members (bit masks, sums, members) whose sum is that of a subset of at
    most :data:`LOPSIDED_FEW` members of the other side (whose listed subsets' sums and
    members are ``ss, cs`` for the enders' side, ``se, ce`` for the starters'), and the pairs
    (index among those new subsets, index among the other side's listed ones); None for a
    side of more blocks or of at most :data:`BIG_MEMBERS` (or where none match)."""
    out: list[_Lopsided | None] = []
    for sizes, (osum, ocount) in ((ze, (ss, cs)), (zs, (se, ce))):
        n = len(sizes)
        if n > LOPSIDED_SIDE or n <= BIG_MEMBERS:
            out.append(None)
            continue
        sums = np.zeros(1 << n, np.int64)
        count = np.zeros(1 << n, np.int64)
        for i in range(n):  # (every subset's sum and members, the masks in order)
            sums[1 << i:1 << (i + 1)] = sums[:1 << i] + int(sizes[i])
            count[1 << i:1 << (i + 1)] = count[:1 << i] + 1
        few = np.flatnonzero(ocount <= LOPSIDED_FEW)
        hit = np.flatnonzero(np.isin(sums, osum[few]) & (count > BIG_MEMBERS) &
                             (np.arange(1 << n) != (1 << n) - 1))
        if not len(hit):
            out.append(None)
            continue
        pairs = _equal_sums(sums[hit], osum[few])
        if pairs is None:
            out.append(None)
            continue
        k, o = pairs
        out.append((hit.astype(np.int64), sums[hit], count[hit], k, few[o]))
    return out[0], out[1]


def _candidates(enders: np.ndarray, starters: np.ndarray, size: np.ndarray, most: int,
                fewer: int | None = None) -> tuple[list[Hole], bool] | None:
    """The pairs of non-empty subsets of ``enders`` and ``starters`` with equal sums, the
    fewest blocks first, at most ``most`` (and whether that is all of them); None beyond
    :data:`PAIRS_ENUMERATED` pairs.

    A side of more than :data:`SIDE_MAX` blocks has too many subsets to pair: there (and with
    ``fewer``, anywhere) the pairs are those of at most a few members a side
    (:data:`BIG_MEMBERS`, or ``fewer``; :data:`SUBSETS_MAX` subsets) that do not split
    into two smaller pairs of equal sums, and the whole event; the candidates are then cut
    (a hole of more members, or one whose blocks only look like two, is missed)."""
    ze, zs = size[enders], size[starters]
    big = max(len(enders), len(starters)) > SIDE_MAX or fewer is not None
    few = BIG_MEMBERS if fewer is None else fewer
    ke = min(_members_within(len(enders)), few) if big else len(enders)
    ks = min(_members_within(len(starters)), few) if big else len(starters)
    me, se, ce = subsets(ze, ke)
    ms, ss, cs = subsets(zs, ks)
    if big:  # (the whole event too, as the last subset of each side)
        me, se, ce = (np.append(me, (1 << len(enders)) - 1), np.append(se, ze.sum()),
                      np.append(ce, len(enders)))
        ms, ss, cs = (np.append(ms, (1 << len(starters)) - 1), np.append(ss, zs.sum()),
                      np.append(cs, len(starters)))
    pairs = _equal_sums(se, ss)
    if pairs is None:
        return None
    a, b = pairs
    whole = (len(se) - 1, len(ss) - 1)  # (the whole side is each side's last subset)
    if big:
        inner = (a < whole[0]) & (b < whole[1])
        split_e = _split_sums(me[a[inner]], ze, ke)
        split_s = _split_sums(ms[b[inner]], zs, ks)
        splits = (split_e[:, :, None] == split_s[:, None, :]) & (split_e[:, :, None] >= 0)
        keep_inner = ~splits.any(axis=(1, 2))
        keep = np.ones(len(a), bool)
        keep[np.flatnonzero(inner)[~keep_inner]] = False
        a, b = a[keep], b[keep]
        # Runs of many blocks freed for one or two (or the reverse): every subset of the long
        # side, where it has few enough, against the pairs and singles of the other.
        more_e, more_s = _lopsided(ze, zs, se, ce, ss, cs)
        if more_e is not None:
            me, se, ce = (np.concatenate([me, more_e[0]]), np.concatenate([se, more_e[1]]),
                          np.concatenate([ce, more_e[2]]))
            a, b = np.concatenate([a, more_e[3] + len(me) - len(more_e[0])]), \
                np.concatenate([b, more_e[4]])
        if more_s is not None:
            ms, ss, cs = (np.concatenate([ms, more_s[0]]), np.concatenate([ss, more_s[1]]),
                          np.concatenate([cs, more_s[2]]))
            b, a = np.concatenate([b, more_s[3] + len(ms) - len(more_s[0])]), \
                np.concatenate([a, more_s[4]])
    count = len(a)
    if big:  # (cut anyway: the pairs of many members are mostly sums alike by chance)
        most = min(most, BIG_CANDIDATES)
    order = np.lexsort((ms[b], me[a], ce[a] + cs[b]))
    complete = count <= most and not big
    keep_ = order[:most].tolist()
    if count > most and not any((int(a[k]), int(b[k])) == whole for k in keep_):
        keep_[-1] = int(np.flatnonzero((a == whole[0]) & (b == whole[1]))[0])
    members: dict[tuple[int, int], tuple[int, ...]] = {}  # (side, subset): its blocks

    def blocks_of(side: int, k: int) -> tuple[int, ...]:
        got = members.get((side, k))
        if got is None:
            ids, mask = (enders, int(me[k])) if side == 0 else (starters, int(ms[k]))
            got = members[side, k] = tuple(int(ids[i]) for i in range(len(ids)) if mask >> i & 1)
        return got

    return [Hole(blocks_of(0, int(a[j])), blocks_of(1, int(b[j])), int(se[a[j]]))
            for j in keep_], complete


def holes_of(blocks: Blocks, ids: np.ndarray, most: int | None = None, *,
             until: float = math.inf) -> Holes:
    """The candidate holes at every event inside the span of blocks ``ids`` (positions in
    ``ids``), for blocks at zero slack (:func:`zero_slack`): there the enders' and the
    starters' sums are equal at every event. Blocks of size zero take no part. At most
    ``most`` candidates an event (:data:`CANDIDATES_MAX` by default), the fewest blocks
    first. Past ``until`` (``time.perf_counter()``) the events left are skipped (no
    candidates: the holes stay exact, only weaker; thousands of equal sums an event take
    seconds to list)."""
    ids = np.asarray(ids, np.int64)
    size = blocks.size[ids].astype(np.int64)
    start, end = blocks.start[ids], blocks.end[ids]
    live = size > 0
    if not live.any():
        return Holes((), True, tuple(size.tolist()))
    t0, t1 = int(start[live].min()), int(end[live].max())
    by_start: dict[int, list[int]] = {}
    by_end: dict[int, list[int]] = {}
    for j in np.flatnonzero(live).tolist():
        by_start.setdefault(int(start[j]), []).append(j)
        by_end.setdefault(int(end[j]), []).append(j)
    out, complete, skipped, wholes = [], True, 0, []
    for t in sorted(by_start.keys() & by_end.keys()):
        if t in (t0, t1):
            continue
        e, s = np.array(by_end[t], np.int64), np.array(by_start[t], np.int64)
        if max(len(e), len(s)) > SIDE_HARD or time.perf_counter() > until:
            skipped += 1
            continue  # (no constraint: exact, only weaker here)
        most_ = CANDIDATES_MAX if most is None else most
        got = _candidates(e, s, size, most_)
        # (sums alike by the thousand: the smaller holes, cut; an event of more than SIDE_MAX
        # blocks a side was just listed with BIG_MEMBERS)
        big = max(len(e), len(s)) > SIDE_MAX
        for few in (f for f in FEWER_MEMBERS if not big or f < BIG_MEMBERS):
            if got is not None:
                break
            got = _candidates(e, s, size, most_, few)
        if got is None:
            skipped += 1
            continue  # (no constraint either)
        cands, whole = got
        complete &= whole
        out.append(tuple(cands))
        wholes.append(whole)
    return Holes(tuple(out), complete, tuple(size.tolist()), skipped, tuple(wholes))


def tiling_holes(blocks: Blocks, offsets: np.ndarray
                 ) -> dict[int, list[tuple[frozenset[int], frozenset[int]]]]:
    """The holes of one tiling (``offsets``, scaled, per block): at each moment where blocks
    end, each maximal run of them in byte order, with the blocks that start within its bytes.
    For a generator's own packing (``meta["offsets"]`` of :mod:`cpplan.perfect`) these are
    the holes that :func:`holes_of` must list for that tiling to be found."""
    size, start, end = blocks.size, blocks.start, blocks.end
    live = np.flatnonzero(size > 0)
    holes: dict[int, list[tuple[frozenset[int], frozenset[int]]]] = {}
    for t in sorted({int(end[j]) for j in live} & {int(start[j]) for j in live}):
        alive = sorted((int(offsets[j]), int(j)) for j in live if start[j] < t <= end[j])
        starting = [int(j) for j in live if start[j] == t]
        runs: list[list[int]] = [[]]
        for _y, j in alive:  # (maximal runs of blocks ending at t, in byte order)
            if end[j] == t:
                runs[-1].append(j)
            elif runs[-1]:
                runs.append([])
        holes[t] = [(frozenset(run), frozenset(
            j for j in starting
            if offsets[run[0]] <= offsets[j] < offsets[run[-1]] + size[run[-1]]))
            for run in runs if run]
    return holes


def add_holes(pm: PackingModel, holes: Holes, height: int) -> None:
    """Add the holes to ``pm`` (the model of the blocks ``holes`` was made for, in one pool):
    per event, exactly one chosen candidate per ender and per starter, and a chosen candidate's
    blocks within an interval of its size under ``height``. A hint picks, per event, candidates
    with the fewest blocks first (a partition into the smallest holes)."""
    m = pm.model
    for cands in holes.events:
        if len(cands) == 1:  # (a wall: one hole, its interval only)
            _within(m, pm, holes, cands[0], height, None)
            continue
        chosen: dict[int, list[cp_model.IntVar]] = {}
        hinted: set[int] = set()
        for hole in cands:
            lit = m.new_bool_var("")
            members = hole.enders + hole.starters
            fresh = hinted.isdisjoint(members)
            if fresh:
                hinted.update(members)
            m.add_hint(lit, int(fresh))  # (an int: older OR-Tools take no bool)
            _within(m, pm, holes, hole, height, lit)
            for j in members:
                chosen.setdefault(j, []).append(lit)
        for lits in chosen.values():
            m.add_exactly_one(lits)


def _within(m: cp_model.CpModel, pm: PackingModel, holes: Holes, hole: Hole, height: int,
            lit: cp_model.IntVar | None) -> None:
    """Blocks of ``hole`` within ``[lo, lo + hole.size)`` for a new ``lo`` (when ``lit``)."""
    lo = m.new_int_var(0, height - hole.size, "")
    for j in hole.enders + hole.starters:
        off = pm.offset[j]
        for c in (m.add(off >= lo), m.add(off + holes.size[j] <= lo + hole.size)):
            if lit is not None:
                c.only_enforce_if(lit)
