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
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import heapq
import os
import pickle
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..blocks import Blocks
from ..deadline import Budget
from .dfs import single_pool
from .dissection import dissections
from .outcome import Outcome

__all__ = ["tile", "tight_share", "is_tight", "TIGHT_FROM"]

# Blocks whose load is at the height over at least this share of their moments are *tight*:
# the tiling search is worth running on them (its inferences hold where the slack is zero).
TIGHT_FROM = 0.9

TILE_NODES_PER_SECOND = 20_000  # a conservative rate on this kind of machine: nodes as seconds
LUBY_UNIT = 2  # nodes per block in the first restart's limit
LUBY_FLOOR = 2000  # nodes, at least (small problems may need a long run: a few seconds)
WALK = 64  # segments walked to find how far a corner's block may reach (beyond: no inference)
POLL_EVERY = 256  # nodes between looks at the clock and the stop flags
# Restarts keep the deepest search's choices but for this share of them, picked at random
# (phase saving, as in SAT solvers), and break ties between candidates with noise of this size
# (scores move by 1 to 3 a feature): perfect packings of 2000 buffers, 4 of 4 rebuilt in 25 s,
# against 0 of 4 in 60 s with fresh restarts and ties alone.
FORGET = 0.1
NOISE = 2.5
_INF = 1 << 62
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
         stats: dict | None = None, resume: dict | None = None, merge: bool = True) -> Outcome:
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
    (its restarts and the deepest search's choices), instead of starting afresh. With ``merge``,
    the blocks merged into rectangles (:mod:`.dissection`) are searched first, for
    :data:`MERGED_SHARE` of the time.
    """
    ids = np.asarray(ids, np.int64)
    n = len(ids)
    if n == 0:
        return Outcome("feasible", np.zeros(0, np.int64), np.zeros(0, np.int64))
    pool = single_pool(blocks, ids)
    if pool is None:
        return Outcome("unknown", detail="tiling: several candidate pools")
    ptr = blocks.piece_ptr
    size = blocks.size[ids].astype(np.int64)
    first = ptr[ids]
    plain = ((ptr[ids + 1] - first) == 1) & (blocks.piece_lo[first] == 0) & \
        (blocks.piece_hi[first] == size)
    if not plain.all() or (blocks.fixed[ids] >= 0).any():
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
        memo[key] = _Attempts(size[live], align, local[:len(live)], local[len(live):], H,
                              merge)
        budget.report(len(live) * DISSECT_SECONDS_PER_BLOCK)
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
            helper = _Helper(search, (budget.seed, 1 + search.restarts), deadline)
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
                 H: int, merge: bool) -> None:
        # (dissection, its search, done) per share of the merges, fewer blocks first
        self.tries: list[list] = []
        if merge:
            sizes = {len(size)}
            for d in dissections(size, start, end, align, MERGED_SHARES):
                if len(d) in sizes:  # (nothing merged, or no fewer merges than the last)
                    continue
                sizes.add(len(d))
                local = np.unique(np.concatenate([d.start, d.end]), return_inverse=True)[1]
                classes = {r: c for r, c in enumerate(d.classes) if len(c) > 1 or c[0][1]}
                self.tries.append([d, _Tiling(d.size, d.align, local[:len(d)], local[len(d):],
                                              int(local.max()), H, classes), False])
        self._blocks = (size, align, start, end, H)

    @functools.cached_property
    def search(self) -> _Tiling:
        size, align, start, end, H = self._blocks
        return _Tiling(size, align, start, end, int(end.max()), H)

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


def _twin_main() -> None:
    """A twin search's process (``python -m cpplan.exact.tiling``): reads
    ``(problem, seed, seconds)`` pickled on stdin (``problem``: :class:`_Tiling`'s arguments),
    searches with its own random choices until an answer, the time, or the end of stdin (the
    parent gone), and writes ``(status, solution)`` pickled on stdout."""
    problem, seed, seconds = pickle.load(sys.stdin.buffer)
    stdin = sys.stdin.buffer

    def stopped() -> bool:
        return bool(select.select([stdin], [], [], 0)[0])

    search = _Tiling(*problem)
    status = search.run(seed, time.perf_counter() + seconds, None, stopped, noisy=True)
    with contextlib.suppress(BrokenPipeError, OSError):
        pickle.dump((status, search.solution if status == "feasible" else None),
                    sys.stdout.buffer)
        sys.stdout.buffer.flush()


class _Helper:
    """A twin of a search in a process of its own (see :data:`HELPER_FROM`). A plain
    subprocess, not :mod:`multiprocessing`: its start methods that do not fork (and forking a
    process that runs solver threads is unsafe) import the caller's main module again."""

    def __init__(self, search: _Tiling, seed: tuple, deadline: float) -> None:
        problem = (np.asarray(search.sz, np.int64), np.asarray(search.al, np.int64),
                   np.asarray(search.st, np.int64), np.asarray(search.en, np.int64),
                   search.T, search.H, search.classes)
        seconds = max(0.0, deadline - time.perf_counter()) if deadline < float("inf") else 3600
        # The child imports this very cpplan, wherever the caller found it.
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [root, *filter(None, [os.environ.get("PYTHONPATH")])]))
        self.proc = subprocess.Popen([sys.executable, "-m", "cpplan.exact.tiling"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        pickle.dump((problem, seed, seconds), self.proc.stdin)
        self.proc.stdin.flush()
        self.answer: tuple | None = None

    def answered(self) -> bool:
        """Whether the twin has a feasible packing or a proof (polled by the search)."""
        if self.answer is None and self.proc.poll() is not None:
            try:
                self.answer = pickle.load(self.proc.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                self.answer = ("unknown", None)
        return self.answer is not None and self.answer[0] in ("feasible", "infeasible")

    def close(self) -> tuple | None:
        """Stop the twin; its answer if it had one (``(status, solution)``)."""
        answered = self.answered()
        if self.proc.poll() is None:  # no answer to wait for: no need to end it gently
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                f.close()
        return self.answer if answered else None


def _latest_touching(stack: list[list], causes: list[tuple[int, int]]) -> int:
    """The index of the latest frame whose option's span of moments meets one of ``causes``
    (closed spans: a block that ends where a cause starts shapes it), or -1."""
    if len(causes) > 8:  # merged, so that the scan stays short
        causes.sort()
        merged = [causes[0]]
        for lo, hi in causes[1:]:
            if lo <= merged[-1][1]:
                if hi > merged[-1][1]:
                    merged[-1] = (merged[-1][0], hi)
            else:
                merged.append((lo, hi))
        causes[:] = merged
    for j in range(len(stack) - 1, -1, -1):
        s, e = stack[j][6]
        for lo, hi in causes:
            if s <= hi and lo <= e:
                return j
    return -1


def _luby(i: int) -> int:
    """The i-th term (from 1) of Luby's sequence 1, 1, 2, 1, 1, 2, 4, ..."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    while i != (1 << k) - 1:
        i -= (1 << (k - 1)) - 1
        k = 1
        while (1 << k) - 1 < i:
            k += 1
    return 1 << (k - 1)


class _Slack:
    """The slack per moment (height, less skyline, less the load still to place), with range
    add and range min / max: a segment tree whose nodes hold their subtree's extremes plus
    their own pending add."""

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
        if nb < 0:
            nb = self.n
        if b <= na or nb <= a:
            return -_INF
        if a <= na and nb <= b:
            return self.hi[node]
        mid = (na + nb) // 2
        return max(self.max(a, b, 2 * node, na, mid),
                   self.max(a, b, 2 * node + 1, mid, nb)) + self.add_[node]


class _NoSlack:
    """The slack of a problem tight at every moment: zero, and never to be spent."""

    def add(self, a: int, b: int, d: int) -> None:  # (never called: no waste fits)
        raise AssertionError("no slack to spend")

    def min(self, a: int, b: int) -> int:
        return 0

    def max(self, a: int, b: int) -> int:
        return 0


def _single_walls(by_start: dict[int, list[int]], by_end: dict[int, list[int]],
                  size: list[int]) -> dict[int, int]:
    """Moments ``t`` whose wall is one interval: the blocks ending at ``t`` and those starting
    there have equal total sizes, and no proper subsets of them with equal sums (subset sums
    as bit sets). Maps ``t`` to the wall's length."""

    def sums(members: list[int]) -> int:
        bits = 1
        for i in members:
            bits |= bits << size[i]
        return bits

    walls = {}
    for t in by_start.keys() & by_end.keys():
        total = sum(size[i] for i in by_start[t])
        if total != sum(size[i] for i in by_end[t]):
            continue
        common = sums(by_start[t]) & sums(by_end[t]) & ~1 & ~(1 << total)
        if common == 0:
            walls[t] = total
    return walls


class _Tiling:
    """The skyline search over ``n`` positive-size blocks in local time ``0..T``."""

    def __init__(self, size: np.ndarray, align: np.ndarray, start: np.ndarray,
                 end: np.ndarray, T: int, H: int,
                 classes: dict[int, tuple[tuple[int, int], ...]] | None = None) -> None:
        self.n, self.T, self.H = len(size), T, H
        self.sz, self.al = size.tolist(), align.tolist()
        # Blocks whose offsets may be in any of several classes (modulus, residue), rather
        # than the multiples of their alignment: merged blocks (:mod:`.dissection`) whose parts
        # have mixed alignments.
        self.classes = dict(classes or {})
        self.st, self.en = start.tolist(), end.tolist()
        load = np.zeros(T + 1, np.int64)
        np.add.at(load, start, size)
        np.add.at(load, end, -size)
        self.slack0 = (H - np.cumsum(load)[:T]).tolist()
        self.by_start: dict[int, list[int]] = {}
        self.by_end: dict[int, list[int]] = {}
        for i in range(self.n):
            self.by_start.setdefault(self.st[i], []).append(i)
            self.by_end.setdefault(self.en[i], []).append(i)
        self.starts = sorted(self.by_start)
        self.walls = _single_walls(self.by_start, self.by_end, self.sz)
        self.nodes = 0
        self.restarts = 0
        self.solution: list[int] = []
        self.deepest = 0
        self.saved: dict[int, int] = {}  # the deepest search's offsets (phase saving)

    # -- driver -------------------------------------------------------------------------------

    def run(self, seed: int | tuple, deadline: float, node_budget: int | None,
            stopped: Callable[[], bool], *, noisy: bool = False) -> str:
        """Restarts until an answer, the deadline, the node budget (a total over every call)
        or a stop: ``feasible``, ``infeasible`` (exhausted at zero slack everywhere) or
        ``unknown``. ``noisy``: random tie-breaking from the first restart on (a twin search's
        first restart would otherwise repeat the original's)."""
        if min(self.slack0) < 0:
            return "infeasible"  # the load alone is above H
        complete = max(self.slack0) == 0
        while True:
            self.restarts += 1
            limit = max(LUBY_UNIT * self.n, LUBY_FLOOR) * _luby(self.restarts)
            if node_budget is not None:
                limit = min(limit, node_budget - self.nodes)
                if limit <= 0:
                    return "unknown"
            rng = None if self.restarts == 1 and not noisy else \
                np.random.default_rng((*np.atleast_1d(seed).tolist(), self.restarts))
            status = self._search(limit, rng, deadline, stopped)
            if status == "feasible":
                return status
            if status == "exhausted":
                return "infeasible" if complete else "unknown"
            if status == "stopped":
                return "unknown"

    # -- one search ---------------------------------------------------------------------------

    def _search(self, limit: int, rng: np.random.Generator | None, deadline: float,
                stopped: Callable[[], bool]) -> str:
        n, T, H = self.n, self.T, self.H
        sz, al, st, en = self.sz, self.al, self.st, self.en
        classes = self.classes

        def aligned(i: int, y: int) -> int:
            """Block i's first allowed offset at or above y."""
            if i in classes:
                return min(y + (r - y) % m for m, r in classes[i])
            return -(-y // al[i]) * al[i]
        by_start, by_end, walls, starts = self.by_start, self.by_end, self.walls, self.starts
        slack = _NoSlack() if max(self.slack0) == 0 else _Slack(self.slack0)
        keep = {} if rng is None else {i: o for i, o in self.saved.items()
                                       if rng.random() >= FORGET}
        placed = [False] * n
        off = [0] * n
        seg_end = {0: T}  # segment start -> its end
        seg_y = {0: 0}  # segment start -> its height
        seg_at_end = {T: 0}  # segment end -> its start
        hull_lo: dict[int, int] = {}  # wall moment -> lowest byte of its placed blocks
        hull_hi: dict[int, int] = {}
        key: dict[int, tuple] = {}  # valley start -> its branching key
        heap: list = []  # (key, valley start), stale entries skipped
        undo: list[tuple] = []
        dirty: list[int] = []  # segments created since the last check
        failed: list[tuple[int, int]] = [(0, T)]  # the span of the last dead end's causes

        def set_seg(a: int, b: int, y: int) -> None:
            undo.append((0, a, seg_end.get(a), seg_y.get(a)))
            old = seg_end.get(a)
            if old is not None and seg_at_end.get(old) == a:
                undo.append((1, old, a))
                del seg_at_end[old]
            seg_end[a] = b
            seg_y[a] = y
            undo.append((1, b, seg_at_end.get(b)))
            seg_at_end[b] = a
            dirty.append(a)

        def del_seg(a: int) -> None:
            b = seg_end[a]
            undo.append((0, a, b, seg_y[a]))
            undo.append((1, b, seg_at_end[b]))
            del seg_end[a], seg_y[a]
            if seg_at_end.get(b) == a:
                del seg_at_end[b]
            set_key(a, None)

        def set_key(a: int, k: tuple | None) -> None:
            old = key.get(a)
            if old == k:
                return
            undo.append((2, a, old))
            if k is None:
                del key[a]
            else:
                key[a] = k
                heapq.heappush(heap, (k, a))

        def rollback(mark: int) -> None:
            while len(undo) > mark:
                op = undo.pop()
                kind = op[0]
                if kind == 0:
                    _, a, b, y = op
                    if b is None:
                        seg_end.pop(a, None)
                        seg_y.pop(a, None)
                    else:
                        seg_end[a], seg_y[a] = b, y
                elif kind == 1:
                    _, b, a = op
                    if a is None:
                        seg_at_end.pop(b, None)
                    else:
                        seg_at_end[b] = a
                elif kind == 2:
                    _, a, old = op
                    if old is None:
                        key.pop(a, None)
                    else:
                        key[a] = old
                        heapq.heappush(heap, (old, a))
                elif kind == 3:
                    placed[op[1]] = False
                elif kind == 4:
                    slack.add(op[1], op[2], op[3])
                else:
                    _, t, lo, hi = op
                    if lo is None:
                        del hull_lo[t], hull_hi[t]
                    else:
                        hull_lo[t], hull_hi[t] = lo, hi

        def raise_to(a: int, b: int, y: int) -> None:
            """Segment [a, b) rises to height y, merging with neighbours as high."""
            lo, hi = a, b
            prev = seg_at_end.get(a)
            if prev is not None and seg_y[prev] == y:
                lo = prev
                del_seg(prev)
            if b in seg_end and seg_y[b] == y:
                hi = seg_end[b]
                del_seg(b)
            del_seg(a)
            set_seg(lo, hi, y)

        def wall_tight(t: int) -> bool:
            return 0 < t < T and slack.max(t - 1, t + 1) == 0

        def fits(i: int, y: int) -> bool:
            """Block i at its first aligned offset from y: within H and its walls."""
            o = aligned(i, y)
            top = o + sz[i]
            if top > H:
                return False
            for t in (st[i], en[i]):
                w = walls.get(t)
                if w is not None and t in hull_lo and wall_tight(t) \
                        and max(hull_hi[t], top) - min(hull_lo[t], o) > w:
                    return False
            return True

        def reach_right(s0: int, y: int) -> int:
            r = seg_end[s0]
            for _ in range(WALK):
                if r == T or seg_y[r] > y:
                    return r
                r = seg_end[r]
            return T

        def reach_left(s0: int, y: int) -> int:
            r = s0
            for _ in range(WALK):
                if r == 0:
                    return 0
                p = seg_at_end[r]
                if seg_y[p] > y:
                    return r
                r = p
            return 0

        def left_candidates(s0: int, reach: int, y: int) -> list[int]:
            return [i for i in by_start.get(s0, ()) if not placed[i] and en[i] <= reach
                    and fits(i, y)]

        def right_candidates(s1: int, reach: int, y: int) -> list[int]:
            return [i for i in by_end.get(s1, ()) if not placed[i] and st[i] >= reach
                    and fits(i, y)]

        def covered(a: int, b: int, y: int) -> bool:
            """Valley [a, b) at zero slack throughout: its moments are covered by unplaced
            blocks that fit in it."""
            if slack.max(a, b) > 0:
                return True
            reach = a
            k = bisect.bisect_left(starts, a)
            while reach < b:
                if k >= len(starts) or starts[k] > reach:
                    return False
                for i in by_start[starts[k]]:
                    if not placed[i] and reach < en[i] <= b and fits(i, y):
                        reach = en[i]
                k += 1
            return True

        def examine(s0: int) -> bool:
            """The corners of segment s0 hold, and its valley key is up to date. On a dead end,
            ``failed`` holds the span of moments whose blocks made it (see :meth:`_search`)."""
            if check(s0):
                return True
            y = seg_y[s0]
            failed[0] = (reach_left(s0, y), reach_right(s0, y))
            return False

        def check(s0: int) -> bool:
            y, s1 = seg_y[s0], seg_end[s0]
            if y >= H:
                set_key(s0, None)
                return True
            prev = seg_at_end.get(s0)
            left_high = prev is None or seg_y[prev] > y
            right_high = s1 == T or seg_y[s1] > y
            n_left = n_right = _INF
            if left_high and slack.min(s0, s0 + 1) == 0:
                found = left_candidates(s0, s1 if right_high else reach_right(s0, y), y)
                if not found:
                    return False
                n_left = len(found)
            if right_high and slack.min(s1 - 1, s1) == 0:
                found = right_candidates(s1, s0 if left_high else reach_left(s0, y), y)
                if not found:
                    return False
                n_right = len(found)
            if left_high and right_high:
                if not covered(s0, s1, y):
                    return False
                set_key(s0, (min(n_left, n_right), y, s0))
            else:
                set_key(s0, None)
            return True

        def examine_dirty() -> bool:
            segs = set()
            for t in dirty:
                if t not in seg_end:
                    continue
                segs.add(t)
                p = seg_at_end.get(t)
                if p is not None:
                    segs.add(p)
                if seg_end[t] in seg_end:
                    segs.add(seg_end[t])
            dirty.clear()
            return all(examine(s0) for s0 in segs)

        def best_valley() -> int | None:
            while heap:
                k, a = heap[0]
                if key.get(a) == k and a in seg_end:
                    return a
                heapq.heappop(heap)
            return None

        def options(s0: int) -> list[tuple]:
            """The valley's blocks, at its corner with fewer candidates, best first; and the
            waste, last, where that corner has slack."""
            y, s1 = seg_y[s0], seg_end[s0]
            prev = seg_at_end.get(s0)
            py = seg_y[prev] if prev is not None else None
            ny = seg_y[s1] if s1 in seg_end else None
            tight_left = slack.min(s0, s0 + 1) == 0
            tight_right = slack.min(s1 - 1, s1) == 0
            left = left_candidates(s0, s1, y)
            right = right_candidates(s1, s0, y)
            use_right = tight_right and (not tight_left or len(right) < len(left))
            scored = []
            for i in (right if use_right else left):
                o = aligned(i, y)
                top = o + sz[i]
                score = 0.0  # flush edges first: a top level with a neighbour, an end at one
                if en[i] == s1:
                    score -= 2 + (ny is not None and top == ny)
                if st[i] == s0:
                    score -= 2 + (py is not None and top == py)
                for t in (st[i], en[i]):
                    if t in hull_lo and (hull_hi[t] == o or hull_lo[t] == top):
                        score -= 3  # next to a block of the same wall
                if keep.get(i) == o:
                    score -= 20  # where the deepest search so far put it
                if rng is not None:
                    score += NOISE * rng.random()
                scored.append(((score, -al[i], st[i] - en[i], -sz[i]), i, o))
            scored.sort(key=lambda s: s[0])
            opts: list[tuple] = [(i, o) for _, i, o in scored]
            if not (tight_right if use_right else tight_left):
                heights = [h for h in (py, ny) if h is not None]
                if heights:
                    opts.append((-1, min(heights)))
            return opts

        if not examine(0):
            return "exhausted"
        # A frame: [undo mark, valley, options, next option, blocks placed before it, causes,
        # the span of moments its current option touches]. Causes are spans of moments: every
        # decision whose option touches one (ends included) may be why an option failed.
        stack: list[list] = []
        count = 0
        polls = POLL_EVERY
        while count < n:
            a = best_valley()
            if a is not None:
                stack.append([len(undo), a, options(a), 0, count, [], (-1, -1)])
                dirty.clear()
            elif stack:  # no valley below H with blocks to place: the last choice moves on
                stack[-1][5].append((0, T))
            while True:
                self.nodes += 1
                limit -= 1
                polls -= 1
                if polls <= 0:
                    polls = POLL_EVERY
                    if stopped() or time.perf_counter() > deadline:
                        return "stopped"
                if limit < 0:
                    return "limit"
                if not stack:
                    return "exhausted"
                frame = stack[-1]
                mark, a, opts, k, count, causes = frame[:6]
                rollback(mark)
                dirty.clear()
                if k >= len(opts):
                    # Every option failed: so does the valley as it was made (the decisions
                    # touching it) with the causes of its options' failures. Back to the
                    # latest decision among those (conflict-directed backjumping, Prosser
                    # 1993): the ones after it touch none of the causes, and moving them
                    # would change nothing here.
                    causes.append((a, seg_end[a]))
                    stack.pop()
                    j = _latest_touching(stack, causes)
                    if j < 0:
                        return "exhausted"
                    del stack[j + 1:]
                    stack[j][5].extend(causes)
                    continue
                frame[3] = k + 1
                b, y = seg_end[a], seg_y[a]
                i, o = opts[k]
                if i < 0:  # waste: the valley rises to its lower neighbour
                    frame[6] = (a, b)
                    if slack.min(a, b) < o - y:
                        causes.append((a, b))
                        continue
                    slack.add(a, b, y - o)
                    undo.append((4, a, b, o - y))
                    raise_to(a, b, o)
                else:
                    s, e = st[i], en[i]
                    frame[6] = (s, e)
                    if o > y:
                        if slack.min(s, e) < o - y:
                            causes.append((s, e))
                            continue
                        slack.add(s, e, y - o)
                        undo.append((4, s, e, o - y))
                    if not fits(i, o):
                        causes.append((s, e))
                        continue
                    placed[i] = True
                    undo.append((3, i))
                    off[i] = o
                    count += 1
                    if count > self.deepest:
                        self.deepest = count
                        self.saved = {j: off[j] for j in range(n) if placed[j]}
                    top = o + sz[i]
                    for t in (s, e):
                        if t in walls:
                            undo.append((5, t, hull_lo.get(t), hull_hi.get(t)))
                            hull_lo[t] = min(hull_lo.get(t, o), o)
                            hull_hi[t] = max(hull_hi.get(t, top), top)
                    del_seg(a)  # [a, b) becomes [a, s) at y, [s, e) at top, [e, b) at y
                    if s > a:
                        set_seg(a, s, y)
                    if e < b:
                        set_seg(e, b, y)
                    set_seg(s, e, y)
                    raise_to(s, e, top)
                if examine_dirty():
                    break
                causes.append(failed[0])
        self.solution = off
        return "feasible"


if __name__ == "__main__":
    _twin_main()
