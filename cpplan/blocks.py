"""The planner's view of a problem: blocks, in scaled bytes and compressed time.

A *block* is a root buffer plus every buffer aliased into it; planners give a block one pool and
one offset, and every member follows at its displacement. A block occupies a set of disjoint
*pieces* ``(start, end, lo, hi)`` relative to its offset: the union, moment by moment, of the
bytes its live members cover. A plain buffer is a block with one piece.

Preprocessing that every planner shares (DESIGN.md, "The exact engine"):

* **gcd scaling**: sizes, displacements, gap windows, alignments, fixed offsets and hints are
  divided by their greatest common divisor ``scale``; capacities are floored (every offset and
  end is a multiple of ``scale``, so ``end <= capacity`` iff ``end / scale <= capacity //
  scale``).
* **time compression**: steps are replaced by their rank among the distinct piece starts and
  ends; overlap in time is unchanged.
* **components**: groups of blocks that share no moment can be planned independently.

Arrays are numpy ``int64``; ``-1`` stands for "none" in ``fixed`` and ``hint``.
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from typing import Any

import numpy as np

from .load import objective_lower_bound
from .plan import Placement, Plan, ensure_valid
from .problem import Buffer, Problem

__all__ = ["Blocks", "make_blocks"]


@dataclass(frozen=True, eq=False)
class Blocks:
    """Blocks of a problem (see the module docstring). Build with :func:`make_blocks`."""

    problem: Problem
    scale: int
    times: np.ndarray  # times[rank] = original step
    root: np.ndarray  # buffer index of each block's root
    start: np.ndarray  # block span, in ranks
    end: np.ndarray
    size: np.ndarray  # scaled; max piece hi
    alignment: np.ndarray  # scaled; lcm of members' alignments
    fixed: np.ndarray  # scaled fixed offset or -1
    hint: np.ndarray  # scaled hint or -1
    pools: tuple[tuple[int, ...], ...]  # candidate pool indices, first preferred
    piece_ptr: np.ndarray  # pieces of block i: piece_ptr[i]:piece_ptr[i+1]
    piece_start: np.ndarray
    piece_end: np.ndarray
    piece_lo: np.ndarray
    piece_hi: np.ndarray
    member_ptr: np.ndarray  # members of block i: member_ptr[i]:member_ptr[i+1], root first
    member: np.ndarray  # buffer index
    member_disp: np.ndarray  # displacement in bytes (not scaled)
    pool_capacity: np.ndarray  # scaled (floored) or -1
    pool_alignment: np.ndarray  # scaled
    pool_cost: np.ndarray
    traffic: np.ndarray  # bytes moved per run by the block's members (not scaled)
    pool_traffic_cost: np.ndarray  # per byte moved

    def traffic_cost(self, pools: np.ndarray) -> int:
        """The objective's traffic term, in bytes x cost (not scaled), with block ``i`` in
        pool ``pools[i]``."""
        if not self.traffic.any():
            return 0
        return int((self.traffic * self.pool_traffic_cost[pools]).sum())

    @cached_property
    def settled_traffic_cost(self) -> int:
        """The traffic cost of the blocks with one candidate pool: the same in every plan."""
        if not self.traffic.any():
            return 0
        one = np.fromiter((len(c) == 1 for c in self.pools), bool, len(self))
        first = np.fromiter((c[0] for c in self.pools), np.int64, len(self))
        return int((self.traffic * self.pool_traffic_cost[first])[one].sum())

    def objective(self, pools: np.ndarray, offsets: np.ndarray) -> int:
        """``sum(cost * height) + sum(traffic * traffic_cost)`` of the plan that puts block
        ``i`` in pool ``pools[i]`` at scaled offset ``offsets[i]``, in bytes (not scaled)."""
        heights = np.zeros(self.n_pools, np.int64)
        np.maximum.at(heights, pools, offsets + self.size)
        return int((heights * self.pool_cost).sum()) * self.scale + self.traffic_cost(pools)

    def __len__(self) -> int:
        return len(self.root)

    @property
    def n_pools(self) -> int:
        return len(self.pool_capacity)

    @property
    def single_piece(self) -> bool:
        """True when every block is one rectangle (no aliases): the common fast path."""
        return len(self.piece_start) == len(self.root)

    def pieces(self, i: int) -> np.ndarray:
        """Pieces of block ``i`` as rows ``(start, end, lo, hi)``."""
        a, b = self.piece_ptr[i], self.piece_ptr[i + 1]
        return np.stack([self.piece_start[a:b], self.piece_end[a:b], self.piece_lo[a:b],
                         self.piece_hi[a:b]], axis=1)

    def align_in(self, i: int, pool: int) -> int:
        """Scaled alignment of block ``i`` when it lands in ``pool``."""
        a, p = int(self.alignment[i]), int(self.pool_alignment[pool])
        return math.lcm(a, p)

    def components(self) -> list[np.ndarray]:
        """Block indices grouped into components that share no moment, in time order."""
        n = len(self)
        if n == 0:
            return []
        order = np.lexsort((self.end, self.start))
        ends = np.maximum.accumulate(self.end[order])
        cut = np.nonzero(self.start[order][1:] >= ends[:-1])[0] + 1
        return [np.sort(part) for part in np.split(order, cut)]

    def time_overlap(self, i: int, j: int) -> bool:
        """Whether some piece of block ``i`` shares a moment with some piece of block ``j``."""
        if self.start[i] >= self.end[j] or self.start[j] >= self.end[i]:
            return False
        a0, a1 = self.piece_ptr[i], self.piece_ptr[i + 1]
        b0, b1 = self.piece_ptr[j], self.piece_ptr[j + 1]
        if a1 - a0 == 1 and b1 - b0 == 1:
            return True
        for p in range(a0, a1):
            for q in range(b0, b1):
                if (self.piece_start[p] < self.piece_end[q]
                        and self.piece_start[q] < self.piece_end[p]):
                    return True
        return False

    def to_plan(
        self,
        block_pool: np.ndarray | list[int],
        block_offset: np.ndarray | list[int],
        *,
        planner: str,
        started: float | None = None,
        seconds: float | None = None,
        lower_bound: int | None = None,
        status: str | None = None,
        stats: dict[str, Any] | None = None,
    ) -> Plan:
        """The checked plan that puts block ``i`` in pool ``block_pool[i]`` at scaled offset
        ``block_offset[i]``; members follow at their displacements.

        ``lower_bound`` defaults to the max-load bound (:func:`cpplan.load.objective_lower_bound`).
        Raises :class:`cpplan.errors.PlanError` if the result breaks the problem (a planner bug).
        """
        problem = self.problem
        pool_l = np.asarray(block_pool, dtype=np.int64).tolist()
        off_l = (np.asarray(block_offset, dtype=np.int64) * self.scale).tolist()
        placements = self._placements(pool_l, off_l)
        if lower_bound is None:
            lower_bound = objective_lower_bound(self)
        if seconds is None:
            seconds = _time.perf_counter() - started if started is not None else 0.0
        plan = Plan.build(problem, placements, planner=planner, seconds=seconds,
                          lower_bound=lower_bound, status=status, stats=stats)
        return ensure_valid(problem, plan)

    def arrays(self, placements: dict[str, Placement]) -> tuple[np.ndarray, np.ndarray]:
        """Pool and scaled offset per block, from a plan's placements (by buffer id): the
        inverse of :meth:`to_plan`."""
        names = self.problem.pool_index
        ids = [self.problem.buffers[r].id for r in self.root.tolist()]
        pools = np.fromiter((names[placements[i].pool] for i in ids), np.int64, len(ids))
        offsets = np.fromiter((placements[i].offset // self.scale for i in ids), np.int64,
                              len(ids))
        return pools, offsets

    def _placements(self, pool_l: list[int], off_l: list[int]) -> dict[str, Placement]:
        """Buffer id -> Placement for blocks in pools ``pool_l`` at byte offsets ``off_l``, in
        block order, each block's members root first."""
        problem = self.problem
        names = [p.name for p in problem.pools]
        buffers = problem.buffers
        if len(pool_l) == len(buffers):  # every buffer its own block, in buffer order
            pools = repeat(names[0]) if len(names) == 1 else [names[p] for p in pool_l]
            # (tuple.__new__ makes the Placements without a Python call each: 62185 for Y_1)
            made = map(tuple.__new__, repeat(Placement), zip(pools, off_l, strict=False))
            return dict(zip(problem.columns.ids, made, strict=True))
        placements: dict[str, Placement] = {}
        ptr = self.member_ptr.tolist()
        mem = self.member.tolist()
        disp = self.member_disp.tolist()
        for i in range(len(pool_l)):
            pool, off = names[pool_l[i]], off_l[i]
            for k in range(ptr[i], ptr[i + 1]):
                placements[buffers[mem[k]].id] = Placement(pool, off + disp[k])
        return placements


