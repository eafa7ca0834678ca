"""cpplan's local search: improve a greedy plan by re-ordering the blocks that make the height.

The search works on the *order* in which best-fit (or first-fit) places the blocks, the usual
representation for greedy decoders of packing problems (iterated greedy; see Ruiz and Stützle,
"A simple and effective iterated greedy algorithm", EJOR 2007, and the order-space search of
TVM USMP's hill climb, ``src/tir/usmp/algo/hill_climb.cc``):

1. Start from the best plan of :mod:`cpplan.planners.fit` over every order and both modes
   (on big problems only the first few, as :func:`cpplan.planners.fit.budget_orders` does; the
   start is always completed, even past the time limit).
2. Repeat: pick a *move* on the order, re-place only the suffix of the order that changed (the
   prefix is kept: :class:`~cpplan.planners.placer.Placer` takes blocks out for free), and
   keep the new order when it is no worse. Moves:

   * *promote*: a block whose top is the height of its pool (it makes the objective) is moved
     to an earlier random position, so it finds room before the gaps fill up;
   * *swap*: two blocks that share a moment with such a top block swap places in the order;
   * *shift*: a random block moves to a random position (diversification).

   "No worse" compares ``(objective, excess)``, where ``excess`` is the area (bytes x steps)
   of blocks above the lower bound: plateau moves that push blocks down are taken, which is what
   lets the height drop later.
3. Stop at the time limit, after ``max_placements`` block placements, or as soon as the
   objective reaches the lower bound (:func:`cpplan.bounds.objective_lower_bound`); the plan is
   then reported ``optimal``.

Options: ``time_limit`` (seconds, default 3), ``seed`` (default 0), ``max_placements`` (default
``time_limit`` x 20 000), ``deterministic`` (default False: when True the clock is ignored and
only ``max_placements`` ends the search, so the same problem, seed and options give the same plan
on any machine), ``mode`` (``best``, ``first`` or None: whichever started best).
``plan.stats`` records the start, the moves tried and kept, and the history of improvements.
"""

from __future__ import annotations

import random
import time

import numpy as np

from ..blocks import make_blocks
from ..bounds import objective_lower_bound
from ..errors import CapacityError, CpplanError
from ..plan import Plan
from ..problem import Problem
from .fit import IGNORED, ORDERS, WORK_PER_CALL, order_blocks
from .placer import MODES, Placer
from .registry import register

__all__ = ["local_search"]

PLACEMENTS_PER_SECOND = 20_000  # nominal speed that turns time_limit into max_placements


