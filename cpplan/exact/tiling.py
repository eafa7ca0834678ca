"""A tiling search: packings that leave no byte unused where the load is at the height.

The exact engine's answer for *tight* problems, whose load equals the height at (nearly) every
moment: perfect packings (:mod:`cpplan.perfect`), where the optimum is the max-load and the
packing sought is a tiling of the strip. There every byte under the height is used at every
moment, which the search turns into strong inferences. The searches raced in probes
(:mod:`.dfs`, CP-SAT) know none of it and end 20-30 % above the optimum on perfect packings of
a thousand buffers, where this search rebuilds a tiling in seconds.

The search fills the space under a *skyline* (the top of the placed blocks, moment by moment:
segments of equal height) from below. Its facts, where the *slack* (the height, less the
skyline, less the blocks still to place alive at that moment) is zero, that is, where no byte
may stay unused:

* **valleys**: a segment whose neighbours are both higher. The block that will cover its
  bottom-left corner starts exactly at the segment's start, sits exactly on it, and ends within
  it (everything left of it and below it is taken); the same holds at its bottom-right corner
  with the end. So a valley's candidates are few, and a valley with none is a dead end; the
  search branches on the valley with the fewest candidates (lowest first among equals), at the
  corner with fewer of them: every tiling is reached this way, so a search exhausted at zero
  slack everywhere is a proof;
* **corners**: every segment with a higher neighbour needs a block that starts (ends) at that
  neighbour's edge, sits on the segment, and fits in the span of skyline at most as high;
* **walls**: at a moment ``t`` the bytes freed by the blocks that end there are exactly the
  bytes taken by the blocks that start there. When no proper subset of their sizes adds up
  alike (checked once, with sums as bit sets), those bytes are one interval of known length,
  and every block starting or ending at ``t`` lies in it;
* **cover**: the floor of a valley is covered, moment by moment, by blocks placed on it, which
  lie within the valley: unplaced blocks that fit in it must cover each of its moments.

Where the slack is positive a valley may also be left partly empty ("waste": raised to its lower
neighbour, the bytes charged to the slack), so on other problems the search is a heuristic (its
"no" is no proof). A dead end sends the search back to the latest decision that touched the
moments of its causes (conflict-directed backjumping), not merely the latest one. Searches are
heavy-tailed: the search restarts, node limits following Luby's sequence (Luby, Sinclair and
Zuckerman, 1993), keeping most of the deepest search's choices (phase saving) and breaking the
candidates' ties at random. With two workers or more, a twin search with other random choices
runs in a process of its own on the core this one leaves idle (:data:`HELPER_FROM`), and the
first answer wins: perfect packings of 2000 buffers, 6 of 8 within ``solve``'s 60 s against 5 of
8 alone.

The inferences are cpplan's own; the skyline is the classic structure of strip-packing
heuristics, here with the time side of every rectangle fixed.

This module decides what to search and for how long (:func:`tile`); the search itself is
:class:`cpplan.exact.tiling_search.TilingSearch`, its twin process :mod:`cpplan.exact.twin`,
the slack per moment a :class:`cpplan.segtree.RangeAddTree`.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time

import numpy as np

from ..blocks import Blocks
from ..deadline import Budget
from .dfs import plain, single_pool
from .dissection import Dissection, dissections
from .outcome import Outcome
from .tiling_search import TilingSearch
from .twin import Twin

__all__ = ["tile", "tight_share", "is_tight", "merge_deadline", "TIGHT_FROM",
           "TILE_NODES_PER_SECOND"]

# Blocks whose load is at the height over at least this share of their moments are *tight*:
# the tiling search is worth running on them (its inferences hold where the slack is zero).
TIGHT_FROM = 0.9

TILE_NODES_PER_SECOND = 20_000  # a conservative rate on this kind of machine: nodes as seconds
# In wall-clock mode with two workers or more, a search of this many blocks or more has a twin
# in a process of its own, on the core the search leaves idle: the same problem, other random
# choices (the searches are heavy-tailed: two draws halve the chance of a long run). Smaller
# ones answer faster than a process starts.
HELPER_FROM = 300
# The share of a call's time (or nodes) that the search of the blocks merged into rectangles
# (:mod:`.dissection`) may take before the search of the blocks themselves: it answers perfect
# packings of 10000 buffers in a second (merged into one to a hundred blocks), or not at all.
MERGED_SHARE = 0.3
# The shares of the merges kept, one search each, in turn: the last merges are the likelier to
# be chance matches (aligned perfect packing of 2000 buffers, seed 3: all merges, 43 blocks that
# do not fit; the first 98 %, 93 blocks packed in 0.01 s).
MERGED_SHARES = (1.0, 0.98, 0.95)
DISSECT_SECONDS_PER_BLOCK = 1e-4  # what merging costs (deterministic time): 10000 blocks, 0.7 s
# Merging for several searches (:func:`merge_deadline`): at most so many seconds a block, where
# it pays it ends within a quarter of that (perfect packings: 0.28 s for 2000 blocks, 0.57 s
# for 10000), where it does not it may run on (aligned mosaic packings of 2000: 10 s).
MERGE_SECONDS_PER_BLOCK = 4 * DISSECT_SECONDS_PER_BLOCK


def merge_deadline(budget: Budget, blocks: int) -> float:
    """The moment (``time.perf_counter()``) until which the blocks of searches given
    ``budget`` may be merged into rectangles (:func:`tile`'s ``merge_until``), once for all of
    them: :data:`MERGED_SHARE` of the time left, at most :data:`MERGE_SECONDS_PER_BLOCK` a
    block. A share of the first search's time would be too short where a glance comes first
    (merging 2500 blocks takes 0.2 s, the first look of a 5 s solve had 0.06 s), and what it
    merged is what the searches after it search."""
    return budget.deadline(min(MERGED_SHARE * budget.remaining(),
                               MERGE_SECONDS_PER_BLOCK * blocks))


def tight_share(blocks: Blocks, ids: np.ndarray, height: int) -> float:
    """The share of the moments (in time steps) that blocks ``ids`` span where their load is
    ``height`` (scaled): 1.0 for a perfect packing at its optimum."""
    ids = np.asarray(ids, np.int64)
    if len(ids) == 0:
        return 0.0
    start, end = blocks.start[ids], blocks.end[ids]
    t0, t1 = int(start.min()), int(end.max())
    load = np.zeros(t1 - t0 + 1, np.int64)
    np.add.at(load, start - t0, blocks.size[ids])
    np.add.at(load, end - t0, -blocks.size[ids])
    load = np.cumsum(load)[:-1]
    steps = np.diff(blocks.times[t0:t1 + 1])
    return float(steps[load >= height].sum() / max(int(steps.sum()), 1))


def is_tight(blocks: Blocks, ids: np.ndarray, height: int) -> bool:
    """Whether blocks ``ids`` (in one pool) are tight at ``height``: see :data:`TIGHT_FROM`."""
    return single_pool(blocks, ids) is not None and \
        tight_share(blocks, ids, height) >= TIGHT_FROM


def tile(blocks: Blocks, ids: np.ndarray, height: int, budget: Budget, *,
         node_budget: int | None = None, cancel: threading.Event | None = None,
         stats: dict | None = None, resume: dict | None = None, merge: bool = True,
         merge_until: float | None = None) -> Outcome:
    """Do blocks ``ids`` fit in their pool at most ``height`` high (scaled units)? Answered by
    the tiling search (module docstring).

    ``feasible`` comes with ``pools`` and ``offsets`` per id (aligned, no two blocks that share
    a moment overlap, every top within ``height`` and the capacity); ``infeasible`` only when a
    search ran to exhaustion with zero slack at every moment (a proof); otherwise ``unknown``:
    ``budget``, ``node_budget`` (the deterministic limit, in nodes), the stop flags or
    ``cancel`` ended it, or the input is declined (several candidate pools, blocks with several
    pieces, fixed offsets). The nodes searched are charged to ``budget`` at
    :data:`TILE_NODES_PER_SECOND`.
    ``stats`` (a dict) receives ``nodes`` and ``restarts``. A call given the same ``resume``
    dict as an earlier one on the same blocks and height goes on from where that one stopped
    (its restarts and the deepest search's choices), instead of starting afresh; at another
    height, it searches the blocks that one merged (merging does not depend on the height).
    With ``merge``, the blocks merged into rectangles (:mod:`.dissection`) are searched first, for
    :data:`MERGED_SHARE` of the time; merging itself stops at that share of ``budget``, or at
    ``merge_until`` (``time.perf_counter()``: a glance, resumed later, may merge for as long as
    the calls to come).
    """
    ids = np.asarray(ids, np.int64)
    n = len(ids)
    if n == 0:
        return Outcome("feasible", np.zeros(0, np.int64), np.zeros(0, np.int64))
    pool = single_pool(blocks, ids)
    if pool is None:
        return Outcome("unknown", detail="tiling: several candidate pools")
    size = blocks.size[ids].astype(np.int64)
    if not plain(blocks, ids).all() or (blocks.fixed[ids] >= 0).any():
        return Outcome("unknown", detail="tiling: blocks with pieces or fixed offsets")
    cap = int(blocks.pool_capacity[pool])
    H = int(height) if cap < 0 else min(int(height), cap)
    offsets = np.zeros(n, np.int64)
    pools = np.full(n, pool, np.int64)
    live = np.flatnonzero(size > 0)
    if len(live) == 0:
        return Outcome("feasible", pools, offsets, detail="tiling")
    if (size > H).any():
        return Outcome("infeasible", detail="tiling: a block is taller than the height")
    # Local time: the ranks of the live blocks' starts and ends.
    start, end = blocks.start[ids[live]], blocks.end[ids[live]]
    local = np.unique(np.concatenate([start, end]), return_inverse=True)[1]
    align = np.fromiter((blocks.align_in(i, pool) for i in ids[live].tolist()), np.int64,
                        len(live))
    key = (H, ids.tobytes(), merge)
    memo = {} if resume is None else resume
    if key not in memo:
        # The blocks merged into rectangles, whatever the height (a bisection's probes at
        # other heights search them again, not merge them again). Merging stops at the merged
        # searches' share of the time (wall-clock mode; in deterministic mode its work is
        # bounded, and charged here), and takes it from them.
        merges = ("dissections", ids.tobytes())
        if merge and merges not in memo:
            memo[merges] = dissections(
                size[live], local[:len(live)], local[len(live):], align, MERGED_SHARES,
                deadline=budget.deadline(MERGED_SHARE * budget.remaining())
                if merge_until is None else merge_until)
            budget.report(len(live) * DISSECT_SECONDS_PER_BLOCK)
        memo[key] = _Attempts(size[live], align, local[:len(live)], local[len(live):], H,
                              memo[merges] if merge else [])
    attempts = memo[key]
    merged_before = attempts.reduced_nodes()
    solution = attempts.merged(budget, node_budget, cancel)
    if solution is not None:
        offsets[live] = solution
        if stats is not None:
            stats.update(nodes=attempts.reduced_nodes(),
                         restarts=sum(search.restarts for _d, search, _done in attempts.tries))
        merged = next(search.n for _d, search, _done in attempts.tries if search.solution)
        return Outcome("feasible", pools, offsets,
                       detail=f"tiling of {merged} merged blocks, "
                       f"{attempts.reduced_nodes()} nodes")
    if node_budget is not None:
        node_budget -= attempts.reduced_nodes() - merged_before
    search = attempts.search
    before = search.nodes
    deadline = budget.deadline()
    helper = None
    if budget.workers >= 2 and len(live) >= HELPER_FROM and os.name == "posix" \
            and sys.executable:
        try:
            helper = Twin(search, (budget.seed, 1 + search.restarts), deadline)
        except OSError:  # no interpreter to start (an embedded Python): search alone
            helper = None

    def stopped() -> bool:
        return budget.stopped or (cancel is not None and cancel.is_set()) or \
            (helper is not None and helper.answered())

    try:
        status = search.run(budget.seed, deadline,
                            None if node_budget is None else before + node_budget, stopped)
    finally:
        budget.report((search.nodes - before) / TILE_NODES_PER_SECOND)
    solution = search.solution
    detail = f"tiling, {search.nodes} nodes, {search.restarts} restarts"
    if helper is not None:
        got = helper.close()
        if status not in ("feasible", "infeasible") and got is not None:
            status, solution = got
            detail += ", answered by the helper process"
    if stats is not None:
        stats.update(nodes=search.nodes, restarts=search.restarts)
    if status == "feasible":
        offsets[live] = solution
        return Outcome("feasible", pools, offsets, detail=detail)
    if status == "infeasible":
        return Outcome("infeasible", detail=detail)
    return Outcome("unknown", detail=detail)


class _Attempts:
    """The searches of one tight problem at one height, kept across calls: first on the blocks
    merged into rectangles (:mod:`.dissection`), a heuristic (a packing of the merged blocks is
    one of the blocks; their "no" proves nothing), all merges and then fewer
    (:data:`MERGED_SHARES`), then on the blocks themselves."""

    def __init__(self, size: np.ndarray, align: np.ndarray, start: np.ndarray, end: np.ndarray,
                 H: int, merged: list[Dissection]) -> None:
        # (dissection, its search, done) per share of the merges, fewer blocks first
        self.tries: list[list] = []
        sizes = {len(size)}
        for d in merged:
            if len(d) in sizes:  # (nothing merged, or no fewer merges than the last)
                continue
            sizes.add(len(d))
            local = np.unique(np.concatenate([d.start, d.end]), return_inverse=True)[1]
            classes = {r: c for r, c in enumerate(d.classes) if len(c) > 1 or c[0][1]}
            self.tries.append([d, TilingSearch(d.size, d.align, local[:len(d)],
                                               local[len(d):], int(local.max()), H, classes),
                               False])
        self._blocks = (size, align, start, end, H)

    @functools.cached_property
    def search(self) -> TilingSearch:
        size, align, start, end, H = self._blocks
        return TilingSearch(size, align, start, end, int(end.max()), H)

    def reduced_nodes(self) -> int:
        return sum(search.nodes for _d, search, _done in self.tries)

    def merged(self, budget: Budget, node_budget: int | None,
               cancel: threading.Event | None) -> list[int] | None:
        """The blocks' offsets from a packing of the merged blocks, found within
        :data:`MERGED_SHARE` of the budget (or nodes; what a try does not use, the next one
        has), or None."""
        for d, search, _done in self.tries:
            if search.solution:  # (asked again after an answer)
                return d.offsets(np.asarray(search.solution, np.int64)).tolist()
        pending = [t for t in self.tries if not t[2]]
        ends = budget.deadline(MERGED_SHARE * budget.remaining())
        nodes_left = None if node_budget is None else int(MERGED_SHARE * node_budget)

        def stopped() -> bool:
            return budget.stopped or (cancel is not None and cancel.is_set())

        for k, attempt in enumerate(pending):
            d, search, _done = attempt
            before, share = search.nodes, 1 / (len(pending) - k)
            deadline = time.perf_counter() + share * max(0.0, ends - time.perf_counter())
            nodes = None if nodes_left is None else before + int(share * nodes_left)
            try:
                status = search.run(budget.seed, deadline, nodes, stopped)
            finally:
                budget.report((search.nodes - before) / TILE_NODES_PER_SECOND)
            if nodes_left is not None:
                nodes_left -= search.nodes - before
            if status == "feasible":
                return d.offsets(np.asarray(search.solution, np.int64)).tolist()
            attempt[2] = status == "infeasible"  # (of these merged blocks only: no proof)
            if stopped():
                break
        return None
