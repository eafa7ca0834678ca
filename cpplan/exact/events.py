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

An event with more than :data:`SIDE_MAX` enders or starters, or more than
:data:`PAIRS_ENUMERATED` pairs, gets no candidates (the model stays exact, only weaker there);
one with more than :data:`CANDIDATES_MAX` candidate pairs keeps the ones with the fewest
blocks, and the model is then a restriction: a packing it finds is a packing, but its "none"
proves nothing (:attr:`Holes.complete`).

The inference is cpplan's own, in the spirit of the *walls* of :mod:`.tiling` (an event whose
sums no proper subsets match is one hole), here with every way to split an event.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from ..blocks import Blocks
from ..load import load_profile
from .dfs import plain, single_pool
from .model import PackingModel

__all__ = ["Hole", "Holes", "zero_slack", "holes_of", "add_holes", "SIDE_MAX", "CANDIDATES_MAX",
           "PAIRS_ENUMERATED"]

# Enders or starters at one event beyond which it gets no candidates: the subsets of each side
# are enumerated on arrays (2 ** 16 sums at most).
SIDE_MAX = 16
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
    ``events`` holds every event inside the span only where it is 0."""

    events: tuple[tuple[Hole, ...], ...]
    complete: bool
    size: tuple[int, ...]
    skipped: int = 0  # events with no candidates (too many blocks or equal sums)

    def reversed(self) -> Holes:
        """The same holes with time running backwards: the events last first, each hole's
        starters its enders."""
        return Holes(tuple(tuple(Hole(h.starters, h.enders, h.size) for h in event)
                           for event in self.events[::-1]), self.complete, self.size,
                     self.skipped)


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


def _sums(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sum of every subset of ``sizes`` and its number of members (index: the subset's bit
    mask)."""
    masks = np.arange(1 << len(sizes), dtype=np.int64)
    bits = (masks[:, None] >> np.arange(len(sizes), dtype=np.int64)) & 1
    return bits @ sizes, bits.sum(axis=1)


def _candidates(enders: np.ndarray, starters: np.ndarray, size: np.ndarray, most: int
                ) -> tuple[list[Hole], bool] | None:
    """The pairs of non-empty subsets of ``enders`` and ``starters`` with equal sums, the
    fewest blocks first, at most ``most`` (and whether that is all of them);
    None beyond :data:`PAIRS_ENUMERATED` pairs."""
    (se, ce), (ss, cs) = _sums(size[enders]), _sums(size[starters])
    oe, os_ = np.argsort(se[1:], kind="stable") + 1, np.argsort(ss[1:], kind="stable") + 1
    ke, ks = se[oe], ss[os_]
    common = np.intersect1d(ke, ks)
    lo_e, hi_e = np.searchsorted(ke, common), np.searchsorted(ke, common, "right")
    lo_s, hi_s = np.searchsorted(ks, common), np.searchsorted(ks, common, "right")
    count = int(((hi_e - lo_e) * (hi_s - lo_s)).sum())
    if count > PAIRS_ENUMERATED:
        return None
    a = np.concatenate([np.repeat(oe[x:y], v - u) for x, y, u, v
                        in zip(lo_e.tolist(), hi_e.tolist(), lo_s.tolist(), hi_s.tolist(),
                               strict=True)])
    b = np.concatenate([np.tile(os_[u:v], y - x) for x, y, u, v
                        in zip(lo_e.tolist(), hi_e.tolist(), lo_s.tolist(), hi_s.tolist(),
                               strict=True)])
    order = np.lexsort((b, a, ce[a] + cs[b]))
    complete = count <= most
    keep = order[:most].tolist()
    whole = (len(se) - 1, len(ss) - 1)
    if not complete and not any((int(a[k]), int(b[k])) == whole for k in keep):
        keep[-1] = int(np.flatnonzero((a == whole[0]) & (b == whole[1]))[0])
    return [Hole(tuple(int(enders[k]) for k in range(len(enders)) if int(a[j]) >> k & 1),
                 tuple(int(starters[k]) for k in range(len(starters)) if int(b[j]) >> k & 1),
                 int(se[a[j]]))
            for j in keep], complete


def holes_of(blocks: Blocks, ids: np.ndarray, most: int | None = None) -> Holes:
    """The candidate holes at every event inside the span of blocks ``ids`` (positions in
    ``ids``), for blocks at zero slack (:func:`zero_slack`): there the enders' and the
    starters' sums are equal at every event. Blocks of size zero take no part. At most
    ``most`` candidates an event (:data:`CANDIDATES_MAX` by default), the fewest blocks
    first."""
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
    out, complete, skipped = [], True, 0
    for t in sorted(by_start.keys() & by_end.keys()):
        if t in (t0, t1):
            continue
        e, s = np.array(by_end[t], np.int64), np.array(by_start[t], np.int64)
        if max(len(e), len(s)) > SIDE_MAX:
            skipped += 1
            continue  # (no constraint: exact, only weaker here)
        got = _candidates(e, s, size, CANDIDATES_MAX if most is None else most)
        if got is None:
            skipped += 1
            continue  # (no constraint either)
        cands, whole = got
        complete &= whole
        out.append(tuple(cands))
    return Holes(tuple(out), complete, tuple(size.tolist()), skipped)


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
