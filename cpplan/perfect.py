"""Perfect packings: instances whose optimum is known by construction.

A strip of ``width`` bytes over ``horizon`` moments is cut into rectangles by straight cuts (in
time or in bytes) and pinwheel cuts (five rectangles around a centre, which no sequence of
straight cuts can make: guillotine-style heuristics cannot rebuild them); each rectangle is one
buffer (its time side the lifetime, its byte side the size). The rectangles tile the strip, so
every moment has ``width`` bytes live: the max-load is ``width``, and the cutting itself is a plan
at that height, hence the optimum is ``width`` exactly.

``aligned=True`` cuts bytes on multiples of 64 and gives each buffer the largest power of two
(64 to 4096) dividing the offset it was cut at, so the construction still fits: alignment then
matters (MiniMalloc's and idealloc's evaluations use such alignments).
"""

from __future__ import annotations

import numpy as np

from .problem import Buffer, Problem

__all__ = ["perfect_packing"]

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
    if n < 1:
        raise ValueError("n: at least one buffer")
    grain = GRAIN if aligned else 1
    if width % grain:
        raise ValueError(f"width: a multiple of {grain} for aligned packings")
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
    buffers = []
    rects.sort()
    for k, (t0, t1, y0, y1) in enumerate(rects):
        align = 1
        if aligned:
            align = MAX_ALIGN if y0 == 0 else min(MAX_ALIGN, y0 & -y0)
        buffers.append(Buffer(id=f"b{k}", size=y1 - y0, start=t0, end=t1, alignment=align))
    kind = "aligned perfect" if aligned else "perfect"
    return Problem(tuple(buffers), name=f"{kind.replace(' ', '-')}-{n}-{seed}",
                   meta={"optimum": width, "generator": "cpplan.perfect", "seed": seed,
                         "offsets": tuple(y0 for _t0, _t1, y0, _y1 in rects)})