def make_blocks(problem: Problem) -> Blocks:
    """Blocks of ``problem`` with gcd scaling and time compression (see module docstring).

    Made once per problem and kept with it (a problem never changes; every planner of a solve
    or a portfolio works on the same blocks: a tenth of a second for 62185 buffers)."""
    made = problem.__dict__.get("_blocks")
    if made is None:
        made = _make_blocks(problem)
        problem.__dict__["_blocks"] = made  # (as functools.cached_property stores its value)
    return made


def _make_blocks(problem: Problem) -> Blocks:
    buffers = problem.buffers
    n = len(buffers)
    pool_names = [p.name for p in problem.pools]
    pidx = problem.pool_index
    all_pools = tuple(range(len(pool_names)))

    cols = problem.columns  # (read-only arrays, shared with the plan checker)
    size, start, end, align = cols.size, cols.start, cols.end, cols.alignment
    fixed, hint = cols.offset, cols.hint
    cand = [tuple(pidx[p] for p in b.pools) if b.pools else all_pools for b in buffers]

    # Blocks: roots in buffer order; members root first, then aliases in buffer order.
    root_of = problem.root_of
    # Aliases and gaps make blocks of several pieces; without them every block is one rectangle.
    gapped = [i for i, b in enumerate(buffers) if b.gaps]
    general = bool(root_of) or bool(gapped)
    if root_of:
        index = problem.index
        groups: dict[int, list[tuple[int, int]]] = {}
        for i, b in enumerate(buffers):
            if b.id in root_of:
                rid, d = root_of[b.id]
                groups.setdefault(index[rid], []).append((i, d))
        roots = [i for i, b in enumerate(buffers) if b.id not in root_of]
        member_ptr = [0]
        member: list[int] = []
        member_disp: list[int] = []
        for r in roots:
            member.append(r)
            member_disp.append(0)
            for i, d in groups.get(r, ()):
                member.append(i)
                member_disp.append(d)
            member_ptr.append(len(member))
        root = np.asarray(roots, np.int64)
        member_a = np.asarray(member, np.int64)
        member_disp_a = np.asarray(member_disp, np.int64)
        member_ptr_a = np.asarray(member_ptr, np.int64)
    else:
        root = np.arange(n, dtype=np.int64)
        member_a = root
        member_disp_a = np.zeros(n, np.int64)
        member_ptr_a = np.arange(n + 1, dtype=np.int64)

    windows = np.asarray([v for i in gapped for gap in buffers[i].gaps for v in (gap.lo, gap.hi)],
                         np.int64)
    g = _scale(np.concatenate([size, windows]), member_disp_a, fixed[fixed > 0],
               np.concatenate([align, [p.alignment for p in problem.pools]]))

    nb = len(root)
    if not general:
        b_align = np.maximum(align // g, 1)
        b_fixed = np.where(fixed >= 0, fixed // g, -1)
        b_cands = tuple(cand)
        p_start, p_end = start, end
        p_lo = np.zeros(n, np.int64)
        p_hi = size // g
        piece_ptr = np.arange(n + 1, dtype=np.int64)
    else:
        b_fixed = fixed[root].copy()
        b_fixed[b_fixed >= 0] //= g
        cands_l = []
        aligns: list[int] = []
        ps, pe, pl, ph, pptr = [], [], [], [], [0]
        mp = member_ptr_a.tolist()
        ml = member_a.tolist()
        dl = member_disp_a.tolist()
        align_l, start_l = align.tolist(), start.tolist()
        end_l, size_l = end.tolist(), size.tolist()
        has_gaps = set(gapped)
        for k in range(nb):
            ms = ml[mp[k]:mp[k + 1]]
            ds = dl[mp[k]:mp[k + 1]]
            if len(ms) == 1:  # (most blocks, in Python's fastest terms: 10^5 of them)
                m = ms[0]
                aligns.append(max(align_l[m] // g, 1))
                cands_l.append(cand[m])
                if m not in has_gaps:
                    ps.append(start_l[m])
                    pe.append(end_l[m])
                    pl.append(0)
                    ph.append(size_l[m] // g)
                    pptr.append(len(ps))
                    continue
            else:
                aligns.append(max(math.lcm(*(align_l[m] for m in ms)) // g, 1))
                rc = cand[ms[0]]
                allowed = set(rc)
                for m in ms[1:]:
                    allowed &= set(cand[m])
                cands_l.append(tuple(p for p in rc if p in allowed))
            for s, e, lo, hi in _footprint(
                    [(ps_, pe_, (d + lo_) // g, (d + hi_) // g)
                     for m, d in zip(ms, ds, strict=True)
                     for ps_, pe_, lo_, hi_ in _occupancy(buffers[m])]):
                ps.append(s)
                pe.append(e)
                pl.append(lo)
                ph.append(hi)
            pptr.append(len(ps))
        b_align = np.asarray(aligns, np.int64)
        b_cands = tuple(cands_l)
        p_start, p_end = np.asarray(ps, np.int64), np.asarray(pe, np.int64)
        p_lo, p_hi = np.asarray(pl, np.int64), np.asarray(ph, np.int64)
        piece_ptr = np.asarray(pptr, np.int64)

    times = np.unique(np.concatenate([p_start, p_end])) if len(p_start) else np.zeros(0, np.int64)
    p_start = np.searchsorted(times, p_start).astype(np.int64)
    p_end = np.searchsorted(times, p_end).astype(np.int64)
    if general:
        b_start = np.minimum.reduceat(p_start, piece_ptr[:-1]) if nb else np.zeros(0, np.int64)
        b_end = np.maximum.reduceat(p_end, piece_ptr[:-1]) if nb else np.zeros(0, np.int64)
        b_size = np.maximum.reduceat(p_hi, piece_ptr[:-1]) if nb else np.zeros(0, np.int64)
        # A root whose gaps leave its top bytes unused still counts its whole size in the
        # pool's height (as MiniMalloc's capacity does): the block is that tall.
        b_size = np.maximum(b_size, size[root] // g)
    else:
        b_start, b_end, b_size = p_start, p_end, p_hi
    b_hint = hint[root].copy()
    b_hint[b_hint >= 0] //= g

    caps = np.asarray([-1 if p.capacity is None else p.capacity // g for p in problem.pools],
                      np.int64)
    palign = np.asarray([max(p.alignment // g, 1) for p in problem.pools], np.int64)
    pcost = np.asarray([p.cost for p in problem.pools], np.int64)
    traffic = cols.traffic if not general else np.add.reduceat(
        cols.traffic[member_a], member_ptr_a[:-1]) if nb else np.zeros(0, np.int64)
    ptraffic = np.asarray([p.traffic_cost for p in problem.pools], np.int64)
    return Blocks(problem, g, times, root, b_start, b_end, b_size, b_align, b_fixed, b_hint,
                  b_cands, piece_ptr, p_start, p_end, p_lo, p_hi, member_ptr_a, member_a,
                  member_disp_a, caps, palign, pcost, traffic, ptraffic)


def _scale(sizes: np.ndarray, displacements: np.ndarray, fixed: np.ndarray,
           alignments: np.ndarray) -> int:
    """The largest ``g`` that divides every size, displacement and fixed offset, and that every
    alignment either divides or is divided by.

    Then some optimal plan has every offset a multiple of ``g``: push each block down (lowest
    first) to the top of the block below it, rounded up to its alignment; tops are sums of sizes,
    so multiples of ``g``, and an alignment ``a`` with ``a | g`` is met by every multiple of
    ``g``, one with ``g | a`` by rounding up to ``a``. Alignments enter as ``max(a // g, 1)``.
    """
    g = 0
    for arr in (sizes, displacements, fixed):
        if len(arr):
            g = math.gcd(g, int(np.gcd.reduce(arr)))
    if g == 0:
        return 1
    distinct = sorted({int(a) for a in np.unique(alignments)})
    changed = True
    while changed:
        changed = False
        for a in distinct:
            if a % g and g % a:
                g = math.gcd(g, a)
                changed = True
    return g


def _occupancy(buffer: Buffer) -> list[tuple[int, int, int, int]]:
    """A buffer's rectangles (its lifetime, minus gaps, plus their windows); a zero-size or
    fully idle buffer keeps one empty rectangle over its lifetime, so its block keeps a span."""
    if not buffer.gaps:
        return [(buffer.start, buffer.end, 0, buffer.size)]
    return buffer.pieces() or [(buffer.start, buffer.end, 0, 0)]


def _footprint(rects: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Disjoint rectangles covering the union of ``rects`` (time x bytes), merged over time."""
    points = sorted({t for r in rects for t in r[:2]})
    out: list[tuple[int, int, int, int]] = []
    open_runs: dict[tuple[int, int], int] = {}  # byte interval -> start of its run
    for t0 in points[:-1]:
        live = sorted((lo, hi) for s, e, lo, hi in rects if s <= t0 < e and hi > lo)
        merged: list[tuple[int, int]] = []
        for lo, hi in live:
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        now = set(merged)
        for iv in [iv for iv in open_runs if iv not in now]:
            out.append((open_runs.pop(iv), t0, *iv))
        for iv in merged:
            open_runs.setdefault(iv, t0)
    if points:
        for iv, s in open_runs.items():
            out.append((s, points[-1], *iv))
    if not out:  # a block of zero-size buffers: one empty piece keeps its lifetime
        s = min(r[0] for r in rects)
        e = max(r[1] for r in rects)
        out.append((s, e, 0, 0))
    return sorted(out)
