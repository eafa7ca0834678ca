"""The grade report (:class:`cpplan.grade.Report`) as a web page that opens from disk: the
leaderboard, the heat map (:func:`cpplan.plot.plot_grade`, a PNG inline, its cells linked) and
the per-instance table, where every valid plan links to its view.

The views go in a folder beside the page (``report.html`` -> ``report.views/``): one page of
:mod:`cpplan.view` per (instance, planner) with a valid plan, that planner's plan beside the
reference plan (cpplan's, from the grader's cache, when there). The report keeps only heights,
so each plan is made again here, by the code that graded it
(:func:`cpplan.grade.job.planner_plan`). Bokeh's JavaScript is copied once into the folder
(:func:`cpplan.view.shared_resources`) and every view loads it from there. A view that cannot
be made (a planner that now fails, or gives another plan) is named on the page, unlinked.
"""

from __future__ import annotations

import base64
import html
import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .grade.markdown import SUMMARY_COLUMNS, fmt_int, fmt_ratio, summary_cells, summary_line
from .grade.results import InstanceReport, Result
from .grade.specs import PlannerSpec

if TYPE_CHECKING:
    from .grade.report import Report

#: The label of the reference plan in the views.
REFERENCE = "cpplan (reference)"


def views_dir(path: str | Path) -> Path:
    """The folder of the views of the page ``path``: ``report.html`` -> ``report.views``."""
    path = Path(path)
    return path.with_name(path.stem + ".views")


def write_html(report: Report, path: str | Path, *, specs: Sequence[PlannerSpec] = (),
               cache_dir: str | Path | None = None, views: bool = True,
               planner_time_limit: float | None = None, jobs: int = 1) -> Path:
    """Write the page of ``report`` to ``path`` (atomic) and, with ``views``, its views.

    Args:
        report: The report.
        path: The page.
        specs: The planners graded (to make their plans again for the views); a label
            without a spec gets no views.
        cache_dir: The grader's cache, where the reference plans are.
        views: Write the views (needs Bokeh: the ``view`` extra).
        planner_time_limit: Seconds a planner may take to make its plan again.
        jobs: Instances whose views are written at once, each in a process of its own.

    Returns:
        The page's path.
    """
    from .io.atomic import ensure_writable, write_text_atomic

    path = ensure_writable(path)
    links: dict[tuple[str, str], str] = {}
    notes: list[str] = []
    if views:
        links, notes = write_views(report, specs, views_dir(path), cache_dir=cache_dir,
                                   planner_time_limit=planner_time_limit, jobs=jobs)
    write_text_atomic(path, page(report, links, notes))
    return path


def write_views(report: Report, specs: Sequence[PlannerSpec], folder: Path, *,
                cache_dir: str | Path | None = None, planner_time_limit: float | None = None,
                jobs: int = 1) -> tuple[dict[tuple[str, str], str], list[str]]:
    """Write a view per (instance, planner) with a valid plan into ``folder``; ``jobs > 1``
    writes the views of that many instances at once, each in a process of its own.

    Returns:
        The links, ``(instance, planner) -> "folder/page.html"`` (relative to the folder's
        parent), and a sentence per view that could not be made.
    """
    from .view import require_bokeh, shared_resources

    require_bokeh()
    folder.mkdir(parents=True, exist_ok=True)
    shared_resources(folder)
    by_label = {s.label: s for s in specs}
    use_ref = cache_dir is not None and report.time_limit > 0
    used: set[str] = set()
    work = []
    for inst in report.graded:
        cells = [(r.planner, r.objective, _file_name(inst.name, r.planner, used))
                 for r in inst.results if r.outcome == "ok" and r.planner in by_label]
        if cells:
            work.append((inst, [(by_label[p], h, name) for p, h, name in cells]))
    links: dict[tuple[str, str], str] = {}
    notes: list[str] = []
    args = [(inst.name, inst.path, inst.lower_bound or 0, cells, folder,
             cache_dir if use_ref else None, planner_time_limit) for inst, cells in work]
    if jobs > 1 and len(args) > 1:
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        with ProcessPoolExecutor(min(jobs, len(args))) as pool:
            futures = [pool.submit(_instance_views, *a) for a in args]
            done = []
            for a, future in zip(args, futures, strict=True):
                try:
                    done.append(future.result())
                except BrokenProcessPool:  # (killed, out of memory: that instance has no view)
                    done.append(([], [f"{a[0]}: no views: the process making them ended "
                                      "abruptly (out of memory?)"]))
    else:
        done = [_instance_views(*a) for a in args]
    for (inst, _), (made, failed) in zip(work, done, strict=True):
        links.update({(inst.name, p): f"{folder.name}/{name}" for p, name in made})
        notes += failed
    return links, notes


