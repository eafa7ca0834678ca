"""Pictures of plans: time across, byte offset up, one rectangle per buffer, one panel per pool.

:func:`plot_plan` returns a matplotlib :class:`~matplotlib.figure.Figure` (a notebook shows it
as it is); :func:`save_plot` writes it to a PNG, SVG or PDF file. Each buffer is the rectangle
``[start, end) x [offset, offset + size)``; buffers aliased into another (in-place results,
slices of a concat) are drawn inside their root with a hatched outline. Each panel has the
pool's height (solid red), its lower bound (dashed; the plan's proven bound with one pool, else
the pool's max-load) and its capacity (dotted), and a faint vertical line at the moment of the
max-load, where no plan can do better.

With memory tiers (buffers that move bytes, :attr:`cpplan.Buffer.traffic`, in pools that charge
for them), each panel's legend also says what its pool moves: the bytes, their share of all
the traffic and what they cost; the title gives the traffic cost and the share the fastest
memory serves; ``color_by="traffic"`` colours each buffer by its passes (traffic per byte of
size: one write and one per read), which is what decides who earns a place in the fast memory.

The picture stays readable at thousands of buffers: rectangles are drawn as one collection,
edges thin out and vanish as the count grows, colour carries the size (or lifetime, or birth
time) on a log scale, and buffer names are written only up to ``label_limit`` buffers.

matplotlib is an optional dependency (``pip install ".[plot]"``), imported only when a plot
is drawn; without it the functions raise :class:`~cpplan.errors.CpplanError` saying so. Figures
are built without ``pyplot``, so nothing here depends on a display or a GUI backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from .bounds import max_load
from .errors import CpplanError, missing_extra
from .plan import Plan
from .problem import Problem

__all__ = ["plot_plan", "plot_grade", "save_plot", "COLOR_BY"]

COLOR_BY = ("size", "lifetime", "start", "traffic", "none")
_CMAPS = {"size": "viridis", "lifetime": "plasma", "start": "twilight_shifted",
          "traffic": "inferno"}


def _matplotlib() -> Any:
    try:
        import matplotlib
        import matplotlib.figure  # noqa: F401
    except ImportError:
        raise missing_extra("plotting", "matplotlib", "plot") from None
    return matplotlib


def _bytes(value: float, _pos: object = None) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(value) >= size:
            return f"{value / size:.3f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{value:.0f} B"


def _byte_step(top: float) -> int:
    """A power of two that cuts ``[0, top]`` into 4 to 8 steps: offsets read as round bytes."""
    step = 1
    while top / (step * 2) >= 4:
        step *= 2
    return step


def _vertices(rects: list[Any]) -> Sequence[Any]:
    """Rectangles as one (n, 4, 2) float array: matplotlib's fast path for many polygons (its
    stubs ask for a sequence of arrays, which the array is)."""
    import numpy as np

    return cast("Sequence[Any]", np.asarray(rects, float))


def _pow2_ticks(lo: float, hi: float, most: int = 8) -> list[float]:
    """Powers of two in ``[lo, hi]``, every second or fourth one when there are too many."""
    import math

    if lo <= 0 or hi <= lo:
        return []
    ks = list(range(math.ceil(math.log2(lo)), math.floor(math.log2(hi)) + 1))
    every = 1
    while len(ks[::every]) > most:
        every *= 2
    return [2.0**k for k in ks[::every]]


def _edge_width(n: int) -> float:
    if n <= 100:
        return 0.6
    if n <= 1000:
        return 0.25
    if n <= 5000:
        return 0.1
    return 0.0


def plot_plan(
    problem: Problem,
    plan: Plan,
    *,
    color_by: str = "size",
    label_limit: int = 40,
    title: str | None = None,
    figsize: tuple[float, float] = (12.0, 6.0),
    dpi: int = 100,
    pools: list[str] | None = None,
) -> Any:
    """The figure of ``plan`` for ``problem`` (a :class:`matplotlib.figure.Figure`).

    ``color_by`` is one of :data:`COLOR_BY`; ``pools`` limits the panels (default: every pool
    that holds a buffer, or the first pool if none does). The plan is drawn as it is, valid or
    not, so a broken plan shows where it breaks.
    """
    mpl = _matplotlib()
    import numpy as np
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import LogNorm, Normalize
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    if color_by not in COLOR_BY:
        raise CpplanError(f"color_by must be one of {', '.join(COLOR_BY)}, got {color_by!r}")
    if plan.status == "infeasible":
        raise CpplanError(f"nothing to draw: the plan is infeasible ({plan.explanation})")
    if color_by == "traffic" and not problem.has_traffic:
        raise CpplanError("color_by='traffic': no buffer of this problem moves bytes "
                          "(Buffer.traffic is 0 everywhere)")
    placed = plan.placements
    used = [p.name for p in problem.pools if any(pl.pool == p.name for pl in placed.values())]
    if pools is None:
        pools = used or [problem.pools[0].name]
    unknown = [p for p in pools if p not in problem.pool_index]
    if unknown:
        raise CpplanError(f"no pool {unknown[0]!r} in this problem")
    loads = max_load(problem)
    aliased = problem.root_of
    n_drawn = sum(1 for b in problem.buffers if b.id in placed and b.size > 0)
    lw = _edge_width(n_drawn)
    t0, t1 = problem.time_span

    values_all: list[float] = []
    for b in problem.buffers:
        if color_by == "size":
            values_all.append(max(b.size, 1))
        elif color_by == "lifetime":
            values_all.append(b.end - b.start)
        elif color_by == "traffic":
            values_all.append(b.traffic / max(b.size, 1))
        else:
            values_all.append(b.start)
    norm: Normalize | None = None
    span = (1.0, 1.0)  # the log scale's ends
    if color_by in ("size", "lifetime") and values_all:
        lo, hi = min(values_all), max(values_all)
        span = (lo, hi if hi > lo else lo * 1.0001 + 1)
        norm = LogNorm(*span)
    elif color_by in ("start", "traffic") and values_all:
        norm = Normalize(min(values_all), max(max(values_all), min(values_all) + 1))
    cmap = mpl.colormaps[_CMAPS.get(color_by, "viridis")]

    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    axes = fig.subplots(len(pools), 1, sharex=True, squeeze=False)[:, 0]
    single = len(problem.pools) == 1
    mappable = None
    for ax, pool_name in zip(axes, pools, strict=True):
        pool = problem.pool(pool_name)
        roots, alias_rects, root_vals, names = [], [], [], []
        for b, v in zip(problem.buffers, values_all, strict=True):
            pl = placed.get(b.id)
            if pl is None or pl.pool != pool_name or b.size == 0:
                continue
            # A buffer with gaps is drawn as the pieces it occupies (its windows in the gaps).
            for s, e, lo, hi in b.pieces() if b.gaps else [(b.start, b.end, 0, b.size)]:
                rect = [(s, pl.offset + lo), (e, pl.offset + lo), (e, pl.offset + hi),
                        (s, pl.offset + hi)]
                if b.id in aliased:
                    alias_rects.append(rect)
                else:
                    roots.append(rect)
                    root_vals.append(v)
            if b.id not in aliased:
                names.append((b.id, (b.start + b.end) / 2, pl.offset + b.size / 2, b.size))
        if roots:
            coll = PolyCollection(_vertices(roots), linewidths=lw,
                                  edgecolors=(0.15, 0.15, 0.15, 0.8))
            if color_by == "none":
                coll.set_facecolor((0.55, 0.7, 0.85, 1.0))
            else:
                coll.set_array(np.asarray(root_vals, float))
                coll.set_cmap(cmap)
                coll.set_norm(norm)
                mappable = coll
            ax.add_collection(coll)
        if alias_rects:
            ax.add_collection(PolyCollection(
                _vertices(alias_rects), facecolors=(1, 1, 1, 0.25),
                edgecolors=(0.1, 0.1, 0.1, 0.9), linewidths=max(lw, 0.3), hatch="////"))
        height = plan.heights.get(pool_name, 0)
        bound = loads[pool_name]
        lb = bound.bytes
        if single and plan.lower_bound is not None and pool.cost > 0:
            lb = max(lb, -(-plan.lower_bound // pool.cost))  # the plan's proven bound, in bytes
        # The height is drawn wide and under the bound, so both show where they coincide.
        ax.axhline(height, color="tab:red", lw=2.2, zorder=3, label=f"height {height:,}")
        if lb > 0:
            ax.axhline(lb, color="black", lw=1.1, ls="--", zorder=4, label=f"lower bound {lb:,}")
        tops = [height, lb]
        if pool.capacity is not None:
            ax.axhline(pool.capacity, color="grey", lw=1.0, ls=":",
                       label=f"capacity {pool.capacity:,}")
            if pool.capacity <= 1.5 * max(height, lb, 1):
                tops.append(pool.capacity)
        if bound.moment is not None:
            ax.axvline(bound.moment, color="black", lw=0.7, alpha=0.4,
                       label=f"max-load moment (step {bound.moment:,})")
        if plan.traffic and len(pools) > 1:
            moved, total = plan.traffic.get(pool_name, 0), sum(plan.traffic.values())
            share = f" ({100 * moved / total:.1f}%)" if total else ""
            ax.plot([], [], ls="", label=f"moves {_bytes(moved)}{share}, cost "
                                         f"{plan.traffic_cost.get(pool_name, 0):,}")
        top = max(max(tops) * 1.05, 1)
        ax.set_ylim(0, top)
        ax.set_xlim(t0, max(t1, t0 + 1))
        ax.yaxis.set_major_locator(MultipleLocator(_byte_step(top)))
        ax.yaxis.set_major_formatter(FuncFormatter(_bytes))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
        ax.set_ylabel(f"{pool_name}: offset" if len(pools) > 1 else "offset")
        if n_drawn <= label_limit:
            # Names only where the rectangle is tall enough to hold one line of text.
            for bid, x, y, size in names:
                if size >= top * 0.035:
                    ax.text(x, y, bid, ha="center", va="center", fontsize=7, clip_on=True)
        ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=4, fontsize=8,
                  frameon=False, borderaxespad=0.2)
        if not roots and not alias_rects:
            ax.text(0.5, 0.5, "no buffers", transform=ax.transAxes, ha="center", color="grey")
    axes[-1].set_xlabel("time (schedule step)")
    if mappable is not None:
        what = {"size": "buffer size", "lifetime": "lifetime (steps)",
                "start": "start step", "traffic": "passes (traffic / size)"}[color_by]
        cb = fig.colorbar(mappable, ax=list(axes), shrink=0.9, pad=0.01)
        cb.set_label(what)
        if color_by in ("size", "lifetime"):
            cb.ax.minorticks_off()
            cb.set_ticks(_pow2_ticks(*span))
            cb.ax.yaxis.set_major_formatter(
                FuncFormatter(_bytes if color_by == "size" else lambda v, _p: f"{v:,.0f}"))
    if title is None:
        gap = "" if plan.gap is None else f", gap {100 * plan.gap:.2f}%"
        lbt = "" if plan.lower_bound is None else f", lower bound {plan.lower_bound:,}"
        what = "height" if single else "objective"
        fast = ("" if plan.fast_share is None else
                f"; {100 * plan.fast_share:.1f}% of the traffic served by the fastest memory")
        title = (f"{problem.name or 'plan'}: {len(problem.buffers):,} buffers — "
                 f"{plan.planner or 'plan'}, {plan.status}, {what} {plan.objective:,}{lbt}{gap}"
                 f"{fast}")
    fig.suptitle(title, fontsize=10)
    return fig


def save_plot(problem: Problem, plan: Plan, path: str | Path, *, width: int = 1600,
              height: int = 900, dpi: int = 100, **options: Any) -> Path:
    """Draw ``plan`` (see :func:`plot_plan`) into ``path``, ``width`` x ``height`` pixels for
    raster formats; the format follows the extension (``.png``, ``.svg``, ``.pdf``). Atomic."""
    from .io.atomic import write_bytes_atomic

    path = Path(path)
    fmt = path.suffix.lower().lstrip(".") or "png"
    if fmt not in ("png", "svg", "pdf", "jpg", "jpeg"):
        raise CpplanError(f"{path}: unknown picture type {fmt!r}; expected .png, .svg or .pdf")
    if width < 100 or height < 100:
        raise CpplanError(f"picture size {width}x{height} is too small (at least 100x100)")
    fig = plot_plan(problem, plan, figsize=(width / dpi, height / dpi), dpi=dpi, **options)
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi)
    write_bytes_atomic(path, buf.getvalue())
    return path


def plot_grade(report: Any, *, cap: float = 2.0, figsize: tuple[float, float] | None = None,
               dpi: int = 100) -> Any:
    """A leaderboard at a glance: a grid of planners (rows, best first) by instances (columns),
    each cell ``height / best known`` coloured green at 1 to red at ``cap`` and beyond, ✓ where
    the plan is proven optimal, the outcome's name where the planner failed. The last column is
    the planner's geometric mean. ``report`` is a :class:`cpplan.grade.Report`.
    """
    mpl = _matplotlib()
    import math

    import numpy as np
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure

    insts = report.graded
    summary = report.summary()
    rows = [s.planner for s in summary]
    cols = [i.name for i in insts] + ["geo-mean"]
    grid = np.full((len(rows), len(cols)), np.nan)
    text = [["" for _ in cols] for _ in rows]
    geo = {s.planner: s.geomean_best for s in summary}
    for a, name in enumerate(rows):
        for b, inst in enumerate(insts):
            r = inst.result(name)
            if r is None:
                continue
            if r.outcome != "ok":
                text[a][b] = r.outcome
                continue
            v = inst.ratio_best(r)
            grid[a, b] = v if v is not None and math.isfinite(v) else np.nan
            text[a][b] = (_short(v) + (" ✓" if inst.optimal(r) else "")) if v is not None else ""
        g = geo.get(name)
        if g is not None:
            grid[a, -1] = g
            text[a][-1] = _short(g)
    if figsize is None:
        figsize = (min(2.2 + 0.75 * len(cols), 24), 1.0 + 0.38 * max(len(rows), 1))
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    ax = fig.subplots()
    shown = np.clip(np.nan_to_num(grid, nan=1.0), 1.0, cap)
    masked = np.ma.array(shown, mask=np.isnan(grid))
    cmap = mpl.colormaps["RdYlGn_r"].with_extremes(bad=(0.85, 0.85, 0.85))
    norm = LogNorm(1.0, cap)
    im = ax.imshow(masked, cmap=cmap, norm=norm, aspect="auto")
    for a in range(len(rows)):
        for b in range(len(cols)):
            if text[a][b]:
                r, g, bl, _ = cmap(norm(shown[a, b])) if not np.isnan(grid[a, b]) else (1, 1, 1, 1)
                dark = 0.299 * r + 0.587 * g + 0.114 * bl < 0.45  # white text on dark cells
                ax.text(b, a, text[a][b], ha="center", va="center", fontsize=7,
                        color="white" if dark else "black",
                        fontweight="bold" if b == len(cols) - 1 else "normal")
    ax.axvline(len(cols) - 1.5, color="black", lw=1.2)
    ax.set_xticks(range(len(cols)), cols, rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    ax.tick_params(length=0)
    cb = fig.colorbar(im, ax=ax, shrink=0.9, pad=0.01)
    cb.set_label("height / best known")
    cb.ax.minorticks_off()
    ticks = [t for t in (1.0, 1.05, 1.1, 1.25, 1.5, 2.0, 4.0, 8.0) if t <= cap]
    cb.set_ticks(ticks, labels=[f"{t:g}" + ("+" if t == cap else "") for t in ticks])
    opt = sum(1 for i in insts if i.proven_optimum is not None)
    ax.set_title(f"{len(rows)} planners on {len(insts)} instances (optimum proven on {opt}); "
                 "✓ = proven optimal", fontsize=9)
    return fig


def _short(v: float) -> str:
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.3f}" if v < 1.1 else f"{v:.2f}"
