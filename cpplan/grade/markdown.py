"""The report as a markdown page: the summary, the per-instance table, what failed, and the
details with the reference of every instance."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .results import InstanceReport, Result, ratio

if TYPE_CHECKING:
    from .report import PlannerSummary, Report


def fmt_ratio(v: float | None) -> str:
    if v is None:
        return "–"
    if v == math.inf:
        return "∞"
    return f"{v:.3f}"


def fmt_int(v: int | None) -> str:
    return "–" if v is None else f"{v:,}"


#: The summary table's columns, as :func:`summary_cells` fills them.
SUMMARY_COLUMNS = ("planner", "solved", "geo-mean × best", "worst × best",
                   "geo-mean × lower bound", "optimal", "wins", "total s")


def summary_cells(s: PlannerSummary) -> tuple[str, ...]:
    """A planner's row of the summary table (:data:`SUMMARY_COLUMNS`), as text not yet
    escaped: every page of the report (markdown, HTML) shows the same row."""
    fails = ", ".join(f"{v} {k}" for k, v in sorted(s.failures.items()))
    solved = f"{s.solved}/{s.instances}" + (f" ({fails})" if fails else "")
    worst = fmt_ratio(s.worst_best) + (f" ({s.worst_instance})" if s.worst_instance else "")
    return (s.planner, solved, fmt_ratio(s.geomean_best), worst, fmt_ratio(s.geomean_bound),
            str(s.optimal), str(s.wins), f"{s.seconds:.2f}")


def _cell(r: Result, inst: InstanceReport) -> str:
    if r.outcome != "ok":
        return r.outcome
    text = fmt_ratio(inst.ratio_best(r))
    if inst.optimal(r):
        text += " ✓"
    return f"**{text}**" if r.planner in inst.winners() else text


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_line(rep: Report) -> str:
    """The sentence on the reference: which engine, how long, on how many the optimum is
    proven (the markdown page's and the HTML page's)."""
    if rep.time_limit > 0:
        graded = rep.graded
        opt = sum(1 for i in graded if i.proven_optimum is not None)
        cached = sum(1 for i in graded if i.reference is not None and i.reference.cached)
        return (f"Reference: `cpplan.solve`, {rep.time_limit:g} s per instance; optimum proven "
                f"on {opt} of {len(graded)} instances"
                + (f" ({cached} reference{'s' * (cached != 1)} from the cache)."
                   if cached else "."))
    return ("No reference (time limit 0): lower bound = max-load, best known = best graded "
            "plan.")


def markdown(rep: Report) -> str:
    graded = rep.graded
    lines: list[str] = []
    n = len(rep.instances)
    lines.append(f"# cpplan grade: {len(rep.planners)} planner{'s' * (len(rep.planners) != 1)} "
                 f"on {n} instance{'s' * (n != 1)}")
    lines.append("")
    lines.append(summary_line(rep))
    lines.append("Ratios are height / best known height (1.000 = as good as anything known); "
                 "✓ = proven optimal; **bold** = best of the graded planners.")
    lines.append("")
    lines.append("## Summary")
    lines.append("")
    lines.append("| " + " | ".join(SUMMARY_COLUMNS) + " |")
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in rep.summary():
        planner, *rest = summary_cells(s)
        lines.append(f"| {_md_escape(planner)} | " + " | ".join(rest) + " |")
    lines.append("")
    lines.append("## Per instance (height / best known)")
    lines.append("")
    head = ["instance", "buffers", "lower bound", "best known"] + [
        _md_escape(p) for p in rep.planners]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("| --- | ---: | ---: | ---: |" + " ---: |" * len(rep.planners))
    for inst in graded:
        best = fmt_int(inst.best_known)
        if inst.proven_optimum is not None:
            best += " ✓"
        elif inst.best_known and inst.lower_bound is not None:
            best += f" (gap {100 * (inst.best_known - inst.lower_bound) / inst.best_known:.1f}%)"
        cells = []
        for p in rep.planners:
            r = inst.result(p)
            cells.append("–" if r is None else _cell(r, inst))
        lines.append(f"| {_md_escape(inst.name)} | {inst.buffers:,} | "
                     f"{fmt_int(inst.lower_bound)} | {best} | " + " | ".join(cells) + " |")
    if rep.failed:
        lines.append("")
        lines.append("## Instances that could not be graded")
        lines.append("")
        for inst in rep.failed:
            lines.append(f"- **{_md_escape(inst.name)}** (`{inst.path}`): "
                         f"{_md_escape(inst.error)}")
    problems = [(i, r) for i in graded for r in i.results if r.outcome != "ok"]
    if problems:
        lines.append("")
        lines.append("## Failures")
        lines.append("")
        for inst, r in problems:
            lines.append(f"- {_md_escape(inst.name)} / {_md_escape(r.planner)}: {r.outcome}: "
                         f"{_md_escape(r.message)}")
    lines.append("")
    lines.append("## Details")
    lines.append("")
    lines.append("| instance | planner | height | × lower bound | × best | optimal | seconds |")
    lines.append("| --- | --- | ---: | ---: | ---: | :---: | ---: |")
    for inst in graded:
        if inst.reference is not None:
            ref = inst.reference
            src = " (cached)" if ref.cached else ""
            lines.append(f"| {_md_escape(inst.name)} | *reference: {ref.engine}{src}* | "
                         f"{fmt_int(ref.objective)} | "
                         f"{fmt_ratio(ratio(ref.objective, inst.lower_bound))} | "
                         f"{fmt_ratio(ratio(ref.objective, inst.best_known))} | "
                         f"{'yes' if ref.status == 'optimal' else 'no'} | {ref.seconds:.2f} |")
        for r in inst.results:
            height = fmt_int(r.objective) if r.outcome == "ok" else r.outcome
            lines.append(f"| {_md_escape(inst.name)} | {_md_escape(r.planner)} | {height} | "
                         f"{fmt_ratio(inst.ratio_bound(r))} | {fmt_ratio(inst.ratio_best(r))} | "
                         f"{'yes' if inst.optimal(r) else 'no'} | {r.seconds:.3f} |")
    lines.append("")
    return "\n".join(lines)
