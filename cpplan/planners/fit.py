"""cpplan's own first-fit and best-fit planners, over several orders of the blocks.

Both place blocks one at a time with :class:`cpplan.planners.placer.Placer` (see there for the
fit rules, pools, alignment, fixed offsets, aliases and the fast index):

* ``best-fit``: a block goes into the smallest free gap it fits (among the blocks already placed
  that share a moment with it, in its pool), ties to the lowest offset; above everything only
  when no gap fits.
* ``first-fit``: a block goes to the lowest offset where it fits.

Orders (:data:`ORDERS`); every one ends its ties on the block index, so plans are deterministic:

* ``size``: larger blocks first; ties: earlier start.
* ``area``: larger ``bytes x lifetime`` first (bytes summed over the pieces of a block,
  lifetime in original steps); ties: larger, then earlier start.
* ``lifetime``: longer-lived first; ties: larger, then earlier start.
* ``peak``: peak first (:func:`peak_order`): at the moment with the most bytes still to
  place, the largest block alive there.
* ``start``: earlier start first; ties: larger first (the order of an online allocator that
  replays the schedule).
* ``conflicts``: blocks that share a moment with more other blocks first; ties: larger, then
  earlier start. (``size`` and ``conflicts`` are TVM USMP's two greedy orders; ``area`` and
  ``lifetime`` appear in the offset-calculation strategies of the TFLite GPU delegate and in
  Sekiyama et al., "Profile-guided memory optimization for deep neural networks", 2018.)

By default a planner tries several orders and keeps the plan with the smallest objective (ties:
the earlier order in :data:`ORDERS`). How many depends on the size of the problem, so that one
call stays within seconds: all six up to 16 666 blocks, then fewer (``budget_orders``);
``order=`` picks one and ``orders=[...]`` a list. ``plan.stats`` records the winning order and
every order's objective (or ``"capacity"`` where that order overflowed).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from ..blocks import Blocks, make_blocks
from ..deadline import OutOfTime, PlanOptions, tick
from ..errors import CapacityError, CpplanError
from ..plan import Plan
from ..problem import Problem
from .placer import Placer
from .registry import register
from .tracks import finish_cut_short

__all__ = ["ORDERS", "order_blocks", "budget_orders", "fit_plan", "best_fit", "first_fit"]

ORDERS = ("size", "peak", "area", "lifetime", "start", "conflicts")
WORK_PER_CALL = 100_000  # blocks x orders a default call may spend (about 0.6 s on Y_1's 62185)


def order_blocks(blocks: Blocks, name: str) -> np.ndarray:
    """Block indices in order ``name`` (one of :data:`ORDERS`; see the module docstring)."""
    n = len(blocks)
    idx = np.arange(n)
    if n == 0:
        return idx
    size, start = blocks.size, blocks.start
    if name == "size":
        return np.lexsort((idx, start, -size))
    if name == "area":
        life = blocks.times[blocks.piece_end] - blocks.times[blocks.piece_start]
        area = (blocks.piece_hi - blocks.piece_lo) * life
        per_block = np.add.reduceat(area, blocks.piece_ptr[:-1])
        return np.lexsort((idx, start, -size, -per_block))
    if name == "lifetime":
        life = blocks.times[blocks.end] - blocks.times[blocks.start]
        return np.lexsort((idx, start, -size, -life))
    if name == "start":
        return np.lexsort((idx, -size, start))
    if name == "conflicts":
        return np.lexsort((idx, start, -size, -conflicts(blocks)))
    if name == "peak":
        return peak_order(blocks)
    raise CpplanError(f"unknown order {name!r}; known: {', '.join(ORDERS)}")


def peak_order(blocks: Blocks) -> np.ndarray:
    """Peak first: at the moment where the blocks not yet taken need the most bytes (the first
    such moment), take the largest block alive there (ties: longer, earlier start, lower
    index); repeat. Zero-size blocks come last, in index order.

    This is the "max live size" ordering of Glow's allocator (pytorch/glow,
    ``lib/CodeGen/MemoryAllocator.cpp``) and the idea behind the peak-first heuristics of the
    literature: the moment that sets the lower bound is packed while everything is still free.
    Cost O(n (n + T)) in numpy, T the number of distinct moments.
    """
    n = len(blocks)
    size = blocks.size
    life = blocks.end - blocks.start
    pos = np.nonzero(size > 0)[0]
    ranked = pos[np.lexsort((pos, blocks.start[pos], -life[pos], -size[pos]))]
    out = np.empty(n, np.int64)
    out[:len(ranked)] = peak_first(blocks, ranked, size)
    out[len(ranked):] = np.nonzero(size <= 0)[0]
    return out


def peak_first(blocks: Blocks, ranked: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The blocks of ``ranked`` (preferred first, every ``weight`` positive) in peak-first
    order: at the first moment where the blocks not yet taken weigh the most, take the first
    block of ``ranked`` alive there; repeat.

    The loop of :func:`peak_order` and of Glow's two max-live-size strategies
    (:mod:`cpplan.replicas.glow`), which differ only in the preference and the weights.
    """
    rs, re = blocks.start[ranked], blocks.end[ranked]
    nt = max(len(blocks.times), 1)
    delta = np.zeros(nt + 1, np.int64)
    np.add.at(delta, rs, weight[ranked])
    np.add.at(delta, re, -weight[ranked])
    remaining = np.cumsum(delta)[:nt]
    taken = np.zeros(len(ranked), bool)
    out = np.empty(len(ranked), np.int64)
    head = 0  # every ranked block before head is taken
    for k in range(len(ranked)):
        tick(0)  # (an order is work too: O(T) a step, a second on idealloc's S_1; no placement)
        # Weights are positive, so a moment has blocks left iff its remaining weight is.
        t = int(np.argmax(remaining))
        while taken[head]:
            head += 1
        # The first not-taken ranked block alive at t; search in growing windows.
        a, width, pick = head, 64, -1
        while pick < 0:
            b = min(a + width, len(ranked))
            hit = ~taken[a:b] & (rs[a:b] <= t) & (re[a:b] > t)
            if hit.any():
                pick = a + int(np.argmax(hit))
            a, width = b, width * 2
        taken[pick] = True
        i = int(ranked[pick])
        out[k] = i
        remaining[blocks.start[i]:blocks.end[i]] -= weight[i]
    return out


