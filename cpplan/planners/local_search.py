"""cpplan's local search: improve a greedy plan by re-ordering the blocks that make the height.

The search works on the *order* in which best-fit (or first-fit) places the blocks, the usual
representation for greedy decoders of packing problems (iterated greedy; see Ruiz and Stützle,
"A simple and effective iterated greedy algorithm", EJOR 2007, and the order-space search of
TVM USMP's hill climb, ``src/tir/usmp/algo/hill_climb.cc``).

Up to a few thousand blocks (:data:`cpplan.planners.decoder.DECODER_UP_TO`) it runs on the
incremental :class:`~cpplan.planners.decoder.Decoder`, which re-places after a move only the
blocks whose placement can change:

1. Starts: every order of :data:`cpplan.planners.fit.ORDERS` with best-fit and with first-fit
   (or only ``mode``); the best start of each mode becomes a *chain*.
2. The chains take turns of :data:`SLICE` block placements: the chain with the best score gets
   every other turn, the chains in turn the others. A move on a chain:

   * *swap* (75 %): pick a *high* block (one whose top lies above its pool's max-load), one of
     its conflicts ``c1`` placed before it, and a block ``c2`` placed before ``c1`` that
     conflicts with ``c1`` (or, one time in four, another earlier conflict of the high block);
     swap ``c1`` and ``c2`` in the order. This is the move of TVM USMP's hill climb: it
     changes what lies *under* the high block;
   * *promote* (20 %): move a high block to a random earlier position;
   * *shift* (5 %): move a random block to a random position (diversification).

   A move is kept when ``(objective, excess)`` is no worse, ``excess`` being the sum over
   blocks of how far their top sticks out above their pool's max-load: plateau moves that
   push blocks down are taken, which is what lets the height drop later. Moves that make a
   block overflow a capacity are undone.
3. Stop at the time limit, after ``max_placements`` block placements, when every chain has
   gone :data:`STALE_PER_BLOCK` moves per block (at least :data:`STALE_MIN`) without a better
   score (small problems then end early), or as soon as the objective reaches the lower bound
   (:func:`cpplan.bounds.objective_lower_bound`); the plan is then reported ``optimal``.

Above that size the search uses :class:`~cpplan.planners.placer.Placer` and re-places the
whole suffix of the order after each move (promote, swap with a conflict of a top block, random
shift); its greedy start completes one order even past the time limit (a plan is needed) and
further orders only while time remains.

Options (:class:`cpplan.deadline.PlanOptions`): ``time_limit`` (seconds, default
:data:`TIME_LIMIT`), ``seed``, ``deterministic`` (when True the clock is ignored and only
``max_placements`` ends the search, so the same problem, seed and options give the same plan
on any machine). Its own: ``max_placements`` (default: unlimited, or ``time_limit`` x
:data:`PLACEMENTS_PER_SECOND` when deterministic), ``mode`` (``best``, ``first`` or None:
both). ``plan.stats`` records the starts, the moves tried
and kept, and the history of improvements.
"""

from __future__ import annotations

import random
import time

import numpy as np

from ..blocks import Blocks, make_blocks
from ..bounds import objective_lower_bound
from ..deadline import OutOfTime, PlanOptions
from ..errors import CapacityError, CpplanError
from ..plan import Plan
from ..problem import Problem
from ..sweep import OverlapIndex, split_lists
from .decoder import DECODER_UP_TO, Decoder, conflict_lists
from .fit import ORDERS, WORK_PER_CALL, order_blocks
from .placer import MODES, Placer
from .registry import register
from .tracks import finish_cut_short

__all__ = ["local_search", "PLACEMENTS_PER_SECOND", "SLICE"]

TIME_LIMIT = 3.0  # seconds, when the options give none
PLACEMENTS_PER_SECOND = 20_000  # nominal speed that turns time_limit into max_placements
SLICE = 5_000  # block placements a chain runs before the next chain's turn
STALE_MIN, STALE_PER_BLOCK = 500, 50  # moves without progress after which a chain stops
LEAD_EVERY = 2  # every LEAD_EVERY-th turn goes round the chains; the others to the leader
PROMOTE = 0.2  # share of promote moves
SHIFT = 0.05  # share of random shifts (the rest are swaps)


