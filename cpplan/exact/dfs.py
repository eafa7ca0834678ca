"""A branch-and-bound decision search: do blocks ``ids`` fit under height ``H``?

The exact engine's second method beside CP-SAT (:mod:`.search` races both). It reproduces the
search of MiniMalloc (google/minimalloc, ``src/solver.cc`` and ``src/sweeper.cc``; Moffitt,
"MiniMalloc: A Lightweight Memory Allocator for Hardware-Accelerated Machine Learning", ASPLOS
2023), written anew: the search itself in C (``cpplan/exact/_dfs.c``, a loop over an explicit
stack that runs without the GIL, resumable after any number of nodes), its arrays prepared
here, in numpy:

* **canonical solutions**: blocks are placed in non-decreasing offset order (ties in preorder),
  each at its *minimum offset*, the top of the highest block placed so far that shares a moment
  with it, rounded up to its alignment. Every feasible packing can be pushed down into one of
  these (the packing with the least sum of offsets is one), so exhausting them is a proof.
* **min-offset inference**: placing a block raises the minimum offset of every unplaced block
  that shares a moment with it (incrementally, undone on backtrack).
* **sections** (the distinct sets of blocks live just before each lifetime end): the unplaced
  blocks of a section are stacked somewhere above ``max(current offset, lowest minimum offset)``,
  so that plus their total size must stay within ``H``. The lowest minimum offset of each
  section (its *floor*) is recomputed member by member as MiniMalloc does, but only in the
  sections where a block whose minimum offset rose sat at the floor (no other floor can move).
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

import threading
import time

import numpy as np

from ..blocks import Blocks
from ..deadline import Budget
from . import _dfs
from .heap import release
from .outcome import Outcome

__all__ = ["fit", "single_pool", "preorders", "HEURISTICS", "ALIGNED_HEURISTICS"]

HEURISTICS = ("WAT", "TAW", "TWA")
# Raced when the blocks' alignments differ (interleaved: each round tries both kinds).
ALIGNED_HEURISTICS = ("LWA", "WAT", "LAW", "TAW", "LTW", "TWA")
# Nodes per call of the compiled loop at first; then as many as take about CHUNK_SECONDS
# (between calls the driver looks at the clock and the stop flags), at most CHUNK_MOST.
CHUNK_NODES = 64
CHUNK_SECONDS = 0.005
CHUNK_MOST = 1 << 16
ROOM = 4  # the compiled loop's stacks at first, in blocks (or sections); grown when it asks
# The candidates a frame keeps in order; after them, a scan of the node's blocks finds the next
# (as _dfs.c's BATCH).
BATCH = 32
DFS_NODES_PER_SECOND = 20_000  # nodes as seconds, deterministic mode: under the least rate on the
# challenging set (python benchmarks/dfs.py prints it), above the heaviest nodes' (windows of
# long-lived blocks at thousands a second)
KEY_CODES = {"W": 0, "A": 1, "Z": 2, "L": 3, "T": 4}  # rows of _Search.keys; T: computed
# The compiled loop's interface, as cpplan/exact/_dfs.c lays it out: what a call returns, its
# registers, the columns of a frame.
INFEASIBLE, FEASIBLE, LIMIT, PAUSE, GROW = range(5)
NODES, CHUNK, DEPTH, RET, NB_TOP, FL_TOP, MEM_TOP = range(7)
REGISTERS = 7
FRAME = 25


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


def _neighbours(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each block, the blocks that share a moment with it, in index order (CSR: block i's
    are ``idx[ptr[i]:ptr[i + 1]]``).

    One vectorised test per block: O(n^2) work in numpy for the few thousand blocks a search
    takes, and no memory beyond the lists themselves (the all-pairs expansion and its sort,
    :meth:`cpplan.sweep.OverlapIndex.neighbours`, held several times their size at once: 300 MB
    for a window of 2585 blocks of idealloc's S_1, nearly all of which share a moment)."""
    n = len(start)
    lists = []
    for i in range(n):
        hit = np.flatnonzero((start < end[i]) & (end > start[i])).astype(np.int32)
        lists.append(hit[hit != i])
    ptr = np.zeros(n + 1, np.int64)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    idx = np.concatenate(lists) if n else np.zeros(0, np.int32)
    return ptr, idx


def _members(lo: np.ndarray, hi: np.ndarray, S: int) -> tuple[np.ndarray, np.ndarray]:
    """The blocks live in each section, in block order (CSR over sections), for blocks that
    span sections ``lo[i]`` to ``hi[i] - 1``."""
    counts = hi - lo
    owner = np.repeat(np.arange(len(lo)), counts)
    section = np.arange(int(counts.sum())) + np.repeat(lo - (np.cumsum(counts) - counts),
                                                       counts)
    order = np.lexsort((owner, section))
    return (np.searchsorted(section[order], np.arange(S + 1)).astype(np.int64),
            owner[order].astype(np.int32))


