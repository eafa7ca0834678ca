"""A branch-and-bound decision search: do blocks ``ids`` fit under height ``H``?

The exact engine's second method beside CP-SAT (:mod:`.search` races both). It reproduces the
search of MiniMalloc (google/minimalloc, ``src/solver.cc`` and ``src/sweeper.cc``; Moffitt,
"MiniMalloc: A Lightweight Memory Allocator for Hardware-Accelerated Machine Learning", ASPLOS
2023), written anew in numpy:

* **canonical solutions**: blocks are placed in non-decreasing offset order (ties in preorder),
  each at its *minimum offset*, the top of the highest block placed so far that shares a moment
  with it, rounded up to its alignment. Every feasible packing can be pushed down into one of
  these (the packing with the least sum of offsets is one), so exhausting them is a proof.
* **min-offset inference**: placing a block raises the minimum offset of every unplaced block
  that shares a moment with it (incrementally, undone on backtrack).
* **sections** (the distinct sets of blocks live just before each lifetime end): the unplaced
  blocks of a section are stacked somewhere above ``max(current offset, lowest minimum offset)``,
  so that plus their total size must stay within ``H``. The lowest minimum offset of each
  section (its *floor*) is kept as MiniMalloc keeps it, member by member, while sections are
  small, and in a segment tree over sections beyond :data:`TREE_FLOORS_FROM` memberships (a
  window of 2600 long-lived blocks at the peak of idealloc's S_1: 1.3 million memberships, a
  dive 7x faster, the same nodes).
* **dominance**: no block is placed at or above the top that another unplaced block would have at
  its minimum offset (that block could drop into the gap: a packing with a smaller offset sum);
  **hatless pruning**: when a block that shares a moment with no unplaced block fails, its
  alternatives fail too.
* **branching**: unplaced blocks by minimum offset, ties by a static preorder (MiniMalloc's
  ``WAT``, ``TAW``, ``TWA``: W lifetime width, A area, T largest section total, all descending,
  then block index); the preorders are raced round-robin with a node limit that doubles every
  round (searches are heavy-tailed). When alignments differ, cpplan's own preorders ``LWA``,
  ``LAW``, ``LTW`` (L: alignment, descending) race too, first: the blocks of the largest
  alignment have the fewest offsets open to them, and placing them first among blocks at the
  same minimum offset is what makes aligned instances tractable (perfect packings of 120
  aligned buffers: 9 of 10 found within 1.2 s, against 2 of 10 in 5 s with MiniMalloc's three).
* **dynamic decomposition**: when no unplaced block spans the boundary between two sections any
  more, the two sides are solved as independent sub-problems (each with its own preorder).

Fixed offsets: a fixed block's minimum offset starts at its offset and may not rise above it; no
block is placed above an unplaced fixed block's offset (it must come first in the canonical
order). Blocks with several pieces (aliases, buffers with gaps) are packed by their bounding
rectangle, which is a restriction: then "feasible" answers stay right but an exhausted search is
reported ``unknown``, and proofs come from CP-SAT (:mod:`.search` races both). Placing pieces
exactly in this canonical order would not be a proof either: a block may have to sit above one
block and below another's window placed lower (``tests/test_gaps.py``, the window instance, where
MiniMalloc's binary answers "not found" for a packing that exists).
Blocks with several candidate pools, or in different pools, are declined (``unknown``).
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Protocol, TypeVar

import numpy as np

from ..blocks import Blocks
from ..deadline import Budget
from ..segtree import CoverMinTree
from .heap import release
from .outcome import Outcome

__all__ = ["fit", "single_pool", "preorders", "HEURISTICS", "ALIGNED_HEURISTICS"]

HEURISTICS = ("WAT", "TAW", "TWA")
# Raced when the blocks' alignments differ (interleaved: each round tries both kinds).
ALIGNED_HEURISTICS = ("LWA", "WAT", "LAW", "TAW", "LTW", "TWA")
POLL_EVERY = 64
# Section memberships (blocks times the sections each spans) beyond which the floors are kept
# in a segment tree rather than recomputed member by member (windows of long-lived blocks).
TREE_FLOORS_FROM = 200_000  # nodes between looks at the clock and the stop flag
DFS_NODES_PER_SECOND = 4000  # a conservative rate on this kind of machine: nodes as seconds


class _Abort(Exception):
    """The node limit of one round ran out (``limit``), or time / stop (``stop``)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def fit(blocks: Blocks, ids: np.ndarray, height: int, budget: Budget, *,
        node_budget: int | None = None, heuristics: tuple[str, ...] | None = None,
        cancel: threading.Event | None = None, stats: dict | None = None) -> Outcome:
    """Do blocks ``ids`` fit in their pool at most ``height`` high (scaled units)?

    ``feasible`` comes with ``pools`` and ``offsets`` per id (offsets aligned, fixed offsets
    kept, no two blocks that share a moment overlap, every top at most ``height`` and the pool's
    capacity); ``infeasible`` only when the search space is exhausted (a proof); ``unknown`` when
    ``budget`` (or ``node_budget`` nodes, the deterministic limit) or its stop flag (or
    ``cancel``, set by a racer that answered first) end the search first, or when the input is
    declined (see module docstring).
    ``stats`` (a dict) receives ``nodes`` and ``heuristic``. The nodes searched are charged to
    ``budget`` as deterministic time, :data:`DFS_NODES_PER_SECOND`; in deterministic mode only
    the node budget and the stop flags end the search, never the wall clock.
    """
    ids = np.asarray(ids, np.int64)
    n = len(ids)
    if n == 0:
        return Outcome("feasible", np.zeros(0, np.int64), np.zeros(0, np.int64))
    pool = single_pool(blocks, ids)
    if pool is None:
        return Outcome("unknown", detail="dfs: several candidate pools")
    cap = int(blocks.pool_capacity[pool])
    H = int(height) if cap < 0 else min(int(height), cap)
    size = blocks.size[ids].astype(np.int64)
    fixed = blocks.fixed[ids].astype(np.int64)
    align = np.fromiter((blocks.align_in(i, pool) for i in ids.tolist()), np.int64, n)
    pools_out = np.full(n, pool, np.int64)
    if np.any((fixed >= 0) & (fixed + size > H)) or np.any(size > H):
        return Outcome("infeasible", detail="dfs: a block is taller than the height")
    # Exact single rectangles, or bounding rectangles (a restriction) for blocks with pieces.
    restricted = not bool(plain(blocks, ids).all())
    offsets = np.where(fixed >= 0, fixed, 0)
    live = np.flatnonzero(size > 0)  # zero-size blocks occupy nothing: fixed offset or 0
    if len(live) == 0:
        return Outcome("feasible", pools_out, offsets, detail="dfs")
    times = blocks.times
    st, en = blocks.start[ids[live]], blocks.end[ids[live]]
    search = _Search(size[live], align[live], fixed[live], st, en,
                     (times[en] - times[st]).astype(np.int64), H)
    if heuristics is None:
        heuristics = _preorders(align[live])
    try:
        status, why = search.run(budget, cancel, node_budget, heuristics)
    finally:
        budget.report(search.total_nodes / DFS_NODES_PER_SECOND)
    sol, nodes, heuristic = search.sol, search.total_nodes, search.heuristic
    del search  # (its neighbour lists, which then go back to the system)
    release()
    if stats is not None:
        stats.update(nodes=nodes, heuristic=heuristic)
    detail = f"dfs {heuristic}, {nodes} nodes"
    if status == "feasible":
        offsets[live] = sol
        return Outcome("feasible", pools_out, offsets, detail=detail)
    if status == "infeasible" and not restricted:
        return Outcome("infeasible", detail=detail)
    return Outcome("unknown", detail=detail + (f" ({why})" if why else ""))