@register("local-search", family="own")
def local_search(problem: Problem, options: PlanOptions, *, max_placements: int | None = None,
                 mode: str | None = None) -> Plan:
    """Best-fit / first-fit order search: re-order the blocks under those that stick out above
    the max-load, keep what is no worse, stop at the time limit or the lower bound (see
    :mod:`cpplan.planners.local_search`).

    Args:
        problem: The problem to plan.
        options: The time limit (default :data:`TIME_LIMIT` seconds), seed and determinism.
        max_placements: Stop after this many block placements (deterministic mode: the time
            limit's worth of :data:`PLACEMENTS_PER_SECOND`).
        mode: ``best`` or ``first`` alone; default both.

    Returns:
        The best plan found, checked.

    Raises:
        CpplanError: An unknown ``mode``.
        CapacityError: No start fits within the capacities.
    """
    started = time.perf_counter()
    seed, deterministic = options.seed, options.deterministic
    time_limit = TIME_LIMIT if options.time_limit is None else options.time_limit
    if mode is not None and mode not in MODES:
        raise CpplanError(f"local-search: unknown mode {mode!r}; expected one of {MODES}")
    if max_placements is None and deterministic:
        max_placements = int(time_limit * PLACEMENTS_PER_SECOND)
    budget = float("inf") if max_placements is None else max_placements
    deadline = None if deterministic else started + time_limit
    blocks = make_blocks(problem)
    lists = None
    if len(blocks) <= DECODER_UP_TO:
        try:
            lists = conflict_lists(blocks)
        except ValueError:
            lists = None
    if lists is not None:
        return _order_search(blocks, lists, started, deadline, budget, seed, mode)
    return _suffix_search(blocks, started, deadline, budget, seed, mode)


class _Chain:
    """One search trajectory: a decoder, its score and where it started."""

    def __init__(self, decoder: Decoder, key: tuple[int, int], start: str) -> None:
        self.d = decoder
        self.key = key
        self.start = start
        self.moves = 0
        self.kept = 0
        self.stale = 0  # moves since the score last got strictly better


