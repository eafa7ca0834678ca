"""Exact at the peak, greedy elsewhere: a construction for components too large for one model.

On the graphs of real training runs the max-load is reached in a narrow span of time (the turn
from the forward to the backward pass), and the rest of the schedule has bytes to spare. A
greedy plan's excess over the max-load comes from that span: a few holes in the column of the
peak moment, under long-lived buffers that hold everything above them up. So:

1. **window**: the blocks alive within a few moments of the peak (a few hundred to a few
   thousand; :data:`SPANS`), alone and then with the large blocks of the peak's region
   (:data:`REGION_SLACK`, :data:`LARGE_SHARE`: left out, they are what the fill fails on), are
   packed at the target height, in turn: as the best plan has them (those it has within the
   target; the others join the fill), by best-fit in the orders size, conflicts and lifetime
   (lifetimes seen within the window's span), and, for windows up to :data:`PROBE_UP_TO`
   blocks, by a dive of the branch-and-bound search (:mod:`.dfs`) in each of its preorders, or
   when none packs the window by a raced probe (:func:`.search.probe`: the search and CP-SAT).
   Blocks alive in a span of time share a moment with each other there if they share one at all
   (intervals have the Helly property), so nothing is clipped: the window is a set of whole
   blocks. A window's packings and their fills are found once and remembered;
2. **fill**: around each packing of the window, with its blocks fixed, the others are placed
   by first-fit and best-fit in fit.py's orders (:data:`FILLS`,
   :class:`cpplan.planners.placer.Placer`), and the lowest plan is kept;
3. **grow**: windows of wider spans around the peak are tried in turn (from the narrowest
   again after each improvement); then, while the plan is above the target, a window takes in
   the blocks alive around the moments where its fills went over it, and both steps run again.

A window packed at the target makes the plan optimal when the fill stays within it (the target
is the proven lower bound). A window proven not to fit at the target proves the whole component
does not either (its blocks are a subset): the bound rises. Measured on idealloc's sets (60 s,
``cpplan solve``): pangu_2.6B (18692 buffers) and Y_1 (62185) reach their max-load, i.e. are
solved to optimality, in a few seconds, where best-fit alone ends 0.76 % and 0.36 % above it;
S_1 (28526) ends 0.001 % above it (17 KB of 1.5 GB), where best-fit ends 0.39 % above.

The idea is cpplan's own, after the observation above; it is the "critical region first" of
scheduling heuristics applied to the peak of the load profile, with the exact engine where a
greedy order fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from ..blocks import Blocks
from ..deadline import Budget, OutOfTime
from ..errors import CapacityError
from ..planners.fit import order_blocks
from ..planners.placer import Placer
from .cpsat import WINDOW_GROWTH_MB
from .dfs import fit, preorders, single_pool
from .outcome import Outcome
from .search import DIVE_NODES_PER_BLOCK, probe

__all__ = ["peak_first", "SPANS", "GROWTH_SPAN", "MAX_WINDOW", "PROBE_UP_TO", "PROBE_MAX_SECONDS"]

SPANS = (5, 20, 80)  # moments on each side of the peak whose live blocks form a window
# Each span's window is tried again with the large blocks of the peak's region added: blocks of
# at least LARGE_SHARE of the target alive where the load is within REGION_SLACK of the peak's.
# Packed outside the window, they are what the fill fails on (on idealloc's S_1, blocks of 8 to
# 256 MiB a few hundred moments from the peak, behind a window packed as if they did not exist).
REGION_SLACK = 0.1
LARGE_SHARE = 1e-3
GROWTH_SPAN = 20  # the same, around each moment a growing window takes in
MAX_WINDOW = 6000  # blocks; beyond this the window is not packed
PROBE_UP_TO = 3000  # blocks; a window this small is probed when no greedy order packs it
MOMENTS_PER_GROWTH = 5  # critical moments a growth step takes in
PROBE_SHARE = 0.5  # of the budget left, at most, for one window's probe
PROBE_SECONDS_PER_BLOCK = 5e-4  # the least a probe's share must be, per block of the window
# The most a window's probe may take: on windows of thousands of blocks it answers early or not
# at all, and CP-SAT's memory grows with its search time on models that large (each bound it
# learns on an offset is a new literal), past the solve's memory limit within seconds
# (benchmarks/solve_memory.py).
PROBE_MAX_SECONDS = 4.0
# The fill's (order, mode) pairs, tried in turn (measured on idealloc's sets: first-fit in size
# order reaches Y_1's max-load, best-fit in area order gives S_1's lowest fill).
FILLS = (("size", "first"), ("size", "best"), ("area", "best"))
FILLS_ORDERS = tuple(dict.fromkeys(name for name, _ in FILLS))


def peak_first(blocks: Blocks, ids: np.ndarray, offsets: np.ndarray | None, budget: Budget,
               *, target: int,
               report: Callable[[int, np.ndarray], None] | None = None) -> Outcome:
    """Pack component ``ids`` (one pool, scaled units) exact at the peak and greedy elsewhere
    (module docstring), aiming at height ``target``; ``offsets`` is the best packing so far
    (None: there is none, e.g. no heuristic met the pool's capacity).

    Returns ``feasible`` with the lowest packing found (``offsets`` itself when nothing was
    lower; ``unknown`` when there is still none), and ``bound=target + 1`` when a window was
    proven not to fit at ``target``.
    ``report(height, offsets)`` is called on every packing lower than the best so far. Every
    packing returned is valid: the window comes from the exact engine or the placer, the fill
    from the placer, which places no block where it meets one already placed.
    """
    ids = np.asarray(ids, np.int64)
    size = blocks.size[ids]
    start, end = blocks.start[ids], blocks.end[ids]
    best = None if offsets is None else np.asarray(offsets, np.int64).copy()
    best_h = np.inf if best is None else int((best + size).max())
    if best_h <= target or len(ids) == 0:
        return _result(ids, best)
    # Load profile over the component's moments.
    t0, t1 = int(start.min()), int(end.max())
    load = np.zeros(t1 - t0 + 1, np.int64)
    np.add.at(load, start - t0, size)
    np.add.at(load, end - t0, -size)
    load = np.cumsum(load)[:-1]
    # The fill's orders (fit.py's, as positions into ids).
    position = np.full(len(blocks), -1, np.int64)
    position[ids] = np.arange(len(ids))
    fill_orders = {}
    for name in FILLS_ORDERS:
        o = order_blocks(blocks, name)
        fill_orders[name] = position[o[position[o] >= 0]]
    placer = Placer(blocks)
    peak = t0 + int(np.argmax(load))
    large = _large_near_peak(blocks, ids, load, t0, peak, target)
    tried = 0
    # the lowest fill of the last window tried, for the growth steps
    worst_fill: np.ndarray | None = None
    # Fills are deterministic: a window packed the same way as before is not filled again
    # (the greedy packings of a window come back unchanged whenever its span is tried).
    filled: dict[bytes, tuple[int, np.ndarray] | None] = {}
    # The same holds for the packings of a window: searched once, replayed after.
    generated: dict[bytes, tuple[list[Outcome], Iterator[Outcome]]] = {}

    def packings(win: np.ndarray, hull: tuple[int, int]) -> Iterator[Outcome]:
        """The window's packings: the best plan's own (its blocks of the window that are
        within the target; the others, at -1, join the fill), then those of
        :func:`_window_packings`, found once per window and replayed when it comes again."""
        if best is not None:
            own = best[win]
            within = own + size[win] <= target
            if within.any():
                yield Outcome("feasible", offsets=np.where(within, own, -1),
                              detail="the best plan's")
        key = win.tobytes() + np.array(hull, np.int64).tobytes()
        if key not in generated:
            generated[key] = ([], _window_packings(blocks, ids, win, hull, placer, budget,
                                                   target))
        done, more = generated[key]
        k = 0
        while True:
            if k == len(done):
                found = next(more, None)
                if found is None:
                    return
                done.append(found)
            yield done[k]
            k += 1

    def attempt(moments: list[int], span: int, window: np.ndarray) -> bool | None:
        """Pack the blocks alive within ``span`` of ``moments`` (added to ``window``) and
        fill around each packing. True: a proof that the target is out of reach; None: no
        new packing of this window (none within the time, or only packings filled before)."""
        nonlocal best, best_h, tried, worst_fill
        for m in moments:
            window |= (start < m + span + 1) & (end > m - span)
        win = np.flatnonzero(window)
        if len(win) > MAX_WINDOW:
            return None
        hull = (min(moments) - span, max(moments) + span + 1)
        fills: list[tuple[int, np.ndarray]] = []
        before = tried
        for packed in packings(win, hull):
            if packed.status == "infeasible":
                return True
            key = win.tobytes() + packed.packing.tobytes()
            if key in filled:
                if (got := filled[key]) is not None:
                    fills.append(got)
                continue
            tried += 1
            offs = _fill(blocks, ids, window, fill_orders, placer, packed.packing, budget,
                         target, best_h)
            if offs is None:
                continue  # (out of time: not remembered)
            h = int((offs + size).max())
            filled[key] = (h, offs)
            fills.append((h, offs))
            if h < best_h:
                best, best_h = offs, h
                if report is not None:
                    report(h, best)
            if h <= target:
                break
        worst_fill = min(fills, key=lambda f: f[0])[1] if fills else None
        return False if fills and tried > before else None

    def proof(win_size: int) -> Outcome:
        return _result(ids, best, bound=target + 1,
                       detail=f"a window of {win_size} blocks does not fit at {target}")

    # Windows of growing spans around the peak, each alone and then with the region's large
    # blocks, packed afresh; after an improvement the spans start again (the new plan's own
    # window may now be within the target).
    seeds = [(span, with_large) for span in SPANS for with_large in (False, True)
             if not with_large or large.any()]
    k = 0
    while k < len(seeds) and best_h > target and budget.remaining() > 0.05:
        before = best_h
        span, with_large = seeds[k]
        window = large.copy() if with_large else np.zeros(len(ids), bool)
        if attempt([peak], span, window):
            return proof(int(window.sum()))
        k = 0 if best_h < before else k + 1
    # Then one window grows around the moments where its fills go over the target.
    window = np.zeros(len(ids), bool)
    moments = [peak]
    while best_h > target and budget.remaining() > 0.05:
        got = attempt(moments, GROWTH_SPAN, window)
        if got:
            return proof(int(window.sum()))
        if got is None or worst_fill is None:
            break
        tops = worst_fill + size
        over = np.flatnonzero(tops > target)
        over = over[np.argsort(-tops[over], kind="stable")][:MOMENTS_PER_GROWTH]
        moments = [int(start[i]) + int(np.argmax(load[start[i] - t0:end[i] - t0]))
                   for i in over.tolist()]
    return _result(ids, best, detail=f"{tried} window packings, height {best_h}")


def _large_near_peak(blocks: Blocks, ids: np.ndarray, load: np.ndarray, t0: int, peak: int,
                     target: int) -> np.ndarray:
    """Mask over ``ids``: the blocks of at least :data:`LARGE_SHARE` of ``target`` alive in the
    moments around ``peak`` where the load stays within :data:`REGION_SLACK` of its peak."""
    high = load >= (1 - REGION_SLACK) * load[peak - t0]
    r0 = r1 = peak - t0
    while r0 > 0 and high[r0 - 1]:
        r0 -= 1
    while r1 + 1 < len(load) and high[r1 + 1]:
        r1 += 1
    start, end = blocks.start[ids], blocks.end[ids]
    return (start <= t0 + r1) & (end > t0 + r0) & (blocks.size[ids] >= LARGE_SHARE * target)


def _result(ids: np.ndarray, best: np.ndarray | None, *, bound: int | None = None,
            detail: str = "") -> Outcome:
    if best is None:
        return Outcome("unknown", bound=bound, detail=detail)
    return Outcome("feasible", np.zeros(len(ids), np.int64), best, bound=bound, detail=detail)


def _window_packings(blocks: Blocks, ids: np.ndarray, win: np.ndarray, span: tuple[int, int],
                     placer: Placer, budget: Budget, target: int) -> Iterator[Outcome]:
    """Packings of the window's blocks (positions ``win`` into ``ids``, alive in the moments
    ``span``) within ``target``, as ``feasible`` outcomes with their offsets, distinct ones
    only: best-fit's in each order that reaches the target, then, for windows of at most
    :data:`PROBE_UP_TO` blocks, a dive of the branch-and-bound search in each of its preorders
    and, when none of them packed the window, a raced probe's (their packings differ from the
    greedy ones: on idealloc's S_1 only their fills improve on the greedy plan). A search may
    also answer ``infeasible``: a proof, and the last item; ``unknown`` yields nothing."""
    w_ids = ids[win]
    size, start, end = blocks.size[w_ids], blocks.start[w_ids], blocks.end[w_ids]
    # Lifetimes within the window's span: the orders see the window as a problem of its own.
    life = np.minimum(end, span[1]) - np.maximum(start, span[0])
    ends, starts = np.sort(end), np.sort(start)
    meets = np.searchsorted(starts, end, side="left") - np.searchsorted(ends, start, "right")
    k = np.arange(len(w_ids))
    orders = {"size": np.lexsort((k, start, -size)),
              "conflicts": np.lexsort((k, start, -size, -meets)),
              "lifetime": np.lexsort((k, start, -size, -life))}
    seen: list[np.ndarray] = []
    for name, order in orders.items():
        offs = _place(blocks, placer, [], w_ids[order], "best", budget)
        if offs is None or int((offs[w_ids] + size).max()) > target:
            continue
        got = offs[w_ids]
        if any(np.array_equal(got, other) for other in seen):
            continue
        seen.append(got)
        yield Outcome("feasible", offsets=got, detail=f"best-fit, {name} order")
    # A dive of the branch-and-bound search in each of its preorders, then, when none packed
    # the window, a raced probe. Each preorder packs the window differently, and the fills
    # around them differ by orders of magnitude (S_1's window of the peak and its large
    # blocks: 208 KB over the target after WAT's packing, 17 KB after TWA's). (A search's
    # setup, and a probe's models', is not interruptible: about a second for 2600 blocks;
    # each starts only with time for more than that.)
    def affordable() -> bool:
        return PROBE_SHARE * budget.remaining() >= PROBE_SECONDS_PER_BLOCK * len(w_ids)

    dived = False
    if len(w_ids) <= PROBE_UP_TO and single_pool(blocks, w_ids) is not None:
        for preorder in preorders(blocks, w_ids):
            if not affordable():
                return
            out = fit(blocks, w_ids, target, budget.share(PROBE_SHARE),
                      node_budget=DIVE_NODES_PER_BLOCK * len(w_ids), heuristics=(preorder,))
            if out.status == "infeasible":
                yield out
                return
            if out.status == "feasible":
                dived = True
                packed = out.packing
                if not any(np.array_equal(packed, other) for other in seen):
                    seen.append(packed)
                    yield out
    if not dived and len(w_ids) <= PROBE_UP_TO and affordable():
        seconds = min(PROBE_SHARE * budget.remaining(), PROBE_MAX_SECONDS)
        out = probe(blocks, w_ids, {0: target}, budget.within(seconds),
                    growth_mb=WINDOW_GROWTH_MB)
        if out.status in ("feasible", "infeasible"):
            yield out


def _fill(blocks: Blocks, ids: np.ndarray, window: np.ndarray, orders: dict[str, np.ndarray],
          placer: Placer, packed: np.ndarray, budget: Budget, target: int,
          best: float) -> np.ndarray | None:
    """The component's offsets with the window at ``packed`` (but its blocks at -1) and the
    other blocks placed around it, or None when time ran out. The fills of :data:`FILLS` are
    tried in turn until one reaches ``target`` (the lowest is returned); after the first, only
    when it came below ``best``, the best height so far (a window that leaves no room
    elsewhere is not worth three fills)."""
    stay = packed >= 0
    fixed = list(zip(ids[window][stay].tolist(), packed[stay].tolist(), strict=True))
    placed = window.copy()
    placed[np.flatnonzero(window)[~stay]] = False
    found = None
    for name, mode in FILLS:
        if found is not None and (found[0] <= target or found[0] >= best):
            break
        order = orders[name]
        offs = _place(blocks, placer, fixed, ids[order[~placed[order]]], mode, budget)
        if offs is None:
            continue
        h = int((offs[ids] + blocks.size[ids]).max())
        if found is None or h < found[0]:
            found = (h, offs[ids].copy())
    return None if found is None else found[1]


def _place(blocks: Blocks, placer: Placer, fixed: list[tuple[int, int]], order: np.ndarray,
           mode: str, budget: Budget) -> np.ndarray | None:
    """Offsets (over all blocks) after putting ``fixed`` and placing ``order`` by ``mode``;
    None when the budget ran out or a capacity was met."""
    if budget.remaining() <= 0:
        return None
    placer.clear()
    for i, off in fixed:
        placer.put(i, 0, off)
    try:
        with budget.active():  # every placement ticks (deterministic time, expiry, Ctrl-C)
            placer.place_order(order, mode)
    except (CapacityError, OutOfTime):
        return None
    return placer.offset