def conflicts(blocks: Blocks, among: np.ndarray | None = None) -> np.ndarray:
    """Number of other blocks whose span shares a moment with each block's span; with
    ``among`` (block indices) only those blocks count."""
    n = len(blocks)
    if among is None:
        starts, ends, m = np.sort(blocks.start), np.sort(blocks.end), n
        own: int | np.ndarray = 1
    else:
        starts, ends, m = np.sort(blocks.start[among]), np.sort(blocks.end[among]), len(among)
        own = np.zeros(n, np.int64)
        own[among] = 1
    after = m - np.searchsorted(starts, blocks.end, side="left")  # start >= my end
    before = np.searchsorted(ends, blocks.start, side="right")  # end <= my start
    return m - after - before - own


def budget_orders(n: int) -> tuple[str, ...]:
    """The orders a default call tries for ``n`` blocks: as many of :data:`ORDERS` as fit in
    :data:`WORK_PER_CALL` block placements, at least one."""
    k = max(1, min(len(ORDERS), WORK_PER_CALL // max(n, 1)))
    return ORDERS[:k]


def fit_plan(problem: Problem, mode: str, planner: str, *, order: str | None = None,
             orders: Sequence[str] | None = None) -> Plan:
    """Place the blocks of ``problem`` in each order with ``mode`` (``best`` or ``first``) and
    return the checked plan with the smallest objective (:func:`fit_blocks`, made a plan)."""
    started = time.perf_counter()
    blocks = make_blocks(problem)
    pool_of, offset, stats = fit_blocks(blocks, mode, planner, order=order, orders=orders)
    return blocks.to_plan(pool_of, offset, planner=planner, started=started, stats=stats)


def fit_blocks(blocks: Blocks, mode: str, planner: str, *, order: str | None = None,
               orders: Sequence[str] | None = None
               ) -> tuple[np.ndarray, np.ndarray, dict[str, object]]:
    """The pool and the scaled offset of every block in the order, of those tried, whose
    placement with ``mode`` has the smallest objective, and the stats (``order``, ``mode``,
    every order's ``orders`` result): valid placements, not yet a checked plan (for callers
    that keep arrays, as ``solve`` does: building and checking a plan of 62185 buffers takes
    a quarter of a second).

    Raises :class:`CapacityError` (naming the buffer and its pools) only when every order
    overflows a capacity; the message is that of the first order tried. When the active time
    budget (:mod:`cpplan.deadline`) runs out, the best of the orders completed is returned;
    when none was, the first order's blocks not yet placed are finished in tracks above the
    others (:mod:`cpplan.planners.tracks`; ``stats["finished_in_tracks"]`` says how many).
    """
    if order is not None and orders is not None:
        raise CpplanError(f"{planner}: give order= or orders=, not both")
    tried: tuple[str, ...]
    if order is not None:
        tried = (order,)
    elif orders is not None:
        tried = tuple(orders)
        if not tried:
            raise CpplanError(f"{planner}: orders= is empty")
    else:
        tried = budget_orders(len(blocks))
    for name in tried:
        if name not in ORDERS:
            raise CpplanError(f"{planner}: unknown order {name!r}; known: {', '.join(ORDERS)}")
    placer = Placer(blocks)
    best: tuple[int, str, np.ndarray, np.ndarray] | None = None
    results: dict[str, int | str] = {}
    first_error: CapacityError | None = None
    for name in tried:
        placer.clear()
        try:
            placer.place_fixed(planner)
            placer.place_order(order_blocks(blocks, name), mode, planner)
        except CapacityError as e:
            results[name] = "capacity"
            first_error = first_error or e
            continue
        except OutOfTime:
            results[name] = "out of time"  # anytime: the orders done so far stand
            if best is None:
                best = _finished(blocks, placer, name, results)
            break
        objective = placer.objective()
        results[name] = objective
        if best is None or objective < best[0]:
            best = (objective, name, placer.pool_of.copy(), placer.offset.copy())
    if best is None:
        assert first_error is not None
        raise first_error
    _, name, pool_of, offset = best
    stats: dict[str, object] = {"order": name, "mode": mode, "orders": results}
    left = int((placer.pool_of < 0).sum()) if results[name] == "out of time" else 0
    if left:
        stats["finished_in_tracks"] = left
    return pool_of, offset, stats


def _finished(blocks: Blocks, placer: Placer, name: str,
              results: dict[str, int | str]) -> tuple[int, str, np.ndarray, np.ndarray]:
    """The first order, cut short by the time limit, finished in tracks
    (:func:`~cpplan.planners.tracks.finish_cut_short`, which raises :class:`OutOfTime` when it
    cannot be)."""
    pool_of, offset = finish_cut_short(blocks, placer.pool_of, placer.offset)
    return blocks.objective(pool_of, offset), name, pool_of, offset


@register("best-fit", family="own")
def best_fit(problem: Problem, options: PlanOptions, *, order: str | None = None,
             orders: Sequence[str] | None = None) -> Plan:
    """Best-fit (smallest sufficient gap, ties lowest offset) over several block orders; keeps
    the best plan.

    Options: ``order=`` one of ``size, peak, area, lifetime, start, conflicts``;
    ``orders=[...]``; default: as many orders as the size of the problem allows (see
    :mod:`cpplan.planners.fit`).

    Args:
        problem: The problem to plan.
        options: Time limit, seed, determinism, workers (the registry makes its budget active).
        order: One order of :data:`ORDERS` only.
        orders: These orders, in this order (ties go to the earlier).

    Returns:
        The checked plan of the best order; ``stats`` records the winning order and every
        order's objective.

    Raises:
        CapacityError: Every order overflows a capacity (naming the buffer and its pools).
        CpplanError: An unknown order, or both ``order`` and ``orders``.
    """
    return fit_plan(problem, "best", "best-fit", order=order, orders=orders)


@register("first-fit", family="own")
def first_fit(problem: Problem, options: PlanOptions, *, order: str | None = None,
              orders: Sequence[str] | None = None) -> Plan:
    """First-fit (lowest offset that fits) over several block orders; keeps the best plan.

    Options as for ``best-fit``.

    Raises:
        CapacityError: Every order overflows a capacity.
        CpplanError: An unknown order, or both ``order`` and ``orders``.
    """
    return fit_plan(problem, "first", "first-fit", order=order, orders=orders)


def _one_order(mode: str, order: str) -> Callable[[Problem, PlanOptions], Plan]:
    name = f"{mode}-fit-{order}"

    def plan(problem: Problem, options: PlanOptions) -> Plan:
        return fit_plan(problem, mode, name, order=order)

    plan.__doc__ = (f"{'Best' if mode == 'best' else 'First'}-fit with the blocks in {order} "
                    f"order only (see cpplan.planners.fit).")
    plan.__name__ = name.replace("-", "_")
    return register(name, family="own")(plan)


for _mode in ("best", "first"):
    for _order in ORDERS:
        _one_order(_mode, _order)
