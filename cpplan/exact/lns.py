"""Large neighbourhood search with CP-SAT, for components too large for one model.

The plan of one component (one pool) improves window by window: most blocks stay where they
are, a *window* of blocks is taken out and re-packed by the exact model
(:func:`cpplan.exact.model.build_model`) among the blocks that stay (its fixed obstacles), with
the current plan as hint, minimising the window's own height (the highest top among its
blocks). A re-packing is kept when it lowers that height: the blocks that reached the top leave
it, so the component's height never rises and drops once no block is left at the old top.

Windows (chosen at random from a seeded generator, so a deterministic run repeats itself):

* *line*: a block at the top (the pivot), and the blocks it would meet at a random lower
  offset with their nearest neighbours in bytes, over the pivot's lifetime: re-packed, they
  may open room for the pivot there (an ejection chain, found by CP-SAT);
* *peak*: a span of time around a moment of the pivot's lifetime, the blocks with the highest
  offsets in it (wholly above a line under the top);
* *band*: the blocks with the highest offsets over the whole component.

The window's size adapts: it grows while CP-SAT proves its windows optimal, and shrinks when a
window runs out of time (or of memory: :data:`cpplan.exact.cpsat.WINDOW_GROWTH_MB`). Every
window is exact within its neighbourhood, never for the whole component, so the search proves
nothing; it stops at the time limit, at the stop flag, or when
the height reaches the proven lower bound.

The idea is the classic LNS of constraint programming (Shaw, CP 1998); the windows in time
around the peak follow the way memory planners see the problem (the peak is where the bytes
are), nothing is taken from another project's code.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from ortools.sat.python import cp_model

from ..blocks import Blocks
from ..deadline import Budget
from .cpsat import WINDOW_GROWTH_MB, new_solver, run
from .heap import ceiling
from .model import build_model
from .outcome import Outcome

__all__ = ["improve", "WINDOW_START", "WINDOW_MIN", "WINDOW_MAX"]

WINDOW_START = 80  # blocks in the first window
WINDOW_MIN = 12
# Windows of hundreds of blocks among large domains rarely end within STEP_SECONDS, and their
# presolve can take hundreds of MB at once, faster than WINDOW_GROWTH_MB's watch can stop it.
WINDOW_MAX = 250
# CP-SAT threads per window by default: beside the rest of a large component's search, one;
# every thread holds its own copy of the model (S_1's peak memory: benchmarks/solve_memory.py).
LNS_WORKERS = 1
GRAVITY = 0.5  # share of windows that minimise their offsets' sum rather than their height
# Time per window: improvements come early, proofs late; many short windows go lower than
# fewer long ones (benchmarks/lns_steps.py).
STEP_SECONDS = 0.1
# Deterministic mode: nominal seconds to build a model, per block in it (building is Python
# work that CP-SAT's deterministic time does not count).
BUILD_SECONDS_PER_BLOCK = 2e-5


def _window(blocks: Blocks, ids: np.ndarray, offs: np.ndarray, k: int,
            rng: np.random.Generator) -> np.ndarray:
    """Positions (into ``ids``) of a window of at most ``k`` blocks, among them a block at
    the top (see the module docstring for the kinds of windows)."""
    size = blocks.size[ids]
    tops = offs + size
    height = tops.max()
    start, end = blocks.start[ids], blocks.end[ids]
    if len(ids) <= k:
        return np.arange(len(ids))
    at_top = np.flatnonzero(tops >= height)
    pivot = int(at_top[rng.integers(len(at_top))])
    kind = rng.random()
    if kind < 0.4:
        # Line: the blocks the pivot would meet at a lower offset, and their neighbours in
        # bytes over the pivot's lifetime; re-packed, they may open room for it there.
        line = int(rng.integers(0, max(int(height - size[pivot]), 1)))
        cand = np.flatnonzero((start < end[pivot]) & (end > start[pivot]))
        dist = np.maximum(np.maximum(offs[cand] - (line + size[pivot]), line - tops[cand]), 0)
        key = np.lexsort((rng.random(len(cand)), dist))
        win = cand[key[:k - 1]]
        return np.union1d(win, [pivot])
    if kind < 0.55:
        cand = np.arange(len(ids))  # band: the whole component
    else:
        # Peak: a span of time around a moment of the pivot's lifetime, narrow or wide.
        moment = int(rng.integers(start[pivot], max(end[pivot], start[pivot] + 1)))
        horizon = int(end.max() - start.min())
        width = max(int(horizon * 0.5 ** rng.integers(0, 14)), 1)
        t0, t1 = moment - width // 2, moment + width // 2 + 1
        cand = np.flatnonzero((start < t1) & (end > t0))
    if len(cand) > k:
        # Highest offsets first (the blocks wholly above a line under the top), ties at random.
        key = np.lexsort((rng.random(len(cand)), -offs[cand]))
        cand = cand[key[:k]]
    return cand


def _obstacles(blocks: Blocks, ids: np.ndarray, offs: np.ndarray, win: np.ndarray,
               floor: int) -> np.ndarray:
    """Positions of the blocks outside ``win`` that share a moment with one of its blocks and
    reach above ``floor``: the only ones the window's blocks can meet."""
    start, end = blocks.start[ids], blocks.end[ids]
    tops = offs + blocks.size[ids]
    mask = tops > floor
    mask[win] = False
    cand = np.flatnonzero(mask)
    order = np.argsort(start[win], kind="stable")
    ws, we = start[win][order], np.maximum.accumulate(end[win][order])
    # Window blocks starting before each candidate ends; does the latest end among them pass
    # the candidate's start?
    n_before = np.searchsorted(ws, end[cand], side="left")
    hit = n_before > 0
    hit[hit] = we[n_before[hit] - 1] > start[cand][hit]
    return cand[hit]