def _instance_views(name: str, path: str, lower_bound: int,
                    cells: list[tuple[PlannerSpec, int | None, str]], folder: Path,
                    cache_dir: str | Path | None, planner_time_limit: float | None
                    ) -> tuple[list[tuple[str, str]], list[str]]:
    """The views of one instance: ``cells`` are (planner, height graded, file name); returns
    the (planner, file name) written and a sentence per view not made."""
    from .errors import CpplanError
    from .grade.cache import cached_plan
    from .grade.job import planner_plan
    from .io import read_problem
    from .view import shared_resources, write_view

    try:
        problem = read_problem(path)
        ref = cached_plan(problem, cache_dir) if cache_dir is not None else None
    except Exception as e:
        return [], [f"{name}: no views: {_error(e)}"]
    resources = shared_resources(folder)
    made, failed = [], []
    for spec, height, file in cells:
        try:
            plan = planner_plan(spec, problem, Path(path), lower_bound, planner_time_limit)
            if isinstance(plan, Result):
                raise CpplanError(plan.message)
            if plan.objective != height:
                raise CpplanError(f"made again, the plan's height is {plan.objective:,}, "
                                  f"not {height:,} as graded")
            plans = {spec.label: plan}
            if ref is not None:
                plans[REFERENCE if spec.label != REFERENCE else "reference"] = ref
            write_view(problem, plans, folder / file, resources=resources,
                       title=f"{name}: {spec.label}" + (" vs cpplan's reference"
                                                        if ref is not None else ""))
            made.append((spec.label, file))
        except Exception as e:
            failed.append(f"{name} / {spec.label}: no view: {_error(e)}")
    return made, failed


def _error(e: BaseException) -> str:
    from .errors import CpplanError

    return str(e) if isinstance(e, CpplanError) else f"{type(e).__name__}: {e}"


def _file_name(instance: str, planner: str, used: set[str]) -> str:
    stem = "--".join(re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("._") or "x"
                     for s in (instance, planner))
    name, k = f"{stem}.html", 1
    while name.lower() in used:
        k += 1
        name = f"{stem}-{k}.html"
    used.add(name.lower())
    return name


# -- the page --------------------------------------------------------------------------------
_STYLE = """
body { font: 14px sans-serif; margin: 12px 18px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 22px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 7px; }
th { background: #f2f2f2; } td.n { text-align: right; }
td.win { font-weight: bold; } td.fail { color: #b00; }
td small { color: #666; } p.note { color: #555; }
"""


