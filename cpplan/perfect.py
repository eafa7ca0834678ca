"""Perfect packings: instances whose optimum is known by construction.

A strip of ``width`` bytes over ``horizon`` moments is cut into rectangles; each rectangle is
one buffer (its time side the lifetime, its byte side the size). The rectangles tile the strip,
so every moment has ``width`` bytes live: the max-load is ``width``, and the cutting itself is a
plan at that height, hence the optimum is ``width`` exactly. The constructions (``FAMILIES``):

* ``perfect`` (:func:`perfect_packing`): straight cuts (in time or in bytes) and pinwheel cuts
  (five rectangles around a centre, which no sequence of straight cuts can make:
  guillotine-style heuristics cannot rebuild them);
* ``mosaic`` (:func:`mosaic_packing`): rectangles grown over the cells of a random grid;
* ``realloc`` (:func:`realloc_packing`): an allocator's run in which the buffers starting at a
  step take exactly the bytes of those ending there, cut afresh;
* ``regroup`` (:func:`regroup_packing`): many small buffers, groups of neighbours re-cut;
* ``serving`` (:func:`serving_packing`): a server's arena shared by requests that grow, shrink,
  finish and are admitted into their neighbours' bytes;
* ``multiscale`` (:func:`multiscale_packing`): buffers of every scale, runs of neighbours of
  heavy-tailed lengths re-cut, the same bytes often taken by one buffer after another;
* ``repeated`` (:func:`repeated_packing`): a few sizes that repeat, as a network's layers
  repeat their shapes, the buffers of a run made again in another order;
* ``stack`` (:func:`stack_packing`): training steps, activations pushed at the bottom in the
  forward pass and popped in reverse in the backward pass, workspaces filling the rest: nested
  lifetimes;
* ``ring`` (:func:`ring_packing`): a streaming pipeline's ring buffer, a head sweeping the
  arena bottom up and re-cutting the bytes it comes back to: first in, first out;
* ``fragments`` (:func:`fragments_packing`): two programs sharing an arena, the first's
  buffers (drawn, not cut) placed by a first-fit allocator, the fragments its plan leaves
  below its peak taken by the second's.

The last nine have no straight cut through the strip, and are made neither by straight nor
by pinwheel cuts. ``fragments`` is held out (:data:`HELD_OUT`): the exact engine is tuned on
the others and checked on it. (Each family before it was held out in turn until checked: ``regroup``
until the holes of :mod:`cpplan.exact.events`, tuned on ``mosaic`` and ``realloc``, had been,
``serving`` until the hole search of :mod:`cpplan.exact.refill`, built on ``regroup``, had,
``multiscale`` until the events of many blocks, built on ``mosaic``, had, and ``repeated``
until the components' order and the residues of large P-nodes had, and ``stack`` until the
read-back's budget and retries and the hole search of large components had, and ``ring``
until the cuts of two or three air blocks had; the work since makes them some of the
others.) Every generator puts its construction's offsets in
``problem.meta["offsets"]`` (not hints: a solver must find the packing itself).

:func:`thinned` takes a share of any of them away, all but the buffers alive at one moment:
the optimum stays the width, but the load is below it at most moments, where the searches at
zero slack (:mod:`cpplan.exact.refill`) do not apply as such (:mod:`cpplan.exact.air`).

``aligned=True`` cuts bytes on multiples of 64 and gives each buffer the largest power of two
(64 to 4096) dividing the offset it was cut at, so the construction still fits: alignment then
matters (MiniMalloc's and idealloc's evaluations use such alignments).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .problem import Buffer, Problem

__all__ = ["perfect_packing", "mosaic_packing", "realloc_packing", "regroup_packing",
           "serving_packing", "multiscale_packing", "repeated_packing", "stack_packing",
           "ring_packing", "fragments_packing", "thinned",
           "FAMILIES", "HELD_OUT"]

GRAIN = 64  # bytes, the cut grain of aligned packings
MAX_ALIGN = 4096


def perfect_packing(n: int, *, seed: int = 0, width: int = 1 << 20, horizon: int = 10_000,
                    aligned: bool = False, pinwheels: float = 0.3) -> Problem:
    """A problem of about ``n`` buffers (exactly ``n`` when the strip allows) tiling a
    ``width`` x ``horizon`` strip; its optimum height is ``width`` (see the module docstring).

    ``pinwheels`` is the probability that a cut is a pinwheel (five rectangles) rather than a
    straight cut. The cutting's offsets are in ``problem.meta["offsets"]`` (not hints: a solver
    must find the packing itself).
    """
    grain = _grain(n, width, aligned)
    rng = np.random.default_rng(seed)
    rects = [(0, horizon, 0, width)]  # (t0, t1, y0, y1)

    def cut_point(lo: int, hi: int, step: int) -> int | None:
        span = (hi - lo) // step
        if span < 2:
            return None
        return lo + step * int(rng.integers(1, span))

    stuck = 0
    while len(rects) < n and stuck < 50 * n:
        # The largest rectangles first (by area, randomised), so sizes stay varied but bounded.
        areas = np.array([(t1 - t0) * (y1 - y0) for t0, t1, y0, y1 in rects], float)
        j = int(rng.choice(len(rects), p=areas / areas.sum()))
        t0, t1, y0, y1 = rects[j]
        pieces = None
        if len(rects) + 4 <= n and rng.random() < pinwheels:
            x1, y1c = cut_point(t0, t1, 1), cut_point(y0, y1, grain)
            if x1 is not None and y1c is not None:
                x2, y2 = cut_point(x1, t1, 1), cut_point(y1c, y1, grain)
                if x2 is not None and y2 is not None:
                    pieces = [(t0, x2, y0, y1c), (x2, t1, y0, y2), (x1, t1, y2, y1),
                              (t0, x1, y1c, y1), (x1, x2, y1c, y2)]
        if pieces is None:
            if rng.random() < 0.5:
                x = cut_point(t0, t1, 1)
                pieces = None if x is None else [(t0, x, y0, y1), (x, t1, y0, y1)]
            else:
                y = cut_point(y0, y1, grain)
                pieces = None if y is None else [(t0, t1, y0, y), (t0, t1, y, y1)]
        if pieces is None:
            stuck += 1
            continue
        rects[j:j + 1] = pieces
    return _tiling_problem(rects, "perfect", "cpplan.perfect", n, seed, width, aligned)


def thinned(problem: Problem, share: float, *, seed: int = 0) -> Problem:
    """``problem``, a perfect packing (``meta["offsets"]``, ``meta["optimum"]``), with about
    ``share`` of its buffers taken away at random (``seed``), but none of those alive at the
    strip's middle moment (the median of the starts): that moment still loads the width, and
    the construction's offsets of the buffers kept are a plan at it, so the optimum is the
    width still. Named ``thinned-<share>-<name>``; ``meta["offsets"]`` holds the buffers kept.
    """
    if not 0.0 <= share < 1.0:
        raise ValueError(f"share: {share} is not in [0, 1)")
    buffers = problem.buffers
    middle = int(np.median([b.start for b in buffers])) if buffers else 0
    rng = np.random.default_rng(seed)
    drop = rng.random(len(buffers)) < share
    kept = [k for k, b in enumerate(buffers) if not drop[k] or b.start <= middle < b.end]
    offsets = problem.meta["offsets"]
    return Problem(tuple(buffers[k] for k in kept), name=f"thinned-{share:g}-{problem.name}",
                   meta={**problem.meta, "offsets": tuple(offsets[k] for k in kept),
                         "thinned": share})


def _tiling_problem(rects: list[tuple[int, int, int, int]], kind: str, generator: str, n: int,
                    seed: int, width: int, aligned: bool) -> Problem:
    """The problem whose buffers are ``rects`` (``(t0, t1, y0, y1)``, a tiling of the strip
    ``width`` bytes high), ids in the rectangles' sorted order, each aligned (when ``aligned``)
    to the largest power of two from :data:`GRAIN` to :data:`MAX_ALIGN` dividing its offset."""
    buffers = []
    rects = sorted(rects)
    for k, (t0, t1, y0, y1) in enumerate(rects):
        align = 1
        if aligned:
            align = MAX_ALIGN if y0 == 0 else min(MAX_ALIGN, y0 & -y0)
        buffers.append(Buffer(id=f"b{k}", size=y1 - y0, start=t0, end=t1, alignment=align))
    if aligned:
        kind = f"aligned {kind}"
    return Problem(tuple(buffers), name=f"{kind.replace(' ', '-')}-{n}-{seed}",
                   meta={"optimum": width, "generator": generator, "seed": seed,
                         "offsets": tuple(y0 for _t0, _t1, y0, _y1 in rects)})


def mosaic_packing(n: int, *, seed: int = 0, width: int = 1 << 20, horizon: int = 10_000,
                   aligned: bool = False, reach: int = 3) -> Problem:
    """A problem of about ``n`` buffers tiling a ``width`` x ``horizon`` strip by a *mosaic*: the
    strip is cut into a grid (columns of random lengths in time, rows of random heights in
    bytes), and rectangles are grown over its cells, the lowest free cell of the earliest
    column first, each 1 to ``reach`` rows high and columns long as the free cells allow (the
    random growth of floor plans and puzzle boards). The optimum is ``width`` (every moment is
    covered: see the module docstring).

    Not made by straight or pinwheel cuts: a straight cut through the whole strip needs a grid
    line that no rectangle crosses, and rectangles cross the grid lines at random, so the
    larger strips have none (``tests/test_perfect.py`` checks it); inside, the rectangles
    interlock in every pattern the growth makes, not only the pinwheel's. A few rectangles
    (a tenth at most) are then cut once more, straight, so that there are exactly ``n``.
    """
    grain = _grain(n, width, aligned)
    rng = np.random.default_rng(seed)
    # Cells in the grid: about 3 a rectangle with reach 3 (then scaled by what the growth made,
    # until 90 to 100 % of the rectangles are grown ones).
    cells = 0.95 * n * (reach + 1) ** 2 / 5
    for _try in range(100):
        rows = max(1, min(width // grain, round(np.sqrt(cells))))
        cols = max(1, min(horizon, round(cells / rows)))
        ys = _cuts(rng, width // grain, rows) * grain
        ts = _cuts(rng, horizon, cols)
        rects = _grow(rng, len(ts) - 1, len(ys) - 1, reach)
        if not 0.9 * n <= len(rects) <= n and cells >= 1:
            cells *= 0.95 * n / len(rects)
        elif not _cut_through(rects, len(ts) - 1, len(ys) - 1):
            break  # (else: grown again, with new draws)
    rects = [(int(ts[c0]), int(ts[c1]), int(ys[r0]), int(ys[r1])) for c0, c1, r0, r1 in rects]
    return _tiling_problem(_split_to(rng, rects, n, grain), "mosaic", "cpplan.perfect.mosaic",
                           n, seed, width, aligned)


def realloc_packing(n: int, *, seed: int = 0, width: int = 1 << 20, aligned: bool = False,
                    crowd: int = 12, life: float = 3.0) -> Problem:
    """A problem of about ``n`` buffers that an allocator could have made reusing freed bytes
    exactly, as a network's schedule does when its arena is always full: time runs in steps;
    every buffer lives a random number of steps (mostly about ``life``, a tenth of them five
    times longer: skip connections); at each step the bytes of the buffers that end there,
    adjacent runs joined, are cut at random into the buffers that start there (about as many as
    ended, about ``crowd`` alive at a time), so every byte stays in use. The optimum is
    ``width``: the strip is covered at every moment up to the last step.

    Not made by straight or pinwheel cuts: buffers that start where several ended straddle the
    old boundaries, and a boundary that no buffer has crossed yet pulls its neighbours into
    ending together (until none is left); no step ends every buffer alive (one of them lives
    on), so no cut in time crosses the strip.
    """
    grain = _grain(n, width, aligned)
    rng = np.random.default_rng(seed)

    def lifetime() -> int:
        steps = int(rng.geometric(1 / life))
        return steps * 5 if rng.random() < 0.1 else steps

    k0 = max(1, min(n, crowd, width // grain))
    ys = _cuts(rng, width // grain, k0) * grain
    alive = [[int(ys[k]), int(ys[k + 1]), 0, lifetime()] for k in range(k0)]  # y0, y1, t0, end
    uncut = set(ys[1:-1].tolist())  # byte boundaries no buffer has crossed yet
    done: list[tuple[int, int, int, int]] = []
    while len(done) + len(alive) < n and len(alive) > 1:
        t = min(b[3] for b in alive)
        ending = {k for k, b in enumerate(alive) if b[3] == t}
        # A boundary never crossed: the buffer beyond it ends here too.
        for k in sorted(ending):
            for j, edge in ((k - 1, alive[k][0]), (k + 1, alive[k][1])):
                if 0 <= j < len(alive) and j not in ending and edge in uncut:
                    alive[j][3] = t
                    ending.add(j)
        if len(ending) == len(alive):  # (a cut in time): one lives on
            alive[int(rng.choice(sorted(ending)))][3] = t + lifetime()
            continue
        runs = _runs([alive[k][:2] for k in sorted(ending)])
        budget = n - len(done) - len(alive)
        if budget < len(runs):  # no room for the buffers starting here: the strip ends
            break
        for k in ending:
            y0, y1, t0, _end = alive[k]
            done.append((t0, t, y0, y1))
        alive = [b for k, b in enumerate(alive) if k not in ending]
        for r, (y0, y1, members) in enumerate(runs):
            now = len(alive) + members
            m = members + int(rng.integers(-1, 2)) + (now < crowd) - (now > crowd)
            m = max(1, min(m, (y1 - y0) // grain, budget - (len(runs) - r - 1)))
            budget -= m
            cuts = (_cuts(rng, (y1 - y0) // grain, m) * grain + y0).tolist()
            for a, b in zip(cuts[:-1], cuts[1:], strict=True):
                alive.append([a, b, t, t + lifetime()])
                uncut -= {y for y in uncut if a < y < b}
        alive.sort()
    horizon = min(b[3] for b in alive)  # (the next step's: every buffer alive starts before)
    rects = done + [(t0, horizon, y0, y1) for y0, y1, t0, _end in alive]
    return _tiling_problem(rects, "realloc", "cpplan.perfect.realloc", n, seed, width, aligned)


def regroup_packing(n: int, *, seed: int = 0, width: int = 1 << 16, aligned: bool = False,
                    crowd: int = 48) -> Problem:
    """A problem of about ``n`` small buffers, about ``crowd`` alive at every moment, tiling a
    strip ``width`` bytes high: at each step one or two groups of two to five neighbours (in
    byte order) end together and their bytes are cut again, at other places, into one buffer
    fewer to one more than the group had. The optimum is ``width`` (the strip is covered at
    every moment).

    Not made by straight or pinwheel cuts: every new buffer crosses the old boundaries inside
    its group; a byte boundary that no buffer has crossed yet is the first group's centre
    (until none is left), and no group is every buffer alive, so no cut in time crosses the
    strip. The strip ends at ``n`` buffers (or when three are left).
    """
    grain = _grain(n, width, aligned)
    rng = np.random.default_rng(seed)
    crowd = max(3, min(crowd, n // 5))  # (small problems: room to cross every boundary)
    alive, uncut = _first_row(rng, width, grain, max(1, min(n, crowd)))
    done: list[tuple[int, int, int, int]] = []
    t = 0
    while len(alive) >= 3:
        t += 1
        taken: set[int] = set()
        groups = []
        for g in range(1 + int(rng.random() < 0.5)):
            size = int(rng.integers(2, 6))
            size = min(size, len(alive) - 1 - len(taken))
            if size < 2:
                break
            if g == 0 and uncut:
                y = int(rng.choice(sorted(uncut)))
                centre = next(k for k, b in enumerate(alive) if b[0] == y)
                lo = max(0, min(centre - int(rng.integers(1, size)), len(alive) - size))
            else:
                lo = int(rng.integers(0, len(alive) - size + 1))
            members = range(lo, lo + size)
            if any(k in taken or alive[k][2] >= t for k in members):
                continue
            taken.update(members)
            groups.append((lo, size))
        if not groups:
            continue
        budget = n - len(done) - len(alive)
        fresh = []
        for lo, size in groups:
            y0, y1 = alive[lo][0], alive[lo + size - 1][1]
            m = size + int(rng.integers(-1, 2)) + (len(alive) < crowd) - (len(alive) > crowd)
            if len(alive) <= crowd:  # (never below the crowd: it ends when three are left)
                m = max(m, size)
            m = max(1, min(m, (y1 - y0) // grain, budget))
            budget -= m
            fresh.append((y0, y1, m))
        if budget < 0:
            break
        alive = _step(alive, done, uncut, t, taken,
                      [(_cuts(rng, (y1 - y0) // grain, m) * grain + y0).tolist()
                       for y0, y1, m in fresh])
        if len(done) + len(alive) >= n:
            break
    return _tiling_problem(_last(done, alive, t), "regroup", "cpplan.perfect.regroup", n, seed,
                           width, aligned)


def serving_packing(n: int, *, seed: int = 0, width: int = 1 << 20, aligned: bool = False,
                    crowd: int = 32) -> Problem:
    """A problem of about ``n`` buffers as a server's arena shared by about ``crowd`` requests,
    each request's bytes one buffer, the arena always full: at each step one to three requests,
    apart, change. A request *grows* into its upper neighbour's bytes or *shrinks* into them
    (the boundary between the two moves: both buffers end and two start), *finishes* (its bytes
    go to its two neighbours, cut at a random point: three end, two start), or is *admitted*
    into part of a neighbour's bytes (one ends, two start); admissions are likelier below the
    crowd, finishes above it. The optimum is ``width`` (the strip is covered at every moment).

    Not made by straight or pinwheel cuts: the first change of every step moves a byte boundary
    of the first step that no buffer has crossed yet (until none is left), and no step
    changes every request, so no cut in time crosses the strip. The strip ends at ``n``
    buffers (or when two are left).
    """
    grain = _grain(n, width, aligned)
    rng = np.random.default_rng(seed)
    crowd = max(3, min(crowd, n // 4))
    alive, uncut = _first_row(rng, width, grain, max(1, min(n, crowd)))
    done: list[tuple[int, int, int, int]] = []
    t = 0

    def cut(y0: int, y1: int) -> int | None:  # a random grain point strictly inside
        return None if (y1 - y0) // grain < 2 else \
            y0 + grain * int(rng.integers(1, (y1 - y0) // grain))

    while len(alive) >= 3 and len(done) + len(alive) < n:
        t += 1
        touched: set[int] = set()
        changes: list[tuple[list[int], list[tuple[int, int]]]] = []  # (ending, new spans)
        for c in range(int(rng.integers(1, 4))):
            if c == 0 and uncut:  # (the boundary moves)
                y = int(rng.choice(sorted(uncut)))
                k = next(j for j, b in enumerate(alive) if b[1] == y)  # (below the boundary)
                kind = "move"
            else:
                k = int(rng.integers(0, len(alive)))
                r = rng.random()
                admit = 0.5 if len(alive) < crowd else 0.15
                kind = "admit" if r < admit else ("finish" if r < admit + 0.2 else "move")
            span = {"move": 2, "finish": 3, "admit": 1}[kind]
            k = min(k, len(alive) - span)
            members = list(range(k, k + span))
            if any(j in touched or j - 1 in touched or j + 1 in touched for j in members) or \
                    any(alive[j][2] >= t for j in members):
                continue
            y0, y1 = alive[members[0]][0], alive[members[-1]][1]
            if kind == "finish":  # (the middle one's bytes, cut between its neighbours)
                at = cut(alive[k + 1][0] - grain, alive[k + 1][1] + grain)
                at = None if at is None else min(max(at, alive[k + 1][0]), alive[k + 1][1])
            else:
                at = cut(y0, y1)
            if at is None or at == alive[k][1] and kind == "move":
                continue
            touched.update(members)
            changes.append((members, [(y0, at), (at, y1)]))
        if not changes:
            continue
        if len(done) + len(alive) + sum(len(new) for _m, new in changes) > n + 2:
            break
        ending = {j for members, _new in changes for j in members}
        alive = _step(alive, done, uncut, t, ending,
                      [[new[0][0]] + [b for _a, b in new] for _m, new in changes])
    return _tiling_problem(_last(done, alive, t), "serving", "cpplan.perfect.serving", n, seed,
                           width, aligned)


def multiscale_packing(n: int, *, seed: int = 0, width: int = 1 << 24, aligned: bool = False,
                       crowd: int = 40, spread: float = 1000.0) -> Problem:
    """A problem of about ``n`` buffers of every scale, from a few bytes to a large part of the
    arena (sizes drawn log-uniformly over ``spread``), about ``crowd`` alive at a time, tiling
    a strip ``width`` bytes high: at each step one to three runs of neighbours end, each run's
    length heavy-tailed (mostly one or two buffers, now and then up to 16: a layer's many small
    temporaries freed at once) and runs may touch, and each run's bytes are cut afresh,
    log-uniformly again, into one buffer fewer to four more (a run of one cut into one is a
    buffer ending where another of the same bytes starts, the commonest reuse in a network).
    The optimum is ``width`` (the strip is covered at every moment).

    Not made by straight or pinwheel cuts: the first run of every step holds a byte boundary
    of the first step that no buffer has crossed yet (until none is left), and is cut into
    buffers that avoid that boundary where they can; no step ends every buffer alive, so no
    cut in time crosses the strip. The strip ends at ``n`` buffers (or when two are left).
    """
    grain = _grain(n, width, aligned)
    rng = np.random.default_rng(seed)
    crowd = max(3, min(crowd, n // 6))  # (small problems: room to cross every boundary)

    def scaled_cuts(y0: int, y1: int, m: int, avoid: int | None) -> list[int]:
        # ``[y0, y1)`` cut into ``m`` pieces (fewer where it is too narrow) of log-uniform
        # weights, on the grain, the boundary ``avoid`` not among the cuts where possible.
        units = (y1 - y0) // grain
        m = max(1, min(m, units))
        weights = np.exp(rng.uniform(0.0, np.log(spread), m))
        points = np.round(np.cumsum(weights)[:-1] / weights.sum() * units).astype(np.int64)
        points = np.unique(np.clip(points, 1, units - 1)) if m > 1 else points
        cuts = [y0] + [y0 + int(p) * grain for p in points] + [y1]
        return _avoiding(cuts, avoid, grain)

    alive, uncut = _row(scaled_cuts(0, width, max(1, min(n, crowd)), None))
    done: list[tuple[int, int, int, int]] = []
    t = 0
    while len(alive) >= 3 and len(done) + len(alive) < n:
        t += 1
        taken: set[int] = set()
        runs: list[tuple[int, int, int | None]] = []  # (first, length, boundary to cross)
        for r in range(int(rng.integers(1, 4))):
            length = min(int(rng.zipf(2.2)), 16, len(alive) - 1 - len(taken))
            if length < 1:
                break
            avoid = None
            if r == 0 and uncut:  # (a run holding a boundary not crossed yet, at least two)
                avoid = int(rng.choice(sorted(uncut)))
                above = next(k for k, b in enumerate(alive) if b[0] == avoid)
                length = max(2, length)
                lo = above - int(rng.integers(1, length))
            else:
                lo = int(rng.integers(0, len(alive)))
            lo = max(0, min(lo, len(alive) - length))
            members = range(lo, lo + length)
            if any(k in taken or alive[k][2] >= t for k in members) or \
                    len(taken) + length >= len(alive):
                continue
            taken.update(members)
            runs.append((lo, length, avoid))
        if not runs:
            continue
        budget = n - len(done) - len(alive)  # (buffers that may start, beyond n at the end)
        if budget < len(runs):  # (no room for the buffers starting here: the strip ends)
            break
        fresh: list[list[int]] = []
        for r, (lo, length, avoid) in enumerate(runs):
            now = len(alive) - len(taken) + sum(len(c) - 1 for c in fresh)
            most = length + (min(length, 4) if now < crowd else 1)
            m = int(rng.integers(max(1, length - (now > crowd)), most + 1))
            m = min(m, budget - (len(runs) - r - 1))
            budget -= m
            fresh.append(scaled_cuts(alive[lo][0], alive[lo + length - 1][1], m, avoid))
        alive = _step(alive, done, uncut, t, taken, fresh)
    return _tiling_problem(_last(done, alive, t), "multiscale", "cpplan.perfect.multiscale", n,
                           seed, width, aligned)


def repeated_packing(n: int, *, seed: int = 0, width: int = 1 << 22, aligned: bool = False,
                     crowd: int = 24, shapes: int = 6) -> Problem:
    """A problem of about ``n`` buffers whose sizes repeat, as the layers of a network repeat
    their shapes: a palette of ``shapes`` sizes is drawn once, and the strip ``width`` bytes
    high (about ``crowd`` buffers alive at a time) is cut into buffers of those sizes (the last
    of a cut takes what is left). At each step one or two runs of one to four neighbours end:
    most often their bytes go to new buffers of the same sizes in another order (a layer's
    tensors made again), else they are cut afresh from the palette. Equal sizes everywhere
    make many ways to match the buffers that end with those that start. The optimum is
    ``width`` (the strip is covered at every moment).

    Not made by straight or pinwheel cuts: the first run of every step holds a byte boundary
    of the first step that no buffer has crossed yet (until none is left) and is cut afresh
    until a new buffer crosses it; no step ends every buffer alive, so no cut in time crosses
    the strip. The strip ends at ``n`` buffers (or when two are left).
    """
    grain = _grain(n, width, aligned)
    rng = np.random.default_rng(seed)
    crowd = max(3, min(crowd, n // 8))
    unit = max(grain, width // (2 * crowd) // grain * grain)  # (a typical size)
    palette = sorted({int(x) for x in rng.integers(unit // grain // 2, 2 * unit // grain,
                                                       shapes) * grain})

    def compose(total: int, most: int = n) -> list[int]:
        # ``total`` bytes as sizes from the palette at random, the last (or the ``most``-th)
        # what is left.
        parts: list[int] = []
        while total > 0:
            fits = [x for x in palette if x <= total]
            size = int(rng.choice(fits)) if fits and len(parts) < most - 1 else total
            parts.append(size)
            total -= size
        return parts

    def cuts_of(y0: int, parts: list[int]) -> list[int]:
        return [y0, *(y0 + int(c) for c in np.cumsum(parts))]

    alive, uncut = _row(cuts_of(0, compose(width, max(1, min(n, 2 * crowd)))))
    done: list[tuple[int, int, int, int]] = []
    t = 0
    while len(alive) >= 3 and len(done) + len(alive) < n:
        t += 1
        taken: set[int] = set()
        fresh: list[list[int]] = []
        for r in range(1 + int(rng.random() < 0.4)):
            length = min(int(rng.geometric(0.5)), 4, len(alive) - 1 - len(taken))
            if length < 1:
                break
            cross = None
            if r == 0 and uncut:  # (a run holding a boundary not crossed yet)
                cross = int(rng.choice(sorted(uncut)))
                above = next(k for k, b in enumerate(alive) if b[0] == cross)
                length = min(int(rng.integers(2, 5)), len(alive) - 1)
                lo = above - int(rng.integers(1, length))
            else:
                lo = int(rng.integers(0, len(alive)))
            lo = max(0, min(lo, len(alive) - length))
            members = range(lo, lo + length)
            if any(k in taken for k in members) or len(taken) + length >= len(alive):
                continue
            y0, y1 = alive[lo][0], alive[lo + length - 1][1]
            sizes = [alive[k][1] - alive[k][0] for k in members]
            for _try in range(20):
                if cross is None and rng.random() < 0.7:
                    parts = [sizes[k] for k in rng.permutation(len(sizes))]  # (made again)
                else:
                    parts = compose(y1 - y0)
                cuts = cuts_of(y0, parts)
                if cross is None or cross not in cuts:
                    break
            else:  # (these bytes cut from the palette keep the boundary: another run, later)
                continue
            now = len(alive) - len(taken) + sum(len(c) - 1 for c in fresh)
            if len(cuts) - 1 > length and now >= crowd:  # (above the crowd: no more buffers)
                cuts = cuts_of(y0, [sizes[k] for k in rng.permutation(len(sizes))])
            taken.update(members)
            fresh.append(cuts)
        if not fresh:
            continue
        if len(done) + len(alive) + sum(len(c) - 1 for c in fresh) > n + 2:
            break
        alive = _step(alive, done, uncut, t, taken, fresh)
    return _tiling_problem(_last(done, alive, t), "repeated", "cpplan.perfect.repeated", n, seed,
                           width, aligned)


def stack_packing(n: int, *, seed: int = 0, width: int = 1 << 22, aligned: bool = False,
                  crowd: int = 16, depth: float = 0.7) -> Problem:
    """A problem of about ``n`` buffers as training steps use memory: in each step's forward
    pass activations are *pushed* at the bottom of the arena, one above the other, each made in
    the bytes of the workspaces that end just above the stack's top; in the backward pass they
    are *popped* in the reverse order, each one's bytes and those of the workspaces just above
    it cut afresh into new workspaces; then the next step. Workspaces (a layer's temporaries
    and gradients, about ``crowd`` buffers alive in all) fill everything above the stack, and
    elsewhere one or two runs of them end at each step and are cut afresh. Each forward pass
    pushes four to twelve activations, up to a random height of at most ``depth`` of the
    strip. The optimum is ``width`` (the strip is covered at every moment).

    Unlike the other families, the lifetimes nest: the activation pushed first lives longest,
    around everything its pass makes above it. Not made by straight or pinwheel cuts: the
    first run of workspaces of every step holds a byte boundary of the first step that no
    buffer has crossed yet (while one above the stack is left), and is cut afresh avoiding
    it; no step ends every buffer alive, so no cut in time crosses the strip. The strip ends
    at ``n`` buffers (or when two are left).
    """
    grain = _grain(n, width, aligned)
    rng = np.random.default_rng(seed)
    crowd = max(3, min(crowd, n // 6))

    def cuts_of(y0: int, y1: int, m: int, avoid: int | None = None) -> list[int]:
        # ``[y0, y1)`` cut into ``m`` pieces at random on the grain (fewer where narrower), the
        # boundary ``avoid`` not among the cuts where possible.
        cuts = (_cuts(rng, (y1 - y0) // grain, m) * grain + y0).tolist()
        return _avoiding(cuts, avoid, grain)

    alive, uncut = _first_row(rng, width, grain, max(1, min(n, crowd)))
    done: list[tuple[int, int, int, int]] = []
    acts = 0  # the activations alive: alive[:acts], bottom up (the stack)
    pushing, cap, size = True, width, width
    t = 0
    while len(alive) >= 3 and len(done) + len(alive) < n:
        t += 1
        before = acts
        if not pushing and acts == 0:
            pushing = True  # (the next training step's forward pass)
        if pushing and acts == 0:  # (this pass's height, and its activations' typical size)
            cap = grain * max(1, int(rng.uniform(0.3, 1.0) * depth * width) // grain)
            size = max(grain, cap // int(rng.integers(4, 13)))
        top = alive[acts][0]  # (the stack's top)
        if pushing and (top >= cap or len(alive) - acts < 3):
            pushing = acts == 0  # (the backward pass, unless the stack is empty)
        spare = len(alive) - acts - 1  # (workspaces that may end: one lives on)
        runs: list[tuple[int, int, int | None, int]] = []  # (first, length, avoid, pushed)
        if pushing:  # (the workspaces above the top, enough for an activation, end)
            length = 1
            while length < min(4, spare) and alive[acts + length - 1][1] - top < 2 * size:
                length += 1
            units = (alive[acts + length - 1][1] - top) // grain
            most = min(units - 1, (cap - top) // grain)
            if length <= spare and most >= 1:
                want = int(rng.uniform(0.5, 1.5) * size) // grain
                runs.append((acts, length, None, grain * max(1, min(want, most))))
                acts += 1
        elif acts:
            acts -= 1
            runs.append((acts, 1 + min(int(rng.integers(0, 3)), spare), None, 0))
        taken = {k for lo, length, _a, _p in runs for k in range(lo, lo + length)}
        floor = max(taken, default=acts - 1) + 2  # (other runs start above, apart)
        above = [y for y in sorted(uncut) if y > alive[min(floor, len(alive) - 1)][0]]
        for r in range(1 + int(rng.random() < 0.5)):
            length = min(int(rng.integers(1, 5)), len(alive) - 1 - len(taken))
            avoid = int(rng.choice(above)) if r == 0 and above else None
            if avoid is not None:
                length = max(2, length)
                k = next(j for j, b in enumerate(alive) if b[0] == avoid)
                lo = k - int(rng.integers(1, length))
            else:
                lo = int(rng.integers(floor, max(floor + 1, len(alive))))
            lo = max(floor, min(lo, len(alive) - length))
            members = set(range(lo, lo + length))
            if length < 1 or lo + length > len(alive) or \
                    any(j in taken or j - 1 in taken or j + 1 in taken for j in members):
                continue
            runs.append((lo, length, avoid, 0))
            taken |= members
        if not runs or len(taken) >= len(alive):
            acts = before  # (no push or pop this step)
            continue
        budget = n - len(done) - len(alive)
        if budget < 2 * len(runs):  # (no room for the buffers starting here: the strip ends)
            break
        fresh: list[list[int]] = []
        for r, (lo, length, avoid, pushed) in enumerate(runs):
            now = len(alive) - len(taken) + sum(len(c) - 1 for c in fresh)
            m = length + int(rng.integers(-1, 2)) + (now < crowd) - (now > crowd)
            m = max(1, min(m, budget - 2 * (len(runs) - r - 1) - (pushed > 0)))
            y0, y1 = alive[lo][0], alive[lo + length - 1][1]
            # (a push: the activation, then the workspaces above it)
            cuts = [y0] + cuts_of(y0 + pushed, y1, m) if pushed else cuts_of(y0, y1, m, avoid)
            budget -= len(cuts) - 1
            fresh.append(cuts)
        alive = _step(alive, done, uncut, t, taken, fresh)
    return _tiling_problem(_last(done, alive, t), "stack", "cpplan.perfect.stack", n, seed,
                           width, aligned)


def ring_packing(n: int, *, seed: int = 0, width: int = 1 << 20, aligned: bool = False,
                 crowd: int = 24, keep: float = 0.15) -> Problem:
    """A problem of about ``n`` buffers as a streaming pipeline uses a ring buffer: a *head*
    sweeps the arena from the bottom to the top, over and over; at each step the one to three
    buffers just above it end (those it comes back to after a sweep), their bytes are cut
    afresh into the buffers starting there, and the head moves past them. A buffer the head
    meets is *kept* for one or two more sweeps with probability ``keep`` (state a stage carries
    on, as a KV window or a filter's history): the head skips it. About ``crowd`` buffers are
    alive at a time. The optimum is ``width`` (the strip is covered at every moment).

    Unlike the other families, the lifetimes are first in, first out: a buffer lives about one
    sweep and starts, within a sweep, later the higher it lies, so the packing runs along a
    diagonal in time and bytes. Not made by straight or pinwheel cuts: a step's run of buffers
    reaches past a byte boundary of the first step that no buffer has crossed yet (while one
    is left where the run can reach it), and is cut afresh avoiding it; no step ends every
    buffer alive, so no cut in time crosses the strip. The strip ends at ``n`` buffers (or
    when one is left).
    """
    grain = _grain(n, width, aligned)
    rng = np.random.default_rng(seed)
    crowd = max(3, min(crowd, n // 4))
    alive, uncut = _first_row(rng, width, grain, max(1, min(n, crowd)))
    done: list[tuple[int, int, int, int]] = []
    sweeps: dict[tuple[int, int], int] = {}  # (y0, t0) of a kept buffer -> sweeps left
    head, t = 0, 0
    while len(alive) >= 2 and len(done) + len(alive) < n:
        k = next((j for j, b in enumerate(alive) if b[0] >= head), len(alive))
        while k < len(alive) and sweeps.get((alive[k][0], alive[k][2]), 0) > 0:
            sweeps[alive[k][0], alive[k][2]] -= 1  # (kept: the head passes it by)
            k += 1
        if k == len(alive):  # (the top: the next sweep)
            head = 0
            continue
        if sweeps.pop((alive[k][0], alive[k][2]), None) is None and rng.random() < keep and \
                not uncut & {alive[k][0], alive[k][1]}:  # (a boundary to cross comes first)
            sweeps[alive[k][0], alive[k][2]] = int(rng.integers(1, 3))
            head = alive[k][1]
            continue
        t += 1
        length, reach = 1, min(len(alive) - k, len(alive) - 1)  # (one buffer lives on)
        most = min(int(rng.integers(1, 4)), reach)
        while length < reach and (length < most or alive[k + length - 1][1] in uncut) and \
                (alive[k + length][0], alive[k + length][2]) not in sweeps:
            length += 1  # (a run reaches past a boundary nobody has crossed yet)
        y0, y1 = alive[k][0], alive[k + length - 1][1]
        budget = n - len(done) - len(alive)  # (at least 1: the loop's condition)
        m = length + int(rng.integers(-1, 2)) + (len(alive) < crowd) - (len(alive) > crowd)
        cuts = (_cuts(rng, (y1 - y0) // grain, max(1, min(m, budget))) * grain + y0).tolist()
        for avoid in sorted(y for y in uncut if y0 < y < y1):
            cuts = _avoiding(cuts, avoid, grain)
        alive = _step(alive, done, uncut, t, set(range(k, k + length)), [cuts])
        head = y1
    return _tiling_problem(_last(done, alive, t), "ring", "cpplan.perfect.ring", n, seed, width,
                           aligned)


def fragments_packing(n: int, *, seed: int = 0, width: int = 1 << 20, aligned: bool = False,
                      share: float = 0.3, recut: float = 0.1) -> Problem:
    """A problem of about ``n`` buffers as two programs share an arena: the first's buffers
    (about ``share`` of them: a network's activations, each op's output living a few ops and
    now and then across many, as skip connections do, and scratch for one op, of sizes from
    ``width / 512`` to ``width / 16`` at random on a log scale) are placed by a first-fit
    allocator as they come (the lowest offset where each fits among those alive), and the
    fragments that plan leaves below its peak are taken by the second's: at each moment the
    free bytes not yet taken are cut into new buffers (each free run into pieces about as
    large as the first program's largest, one more at random), and one of those alive whose
    bytes stay free is ended there with probability ``recut`` and its bytes taken afresh with
    its neighbours'. The optimum is the first plan's height (every moment is covered up to
    it), so unlike the other families the width is not chosen but found.

    The first program's buffers do not tile anything: their sizes and lifetimes are drawn, not
    cut, and the shapes of the second's are the holes a greedy allocator leaves. No straight
    cut crosses the strip (a draw that has one, in time or in bytes, is drawn again). The
    count is met by drawing the first program again, larger or smaller, until both make
    90-100 % of ``n``, then cutting buffers in two (the largest likelier).
    """
    grain = _grain(n, width, aligned)
    rng = np.random.default_rng(seed)
    first = max(1, int(n * share))
    for _attempt in range(100):
        rects = _fragments(rng, first, width, grain, recut)
        if first > 1 and not 0.9 * n <= len(rects) <= n:
            first = max(1, int(first * 0.95 * n / len(rects)))  # (drawn again, fewer or more)
            continue
        rects = _split_to(rng, rects, n, grain)
        if n < 8 or not _straight_cut(rects):
            break
    else:
        raise ValueError(f"n: no fragments packing of {n} buffers without a straight cut")
    height = max(y1 for _t0, _t1, _y0, y1 in rects)
    return _tiling_problem(rects, "fragments", "cpplan.perfect.fragments", n, seed, height,
                           aligned)


def _fragments(rng: np.random.Generator, count: int, width: int, grain: int,
               recut: float) -> list[tuple[int, int, int, int]]:
    """``count`` drawn buffers placed by first-fit, and their plan's free bytes below its
    height cut into buffers (see :func:`fragments_packing`), as ``(t0, t1, y0, y1)``."""
    lo, hi = max(grain, width // 512), max(grain, width // 16)
    sizes = np.exp(rng.uniform(np.log(lo), np.log(hi), count))
    sizes = np.maximum(grain, (sizes // grain).astype(np.int64) * grain)
    drawn: list[tuple[int, int, int]] = []  # (t0, t1, size), one op a moment
    op = 0
    while len(drawn) < count:
        life = int(rng.geometric(0.5)) if rng.random() > 0.1 else int(rng.integers(4, 40))
        drawn.append((op, op + life, int(sizes[len(drawn)])))
        if len(drawn) < count and rng.random() < 0.3:
            drawn.append((op, op + 1, int(sizes[len(drawn)])))  # (scratch)
        op += 1
    placed: list[tuple[int, int, int, int]] = []
    alive: list[tuple[int, int, int]] = []  # (y0, y1, t1) in byte order
    for t0, t1, size in drawn:
        alive = [a for a in alive if a[2] > t0]
        y = 0
        for y0, y1, _end in alive:
            if y0 - y >= size:
                break
            y = max(y, y1)
        alive.append((y, y + size, t1))
        alive.sort()
        placed.append((t0, t1, y, y + size))
    height = max(y1 for _t0, _t1, _y0, y1 in placed)
    events = sorted({t for t0, t1, _y0, _y1 in placed for t in (t0, t1)})
    fillers: list[tuple[int, int, int, int]] = []
    open_: list[tuple[int, int, int]] = []  # (y0, y1, t0) of the second program's, alive
    box = np.array(placed, np.int64).reshape(-1, 4)
    for t in events[:-1]:
        now = box[(box[:, 0] <= t) & (t < box[:, 1])]
        free = _gaps(zip(now[:, 2].tolist(), now[:, 3].tolist(), strict=True), 0, height)
        kept = []
        # (Where every buffer of the first program ends, none of the second's is cut afresh:
        # else a straight cut in time could cross the strip there.)
        odds = recut if (now[:, 0] < t).any() else 0.0
        for a, b in free:
            inside = sorted(f for f in open_ if a <= f[0] and f[1] <= b)
            ended = {k for k in range(len(inside)) if rng.random() < odds}
            # (A filler cut afresh takes its neighbours' bytes too, so that their number
            # does not grow without end.)
            ended |= {k + d for k in ended for d in (-1, 1) if 0 <= k + d < len(inside)}
            stay = [f for k, f in enumerate(inside) if k not in ended]
            kept += stay
            for y0, y1 in _gaps(((y0, y1) for y0, y1, _t0 in stay), a, b):
                # (No larger than the first program's, as a rule.)
                parts = -(-(y1 - y0) // hi) + int(rng.random() < 0.3)
                cuts = (_cuts(rng, (y1 - y0) // grain, parts) * grain + y0).tolist()
                kept += [(c0, c1, t) for c0, c1 in zip(cuts[:-1], cuts[1:], strict=True)]
        still = set(kept)
        fillers += [(t0, t, y0, y1) for y0, y1, t0 in open_ if (y0, y1, t0) not in still]
        open_ = kept
    fillers += [(t0, events[-1], y0, y1) for y0, y1, t0 in open_]
    return placed + fillers


def _gaps(spans: Iterable[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    """The runs of ``[lo, hi)`` that none of ``spans`` (``(y0, y1)``, within it) covers,
    bottom to top."""
    gaps, y = [], lo
    for y0, y1 in sorted(spans) + [(hi, hi)]:
        if y0 > y:
            gaps.append((y, y0))
        y = max(y, y1)
    return gaps

def _straight_cut(rects: list[tuple[int, int, int, int]]) -> bool:
    """Whether some moment or byte strictly inside the strip tiled by ``rects``
    (``(t0, t1, y0, y1)``) is crossed by none of them."""
    for lo, hi in ((0, 1), (2, 3)):
        starts = np.array([r[lo] for r in rects])
        ends = np.array([r[hi] for r in rects])
        points = np.unique(np.concatenate([starts, ends]))
        points = points[(points > starts.min()) & (points < ends.max())]
        crossed = np.zeros(len(points) + 1, np.int64)
        np.add.at(crossed, np.searchsorted(points, starts, side="right"), 1)
        np.add.at(crossed, np.searchsorted(points, ends, side="left"), -1)
        if (np.cumsum(crossed)[:-1] == 0).any():
            return True
    return False


def _grain(n: int, width: int, aligned: bool) -> int:
    """The cut grain in bytes (:data:`GRAIN` for aligned packings, else 1), once ``n`` and
    ``width`` are checked."""
    if n < 1:
        raise ValueError("n: at least one buffer")
    grain = GRAIN if aligned else 1
    if width % grain:
        raise ValueError(f"width: a multiple of {grain} for aligned packings")
    return grain


def _first_row(rng: np.random.Generator, width: int, grain: int,
               k: int) -> tuple[list[list[int]], set[int]]:
    """The strip's first moment cut into ``k`` buffers (fewer where it is narrower), as
    ``[y0, y1, t0]``, and their inner boundaries (none crossed yet)."""
    return _row((_cuts(rng, width // grain, min(k, width // grain)) * grain).tolist())


def _row(cuts: list[int]) -> tuple[list[list[int]], set[int]]:
    """The first moment's buffers between the cut points ``cuts`` (bottom to top), as
    ``[y0, y1, 0]``, and their inner boundaries (none crossed yet)."""
    return [[a, b, 0] for a, b in zip(cuts[:-1], cuts[1:], strict=True)], set(cuts[1:-1])


def _step(alive: list[list[int]], done: list[tuple[int, int, int, int]], uncut: set[int],
          t: int, ending: set[int], runs: list[list[int]]) -> list[list[int]]:
    """The buffers alive (``[y0, y1, t0]``, in byte order) after step ``t``: those at the
    positions ``ending`` end there (into ``done``, as ``(t0, t, y0, y1)``), and each run's cut
    points (bottom to top) start a buffer between every two that differ; the boundaries these
    cross are struck from ``uncut``."""
    for k in ending:
        y0, y1, t0 = alive[k]
        done.append((t0, t, y0, y1))
    alive = [b for k, b in enumerate(alive) if k not in ending]
    for cuts in runs:
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            if b > a:
                alive.append([a, b, t])
                uncut -= {y for y in uncut if a < y < b}
    alive.sort()
    return alive


def _last(done: list[tuple[int, int, int, int]], alive: list[list[int]],
          t: int) -> list[tuple[int, int, int, int]]:
    """Every buffer as ``(t0, t1, y0, y1)``: those done, and those alive after the last step
    ``t`` ending at the next."""
    return done + [(t0, t + 1, y0, y1) for y0, y1, t0 in alive]


def _cuts(rng: np.random.Generator, length: int, parts: int) -> np.ndarray:
    """``0``, ``parts - 1`` distinct points of ``1 .. length - 1`` at random, sorted, and
    ``length``: ``[0, length)`` cut into ``parts`` pieces (fewer when it is shorter)."""
    parts = max(1, min(parts, length))
    inner = np.sort(rng.choice(np.arange(1, length), parts - 1, replace=False)) if parts > 1 \
        else np.zeros(0, np.int64)
    return np.concatenate([[0], inner, [length]]).astype(np.int64)


def _avoiding(cuts: list[int], avoid: int | None, grain: int) -> list[int]:
    """Cut points ``cuts`` (sorted, ends included) with ``avoid``, where it is an inner one,
    moved a grain up or down where the points around it leave room: a boundary that a new
    buffer should cross."""
    if avoid is not None and avoid in cuts[1:-1]:
        k = cuts.index(avoid)
        for step in (grain, -grain):
            if cuts[k - 1] < avoid + step < cuts[k + 1]:
                cuts[k] = avoid + step
                break
    return cuts


def _runs(spans: list[list[int]]) -> list[tuple[int, int, int]]:
    """Byte spans ``[y0, y1)`` (sorted, disjoint) joined where they touch: ``(y0, y1, how
    many spans)`` per run."""
    out: list[list[int]] = []
    for y0, y1 in spans:
        if out and out[-1][1] == y0:
            out[-1][1] = y1
            out[-1][2] += 1
        else:
            out.append([y0, y1, 1])
    return [(a, b, k) for a, b, k in out]


def _grow(rng: np.random.Generator, cols: int, rows: int,
          reach: int) -> list[tuple[int, int, int, int]]:
    """Rectangles ``(c0, c1, r0, r1)`` of cells covering a ``cols`` x ``rows`` grid, grown from
    the lowest free cell of the earliest column with a free cell: 1 to ``reach`` rows high (as
    many as are free above it) and 1 to ``reach`` columns long (as far as those rows are free)."""
    free = np.ones((cols, rows), bool)
    rects = []
    for c in range(cols):
        for r in range(rows):
            if not free[c, r]:
                continue
            up = 1
            while up < reach and r + up < rows and free[c, r + up]:
                up += 1
            h = int(rng.integers(1, up + 1))
            across = 1
            while across < reach and c + across < cols and free[c + across, r:r + h].all():
                across += 1
            w = int(rng.integers(1, across + 1))
            free[c:c + w, r:r + h] = False
            rects.append((c, c + w, r, r + h))
    return rects


def _cut_through(rects: list[tuple[int, int, int, int]], cols: int, rows: int) -> bool:
    """Whether some grid line inside a ``cols`` x ``rows`` grid is crossed by none of
    ``rects`` (``(c0, c1, r0, r1)``): a straight cut through the whole strip."""
    across_c = np.zeros(cols + 1, bool)
    across_r = np.zeros(rows + 1, bool)
    for c0, c1, r0, r1 in rects:
        across_c[c0 + 1:c1] = True
        across_r[r0 + 1:r1] = True
    return not (across_c[1:cols].all() and across_r[1:rows].all())


def _split_to(rng: np.random.Generator, rects: list[tuple[int, int, int, int]], n: int,
              grain: int) -> list[tuple[int, int, int, int]]:
    """``rects`` with straight cuts of random rectangles (the largest likelier) until there
    are ``n`` (or none can be cut)."""
    rects = list(rects)
    stuck = 0
    while len(rects) < n and stuck < 50 * n:
        areas = np.array([(t1 - t0) * (y1 - y0) for t0, t1, y0, y1 in rects], float)
        j = int(rng.choice(len(rects), p=areas / areas.sum()))
        t0, t1, y0, y1 = rects[j]
        if rng.random() < 0.5 and t1 - t0 >= 2:
            x = int(rng.integers(t0 + 1, t1))
            rects[j:j + 1] = [(t0, x, y0, y1), (x, t1, y0, y1)]
        elif (y1 - y0) // grain >= 2:
            y = y0 + grain * int(rng.integers(1, (y1 - y0) // grain))
            rects[j:j + 1] = [(t0, t1, y0, y), (t0, t1, y, y1)]
        else:
            stuck += 1
    return rects


# Every generator by the name of its family (benchmarks/versus.py --families). The held-out
# family is never used to tune the exact engine: it tells whether what was tuned on the others
# holds on a construction the tuning never saw.
FAMILIES = {"perfect": perfect_packing, "mosaic": mosaic_packing, "realloc": realloc_packing,
            "regroup": regroup_packing, "serving": serving_packing,
            "multiscale": multiscale_packing, "repeated": repeated_packing,
            "stack": stack_packing, "ring": ring_packing, "fragments": fragments_packing}
HELD_OUT = "fragments"
