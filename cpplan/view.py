"""Interactive pages of plans: one self-contained HTML file that opens from disk (no server, no
network), for one plan or several side by side.

:func:`write_view` writes the page, :func:`view_html` returns it as text, :func:`show_view`
shows it in a notebook (Jupyter displays the :class:`View` it returns inline) and
:func:`view_layout` returns the Bokeh layout. Layout: a panel per pool
(rows) and per plan (columns); time across (schedule steps), byte offset up; a rectangle per
buffer (per piece where it has gaps, :meth:`cpplan.Buffer.pieces`), coloured by size on a log
scale; buffers aliased into another are outlined inside their root. Hovering a rectangle shows
the buffer's id, size, lifetime ``[start, end)``, offset and pool, and the names the front end
knows (:func:`cpplan.names.buffer_names`). Every panel shows the bytes live over time (the load
curve), the lower bound (dashed), the plan's height, the capacity (dotted) and the moment of
the peak; the bytes between the bound and the height are shaded red. All panels share the time
axis, and the panels of one pool share the offset axis, so zooming one zooms the others alike.
Above the panels the page states, in words, what each plan uses against the first one and the
bound (:func:`differences`).

Scale: every rectangle is drawn, on a 2-D canvas or with WebGL (:data:`BACKENDS`); a buffer's
rectangle sends its columns once, shared by every plan's panels. Beyond ``max_pieces``
rectangles per plan the smallest (by bytes x steps) are left out and the page says how many;
idealloc's Y_1 (62185 buffers) is drawn whole (``python benchmarks/view.py`` measures it in
headless Chromium).

Every plan passes the checker (:func:`cpplan.plan.ensure_valid`) before it is drawn. Bokeh is
an optional dependency (``pip install ".[view]"``), imported only when a page is made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .blocks import make_blocks
from .errors import CpplanError, missing_extra
from .load import load_profile, max_load
from .names import buffer_names
from .plan import Plan, ensure_valid
from .problem import Problem

__all__ = ["write_view", "shared_resources", "require_bokeh", "view_html", "view_layout",
           "show_view", "View",
           "differences", "pool_figures", "PoolFigures", "labelled", "MAX_PIECES", "BACKENDS"]

#: Rectangles per plan drawn at most (the smallest beyond it are left out, and the page says so).
MAX_PIECES = 250_000

#: How the panels are drawn. ``canvas`` (the default) draws on a 2-D canvas, which every
#: browser rasterises fast without a GPU too; ``webgl`` hands the rectangles to WebGL, smoother
#: to pan and zoom with a GPU, but browsers without one emulate it in software (SwiftShader),
#: and there it is several times slower: idealloc's Y_1 takes about 10 s to open in headless
#: Chromium here with ``webgl`` against 1.5 s with ``canvas`` (``benchmarks/view.py``).
BACKENDS = ("canvas", "webgl")


def require_bokeh() -> None:
    """Raise the error naming the ``view`` extra when Bokeh is missing (before long work whose
    result is to be shown)."""
    _bokeh()


def _bokeh() -> Any:
    try:
        import bokeh
        import bokeh.embed  # noqa: F401
        import bokeh.models  # noqa: F401
        import bokeh.plotting  # noqa: F401
    except ImportError:
        raise missing_extra("the interactive view", "bokeh", "view") from None
    return bokeh


def labelled(plans: Sequence[Plan] | Mapping[str, Plan]) -> dict[str, Plan]:
    """Plans by label: a mapping as it is; a sequence by planner name (``plan 1``, ``plan 2``,
    ... where a plan has none; ``#2``, ``#3`` after a name that repeats)."""
    if isinstance(plans, Mapping):
        out = {str(k): v for k, v in plans.items()}
    else:
        out = {}
        for k, plan in enumerate(plans):
            name = plan.planner or f"plan {k + 1}"
            label, n = name, 1
            while label in out:
                n += 1
                label = f"{name} #{n}"
            out[label] = plan
    if not out:
        raise CpplanError("no plan to view")
    return out


def _checked(problem: Problem, plans: Sequence[Plan] | Mapping[str, Plan]) -> dict[str, Plan]:
    out = labelled(plans)
    for label, plan in out.items():
        if plan.status == "infeasible" or not plan.placements:
            raise CpplanError(f"plan {label!r} has no placements to view ({plan.status}"
                              f"{': ' + plan.explanation if plan.explanation else ''})")
        ensure_valid(problem, plan)
    return out


# -- what the page says, computed without Bokeh --------------------------------------------------
@dataclass(frozen=True)
class PoolFigures:
    """One plan in one pool: its height, the bound, the load curve and its peak."""

    pool: str
    height: int
    bound: int  # the lower bound on this pool's height (bytes)
    capacity: int | None
    times: np.ndarray  # load curve: bytes live from times[k] to times[k + 1]
    load: np.ndarray
    peak: int  # bytes live at the peak
    peak_moment: int | None  # first step of the peak

    @property
    def above(self) -> int:
        return max(0, self.height - self.bound)


def _bounds(problem: Problem, plans: Mapping[str, Plan]) -> dict[str, int]:
    """Per pool, the best lower bound on its height: its max-load, and with one pool (whose
    cost is all the objective) the plans' own proven bounds too, never above a plan's height."""
    bounds = {name: b.bytes for name, b in max_load(make_blocks(problem)).items()}
    if len(problem.pools) == 1:
        pool = problem.pools[0]
        proven = [p.lower_bound for p in plans.values() if p.lower_bound is not None]
        if proven and pool.cost > 0 and not (problem.has_traffic and pool.traffic_cost):
            best = -(-max(proven) // pool.cost)
            lowest = min(p.heights.get(pool.name, 0) for p in plans.values())
            bounds[pool.name] = max(bounds[pool.name], min(best, lowest))
    return bounds


def pool_figures(problem: Problem, plans: Sequence[Plan] | Mapping[str, Plan]
                 ) -> dict[str, dict[str, PoolFigures]]:
    """Per plan label, per pool the plan uses (or the first pool if it uses none), its
    :class:`PoolFigures`. Checks every plan first."""
    checked = _checked(problem, plans)
    bounds = _bounds(problem, checked)
    blocks = make_blocks(problem)
    times = np.asarray(blocks.times, np.int64)
    out: dict[str, dict[str, PoolFigures]] = {}
    for label, plan in checked.items():
        block_pool, _ = blocks.arrays(plan.placements)
        figures = {}
        for p, pool in enumerate(problem.pools):
            mask = block_pool == p
            if not mask.any() and not (p == 0 and len(block_pool) == 0):
                continue
            load, _ = load_profile(blocks, mask)
            load = load * blocks.scale
            k = int(np.argmax(load)) if len(load) else 0
            peak = int(load[k]) if len(load) else 0
            figures[pool.name] = PoolFigures(
                pool.name, plan.heights.get(pool.name, 0), bounds[pool.name], pool.capacity,
                times[:len(load)], load, peak, int(times[k]) if peak > 0 else None)
        out[label] = figures
    return out


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def _compare(first: str, a: int, other: str, b: int, unit: str) -> str:
    if a == b:
        return f"{first} and {other} both use {a:,}{unit}"
    more = "less" if b < a else "more"
    d = abs(a - b)
    return f"{first} uses {a:,}{unit}, {other} {b:,}: {d:,}{unit} ({_pct(d, a)}) {more}"


def _against_bound(label: str, used: int, bound: int, unit: str) -> str:
    if used <= bound:
        return f"{label} uses {used:,}{unit}, at the bound"
    return (f"{label} uses {used:,}{unit}: {used - bound:,}{unit} ({_pct(used - bound, used)}) "
            "above the bound")


def differences(problem: Problem, plans: Sequence[Plan] | Mapping[str, Plan]) -> list[str]:
    """The page's sentences: what every plan uses against the first one, and the bound. With
    one pool, in bytes of height (``"executorch-greedy uses 14,614,528 bytes, cpplan 9,633,792:
    4,980,736 bytes (34.1 %) less; the bound is 9,633,792."``); with several, one sentence per
    pool and one for the objective (``sum(cost x height)`` plus the traffic's cost)."""
    figures = pool_figures(problem, plans)
    checked = labelled(plans)
    labels = list(checked)
    pools = [p.name for p in problem.pools if any(p.name in f for f in figures.values())]
    lines = []
    for pool in pools:
        where = "" if len(problem.pools) == 1 else f"In pool {pool}: "
        got = {lb: figures[lb][pool].height if pool in figures[lb] else 0 for lb in labels}
        bound = max((figures[lb][pool].bound for lb in labels if pool in figures[lb]), default=0)
        # (a pool whose buffers may all go elsewhere has no bound of its own: 0)
        tail = f"; the bound is {bound:,}." if bound else "."
        if len(labels) == 1:
            used = got[labels[0]]
            lines.append(where + (_against_bound(labels[0], used, bound, " bytes")
                                  + f" (the bound is {bound:,})." if bound else
                                  f"{labels[0]} uses {used:,} bytes."))
            continue
        first = labels[0]
        parts = [_compare(first, got[first], lb, got[lb], " bytes") for lb in labels[1:]]
        lines.append(where + "; ".join(parts) + tail)
    if len(problem.pools) > 1:
        objective = {lb: checked[lb].objective for lb in labels}
        proven = [p.lower_bound for p in checked.values() if p.lower_bound is not None]
        bound_text = (f"; the proven bound is {min(max(proven), min(objective.values())):,}."
                      if proven else ".")
        if len(labels) == 1:
            lines.append(f"Objective: {labels[0]} {objective[labels[0]]:,}{bound_text}")
        else:
            first = labels[0]
            parts = [_compare(first, objective[first], lb, objective[lb], "")
                     for lb in labels[1:]]
            lines.append("Objective (sum of cost x height, and the traffic's cost): "
                         + "; ".join(parts) + bound_text)
    return lines


# -- the rectangles ------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Pieces:
    """Every drawn rectangle: buffer index, time and bytes relative to the buffer's offset."""

    buffer: np.ndarray
    left: np.ndarray
    right: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def _pieces(problem: Problem) -> _Pieces:
    cols = problem.columns
    if not cols.gaps:
        idx = np.nonzero(cols.size > 0)[0]
        return _Pieces(idx, cols.start[idx], cols.end[idx], np.zeros(len(idx), np.int64),
                       cols.size[idx])
    rows = [(i, s, e, lo, hi) for i, b in enumerate(problem.buffers) if b.size > 0
            for s, e, lo, hi in b.pieces()]
    arr = np.asarray(rows, np.int64).reshape(-1, 5)
    return _Pieces(*(arr[:, k] for k in range(5)))


def _keep(pieces: _Pieces, limit: int) -> np.ndarray:
    """Indexes of the pieces drawn: all of them, or the ``limit`` largest by bytes x steps."""
    n = len(pieces.buffer)
    if n <= limit:
        return np.arange(n)
    area = (pieces.hi - pieces.lo).astype(float) * (pieces.right - pieces.left)
    keep = np.argpartition(-area, limit - 1)[:limit]
    return np.sort(keep)


def _edge_alpha(n: int) -> float:
    return 0.9 if n <= 200 else 0.6 if n <= 2000 else 0.3 if n <= 10000 else 0.0


# -- the page -------------------------------------------------------------------------------------
def view_layout(problem: Problem, plans: Sequence[Plan] | Mapping[str, Plan], *,
                width: int = 1400, panel_height: int | None = None,
                max_pieces: int = MAX_PIECES, backend: str = "canvas") -> Any:
    """The Bokeh layout of the page without its text (see the module docstring): a grid of
    panels, a row per pool and a column per plan. ``width`` is the grid's width in pixels;
    ``panel_height`` a panel's (default: 640 divided among the pools, at least 320);
    ``backend`` draws with ``canvas`` (2-D canvas) or ``webgl`` (see :data:`BACKENDS`)."""
    bokeh = _bokeh()
    layout, _ = _layout(bokeh, problem, _checked(problem, plans), width, panel_height,
                        max_pieces, backend)
    return layout


def _layout(bokeh: Any, problem: Problem, plans: dict[str, Plan], width: int,
            panel_height: int | None, max_pieces: int, backend: str
            ) -> tuple[Any, list[str]]:
    if backend not in BACKENDS:
        raise CpplanError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    from bokeh.layouts import gridplot
    from bokeh.models import (
        BoxAnnotation,
        CDSView,
        ColumnDataSource,
        HoverTool,
        IndexFilter,
        Legend,
        NumeralTickFormatter,
        Range1d,
    )
    from bokeh.palettes import Viridis256
    from bokeh.plotting import figure
    from bokeh.transform import log_cmap

    figures = pool_figures(problem, plans)
    labels = list(plans)
    pools = [p.name for p in problem.pools if any(p.name in f for f in figures.values())]
    n = len(problem.buffers)
    cols = problem.columns
    pieces = _pieces(problem)
    keep = _keep(pieces, max_pieces)
    notes = []
    if len(keep) < len(pieces.buffer):
        notes.append(f"{len(pieces.buffer) - len(keep):,} of {len(pieces.buffer):,} rectangles "
                     f"are left out (the smallest by bytes x steps; each under a pixel at full "
                     f"view); the load curve and the bound count every buffer.")
    buf = pieces.buffer[keep]
    lo, hi = pieces.lo[keep], pieces.hi[keep]
    root_of = problem.root_of
    ids = cols.ids
    aliased = np.fromiter((ids[i] in root_of for i in buf.tolist()), bool, len(buf))
    names = buffer_names(problem)
    pool_index = problem.pool_index

    # Without gaps a rectangle is its buffer: its sides are the lifetime and the offset, and
    # no column is sent twice (the page loads what it holds).
    plain = not cols.gaps
    data: dict[str, Any] = {
        "left": pieces.left[keep].astype(float), "right": pieces.right[keep].astype(float),
        "id": [ids[i] for i in buf.tolist()], "size": cols.size[buf].astype(float),
    }
    if not plain:
        data["start"] = cols.start[buf].astype(float)
        data["end"] = cols.end[buf].astype(float)
    if names:
        data["name"] = [names.get(ids[i], "") for i in buf.tolist()]
    if aliased.any():
        data["inside"] = [f"{root_of[ids[i]][0]} at +{root_of[ids[i]][1]:,}"
                          if a else "" for i, a in zip(buf.tolist(), aliased.tolist(),
                                                       strict=True)]
    pool_of: dict[str, np.ndarray] = {}
    for k, label in enumerate(labels):
        placements = plans[label].placements
        off = np.fromiter((placements[i].offset for i in ids), np.int64, n)
        if not plain:
            data[f"offset{k}"] = off[buf].astype(float)
        data[f"bottom{k}"] = (off[buf] + lo).astype(float)
        data[f"top{k}"] = (off[buf] + hi).astype(float)
        if len(problem.pools) > 1:
            pool_of[label] = np.fromiter((pool_index[placements[i].pool] for i in ids),
                                         np.int64, n)[buf]
    source = ColumnDataSource(data)
    sizes = cols.size[cols.size > 0]
    color = log_cmap("size", Viridis256, float(sizes.min()) if len(sizes) else 1.0,
                     float(max(sizes.max(), sizes.min() + 1)) if len(sizes) else 2.0)
    edge = _edge_alpha(len(buf))
    t0, t1 = problem.time_span
    x_range = Range1d(t0, max(t1, t0 + 1), bounds=(t0, max(t1, t0 + 1)))
    if panel_height is None:
        panel_height = max(320, 640 // max(len(pools), 1))
    panel_width = max(300, width // len(labels))
    grid = []
    for pool in pools:
        top = 1.0
        for f in figures.values():
            if pool in f:
                one = f[pool]
                top = max(top, one.height, one.bound, one.peak)
                if one.capacity is not None and one.capacity <= 1.5 * top:
                    top = max(top, one.capacity)
        y_range = Range1d(0, top * 1.05, bounds=(0, top * 1.05))
        row = []
        for k, label in enumerate(labels):
            pf = figures[label].get(pool)
            plan = plans[label]
            title = f"{label}"
            if len(pools) > 1:
                title += f": pool {pool}"
            if pf is not None:
                above = f", {pf.above:,} above the bound" if pf.bound else ""
                title += (f" — height {pf.height:,} bytes{above} "
                          f"({plan.status}, {plan.planner or 'plan'})")
            p = figure(width=panel_width, height=panel_height, x_range=x_range, y_range=y_range,
                       output_backend=backend, title=title, name=f"panel {k} {pool}",
                       tools="pan,xwheel_zoom,wheel_zoom,box_zoom,reset,save",
                       active_scroll="wheel_zoom", x_axis_label="time (schedule step)",
                       y_axis_label=f"{pool}: offset (bytes)" if k == 0 else None)
            p.yaxis.formatter = NumeralTickFormatter(format="0,0")
            p.xaxis.formatter = NumeralTickFormatter(format="0,0")
            p.title.text_font_size = "11px"
            items = []
            if pf is not None and pf.above > 0 and pf.bound > 0:
                p.add_layout(BoxAnnotation(bottom=pf.bound, top=pf.height, fill_color="red",
                                           fill_alpha=0.12, line_alpha=0, level="underlay"))
            hover = []
            mine = np.arange(len(buf)) if label not in pool_of else np.nonzero(
                pool_of[label] == pool_index[pool])[0]
            for is_alias in (False, True):
                rows = mine[aliased[mine] == is_alias]
                if not len(rows):
                    continue
                view = (CDSView() if len(rows) == len(buf)
                        else CDSView(filter=IndexFilter(rows.tolist())))
                style: dict[str, Any] = (
                    {"fill_alpha": 0.0, "line_color": "black", "line_alpha": 0.8,
                     "line_dash": "dashed", "line_width": 1}
                    if is_alias else {"fill_color": color, "fill_alpha": 0.9,
                                      "line_color": "black", "line_alpha": edge,
                                      "line_width": 0.5})
                r = p.quad(left="left", right="right", bottom=f"bottom{k}", top=f"top{k}",
                           source=source, view=view, **style)
                hover.append(r)
            if pf is not None:
                x = np.append(pf.times, pf.times[-1] + 1) if len(pf.times) else np.array([t0])
                y = np.append(pf.load, 0) if len(pf.load) else np.array([0])
                live = p.step(x.astype(float), y.astype(float), mode="after", color="black",
                              line_width=1.2, line_alpha=0.7)
                items.append(("bytes live", [live]))
                for value, what, style in (
                        (pf.bound, f"lower bound {pf.bound:,}", {"line_dash": "dashed",
                                                                 "color": "black"}),
                        (pf.height, f"height {pf.height:,}", {"color": "red"})):
                    if value == pf.bound and not pf.bound:
                        continue  # no bound of its own
                    r = p.line([float(t0), float(t1)], [float(value)] * 2, line_width=1.6,
                               **style)
                    items.append((what, [r]))
                if pf.capacity is not None and pf.capacity <= top * 1.05:
                    r = p.line([float(t0), float(t1)], [float(pf.capacity)] * 2,
                               line_dash="dotted", color="grey", line_width=1.2)
                    items.append((f"capacity {pf.capacity:,}", [r]))
                if pf.peak_moment is not None:
                    r = p.line([float(pf.peak_moment)] * 2, [0.0, top * 1.05],
                               color="darkorange", line_width=1.5)
                    items.append((f"peak: {pf.peak:,} bytes live at step {pf.peak_moment:,}",
                                  [r]))
            tips = [("buffer", "@id"), ("size", "@size{0,0} bytes"),
                    ("lifetime", "[@left{0,0}, @right{0,0})" if plain
                     else "[@start{0,0}, @end{0,0})"),
                    ("offset", f"@bottom{k}{{0,0}}" if plain else f"@offset{k}{{0,0}}"),
                    ("pool", pool)]
            if "name" in data:
                tips.append(("name", "@name"))
            if "inside" in data:
                tips.append(("inside", "@inside"))
            if hover:
                p.add_tools(HoverTool(renderers=hover, tooltips=tips))
            legend = Legend(items=items, orientation="horizontal", location="top_left",
                            click_policy="hide", label_text_font_size="10px", spacing=8,
                            padding=2, margin=2)
            p.add_layout(legend, "above")
            row.append(p)
        grid.append(row)
    layout = gridplot(grid, merge_tools=True, toolbar_location="right")
    return layout, notes


_TEMPLATE = """{% extends base %}
{% block title %}{{ title | e }}{% endblock %}
{% block inner_body %}
<div id="cpplan-view" style="font: 14px sans-serif; margin: 8px 12px;">
<h1 style="font-size: 17px; margin: 4px 0;">{{ heading | e }}</h1>
{% for line in lines %}<p class="cpplan-difference" style="margin: 3px 0;">{{ line | e }}</p>
{% endfor %}{% for line in notes %}<p class="cpplan-note" style="margin: 3px 0; color: #555;">\
{{ line | e }}</p>
{% endfor %}<p style="margin: 3px 0; color: #555;">{{ help | e }}</p>
</div>
{{ super() }}
{% endblock %}
"""


def view_html(problem: Problem, plans: Sequence[Plan] | Mapping[str, Plan], *,
              title: str | None = None, width: int = 1400, panel_height: int | None = None,
              max_pieces: int = MAX_PIECES, backend: str = "canvas",
              resources: Any = None) -> str:
    """The page (see the module docstring) as HTML text, with Bokeh's JavaScript inline, or
    as ``resources`` (a :class:`bokeh.resources.Resources`) says: :func:`shared_resources` for
    many pages in one folder that load it from one copy."""
    bokeh = _bokeh()
    from bokeh.core.templates import FILE
    from bokeh.embed import file_html
    from bokeh.resources import INLINE
    from jinja2 import Template

    checked = _checked(problem, plans)
    lines = differences(problem, checked)
    layout, notes = _layout(bokeh, problem, checked, width, panel_height, max_pieces, backend)
    name = problem.name or "plan"
    heading = title or (f"{name}: {len(problem.buffers):,} buffers, "
                        f"{len(problem.pools)} pool{'s' if len(problem.pools) > 1 else ''} — "
                        + " vs ".join(checked))
    help_text = ("Hover a rectangle for its buffer; drag to pan, scroll to zoom (all panels "
                 "follow); click a legend entry to hide it. Red shading: bytes above the "
                 "lower bound.")
    return str(file_html(layout, resources=INLINE if resources is None else resources,
                         title=heading, template=Template(_TEMPLATE),
                         template_variables={"base": FILE, "heading": heading, "lines": lines,
                                             "notes": notes, "help": help_text}))


def write_view(problem: Problem, plans: Sequence[Plan] | Mapping[str, Plan],
               path: str | Path, **options: Any) -> Path:
    """Write the page of ``plans`` (a sequence, labelled by planner, or a mapping label ->
    plan; the first is the one the others are compared with) to ``path`` (atomic). Options
    as :func:`view_html`. Raises :class:`~cpplan.errors.PlanError` for an invalid plan."""
    from .io.atomic import ensure_writable, write_text_atomic

    path = ensure_writable(path)
    write_text_atomic(path, view_html(problem, plans, **options))
    return path


def shared_resources(folder: str | Path) -> Any:
    """Bokeh's JavaScript copied once into ``folder/bokeh/js/`` (unless there already), and the
    :class:`bokeh.resources.Resources` with which pages written in ``folder`` load it by a
    relative path: pass it as ``resources=`` to :func:`view_html` or :func:`write_view`. The
    pages then open from disk with no network, each without its own copy (about 1.3 MB; the
    copy is ``bokeh.min.js`` and ``bokeh-gl.min.js``, 1.5 MB)."""
    _bokeh()
    import shutil

    from bokeh.resources import Resources
    from bokeh.settings import settings

    folder = Path(folder)
    base = folder / "bokeh"
    resources = Resources(mode="relative", root_dir=folder, base_dir=base)
    source = Path(settings.bokehjs_path())
    # A page of plans loads Bokeh itself, and its WebGL part with backend="webgl" (file_html
    # names only the parts a page uses; widgets, tables and MathJax are never among them).
    for name in ("bokeh.min.js", "bokeh-gl.min.js"):
        file = base / "js" / name
        if not file.is_file():
            file.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / "js" / name, file)
    return resources


class View:
    """A page in a notebook: Jupyter shows it inline, in a frame of its own (the page as it is
    written to a file, so nothing on the notebook's page and nothing on the network is
    needed); :meth:`save` writes it."""

    def __init__(self, page: str, height: int) -> None:
        self.html = page
        self.height = height

    def _repr_html_(self) -> str:
        import html

        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" style="width: 100%; '
                f'height: {self.height}px; border: 0;"></iframe>')

    def save(self, path: str | Path) -> Path:
        """Write the page to ``path`` (atomic)."""
        from .io.atomic import write_text_atomic

        write_text_atomic(path, self.html)
        return Path(path)


def show_view(problem: Problem, plans: Sequence[Plan] | Mapping[str, Plan],
              **options: Any) -> View:
    """The page of ``plans`` for a notebook (options as :func:`view_html`; the default width
    fits a notebook's column)."""
    options.setdefault("width", 1000)
    pools = {pl.pool for plan in labelled(plans).values() for pl in plan.placements.values()}
    panel = options.get("panel_height") or max(320, 640 // max(len(pools), 1))
    return View(view_html(problem, plans, **options), 160 + len(pools) * (panel + 10))