def page(report: Report, links: dict[tuple[str, str], str], notes: Sequence[str] = ()) -> str:
    """The page's HTML: ``links`` maps ``(instance, planner)`` to a view's relative address;
    ``notes`` are listed at the end."""
    e = html.escape
    rep = report
    n = len(rep.instances)
    title = (f"cpplan grade: {len(rep.planners)} planner{'s' * (len(rep.planners) != 1)} on "
             f"{n} instance{'s' * (n != 1)}")
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{e(title)}</title><style>{_STYLE}</style></head><body>",
           f"<h1>{e(title)}</h1>", f"<p>{e(summary_line(rep).replace('`', ''))}</p>",
           "<p>Ratios are height / best known height (1.000 = as good as anything known); "
           "✓ = proven optimal; <b>bold</b> = best of the graded planners."
           + (" Click a cell for that plan beside cpplan's." if links else "") + "</p>"]
    out.append('<h2 id="heat-map">Heat map</h2>')
    out.append(_heat_map(rep, links))
    out.append('<h2 id="leaderboard">Leaderboard</h2>')
    out.append('<table class="leaderboard"><tr>'
               + "".join(f"<th>{e(c)}</th>" for c in SUMMARY_COLUMNS) + "</tr>")
    numeric = (False, False, True, False, True, True, True, True)  # (right-aligned cells)
    for s in rep.summary():
        out.append("<tr>" + "".join(
            f'<td class="n">{e(c)}</td>' if n else f"<td>{e(c)}</td>"
            for c, n in zip(summary_cells(s), numeric, strict=True)) + "</tr>")
    out.append("</table>")
    out.append('<h2 id="instances">Per instance (height / best known; the height below)</h2>')
    out.append('<table class="instances"><tr><th>instance</th><th>buffers</th>'
               "<th>lower bound</th><th>best known</th>"
               + "".join(f"<th>{e(p)}</th>" for p in rep.planners) + "</tr>")
    for inst in rep.graded:
        best = fmt_int(inst.best_known)
        if inst.proven_optimum is not None:
            best += " ✓"
        elif inst.best_known and inst.lower_bound is not None:
            best += f" (gap {100 * (inst.best_known - inst.lower_bound) / inst.best_known:.1f}%)"
        cells = "".join(_cell(inst, p, links.get((inst.name, p))) for p in rep.planners)
        out.append(f"<tr><td>{e(inst.name)}</td><td class=\"n\">{inst.buffers:,}</td>"
                   f'<td class="n">{fmt_int(inst.lower_bound)}</td><td class="n">{e(best)}</td>'
                   f"{cells}</tr>")
    out.append("</table>")
    if rep.failed:
        out.append("<h2>Instances that could not be graded</h2><ul>")
        out += [f"<li><b>{e(i.name)}</b> ({e(i.path)}): {e(i.error)}</li>" for i in rep.failed]
        out.append("</ul>")
    problems = [(i, r) for i in rep.graded for r in i.results if r.outcome != "ok"]
    if problems:
        out.append("<h2>Failures</h2><ul>")
        out += [f"<li>{e(i.name)} / {e(r.planner)}: {e(r.outcome)}: {e(r.message)}</li>"
                for i, r in problems]
        out.append("</ul>")
    if notes:
        out.append("<h2>Views not made</h2><ul>")
        out += [f'<li class="note">{e(line)}</li>' for line in notes]
        out.append("</ul>")
    out.append("</body></html>\n")
    return "\n".join(out)


def _cell(inst: InstanceReport, planner: str, link: str | None) -> str:
    r = inst.result(planner)
    if r is None:
        return "<td>–</td>"
    if r.outcome != "ok":
        return f'<td class="fail" title="{html.escape(r.message)}">{html.escape(r.outcome)}</td>'
    text = fmt_ratio(inst.ratio_best(r)) + (" ✓" if inst.optimal(r) else "")
    if link:
        text = f'<a href="{html.escape(link)}">{text}</a>'
    win = ' win' if planner in inst.winners() else ""
    return (f'<td class="n{win}" title="× lower bound: {fmt_ratio(inst.ratio_bound(r))}">'
            f"{text}<br><small>{fmt_int(r.objective)}</small></td>")


def _heat_map(report: Report, links: dict[tuple[str, str], str]) -> str:
    """The heat map as an inline PNG whose cells link to their views (an image map), or a
    sentence saying why there is none."""
    from .errors import CpplanError

    if not report.graded:
        return '<p class="note">No instance was graded.</p>'
    try:
        from .plot import plot_grade

        fig = plot_grade(report)
    except CpplanError as err:  # matplotlib missing: the tables still say it all
        return f'<p class="note">No heat map: {html.escape(str(err))}.</p>'
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    buf = io.BytesIO()
    canvas.print_png(buf)  # draws, so the layout below is the image's
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    ax = fig.axes[0]
    height = fig.bbox.height
    rows = [s.planner for s in report.summary()]
    areas = []
    for a, planner in enumerate(rows):
        for b, inst in enumerate(report.graded):
            link = links.get((inst.name, planner))
            if link is None:
                continue
            (x0, y0), (x1, y1) = ax.transData.transform([(b - 0.5, a - 0.5), (b + 0.5, a + 0.5)])
            left, right = sorted((x0, x1))
            top, bottom = sorted((height - y0, height - y1))
            areas.append(f'<area shape="rect" coords="{left:.0f},{top:.0f},{right:.0f},'
                         f'{bottom:.0f}" href="{html.escape(link)}" '
                         f'alt="{html.escape(inst.name)} / {html.escape(planner)}" '
                         f'title="{html.escape(inst.name)} / {html.escape(planner)}">')
    img = (f'<img class="heat-map" src="data:image/png;base64,{data}" '
           f'alt="heat map of height / best known" width="{fig.bbox.width:.0f}" '
           f'height="{height:.0f}"' + (' usemap="#heat"' if areas else "") + ">")
    return img + (f'<map name="heat">{"".join(areas)}</map>' if areas else "")
