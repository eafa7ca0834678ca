"""The report of a grading run: per-planner statistics (geometric means and worst of the
ratios, wins, optima, failures) and the rows, CSV and JSON; the markdown page is
:mod:`cpplan.grade.markdown`."""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any

from .results import InstanceReport, Reference


@dataclass(frozen=True)
class PlannerSummary:
    """One planner over all instances: geometric means and worst of its ratios, wins, and how
    often it was optimal or failed.

    Args:
        planner: The planner's label.
        solved: Instances where its plan was valid.
        instances: Instances graded.
        geomean_best: Geometric mean of ``height / best known`` over the instances it solved.
        worst_best: The largest ``height / best known``.
        worst_instance: Where that was.
        geomean_bound: Geometric mean of ``height / lower bound``.
        optimal: Instances where it reached the proven lower bound.
        wins: Instances where no graded planner did better (ties all win).
        failures: Outcome (``invalid``, ``capacity``, ``error``, ``missing``, ``timeout``) ->
            how many instances.
        seconds: Its time, summed over the instances.
    """

    planner: str
    solved: int
    instances: int
    geomean_best: float | None
    worst_best: float | None
    worst_instance: str
    geomean_bound: float | None
    optimal: int
    wins: int
    failures: dict[str, int]
    seconds: float


def geomean(values: list[float | None]) -> float | None:
    """The geometric mean of the finite positive ``values`` (``None`` if there are none)."""
    vals = [v for v in values if v is not None and 0 < v < math.inf]
    return statistics.geometric_mean(vals) if vals else None


@dataclass(frozen=True)
class Report:
    """The grade of ``planners`` over ``instances``; render with :meth:`to_markdown`,
    :meth:`to_csv` or :meth:`to_json`, or as a web page with
    :func:`cpplan.grade_html.write_html`.

    Args:
        instances: One :class:`~cpplan.grade.results.InstanceReport` per instance.
        planners: The planners' labels, in the order given.
        time_limit: The reference solve's seconds per instance.
        engine: The reference's engine (``solve``, or ``none`` without a reference).
        seconds: The run's wall time.
    """

    instances: tuple[InstanceReport, ...]
    planners: tuple[str, ...]
    time_limit: float
    engine: str
    seconds: float = 0.0

    @property
    def graded(self) -> list[InstanceReport]:
        """The instances that could be graded."""
        return [i for i in self.instances if not i.error]

    @property
    def failed(self) -> list[InstanceReport]:
        """The instances that could not be graded (unreadable, crashed): ``error`` says why."""
        return [i for i in self.instances if i.error]

    def summary(self) -> list[PlannerSummary]:
        """Per planner, best first (lowest geometric mean against the best known).

        Returns:
            One :class:`PlannerSummary` per planner, the most instances solved first, then the
            lowest geometric mean of ``height / best known``.
        """
        out = []
        graded = self.graded
        for name in self.planners:
            rb, rl, worst, worst_at = [], [], None, ""
            optimal = wins = 0
            failures: dict[str, int] = {}
            secs = 0.0
            for inst in graded:
                r = inst.result(name)
                if r is None:
                    continue
                secs += r.seconds
                if r.outcome != "ok":
                    failures[r.outcome] = failures.get(r.outcome, 0) + 1
                    continue
                b = inst.ratio_best(r)
                rb.append(b)
                rl.append(inst.ratio_bound(r))
                if b is not None and (worst is None or b > worst):
                    worst, worst_at = b, inst.name
                optimal += inst.optimal(r)
                wins += name in inst.winners()
            out.append(PlannerSummary(name, len(rb), len(graded), geomean(rb), worst, worst_at,
                                      geomean(rl), optimal, wins, failures, secs))
        return sorted(out, key=lambda s: (s.solved == 0, -s.solved,
                                          s.geomean_best if s.geomean_best is not None else 0.0))

    def rows(self) -> list[dict[str, Any]]:
        """One row per (instance, planner), for CSV and data frames.

        Returns:
            Dicts with ``instance``, ``buffers``, ``planner``, ``outcome``, ``height``,
            ``lower_bound``, ``best_known``, ``ratio_bound``, ``ratio_best``, ``optimal``,
            ``seconds`` and ``message``; an instance that failed is one row with its
            ``message``.
        """
        out: list[dict[str, Any]] = []
        for inst in self.instances:
            if inst.error:
                out.append({"instance": inst.name, "planner": "", "outcome": "error",
                            "message": inst.error})
                continue
            for r in inst.results:
                rb, rl = inst.ratio_best(r), inst.ratio_bound(r)
                out.append({
                    "instance": inst.name, "buffers": inst.buffers, "planner": r.planner,
                    "outcome": r.outcome, "height": r.objective, "lower_bound": inst.lower_bound,
                    "best_known": inst.best_known,
                    "ratio_bound": None if rl is None else round(rl, 6),
                    "ratio_best": None if rb is None else round(rb, 6),
                    "optimal": inst.optimal(r), "seconds": round(r.seconds, 4),
                    "message": r.message,
                })
        return out

    def to_csv(self) -> str:
        """:meth:`rows` as CSV text, with a header line (empty cells for ``None``)."""
        cols = ["instance", "buffers", "planner", "outcome", "height", "lower_bound",
                "best_known", "ratio_bound", "ratio_best", "optimal", "seconds", "message"]
        buf = io.StringIO()
        w = csv.DictWriter(buf, cols, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for row in self.rows():
            w.writerow({k: ("" if v is None else v) for k, v in row.items()})
        return buf.getvalue()

    def to_json(self) -> str:
        """The whole report as JSON text (``"format": "cpplan-grade"``): the summary, and per
        instance its bound, best known, reference and results."""
        def ref(r: Reference | None) -> dict | None:
            return None if r is None else asdict(r)

        data = {
            "format": "cpplan-grade", "version": 1, "engine": self.engine,
            "time_limit": self.time_limit, "planners": list(self.planners),
            "summary": [asdict(s) for s in self.summary()],
            "instances": [
                {"name": i.name, "path": i.path, "buffers": i.buffers,
                 "lower_bound": i.lower_bound, "best_known": i.best_known,
                 "proven_optimum": i.proven_optimum, "reference": ref(i.reference),
                 "seconds": round(i.seconds, 4), "error": i.error,
                 "results": [asdict(r) for r in i.results]}
                for i in self.instances
            ],
        }
        return json.dumps(data, indent=1, default=_json_default) + "\n"

    def to_markdown(self) -> str:
        """The report as a markdown page (:mod:`cpplan.grade.markdown`): the summary table,
        then one row per instance."""
        from .markdown import markdown

        return markdown(self)


def _json_default(v: object) -> object:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    raise TypeError(type(v).__name__)