def preorders(blocks: Blocks, ids: np.ndarray) -> tuple[str, ...]:
    """The preorders :func:`fit` races on blocks ``ids`` (in their single pool): MiniMalloc's,
    or with the alignment-first ones when their alignments differ."""
    ids = np.asarray(ids, np.int64)
    pool = single_pool(blocks, ids)
    live = ids[blocks.size[ids] > 0]
    if pool is None or len(live) == 0:
        return HEURISTICS
    return _preorders(np.fromiter((blocks.align_in(i, pool) for i in live.tolist()), np.int64,
                                  len(live)))


def _preorders(align: np.ndarray) -> tuple[str, ...]:
    return HEURISTICS if len(np.unique(align)) <= 1 else ALIGNED_HEURISTICS


def plain(blocks: Blocks, ids: np.ndarray) -> np.ndarray:
    """Per block of ``ids``: whether it is one rectangle (one piece, as tall as the block: no
    gaps, no alias displaced inside it)."""
    ptr = blocks.piece_ptr
    first = ptr[ids]
    return ((ptr[ids + 1] - first) == 1) & (blocks.piece_lo[first] == 0) & \
        (blocks.piece_hi[first] == blocks.size[ids])


def single_pool(blocks: Blocks, ids: np.ndarray) -> int | None:
    """The pool of blocks ``ids`` when it is the only candidate of every one of them (the input
    :func:`fit` accepts), else ``None``."""
    pool_sets = {blocks.pools[i] for i in np.asarray(ids).tolist()}
    if len(pool_sets) != 1:
        return None
    (cands,) = pool_sets
    return cands[0] if len(cands) == 1 else None