def improve(blocks: Blocks, ids: np.ndarray, offsets: np.ndarray, budget: Budget, *,
            lower: int = 0, workers: int = LNS_WORKERS, step: float = STEP_SECONDS,
            report: Callable[[int, np.ndarray], None] | None = None) -> Outcome:
    """Lower the height of the packing ``offsets`` of blocks ``ids`` (one pool, scaled units)
    until ``budget`` runs out, the stop flag is set, or the height reaches ``lower``.

    Returns ``feasible`` with the best offsets (never higher than the given packing; the same
    packing when no window improved it). ``report(height, offsets)`` is called on every
    improvement. Every accepted packing is valid when the given one is: each window is solved
    among all the blocks it can meet. ``workers``: CP-SAT's threads per window (more where
    the component is small enough for their copies of the model and has the machine to itself);
    ``step``: the seconds a window has (``benchmarks/lns_steps.py`` compares them).
    """
    ids = np.asarray(ids, np.int64)
    offs = np.asarray(offsets, np.int64).copy()
    size = blocks.size[ids]
    rng = np.random.default_rng(budget.seed)
    k = min(WINDOW_START, len(ids))
    windows = improved = 0
    memory_ceiling = ceiling(WINDOW_GROWTH_MB)  # (the whole search's, set once)
    overhead = 0.0  # the most a window took to choose and build, on the budget's clock
    while budget.remaining() > max(0.05, 2 * overhead):
        began = budget.elapsed()
        tops = offs + size
        height = int(tops.max())
        if height <= lower:
            break
        win = _window(blocks, ids, offs, k, rng)
        floor = int(offs[win].min())
        top_before = int(tops[win].max())
        obst = _obstacles(blocks, ids, offs, win, floor)
        pm = build_model(blocks, ids[win], height_max={0: top_before}, minimise=True,
                         strategy=None, hint=(np.zeros(len(win), np.int64), offs[win]),
                         obstacles=(ids[obst], offs[obst]), offset_min=floor)
        gravity = rng.random() < GRAVITY
        if gravity:
            # Lowest offsets in all under the window's height: blocks come down where they
            # can and leave room above them for later windows (a move on a plateau).
            pm.model.minimize(sum(o for o in pm.offset if not isinstance(o, int)))
        if budget.deterministic:
            budget.report(BUILD_SECONDS_PER_BLOCK * (len(win) + len(obst) + len(ids) / 100))
        # (On large components choosing a window costs time too: a window that starts must
        # end within the time limit.)
        overhead = max(overhead, budget.elapsed() - began)
        seconds = min(step, budget.remaining())
        if seconds <= 0.01:
            break
        solver = new_solver(budget, seconds, workers)
        status = run(budget, solver, pm.model, ceiling_mb=memory_ceiling)
        windows += 1
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            _pools, new = pm.read(solver)
            top_after = int((new + size[win]).max())
            if top_after < top_before or (top_after == top_before
                                          and new.sum() < offs[win].sum()):
                offs[win] = new
                improved += 1
                if report is not None and top_after < top_before:
                    report(int((offs + size).max()), offs)
        # Adapt: a window proven optimal could be larger; one that ran out of time, smaller.
        if status in (cp_model.OPTIMAL, cp_model.INFEASIBLE):
            k = min(int(k * 1.25) + 1, WINDOW_MAX, len(ids))
        elif status == cp_model.UNKNOWN:
            k = max(int(k * 0.7), WINDOW_MIN)
        del pm, solver  # (not held while the next window is chosen and built)
    return Outcome("feasible", np.zeros(len(ids), np.int64), offs,
                   detail=f"{improved} of {windows} windows improved")