def _order_search(blocks: Blocks, lists: tuple, started: float, deadline: float | None,
                  budget: float, seed: int, mode: str | None) -> Plan:
    """The search on the incremental decoder (see the module docstring)."""
    scale = blocks.scale
    lower = objective_lower_bound(blocks)
    floor = _pool_floor(blocks, lower).tolist()
    cost = blocks.pool_cost.tolist()
    traffic = bool(blocks.traffic.any())
    size = blocks.size.tolist()
    n = len(blocks)
    adj = lists[0] if blocks.single_piece else [list(dict.fromkeys(x)) for x in lists[0]]

    def score(d: Decoder) -> tuple[int, int]:
        h = [0] * len(floor)
        excess = 0
        for i, p in enumerate(d.pool_of):
            if p >= 0:
                t = d.off[i] + size[i]
                if t > h[p]:
                    h[p] = t
                if t > floor[p]:
                    excess += t - floor[p]
        moved = blocks.traffic_cost(np.asarray(d.pool_of, np.int64)) if traffic else 0
        return sum(c * x for c, x in zip(cost, h, strict=True)) * scale + moved, excess

    # 1. Starts: every order, each mode; the best of each mode starts a chain.
    chains: list[_Chain] = []
    starts: dict[str, int | str] = {}
    placements = 0
    first_error: CapacityError | None = None
    out_of_time = False
    for m in ((mode,) if mode else MODES):
        best: _Chain | None = None
        for name in ORDERS:
            try:
                d = Decoder(blocks, order_blocks(blocks, name), m, "local-search", lists)
            except OutOfTime:
                # The caller's budget ran out: search from what is there, if anything.
                if best is None and not chains:
                    raise
                out_of_time = True
                break
            placements += d.placements
            label = f"{m}-fit-{name}"
            if d.unfit:
                starts[label] = "capacity"
                first_error = first_error or d._failure(d.first_unfit())
                continue
            key = score(d)
            starts[label] = key[0]
            if best is None or key < best.key:
                best = _Chain(d, key, label)
        if best is not None:
            chains.append(best)
        if out_of_time:
            break
    if not chains:
        assert first_error is not None
        raise first_error
    top = min(chains, key=lambda c: c.key)
    best_key = top.key
    best_arrays = top.d.arrays()
    best_from = top.start
    improvements: list[tuple[float, int]] = []

    # 2. Chains take turns; moves on the order, undone when worse.
    rng = random.Random(seed)
    done = placements - sum(c.d.placements for c in chains)  # work of the discarded starts
    turn = 0
    stale_limit = max(STALE_MIN, STALE_PER_BLOCK * n)
    while best_key[0] > lower and n > 1 and not out_of_time:
        live = [x for x in chains if x.stale < stale_limit]
        if not live:
            break  # every chain is stuck: on small problems the time would be wasted
        # The leading chain gets every other turn; the others go round.
        if turn % LEAD_EVERY or len(live) == 1:
            c = min(live, key=lambda x: x.key)
        else:
            c = live[(turn // LEAD_EVERY) % len(live)]
        turn += 1
        d = c.d
        if len(d.order) < 2:
            break
        stop = c.d.placements + SLICE
        while c.d.placements < stop and c.stale < stale_limit:
            placements = done + sum(x.d.placements for x in chains)
            if placements >= budget or (deadline is not None and time.perf_counter() > deadline):
                break
            d.limit = c.key[0] // scale
            try:
                _move(rng, d, adj, size, floor, cost)
            except OutOfTime:
                out_of_time = True  # the decoder is mid-move; the best arrays are a copy
                break
            c.moves += 1
            c.stale += 1
            if d.aborted or d.unfit:
                d.undo()
                continue
            key = score(d)
            if key > c.key:
                d.undo()
                continue
            if key < c.key:
                c.stale = 0
            c.key = key
            c.kept += 1
            if key < best_key:
                if key[0] < best_key[0]:
                    improvements.append((round(time.perf_counter() - started, 3), key[0]))
                best_key = key
                best_arrays = d.arrays()
                best_from = c.start
                if key[0] <= lower:
                    break
        else:
            continue
        if best_key[0] > lower:
            break  # out of budget or time
    placements = done + sum(x.d.placements for x in chains)
    stats = {"start": best_from, "start_objective": starts[best_from], "starts": starts,
             "chains": {c.start: {"objective": c.key[0], "moves": c.moves, "kept": c.kept}
                        for c in chains}, "moves": sum(c.moves for c in chains),
             "kept": sum(c.kept for c in chains), "improvements": improvements,
             "placements": placements, "engine": "decoder"}
    pool_of, offset = best_arrays
    return blocks.to_plan(pool_of, offset, planner="local-search", started=started,
                          lower_bound=lower, stats=stats)


def _move(rng: random.Random, d: Decoder, adj: list[list[int]], size: list[int],
          floor: list[int], cost: list[int]) -> None:
    """Apply one move to the decoder (see the module docstring)."""
    order, pos, off, pool_of = d.order, d.pos, d.off, d.pool_of
    m = len(order)
    high = [i for i in order
            if pool_of[i] >= 0 and cost[pool_of[i]] > 0 and off[i] + size[i] > floor[pool_of[i]]]
    if not high:
        d.move(order[rng.randrange(m)], rng.randrange(m))
        return
    r = rng.random()
    if r < SHIFT:
        d.move(order[rng.randrange(m)], rng.randrange(m))
        return
    b = rng.choice(high)
    p = pos[b]
    if r >= SHIFT + PROMOTE:
        first = [j for j in adj[b] if 0 <= pos[j] < p]
        if first:
            c1 = rng.choice(first)
            q1 = pos[c1]
            second = [j for j in adj[c1] if 0 <= pos[j] < q1]
            c2 = rng.choice(second) if second and rng.random() < 0.75 else rng.choice(first)
            if c2 != c1:
                d.swap(q1, pos[c2])
                return
    if p > 0:
        d.move(b, rng.randrange(p))
    else:
        d.move(b, rng.randrange(1, m))


def _suffix_search(blocks: Blocks, started: float, deadline: float | None, budget: float,
                   seed: int, mode: str | None) -> Plan:
    """The search on :class:`Placer` for big problems: every move re-places the suffix of the
    order from the first changed position."""
    lower = objective_lower_bound(blocks)
    placer = Placer(blocks)
    n = len(blocks)
    life = (blocks.times[blocks.end] - blocks.times[blocks.start]) if n else blocks.size
    floor = _pool_floor(blocks, lower)

    def score() -> tuple[int, int]:
        objective = placer.objective()
        # Area of the blocks that stick out above their pool's share of the lower bound.
        tops = placer.offset + blocks.size
        limit = floor[placer.pool_of]
        over = np.maximum(tops - limit, 0)
        return objective, int((over * life).sum())

    # 1. The best greedy start.
    placements = 0
    best: tuple | None = None
    first_error: CapacityError | None = None
    starts = [(m, name) for name in ORDERS for m in ((mode,) if mode else MODES)]
    starts = starts[:max(1, WORK_PER_CALL // max(n, 1))]
    for m, name in starts:
        if best is not None and deadline is not None and time.perf_counter() > deadline:
            break  # one start is always completed: a plan is needed
        placer.clear()
        try:
            placer.place_fixed("local-search")
            arranged = order_blocks(blocks, name)
            arranged = arranged[blocks.fixed[arranged] < 0]
            placer.place_order(arranged, m, "local-search")
        except CapacityError as e:
            first_error = first_error or e
            continue
        except OutOfTime:
            if best is None:  # the first order, cut short: its blocks left go in tracks
                pools, offsets = finish_cut_short(blocks, placer.pool_of, placer.offset)
                return blocks.to_plan(pools, offsets, planner="local-search", started=started,
                                      lower_bound=lower, stats={
                                          "start": f"{m}-fit-{name}", "moves": 0,
                                          "finished_in_tracks": int((placer.pool_of < 0).sum())})
            break
        finally:
            placements += n
        key = score()
        if best is None or key < best[0]:
            best = (key, m, name, arranged.tolist(), placer.snapshot())
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
    while key[0] > lower and placements < budget and len(order) > 1:
        if deadline is not None and time.perf_counter() > deadline:
            break
        new = _suffix_move(rng, order, pos, placer, blocks, conflicts)
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
        except OutOfTime:
            placer.restore(snap)
            break
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
    stats["engine"] = "placer"
    return blocks.to_plan(placer.pool_of, placer.offset, planner="local-search",
                          started=started, lower_bound=lower, stats=stats)


def _pool_floor(blocks: Blocks, lower: int) -> np.ndarray:
    """Per pool, the height above which a block counts as sticking out: the pool's own max-load
    (scaled); with one pool, the lower bound itself."""
    from ..bounds import max_load
    from ..load import traffic_lower_bound

    if blocks.n_pools == 1:  # (the height's share of the bound: traffic costs the same anywhere)
        lower -= traffic_lower_bound(blocks)
        return np.asarray([-(-lower // max(int(blocks.pool_cost[0]), 1)) // blocks.scale],
                          np.int64)
    loads = max_load(blocks)
    return np.asarray([loads[p.name].bytes // blocks.scale for p in blocks.problem.pools],
                      np.int64)


def _neighbours(blocks: Blocks) -> list[list[int]]:
    """For each block, the blocks whose span shares a moment with its span, in start order
    (ties: block index)."""
    return split_lists(*OverlapIndex(blocks.start, blocks.end).neighbours())


def _suffix_move(rng: random.Random, order: list[int], pos: dict[int, int], placer: Placer,
          blocks: Blocks, conflicts: list[list[int]] | None) -> tuple[int, list[int]] | None:
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