def _neighbour_lists(start: np.ndarray, end: np.ndarray) -> list[np.ndarray]:
    """For each block, the blocks that share a moment with it, in index order.

    One vectorised test per block: O(n^2) work in numpy for the few thousand blocks a search
    takes, and no memory beyond the lists themselves (the all-pairs expansion and its sort,
    :meth:`cpplan.sweep.OverlapIndex.neighbours`, held several times their size at once: 300 MB
    for a window of 2585 blocks of idealloc's S_1, nearly all of which share a moment)."""
    # Indices in the narrowest type that holds them (as :class:`_Search` keeps them): the lists,
    # and the undo records taken from them down a search path, hold O(n^2) of them on windows
    # of long-lived blocks.
    index = np.int16 if len(start) < 2**15 else np.int32
    out = []
    for i in range(len(start)):
        hit = np.flatnonzero((start < end[i]) & (end > start[i])).astype(index)
        out.append(hit[hit != i])
    return out


class _Search:
    """State of the search over ``n`` positive-size blocks (local indices)."""

    def __init__(self, size: np.ndarray, align: np.ndarray, fixed: np.ndarray,
                 start: np.ndarray, end: np.ndarray, width: np.ndarray, H: int) -> None:
        n = len(size)
        self.n, self.H = n, H
        self.size, self.align, self.fixed = size, align, fixed
        self.width = width
        self.area = size * width
        # Time-overlap lists: i and j share a moment.
        self.nbr = _neighbour_lists(start, end)
        # Sections: the blocks live just before each distinct end time (MiniMalloc's sweep).
        # Block i's sections: the ends t with start < t <= end, a contiguous range.
        ends = np.unique(end)
        S = len(ends)
        self.S = S
        self.sec_lo = np.searchsorted(ends, start, "right").astype(np.int64)
        self.sec_hi = np.searchsorted(ends, end, "right").astype(np.int64)
        covered = np.zeros(S + 1, np.int64)
        np.add.at(covered, self.sec_lo, size)
        np.add.at(covered, self.sec_hi, -size)
        self.total0 = np.cumsum(covered)[:S]
        members = int((self.sec_hi - self.sec_lo).sum())
        self.floors: _Floors[Any] = (
            _TreeFloors(self.sec_lo, self.sec_hi, S) if members > TREE_FLOORS_FROM
            else _FlatFloors(self.sec_lo, self.sec_hi, S))
        # cut[s]: blocks in both section s and s + 1.
        diff = np.zeros(S + 1, np.int64)
        np.add.at(diff, self.sec_lo, 1)
        np.add.at(diff, np.maximum(self.sec_hi - 1, self.sec_lo), -1)
        self.cut0 = np.cumsum(diff)[:max(S - 1, 0)]
        self.mo0 = np.where(fixed >= 0, fixed, 0).astype(np.int64)
        self.maxmo = H - size  # highest minimum offset that still fits
        self.any_fixed = bool((fixed >= 0).any())
        self.unit_align = bool((align == 1).all())
        self.sol = np.zeros(n, np.int64)
        # Undo records and candidates down a search path: the narrowest types that hold H and
        # the block indices will do.
        self.value_type = np.int32 if H < 2**31 else np.int64
        self.index_type = np.int16 if n < 2**15 else np.int32
        self.total_nodes = 0
        self.heuristic = ""
        self.keys = {"W": width, "A": self.area, "Z": size, "L": align}  # T: from the sections

    # -- state --------------------------------------------------------------------------------

    def reset(self) -> None:
        self.placed = np.zeros(self.n, bool)
        self.mo = self.mo0.copy()
        # mo where unplaced, H where placed: the values the floors take their minimum over
        self.eff = self.mo0.copy()
        self.total = self.total0.copy()
        self.cut = self.cut0.copy()
        self.floors.reset(self.eff, self.H)
        # Invariant of every search node: floor + total <= H in every section.
        self.root_ok = not (self.floors.range(0, self.S) + self.total > self.H).any()

    # -- driver -------------------------------------------------------------------------------

    def run(self, budget: Budget, cancel: threading.Event | None, node_budget: int | None,
            heuristics: tuple[str, ...]) -> tuple[str, str]:
        self.stop, self.cancel = budget.stop_flag, cancel
        self.deadline, self.node_budget = budget.deadline(), node_budget
        limit = self.n  # doubled before the first round, as in MiniMalloc
        lim = sys.getrecursionlimit()
        if lim < 4 * self.n + 1000:
            sys.setrecursionlimit(4 * self.n + 1000)
        while True:
            limit *= 2
            for h in heuristics:
                self.heuristic = h
                self.reset()
                self.limit = self.nodes_left = limit
                self.next_poll = POLL_EVERY
                try:
                    ok = self._solve_all()
                except _Abort as e:
                    if e.why == "limit":
                        continue
                    return "unknown", e.why
                finally:
                    self.total_nodes += limit - self.nodes_left
                return ("feasible" if ok else "infeasible"), ""

    def _solve_all(self) -> bool:
        if not self.root_ok:
            return False
        # Initial partitions: split where no block spans a section boundary.
        zeros = np.flatnonzero(self.cut == 0) + 1
        points = [0, *zeros.tolist(), self.S]
        mem = np.arange(self.n, dtype=np.int64)
        for a, b in zip(points, points[1:], strict=False):
            sub = mem[(self.sec_lo < b) & (self.sec_hi > a)]
            if len(sub) and not self._subsolve(sub, a, b):
                return False
        return True

    def _poll(self) -> None:
        self.next_poll = POLL_EVERY
        if self.stop.is_set() or (self.cancel is not None and self.cancel.is_set()):
            raise _Abort("stopped")
        if time.perf_counter() > self.deadline:
            raise _Abort("time")
        if self.node_budget is not None and \
                self.total_nodes + self.limit - self.nodes_left > self.node_budget:
            raise _Abort("node budget")

    # -- search -------------------------------------------------------------------------------

    def _subsolve(self, mem: np.ndarray, a: int, b: int) -> bool:
        """Solve the unplaced blocks ``mem`` of sections [a, b) with a fresh preorder."""
        keys = []
        for ch in reversed(self.heuristic):
            if ch == "T":
                tot = np.append(self.total, 0)
                idx = np.empty(2 * len(mem), np.int64)
                idx[0::2] = self.sec_lo[mem]
                idx[1::2] = self.sec_hi[mem]
                keys.append(-np.maximum.reduceat(tot, idx)[0::2])
            else:
                keys.append(-self.keys[ch][mem])
        ordered = mem[np.lexsort([mem, *keys])]  # last key first: the heuristic's first letter
        del keys  # (not held while the search goes deeper)
        return self._search(ordered, a, b, 0, -1)

    def _search(self, mem: np.ndarray, sa: int, sb: int, last_off: int, last_pos: int) -> bool:
        self.nodes_left -= 1
        if self.nodes_left < 0:
            raise _Abort("limit")
        self.next_poll -= 1
        if self.next_poll <= 0:
            self._poll()
        placed, mo, size, fixed, eff = self.placed, self.mo, self.size, self.fixed, self.eff
        first = self._by_offset(mem)
        if len(first) == 0:
            return True
        u = mem[first]
        ms = mo[u]
        # Dominance: nothing goes at or above the top of an unplaced block at its minimum offset.
        # Sections: every unplaced block sits at or above the next offset, so the next offset
        # plus any section's unplaced total must stay within H.
        limit = min(int((ms + size[u]).min()), self.H - int(self.total[sa:sb].max()) + 1)
        if self.any_fixed:  # an unplaced fixed block comes before anything placed above it
            fu = fixed[u]
            if fu.max() >= 0:
                limit = min(limit, int(fu[fu >= 0].min()) + 1)
        k0 = int(np.searchsorted(ms, last_off, "left"))
        k1 = int(np.searchsorted(ms, limit, "left"))
        del u, ms
        if k0 >= k1:
            return False
        # Only the candidates' positions (narrow integers) live on while the search goes deeper:
        # a frame holding arrays of every unplaced block costs O(n) bytes per level, O(n^2)
        # down a path of n levels (on a window of 2600 blocks, hundreds of MB). A candidate's
        # offset is its minimum offset, read at its turn: every child leaves mo as it found it.
        cand = first[k0:k1].astype(self.index_type)
        del first
        H, total, floors = self.H, self.total, self.floors
        sec_lo, sec_hi = self.sec_lo, self.sec_hi
        for j in range(len(cand)):
            p = int(cand[j])
            c = int(mem[p])
            off = int(mo[c])
            if off == last_off and p < last_pos:
                continue
            # Place c at off: raise the minimum offsets of the unplaced blocks that share a
            # moment with it to its top (aligned), and take its size out of its sections.
            placed[c] = True
            eff[c] = self.H
            self.sol[c] = off
            sc = int(size[c])
            top = off + sc
            lo, hi = int(sec_lo[c]), int(sec_hi[c])
            total[lo:hi] -= sc
            # (Only the undo record lives on while the search goes deeper: the helper's arrays
            # over every unplaced neighbour would cost O(n) bytes per level.)
            hatless, undo, ok = self._raise_neighbours(c, top)
            a0, b0 = lo, hi
            chi = None if undo is None else undo[0]
            if chi is not None:
                a0 = min(lo, int(sec_lo[chi].min()))
                b0 = max(hi, int(sec_hi[chi].max()))
            # Sections whose floor (lowest minimum offset of an unplaced member) may have
            # risen: the unplaced blocks there must fit between the floor and H. (Every other
            # section passed this test before, and the limit above covers the next offset.)
            saved = None
            found = False
            if ok:
                changed = np.array((c,)) if chi is None else np.append(chi, c)
                saved = floors.update(changed, eff, a0, b0)
                del changed
                if not (floors.range(a0, b0) + total[a0:b0] > H).any():
                    found = self._decompose(mem, sa, sb, c, off, p)
            # Undo.
            if saved is not None:
                floors.restore(saved)
            if undo is not None:
                chi, chold = undo
                mo[chi] = chold
                eff[chi] = chold
            total[lo:hi] += sc
            placed[c] = False
            eff[c] = mo[c]
            if found:
                return True
            if hatless:
                break
        return False

    def _by_offset(self, mem: np.ndarray) -> np.ndarray:
        """Positions (into ``mem``) of its unplaced blocks by minimum offset, ties by position
        (the preorder)."""
        pos = np.flatnonzero(~self.placed[mem])
        return pos[np.argsort(self.mo[mem[pos]], kind="stable")]

    def _raise_neighbours(self, c: int, top: int
                          ) -> tuple[bool, tuple[np.ndarray, np.ndarray] | None, bool]:
        """Raise the minimum offsets of the unplaced blocks that share a moment with the
        just-placed block ``c`` to ``top`` (aligned up). Returns (whether none is left,
        ``hatless``; the undo record: the blocks whose minimum offset rose and their old ones,
        or None; whether each of them still fits under ``H`` without moving a fixed
        block)."""
        nb = self.nbr[c]
        nbu = nb[~self.placed[nb]]
        if len(nbu) == 0:
            return True, None, True
        mo = self.mo
        old = mo[nbu]
        if self.unit_align:
            ch = old < top
            chi = nbu[ch]
            if not len(chi):
                return False, None, True
            mo[chi] = top
            self.eff[chi] = top
            ok = int(self.maxmo[chi].min()) >= top
        else:
            al = self.align[nbu]
            new = -(-top // al) * al
            ch = new > old
            chi = nbu[ch]
            if not len(chi):
                return False, None, True
            chnew = new[ch]
            mo[chi] = chnew
            self.eff[chi] = chnew
            ok = not (chnew > self.maxmo[chi]).any()
        if self.any_fixed and (self.fixed[chi] >= 0).any():
            ok = False  # a fixed block would have to move up
        return False, (chi, old[ch].astype(self.value_type)), ok

    def _decompose(self, mem: np.ndarray, sa: int, sb: int, c: int, off: int, p: int) -> bool:
        lo, hi = int(self.sec_lo[c]), int(self.sec_hi[c])
        cut = self.cut
        if hi - lo <= 1:
            return self._search(mem, sa, sb, off, p)
        cut[lo:hi - 1] -= 1
        try:
            z = np.flatnonzero(cut[lo:hi - 1] == 0)
            if len(z) == 0:
                return self._search(mem, sa, sb, off, p)
            points = [sa, *(z + lo + 1).tolist(), sb]
            rest = mem[~self.placed[mem]]
            slo, shi = self.sec_lo[rest], self.sec_hi[rest]
            # The parts, and nothing else of this frame, are held while each is searched.
            parts = [(rest[(slo < b) & (shi > a)], a, b)
                     for a, b in zip(points, points[1:], strict=False)]
            del rest, slo, shi, z
            return all(not len(sub) or self._subsolve(sub, a, b) for sub, a, b in parts)
        finally:
            cut[lo:hi - 1] += 1


_Saved = TypeVar("_Saved")


class _Floors(Protocol[_Saved]):
    """The floor of every section, kept up to date as blocks move (:class:`_FlatFloors`,
    :class:`_TreeFloors`); ``update`` returns what ``restore`` needs to undo it."""

    def reset(self, eff: np.ndarray, H: int) -> None: ...
    def update(self, changed: np.ndarray, eff: np.ndarray, a: int, b: int) -> _Saved: ...
    def restore(self, saved: _Saved) -> None: ...
    def range(self, a: int, b: int) -> np.ndarray: ...


class _FlatFloors:
    """The floor of every section: the least value (``eff``: an unplaced block's minimum
    offset, ``H`` once placed) over the blocks live in it, kept as one array and recomputed
    over the span of sections of the blocks that changed (MiniMalloc's bookkeeping; the
    fastest while sections are small)."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray, S: int) -> None:
        self.lo, self.hi = lo, hi
        # Members of each section, in section order (CSR).
        counts = hi - lo
        owner = np.repeat(np.arange(len(lo)), counts)
        section = np.arange(int(counts.sum())) + np.repeat(lo - (np.cumsum(counts) - counts),
                                                           counts)
        order = np.lexsort((owner, section))
        self.mem = owner[order]
        self.ptr = np.searchsorted(section[order], np.arange(S + 1))
        self.S = S

    def reset(self, eff: np.ndarray, H: int) -> None:
        self.floor = np.full(self.S, H, np.int64)
        self._refloor(0, self.S, eff)

    def _refloor(self, a: int, b: int, eff: np.ndarray) -> None:
        p0 = self.ptr[a]
        seg = self.mem[p0:self.ptr[b]]
        self.floor[a:b] = np.minimum.reduceat(eff[seg], self.ptr[a:b] - p0)

    def update(self, changed: np.ndarray, eff: np.ndarray, a: int, b: int
               ) -> tuple[np.ndarray, np.ndarray]:
        old = self.floor[a:b].copy()
        self._refloor(a, b, eff)
        # Only the sections whose floor moved are kept for the undo: the search holds one
        # record per level of its path, and a copy of the whole span at each (long-lived
        # blocks span most sections of a window) grows with the path's length times S.
        moved = np.flatnonzero(self.floor[a:b] != old)
        return moved + a, old[moved]

    def restore(self, saved: tuple[np.ndarray, np.ndarray]) -> None:
        where, values = saved
        self.floor[where] = values

    def range(self, a: int, b: int) -> np.ndarray:
        return self.floor[a:b]


class _TreeFloors:
    """The floor of every section: the least value (``eff``: an unplaced block's minimum
    offset, ``H`` once placed) over the blocks whose section range covers it, in the shared
    :class:`cpplan.segtree.CoverMinTree` (a change of some blocks' values recomputes their
    nodes only, instead of every member of every section they span: quadratic on windows of
    long-lived blocks). The interface of :class:`_FlatFloors`."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray, S: int) -> None:
        self.tree = CoverMinTree(lo, hi, S)

    def reset(self, eff: np.ndarray, H: int) -> None:
        self.tree.reset(eff, H)

    def update(self, changed: np.ndarray, eff: np.ndarray, a: int, b: int
               ) -> tuple[np.ndarray, np.ndarray]:
        """Recompute after the values of blocks ``changed`` (spanning sections ``a`` to
        ``b - 1``, which the tree does not need) moved; returns what :meth:`restore` needs."""
        return self.tree.update(changed, eff)

    def restore(self, saved: tuple[np.ndarray, np.ndarray]) -> None:
        self.tree.restore(saved)

    def range(self, a: int, b: int) -> np.ndarray:
        return self.tree.range(a, b)