@register("local-search", family="own")
def local_search(problem: Problem, *, time_limit: float = 3.0, seed: int = 0,
                 max_placements: int | None = None, deterministic: bool = False,
                 mode: str | None = None, **options: object) -> Plan:
    """Best-fit order search: re-place the blocks that make the height, keep what is no worse,
    stop at the time limit or the lower bound (see :mod:`cpplan.planners.local_search`)."""
    started = time.perf_counter()
    unknown = set(options) - IGNORED
    if unknown:
        raise CpplanError(f"local-search: unknown option(s) {', '.join(sorted(unknown))}")
    if mode is not None and mode not in MODES:
        raise CpplanError(f"local-search: unknown mode {mode!r}; expected one of {MODES}")
    if max_placements is None:
        max_placements = int(max(time_limit, 0.0) * PLACEMENTS_PER_SECOND)
    deadline = None if deterministic else started + max(time_limit, 0.0)
    blocks = make_blocks(problem)
    scale = blocks.scale
    lower = objective_lower_bound(blocks)
    placer = Placer(blocks)
    n = len(blocks)
    life = (blocks.times[blocks.end] - blocks.times[blocks.start]) if n else blocks.size
    cost = blocks.pool_cost

    def score() -> tuple[int, int]:
        h = placer.heights()
        objective = int((h * cost).sum()) * scale
        # Area of the blocks that stick out above their pool's share of the lower bound.
        tops = placer.offset + blocks.size
        limit = _pool_floor(blocks, lower)[placer.pool_of]
        over = np.maximum(tops - limit, 0)
        return objective, int((over * life).sum())

    # 1. The best greedy start.
    placements = 0
    best: tuple | None = None
    first_error: CapacityError | None = None
    starts = [(m, name) for name in ORDERS for m in ((mode,) if mode else MODES)]
    starts = starts[:max(1, WORK_PER_CALL // max(n, 1))]
    for m, name in starts:
        placer.clear()
        try:
            placer.place_fixed("local-search")
            order = order_blocks(blocks, name)
            order = order[blocks.fixed[order] < 0]
            placer.place_order(order, m, "local-search")
        except CapacityError as e:
            first_error = first_error or e
            continue
        finally:
            placements += n
        key = score()
        if best is None or key < best[0]:
            best = (key, m, name, order.tolist(), placer.snapshot())
    if best is None:
        assert first_error is not None
        raise first_error
    key, m, start_name, order, state = best
    placer.restore(state)
    stats: dict = {"start": f"{m}-fit-{start_name}", "start_objective": key[0],
                   "moves": 0, "kept": 0, "improvements": []}
    rng = random.Random(seed)
    pos = {b: k for k, b in enumerate(order)}
    conflicts = _neighbours(blocks) if n <= 5000 else None

    # 2. Moves on the order; re-place the changed suffix.
    while key[0] > lower and placements < max_placements and len(order) > 1:
        if deadline is not None and time.perf_counter() > deadline:
            break
        new = _move(rng, order, pos, placer, blocks, conflicts)
        if new is None:
            break
        k, new_order = new
        stats["moves"] += 1
        snap = placer.snapshot()
        placer.unplace(np.asarray(order[k:], np.int64))
        placements += len(order) - k
        try:
            placer.place_order(new_order[k:], m, "local-search")
        except CapacityError:
            placer.restore(snap)
            continue
        got = score()
        if got <= key:
            if got[0] < key[0]:
                stats["improvements"].append((round(time.perf_counter() - started, 3), got[0]))
            key = got
            order = new_order
            for j in range(k, len(order)):
                pos[order[j]] = j
            stats["kept"] += 1
        else:
            placer.restore(snap)
    stats["placements"] = placements
    return blocks.to_plan(placer.pool_of, placer.offset, planner="local-search",
                          started=started, lower_bound=lower, stats=stats)


def _pool_floor(blocks, lower: int) -> np.ndarray:
    """Per pool, the height above which a block counts as sticking out: the pool's own max-load
    (scaled); with one pool, the lower bound itself."""
    from ..bounds import max_load

    if blocks.n_pools == 1:
        return np.asarray([-(-lower // max(int(blocks.pool_cost[0]), 1)) // blocks.scale],
                          np.int64)
    loads = max_load(blocks)
    return np.asarray([loads[p.name].bytes // blocks.scale for p in blocks.problem.pools],
                      np.int64)


def _neighbours(blocks) -> list[list[int]]:
    """For each block, the blocks whose span shares a moment with its span."""
    n = len(blocks)
    order = np.argsort(blocks.start, kind="stable")
    starts = blocks.start[order]
    out: list[list[int]] = []
    ends = blocks.end
    for i in range(n):
        hi = int(np.searchsorted(starts, blocks.end[i]))
        cand = order[:hi]
        cand = cand[(ends[cand] > blocks.start[i]) & (cand != i)]
        out.append(cand.tolist())
    return out


def _move(rng: random.Random, order: list[int], pos: dict[int, int], placer: Placer,
          blocks, conflicts: list[list[int]] | None) -> tuple[int, list[int]] | None:
    """A changed order and the first position where it differs."""
    n = len(order)
    heights = placer.heights()
    tops = placer.offset + blocks.size
    cost = blocks.pool_cost
    top_blocks = [b for b in order
                  if cost[placer.pool_of[b]] > 0 and tops[b] == heights[placer.pool_of[b]]]
    r = rng.random()
    if top_blocks and r < 0.6:
        b = rng.choice(top_blocks)
        p = pos[b]
        if p == 0:
            return None if n < 2 else _shift(rng, order)
        q = rng.randrange(0, p)
        new = order[:q] + [b] + order[q:p] + order[p + 1:]
        return q, new
    if top_blocks and conflicts is not None and r < 0.9:
        b = rng.choice(top_blocks)
        near = [c for c in conflicts[b] if c in pos]
        if near:
            c = rng.choice(near)
            p, q = sorted((pos[b], pos[c]))
            new = list(order)
            new[p], new[q] = new[q], new[p]
            return p, new
    return _shift(rng, order)


def _shift(rng: random.Random, order: list[int]) -> tuple[int, list[int]]:
    n = len(order)
    p = rng.randrange(n)
    q = rng.randrange(n - 1)
    b = order[p]
    rest = order[:p] + order[p + 1:]
    new = rest[:q] + [b] + rest[q:]
    return min(p, q), new