class _Search:
    """The search over ``n`` positive-size blocks (local indices): its arrays, and the rounds
    that drive the compiled loop (``cpplan/exact/_dfs.c``)."""

    def __init__(self, size: np.ndarray, align: np.ndarray, fixed: np.ndarray,
                 start: np.ndarray, end: np.ndarray, width: np.ndarray, H: int) -> None:
        n = len(size)
        self.n, self.H = n, H
        self.size = size.astype(np.int64)
        self.align = align.astype(np.int64)
        self.fixed = fixed.astype(np.int64)
        # Preorder keys, rows in the kernel's order (W, A, Z, L; T from the sections).
        self.keys = np.ascontiguousarray(np.stack(
            [width, size * width, size, align, np.zeros(n, np.int64)]).astype(np.int64))
        self.nbr_ptr, self.nbr_idx = _neighbours(start, end)
        # Sections: the blocks live just before each distinct end time (MiniMalloc's sweep).
        # Block i's sections: the ends t with start < t <= end, a contiguous range.
        ends = np.unique(end)
        S = len(ends)
        self.S = S
        self.sec_lo = np.searchsorted(ends, start, "right").astype(np.int64)
        self.sec_hi = np.searchsorted(ends, end, "right").astype(np.int64)
        covered = np.zeros(S + 1, np.int64)
        np.add.at(covered, self.sec_lo, self.size)
        np.add.at(covered, self.sec_hi, -self.size)
        self.total0 = np.cumsum(covered)[:S]
        self.fl_ptr, self.fl_mem = _members(self.sec_lo, self.sec_hi, S)
        # cut[s]: blocks in both section s and s + 1 (one spare slot: the kernel's arrays are
        # never empty).
        diff = np.zeros(S + 1, np.int64)
        np.add.at(diff, self.sec_lo, 1)
        np.add.at(diff, np.maximum(self.sec_hi - 1, self.sec_lo), -1)
        self.cut0 = np.cumsum(diff)
        self.cut0[max(S - 1, 0):] = 0
        self.mo0 = np.where(self.fixed >= 0, self.fixed, 0).astype(np.int64)
        self.maxmo = H - self.size  # highest minimum offset that still fits
        self.any_fixed = bool((self.fixed >= 0).any())
        self.unit_align = bool((self.align == 1).all())
        self.sol = np.zeros(n, np.int64)
        self.total_nodes = 0
        self.heuristic = ""
        # The kernel's stacks, kept across rounds and grown when it asks.
        self.max_degree = int(np.diff(self.nbr_ptr).max()) if n else 0
        self.frames = np.zeros((ROOM * n + 1, FRAME), np.int64)
        self.nb_idx = np.zeros(min(len(self.nbr_idx), ROOM * n) + 1, np.int32)
        # Old minimum offsets and floors, for the undo: in 32 bits where H fits (the stacks
        # hold a record per block raised down a path: O(n^2) on windows of long-lived blocks).
        self.wide = H >= 2**31
        value_type = np.int64 if self.wide else np.int32
        self.nb_old = np.zeros(len(self.nb_idx), value_type)
        self.fl_idx = np.zeros(ROOM * S + 1, np.int32)
        self.fl_old = np.zeros(len(self.fl_idx), value_type)
        self.mem = np.zeros(ROOM * (n + S) + 1, np.int64)
        self.cand = np.zeros(len(self.frames) * BATCH, np.int32)  # (BATCH a frame)
        self.scratch = np.zeros(2 * n + 1, np.int64)  # (the candidates of one node, sorted)

    # -- driver -------------------------------------------------------------------------------

    def run(self, budget: Budget, cancel: threading.Event | None, node_budget: int | None,
            heuristics: tuple[str, ...]) -> tuple[str, str]:
        """MiniMalloc's round robin: every preorder in turn with a node limit that doubles
        every round, until one answers or time, the stop flags or ``node_budget`` end it."""
        self.stop, self.cancel = budget.stop_flag, cancel
        self.deadline, self.node_budget = budget.deadline(), node_budget
        if not self._root_ok():
            self.heuristic = heuristics[0]
            return "infeasible", ""
        limit = self.n  # doubled before the first round, as in MiniMalloc
        chunk = CHUNK_NODES
        while True:
            limit *= 2
            for h in heuristics:
                self.heuristic = h
                code, why, chunk = self._round(h, limit, chunk)
                if code == LIMIT:
                    continue
                if why:
                    return "unknown", why
                return ("feasible" if code == FEASIBLE else "infeasible"), ""

    def _root_ok(self) -> bool:
        """Every section's unplaced blocks fit above its floor at the root."""
        floor = self._floors(self.mo0)
        return not (floor + self.total0 > self.H).any()

    def _floors(self, eff: np.ndarray) -> np.ndarray:
        floor = np.full(self.S, self.H, np.int64)
        filled = np.flatnonzero(np.diff(self.fl_ptr) > 0)
        floor[filled] = np.minimum.reduceat(eff[self.fl_mem], self.fl_ptr[filled])
        return floor

    def _round(self, heuristic: str, limit: int, chunk: int) -> tuple[int, str, int]:
        """One round of one preorder: (the kernel's answer, why it stopped early or "", the
        chunk of nodes that took about :data:`CHUNK_SECONDS`)."""
        placed = np.zeros(self.n, np.uint8)
        mo = self.mo0.copy()
        eff = self.mo0.copy()
        total = self.total0.copy()
        cut = self.cut0.copy()
        floor = self._floors(mo)
        heur = np.array([KEY_CODES[ch] for ch in heuristic], np.int64)
        reg = np.zeros(REGISTERS, np.int64)
        reg[NODES] = limit
        reg[DEPTH] = reg[RET] = -1  # (the kernel builds the root)
        try:
            while True:
                if self.node_budget is not None:
                    chunk = max(1, min(chunk, self.node_budget + 1 - self.total_nodes
                                       - self._used(limit, reg)))
                reg[CHUNK] = chunk
                t = time.perf_counter()
                code = _dfs.search(
                    self.size, self.align, self.fixed, self.sec_lo, self.sec_hi, self.keys,
                    heur, self.nbr_ptr, self.nbr_idx, self.fl_ptr, self.fl_mem, self.H,
                    self.maxmo, self.any_fixed, self.unit_align, placed, mo, eff, total, cut,
                    floor, self.sol, reg, self.frames, self.nb_idx, self.nb_old, self.fl_idx,
                    self.fl_old, self.mem, self.cand, self.scratch, self.wide)
                if code == GROW:
                    self._grow(reg)
                    continue
                if code != PAUSE:
                    return code, "", chunk
                took = time.perf_counter() - t
                if took < CHUNK_SECONDS / 2 and chunk < CHUNK_MOST:
                    chunk *= 2
                elif took > 2 * CHUNK_SECONDS and chunk > 1:
                    chunk //= 2
                why = self._poll(limit, reg)
                if why:
                    return code, why, chunk
        finally:
            self.total_nodes += self._used(limit, reg)

    def _used(self, limit: int, reg: np.ndarray) -> int:
        """Nodes opened so far in this round (one more than the limit when it ran out)."""
        return limit - int(reg[NODES])

    def _poll(self, limit: int, reg: np.ndarray) -> str:
        if self.stop.is_set() or (self.cancel is not None and self.cancel.is_set()):
            return "stopped"
        if time.perf_counter() > self.deadline:
            return "time"
        if self.node_budget is not None and \
                self.total_nodes + self._used(limit, reg) > self.node_budget:
            return "node budget"
        return ""

    def _grow(self, reg: np.ndarray) -> None:
        """Doubles every stack with less room left than one step of the kernel may take."""
        def grown(a: np.ndarray, top: int, need: int) -> np.ndarray:
            if len(a) - top >= need:
                return a
            out = np.zeros((max(2 * len(a), top + need),) + a.shape[1:], a.dtype)
            out[:len(a)] = a
            return out
        before = sum(len(a) for a in (self.nb_idx, self.fl_idx, self.mem, self.frames))
        nb, fl = int(reg[NB_TOP]), int(reg[FL_TOP])
        self.nb_idx = grown(self.nb_idx, nb, self.max_degree)
        self.nb_old = grown(self.nb_old, nb, len(self.nb_idx) - nb)  # (as long as nb_idx)
        self.fl_idx = grown(self.fl_idx, fl, self.S)
        self.fl_old = grown(self.fl_old, fl, len(self.fl_idx) - fl)
        self.mem = grown(self.mem, int(reg[MEM_TOP]), 2 * self.n + 2 * self.S + 4)
        self.frames = grown(self.frames, int(reg[DEPTH]), 2)
        if len(self.cand) < len(self.frames) * BATCH:  # (BATCH a frame, at the same places)
            cand = np.zeros(len(self.frames) * BATCH, np.int32)
            cand[:len(self.cand)] = self.cand
            self.cand = cand
        if sum(len(a) for a in (self.nb_idx, self.fl_idx, self.mem, self.frames)) \
                == before:  # (the kernel would ask again, for ever)
            raise RuntimeError("dfs: the compiled search asked for room it has")
