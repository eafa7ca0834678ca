"""The gap-fill search: packings under a height, built moment by moment.

A plan is built in time order. At each moment where blocks start, the blocks alive (and the
fixed blocks that share a moment with the ones starting) leave *gaps* under the height; the
blocks that start go into them together:

1. gap by gap, the narrowest first (its width perturbed at random), the subset of the starting
   blocks whose sizes fill the gap best (a subset sum over their sizes, by dynamic
   programming over the reachable sums) goes in when it fills at least a share of the gap
   (drawn at random per descent, :data:`FILL_LOW` to 1), stacked in the gap by their ends
   (those that end with the block under the gap next to it, those that end with the block
   over it next to that, the rest later ends lower: blocks that end together side by side,
   so that their bytes come free as one gap), each at its alignment;
2. the blocks left over go one by one: each next to a gap's edge whose neighbour ends with it
   where it fits there, else best-fit (into the narrowest gap it fits, as low as it fits).

Where blocks free a run of neighbours and their bytes go to the blocks that start (the way
networks reuse memory, and every generator of :mod:`cpplan.perfect` but one), the first step
rebuilds such runs where an allocator that places blocks one at a time (best-fit) scatters
them. When a moment's blocks do not fit under the height, the search goes back a few moments
(a geometric number: a dead end is mostly made just before it) and tries again with other
random choices, and now and then from the start: randomised backtracking with restarts (Gomes,
Selman and Kautz, "Boosting combinatorial search through randomization", AAAI 1998).

:func:`improve` lowers a plan's height with it: first a height just under the plan's (not
reached, it gives up at once), then heights bisected between the lower bound and the best
height found; a height not reached in its share of the time moves the next one up. The
search never proves anything (it answers ``feasible`` or nothing); what it answers is a valid
packing: no two blocks that share a moment overlap, every block sits at its
alignment and fixed blocks at their offsets. Blocks of several pieces are packed by their
bounding rectangle (a restriction, so the packing stays valid). The idea of filling a moment's
gaps jointly is cpplan's own; nothing is taken from another project's code.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from ..blocks import Blocks
from ..deadline import PLACEMENTS_PER_SECOND, Budget, OutOfTime
from .dfs import single_pool
from .outcome import Outcome

__all__ = ["improve"]

#: The least share of a gap that a subset must fill to go in together; each descent draws its
#: own from FILL_LOW to 1 (a high one waits for exact fits, a low one packs whatever comes).
FILL_LOW = 0.6
#: The subset sum keeps at most this many reachable sums (the largest), per gap...
SUMS_MAX = 4096
#: ... over at most this many of the starting blocks (the rest go best-fit).
SUBSET_MAX = 16
#: Sums reached by the subset sum that cost as much as one block placement (the deterministic
#: clock counts both).
SUMS_PER_PLACEMENT = 64
#: The chance that a moment's blocks are offered to the gaps in a random order (else the
#: largest first): a dead end's retries then differ in more than the gaps' order.
SHUFFLED = 0.3
#: Gaps are taken narrowest first by their width times 1 to 1 + this (random): near-ties
#: go either way from one retry to the next.
WIDTH_NOISE = 0.3
#: Moments gone back after a dead end, on average (a geometric number, at least one).
BACK_MEAN = 8.0
#: The chance that a dead end sends the search back to the first moment.
RESTART = 0.05
#: Of the time, what the first height (one unit under the height given: where the search does
#: not get there, it ends, and the time goes to methods that do better) gets (where the search
#: suits the blocks, it gets there in a tenth of a second).
FIRST_SHARE = 0.05
#: ... and at least the time of this many passes over the blocks (the deterministic clock's).
FIRST_PASSES = 5
#: Of the time left, what each height of the bisection gets.
HEIGHT_SHARE = 0.34


class _Moments:
    """The blocks ``ids`` of one pool as moments: the blocks that start at each (their
    positions in ``ids``), sizes and alignments, and the fixed blocks."""

    def __init__(self, blocks: Blocks, ids: np.ndarray, pool: int) -> None:
        self.size = blocks.size[ids].tolist()
        self.start = blocks.start[ids].tolist()
        self.end = blocks.end[ids].tolist()
        self.align = [blocks.align_in(i, pool) for i in ids.tolist()]
        fixed = blocks.fixed[ids]
        self.fixed = np.flatnonzero(fixed >= 0).tolist()
        self.fixed_offset = fixed.tolist()
        free = np.flatnonzero(fixed < 0)
        order = free[np.argsort(blocks.start[ids][free], kind="stable")]
        starts = blocks.start[ids][order]
        cuts = np.flatnonzero(np.diff(starts)) + 1
        self.groups = [g.tolist() for g in np.split(order, cuts)] if len(order) else []
        self.times = starts[np.concatenate(([0], cuts))].tolist() if len(order) else []

    def alive_before(self, k: int) -> list[int]:
        """The blocks of moments before the ``k``-th that are still alive at it."""
        t = self.times[k]
        return [i for g in self.groups[:k] for i in g if self.end[i] > t]


def improve(blocks: Blocks, ids: np.ndarray, offsets: np.ndarray | None, budget: Budget, *,
            lower: int, report: Callable[[int, np.ndarray], None] | None = None) -> Outcome:
    """Lower the height of blocks ``ids`` (one pool, scaled units) below that of ``offsets``
    (or of the first packing found, when None) by the gap-fill search: first one unit under it
    (not reached in a short slice, it stops there), then bisecting between ``lower`` (the
    proven bound) and the best height, until ``budget`` runs out or the height reaches
    ``lower``.

    Returns ``feasible`` with the best packing found (``unknown`` when none was, or the blocks
    are not in one pool); ``report(height, offsets)`` is called on every better one."""
    ids = np.asarray(ids, np.int64)
    pool = single_pool(blocks, ids)
    if pool is None or not len(ids):
        return Outcome("unknown", detail="gap fill: no blocks, or blocks of several pools")
    moments = _Moments(blocks, ids, pool)
    size = blocks.size[ids]
    rng = random.Random(budget.seed)
    best = None if offsets is None else np.asarray(offsets, np.int64).copy()
    if best is None:  # (a first packing: below the height where all of them stack)
        best = _search(moments, int(size.sum()) + int(max(moments.align)) * len(ids),
                       budget, rng)
        if best is None:
            return Outcome("unknown", detail="gap fill: no packing in time")
        if report is not None:
            report(int((best + size).max()), best)
    hi = int((best + size).max())
    gave_up = lower - 1
    tried = 0
    while budget.remaining() > 0.01 and hi > lower:
        # (first just under the height given: where the search does not get there, the time
        # goes back to the caller at once)
        target = (max(gave_up, lower - 1) + hi) // 2 if tried else max(lower, hi - 1)
        if target <= gave_up:
            break
        tried += 1
        share = budget.share(HEIGHT_SHARE) if tried > 1 else budget.within(
            max(FIRST_SHARE * budget.remaining(), FIRST_PASSES * len(ids) / PLACEMENTS_PER_SECOND))
        found = _search(moments, target, share, rng)
        if found is None:
            if tried == 1:
                break
            gave_up = target
            continue
        best, hi = found, int((found + size).max())
        if report is not None:
            report(hi, best)
    return Outcome("feasible", np.zeros(len(ids), np.int64), best,
                   detail=f"gap fill: {tried} heights tried")


def _search(m: _Moments, height: int, budget: Budget, rng: random.Random) -> np.ndarray | None:
    """The search of the module docstring at ``height``: offsets, or None when ``budget``
    ran out first."""
    if any(m.fixed_offset[j] + m.size[j] > height for j in m.fixed):
        return None
    off = list(m.fixed_offset)
    k, alive = 0, list[int]()
    fill = rng.uniform(FILL_LOW, 1.0)
    try:
        while k < len(m.groups):
            placed, sums = _place(m, k, alive, off, height, fill, rng)
            budget.tick(len(m.groups[k]) + sums // SUMS_PER_PLACEMENT)
            if placed:
                alive = alive + m.groups[k]
                if k + 1 < len(m.groups):
                    t = m.times[k + 1]
                    alive = [i for i in alive if m.end[i] > t]
                k += 1
                continue
            k = 0 if rng.random() < RESTART else max(
                0, k - 1 - int(rng.expovariate(1.0 / BACK_MEAN)))
            fill = rng.uniform(FILL_LOW, 1.0)
            alive = m.alive_before(k)
    except OutOfTime:
        return None
    return np.asarray(off, np.int64)


def _place(m: _Moments, k: int, alive: list[int], off: list[int], height: int, fill: float,
           rng: random.Random) -> tuple[bool, int]:
    """Place the blocks of the ``k``-th moment into the gaps under ``height`` (writing
    ``off``): whether all fit, and how many sums the subset sums reached."""
    size, end, align = m.size, m.end, m.align
    starting = m.groups[k]
    t, last = m.times[k], max(end[i] for i in starting)
    neighbours = alive + [j for j in m.fixed if m.start[j] < last and end[j] > t]
    taken = sorted((off[i], off[i] + size[i]) for i in neighbours)
    # (the end of the block just under and just over each byte boundary: a gap's edges)
    under = {off[i] + size[i]: end[i] for i in neighbours}
    over = {off[i]: end[i] for i in neighbours}
    gaps: list[list[int]] = []
    cur = 0
    for lo, hi in taken:
        if lo > cur:
            gaps.append([cur, lo])
        cur = max(cur, hi)
    if height > cur:
        gaps.append([cur, height])
    todo = sorted(starting, key=lambda i: -size[i])
    if rng.random() < SHUFFLED:
        rng.shuffle(todo)
    gaps.sort(key=lambda g: (g[1] - g[0]) * (1.0 + WIDTH_NOISE * rng.random()))
    sums = 0
    for g in gaps:
        if not todo:
            break
        width = g[1] - g[0]
        total, subset, reached = _best_subset(size, todo[:SUBSET_MAX], width)
        sums += reached
        if not subset or total < fill * width:
            continue
        lower_end, upper_end = under.get(g[0], -1), over.get(g[1], -1)
        ordered, from_below = _by_ends(subset, end, lower_end, upper_end, rng)
        placed = _stack(m, ordered, g, off, from_below=from_below)
        if placed:
            for i in subset:
                under[off[i] + size[i]] = over[off[i]] = end[i]
            chosen = set(subset)
            todo = [i for i in todo if i not in chosen]
    for i in todo:
        best = None
        for g in gaps:
            y = -(-g[0] // align[i]) * align[i]
            if y + size[i] > g[1]:
                continue
            # (next to a neighbour that ends with it where one does, else the narrowest gap)
            lower, upper = under.get(g[0]) == end[i], over.get(g[1]) == end[i]
            key = (not (lower or upper), g[1] - g[0])
            if best is None or key < best[0]:
                best = (key, (g[1] - size[i]) // align[i] * align[i] if upper and not lower
                        else y, g)
        if best is None:
            return False, sums
        _key, y, g = best
        off[i] = y
        under[y + size[i]] = over[y] = end[i]
        if y + size[i] < g[1]:
            if y > g[0]:  # (the bytes under an aligned block stay a gap)
                gaps.append([g[0], y])
            g[0] = y + size[i]
        else:
            g[1] = y
    return True, sums


def _by_ends(subset: tuple[int, ...], end: list[int], lower_end: int, upper_end: int,
             rng: random.Random) -> tuple[list[int], bool]:
    """The blocks of ``subset`` in the order to stack them into a gap (the first next to the
    edge it is stacked from), and whether from the lower edge. From the bottom up: those that
    end with the block under the gap, the rest by later ends first, those that end with the
    block over the gap; stacked against the edge whose neighbour ends with some of them
    (either edge at random where both or neither does). Blocks that end together then lie
    side by side, and the bytes of a run of neighbours come free as one gap: where a run ends
    and its bytes go to the blocks that start, those must find them in one piece."""
    low = [i for i in subset if end[i] == lower_end]
    high = [i for i in subset if end[i] == upper_end and end[i] != lower_end]
    rest = sorted((i for i in subset if end[i] != lower_end and end[i] != upper_end),
                  key=lambda i: -end[i])
    from_below = bool(low) if bool(low) != bool(high) else rng.random() < 0.5
    upwards = low + rest + high
    return (upwards if from_below else upwards[::-1]), from_below


def _stack(m: _Moments, blocks: list[int], gap: list[int], off: list[int],
           from_below: bool) -> bool:
    """Stack ``blocks`` in the gap (a ``[lo, hi)`` list, narrowed in place) from its lower or
    upper edge, each at its alignment; False (nothing written) when they do not fit so."""
    size, align = m.size, m.align
    ys = []
    if from_below:
        y = gap[0]
        for i in blocks:
            y = -(-y // align[i]) * align[i]
            ys.append(y)
            y += size[i]
        if y > gap[1]:
            return False
        gap[0] = y
    else:
        y = gap[1]
        for i in blocks:
            y = (y - size[i]) // align[i] * align[i]
            ys.append(y)
        if y < gap[0]:
            return False
        gap[1] = y
    for i, y in zip(blocks, ys, strict=True):
        off[i] = y
    return True


def _best_subset(size: list[int], cand: list[int],
                 width: int) -> tuple[int, tuple[int, ...], int]:
    """The largest sum of sizes of a subset of ``cand`` at most ``width``, the subset, and
    the sums reached on the way (the answer is exact while at most :data:`SUMS_MAX` sums are
    reachable; then only the largest are kept, and it may fall short of the best)."""
    total = sum(size[i] for i in cand)
    if total <= width:
        return total, tuple(cand), len(cand)
    reach: dict[int, tuple[int, ...]] = {0: ()}
    reached = 0
    for i in cand:
        s = size[i]
        new = {v + s: sub + (i,) for v, sub in reach.items()
               if v + s <= width and v + s not in reach}
        reach.update(new)
        reached += len(reach)
        if width in reach:
            break
        if len(reach) > SUMS_MAX:
            kept = sorted(reach)[-SUMS_MAX // 2:]
            reach = {v: reach[v] for v in kept}
            reach[0] = ()
    top = max(reach)
    return top, reach[top], reached
