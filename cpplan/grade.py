"""Grading allocators: many planners over many instances, measured against the best possible.

:func:`grade` runs planners over problem files and returns a :class:`Report`; the report renders
itself as a markdown page (:meth:`Report.to_markdown`), CSV rows or JSON. A planner is one of

* a registered name (``"naive"``, the replicas of production allocators, cpplan's own);
* a user's Python allocator, ``"module:function"`` or ``"path/to/file.py:function"``: a function
  taking a :class:`~cpplan.problem.Problem` and returning a :class:`~cpplan.plan.Plan`, or a dict
  ``buffer id -> offset`` (first candidate pool) or ``buffer id -> (pool, offset)``. Aliased
  buffers left out of the dict follow their root. Prefix ``label=`` to name it in the tables;
* a directory of the user's plan files, ``"plans:DIR"`` (:func:`plan_file_for` says how files
  are matched to instances).

Every plan is checked here again (the grader trusts nobody): an invalid plan is reported as
``invalid`` with its first violation, a planner that raises is reported as ``error`` (or
``capacity`` for :class:`~cpplan.errors.CapacityError`), and the other cells are unaffected.

**The reference.** Each instance is also given to the exact engine, :func:`cpplan.solve.solve`,
with ``time_limit`` seconds: its plan is the best known height unless a graded planner beats it,
and its proven lower bound is what "optimal" means. ``time_limit=0`` skips the
reference: the lower bound is then the max-load bound and "best known" the best graded plan.

**The cache.** A reference is computed once per problem *content* and kept in the cache
directory (``cache_dir``; the CLI's default is ``$CPPLAN_CACHE`` or ``./.cpplan-cache``):
``<key>.json`` records the result, ``<key>.plan.json`` holds the plan, where ``key`` is
:func:`problem_key`, a SHA-256 of the buffers, pools and aliases (not the name or provenance).
A cached result is reused when it comes from the same engine and is final (optimal or
infeasible) or was given at least as much time. Deleting the directory is always safe.

**Processes.** With ``jobs > 1`` every instance runs in a process of its own (at most ``jobs`` at
a time), so an instance that crashes its process, or runs out of memory, is reported as failed
and the others carry on. Ratios are ``height / lower bound`` and ``height / best known``;
summaries take the geometric mean over the instances a planner solved.
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import importlib.util
import io
import json
import math
import multiprocessing
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import wait
from numbers import Integral
from pathlib import Path
from typing import Any, TextIO

from .bounds import objective_lower_bound
from .deadline import Budget, OutOfTime
from .errors import CapacityError, CpplanError, PlanError
from .plan import Placement, Plan, check
from .problem import Problem

__all__ = [
    "PlannerSpec", "Reference", "Result", "InstanceReport", "PlannerSummary", "Report",
    "parse_planner", "default_planners", "find_instances", "problem_key", "reference",
    "cached_plan", "grade", "grade_instance",
    "plan_file_for", "as_plan", "default_cache_dir", "Progress", "OUTCOMES", "run_cli",
]

OUTCOMES = ("ok", "invalid", "capacity", "error", "missing", "timeout")
PROBLEM_SUFFIXES = (".json", ".csv")
PLAN_ONLY_SUFFIXES = (".plan.json", ".plan.csv")  # never taken for a problem file
PLAN_SUFFIXES = PLAN_ONLY_SUFFIXES + PROBLEM_SUFFIXES  # tried in this order


# -- planners -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class PlannerSpec:
    """A planner to grade: ``kind`` is ``builtin`` (a registered name), ``function``
    (``module:function`` or ``file.py:function``) or ``plans`` (a directory of plan files)."""

    label: str
    kind: str
    target: str

    def __str__(self) -> str:
        return self.label


def parse_planner(text: str) -> PlannerSpec:
    """The planner named by ``text`` (see the module docstring); a clear error if unknown.

    ``label=target`` names the planner in the tables. A user function is imported here, so a
    typo fails at once rather than in every instance.
    """
    from .planners import names

    label, sep, target = text.partition("=")
    if not sep:
        label, target = "", text
    label, target = label.strip(), target.strip()
    if not target:
        raise CpplanError(f"empty planner spec {text!r}")
    if target.startswith("plans:"):
        folder = target[len("plans:"):]
        if not Path(folder).is_dir():
            raise CpplanError(f"plan directory {folder!r} does not exist")
        return PlannerSpec(label or f"plans:{Path(folder).name}", "plans", folder)
    if target in names():
        return PlannerSpec(label or target, "builtin", target)
    if ":" in target:
        load_function(target)
        return PlannerSpec(label or target.rsplit("/", 1)[-1], "function", target)
    from .planners import get

    get(target)  # raises "unknown planner ... known: ..."
    raise AssertionError("unreachable")


def default_planners() -> list[PlannerSpec]:
    """Every registered replica of a production allocator."""
    from .planners import names

    return [PlannerSpec(n, "builtin", n) for n in names("replica")]


def load_function(target: str) -> Callable[[Problem], Any]:
    """The function named ``module:function`` or ``path/to/file.py:function``."""
    where, _, fname = target.rpartition(":")
    if not where or not fname:
        raise CpplanError(f"planner {target!r}: expected module:function")
    try:
        if where.endswith(".py") or os.sep in where or "/" in where:
            path = Path(where)
            if not path.is_file():
                raise CpplanError(f"planner {target!r}: no file {where!r}")
            modname = f"_cpplan_user_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]}"
            module = sys.modules.get(modname)
            if module is None:
                spec = importlib.util.spec_from_file_location(modname, path)
                assert spec is not None and spec.loader is not None
                module = importlib.util.module_from_spec(spec)
                sys.modules[modname] = module
                spec.loader.exec_module(module)
        else:
            if "" not in sys.path and os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())  # like `python -m`: the current directory counts
            module = importlib.import_module(where)
    except CpplanError:
        raise
    except Exception as e:  # the user's module failed to import: say so in one line
        raise CpplanError(f"planner {target!r}: cannot import {where!r}: "
                          f"{type(e).__name__}: {e}") from None
    fn = getattr(module, fname, None)
    if not callable(fn):
        raise CpplanError(f"planner {target!r}: {where!r} has no function {fname!r}")
    return fn


def as_plan(problem: Problem, result: object, *, planner: str = "",
            lower_bound: int | None = None, seconds: float = 0.0) -> Plan:
    """What a user's allocator returned, as a plan, rebuilt from its placements and checked.

    ``result`` is a :class:`Plan` or a mapping ``id -> offset`` (in the buffer's first candidate
    pool) or ``id -> (pool, offset)``. Aliased buffers missing from the mapping follow their
    root. Raises :class:`PlanError` (listing violations) if the plan breaks the problem.
    """
    if isinstance(result, Plan):
        if result.status == "infeasible":
            raise PlanError(f"{planner or 'planner'} found no plan: {result.explanation}")
        raw: Mapping[Any, Any] = result.placements
    elif isinstance(result, Mapping):
        raw = result
    else:
        raise PlanError(f"{planner or 'planner'} returned {type(result).__name__}, expected a "
                        "Plan or a dict id -> offset or id -> (pool, offset)")
    placements: dict[str, Placement] = {}
    for key, value in raw.items():
        bid = str(key)
        if isinstance(value, Integral):
            pool = problem.candidates(bid)[0] if bid in problem.index else problem.pools[0].name
            placements[bid] = Placement(pool, int(value))
        elif isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
            pool, off = value
            placements[bid] = Placement(str(pool), int(off) if isinstance(off, Integral) else off)
        else:
            raise PlanError(f"{planner or 'planner'}: buffer {bid!r} placed at {value!r}; "
                            "expected an offset or (pool, offset)")
    for bid, (root, disp) in problem.root_of.items():
        if bid not in placements and root in placements:
            r = placements[root]
            placements[bid] = Placement(r.pool, r.offset + disp)
    plan = Plan.build(problem, placements, planner=planner, seconds=seconds,
                      lower_bound=lower_bound)
    _ensure_checked(problem, plan)
    return plan


def _ensure_checked(problem: Problem, plan: Plan) -> None:
    bad = check(problem, plan)
    if bad:
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise PlanError(f"{bad[0]}{more}", bad)


def plan_file_for(folder: str | Path, instance: str | Path) -> Path | None:
    """The plan in ``folder`` for the instance file ``instance``, or ``None``.

    Tried in order, with ``NAME`` the instance's file name without its extension:
    ``NAME.plan.json``, ``NAME.plan.csv``, ``NAME.json``, ``NAME.csv`` (never the instance file
    itself, so plans may sit beside their problems).
    """
    folder, instance = Path(folder), Path(instance)
    for suffix in PLAN_SUFFIXES:
        cand = folder / f"{instance.stem}{suffix}"
        if cand.is_file() and cand.resolve() != instance.resolve():
            return cand
    return None


# -- the reference (exact engine) and its cache --------------------------------------------------
@dataclass(frozen=True)
class Reference:
    """The exact engine's result on one instance: best ``objective`` it found (``None``: none),
    the ``lower_bound`` it proved, its ``status``, which ``engine`` and how long."""

    objective: int | None
    lower_bound: int
    status: str
    engine: str
    time_limit: float
    seconds: float
    planner: str = ""
    cached: bool = False


def problem_key(problem: Problem) -> str:
    """SHA-256 (hex, 32 digits) of the problem's content: buffers, pools and aliases, in order.

    The name and provenance (``meta``) do not count: the same problem under two names is
    solved once.
    """
    from .io.native import problem_to_dict

    data = problem_to_dict(problem)
    data.pop("name", None)
    data.pop("meta", None)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def default_cache_dir() -> Path:
    """``$CPPLAN_CACHE`` if set, else ``.cpplan-cache`` in the current directory."""
    return Path(os.environ.get("CPPLAN_CACHE") or ".cpplan-cache")


ENGINE = "solve"  # the engine recorded with cached references


def _load_cached(cache_dir: Path, key: str, engine: str, time_limit: float) -> Reference | None:
    path = cache_dir / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        ref = Reference(**{k: data[k] for k in ("objective", "lower_bound", "status", "engine",
                                                "time_limit", "seconds", "planner")})
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent or unreadable: compute again
    if ref.engine != engine:
        return None
    if ref.status not in ("optimal", "infeasible") and ref.time_limit < time_limit:
        return None
    return Reference(**{**asdict(ref), "cached": True})


def _store(cache_dir: Path, key: str, ref: Reference, problem: Problem, plan: Plan | None) -> None:
    from .io import write_plan
    from .io.atomic import write_text_atomic

    cache_dir.mkdir(parents=True, exist_ok=True)
    if plan is not None and plan.status != "infeasible":
        write_plan(problem, plan, cache_dir / f"{key}.plan.json")
    record = {k: v for k, v in asdict(ref).items() if k != "cached"}
    record.update(format="cpplan-reference", key=key, name=problem.name,
                  buffers=len(problem.buffers))
    write_text_atomic(cache_dir / f"{key}.json", json.dumps(record, indent=1) + "\n")


SOLVES = 0  # references computed (not read from the cache) by this process; tests read it


def reference(problem: Problem, *, time_limit: float = 10.0, cache_dir: str | Path | None = None,
              workers: int = 2, key: str | None = None) -> Reference:
    """The exact engine's result on ``problem``, from the cache when it holds a usable one.

    Uses :func:`cpplan.solve.solve` (seed 0). Stores the result and its plan in ``cache_dir``
    (``None``: no cache).
    """
    global SOLVES
    from .solve import solve

    engine = ENGINE
    cdir = Path(cache_dir) if cache_dir is not None else None
    key = key or problem_key(problem)
    if cdir is not None:
        hit = _load_cached(cdir, key, engine, time_limit)
        if hit is not None:
            return hit
    SOLVES += 1
    started = time.perf_counter()
    plan: Plan | None
    try:
        plan = solve(problem, time_limit=time_limit, workers=workers, seed=0)
    except CapacityError as e:
        plan = Plan.infeasible(problem, str(e), planner=engine)
    seconds = time.perf_counter() - started
    lb = max(objective_lower_bound(problem), plan.lower_bound or 0)
    if plan.status == "infeasible":
        ref = Reference(None, lb, "infeasible", engine, time_limit, seconds, plan.planner)
    else:
        _ensure_checked(problem, plan)
        status = "optimal" if plan.objective <= lb else plan.status
        if status == "optimal":
            lb = plan.objective
        ref = Reference(plan.objective, lb, status, engine, time_limit, seconds, plan.planner)
    if cdir is not None:
        _store(cdir, key, ref, problem, plan)
    return ref


def cached_plan(problem: Problem, cache_dir: str | Path | None = None) -> Plan | None:
    """The reference plan kept in the cache for ``problem`` (checked), or ``None``."""
    from .io import read_plan

    cdir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path = cdir / f"{problem_key(problem)}.plan.json"
    if not path.is_file():
        return None
    plan = read_plan(path, problem)
    return plan if not check(problem, plan) else None


# -- results --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Result:
    """One planner on one instance. ``outcome`` is one of :data:`OUTCOMES`; ``objective`` is
    the height (``sum(cost * height)`` with several pools) when the outcome is ``ok``."""

    planner: str
    outcome: str
    objective: int | None = None
    heights: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    message: str = ""


@dataclass(frozen=True)
class InstanceReport:
    """Every planner's result on one instance, its lower bound and the reference.

    ``error`` is set when the instance itself could not be graded (unreadable file, crash).
    """

    name: str
    path: str
    buffers: int = 0
    lower_bound: int | None = None
    reference: Reference | None = None
    results: tuple[Result, ...] = ()
    seconds: float = 0.0
    error: str = ""

    @property
    def best_known(self) -> int | None:
        """The lowest height of any valid plan seen: the reference's or a graded planner's."""
        values = [r.objective for r in self.results if r.outcome == "ok"]
        if self.reference is not None and self.reference.objective is not None:
            values.append(self.reference.objective)
        return min(values) if values else None

    @property
    def proven_optimum(self) -> int | None:
        """The optimum when it is known: some plan reaches the proven lower bound."""
        best = self.best_known
        if best is not None and self.lower_bound is not None and best <= self.lower_bound:
            return best
        return None

    def result(self, planner: str) -> Result | None:
        return next((r for r in self.results if r.planner == planner), None)

    def ratio_bound(self, r: Result) -> float | None:
        return _ratio(r.objective, self.lower_bound) if r.outcome == "ok" else None

    def ratio_best(self, r: Result) -> float | None:
        return _ratio(r.objective, self.best_known) if r.outcome == "ok" else None

    def optimal(self, r: Result) -> bool:
        return (r.outcome == "ok" and self.lower_bound is not None
                and r.objective is not None and r.objective <= self.lower_bound)

    def winners(self) -> set[str]:
        """Graded planners with the lowest height on this instance (ties all win)."""
        ok = [r for r in self.results if r.outcome == "ok"]
        if not ok:
            return set()
        low = min(r.objective for r in ok)  # type: ignore[type-var]
        return {r.planner for r in ok if r.objective == low}


def _ratio(value: int | None, base: int | None) -> float | None:
    if value is None or base is None:
        return None
    if base == 0:
        return 1.0 if value == 0 else math.inf
    return value / base


@dataclass(frozen=True)
class PlannerSummary:
    """One planner over all instances: geometric means and worst of its ratios, wins, and how
    often it was optimal or failed."""

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


def _geomean(values: list[float]) -> float | None:
    vals = [v for v in values if v is not None and 0 < v < math.inf]
    return math.exp(sum(map(math.log, vals)) / len(vals)) if vals else None


@dataclass(frozen=True)
class Report:
    """The grade of ``planners`` over ``instances``; render with :meth:`to_markdown`,
    :meth:`to_csv` or :meth:`to_json`."""

    instances: tuple[InstanceReport, ...]
    planners: tuple[str, ...]
    time_limit: float
    engine: str
    seconds: float = 0.0

    @property
    def graded(self) -> list[InstanceReport]:
        return [i for i in self.instances if not i.error]

    @property
    def failed(self) -> list[InstanceReport]:
        return [i for i in self.instances if i.error]

    def summary(self) -> list[PlannerSummary]:
        """Per planner, best first (lowest geometric mean against the best known)."""
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
            out.append(PlannerSummary(name, len(rb), len(graded), _geomean(rb), worst, worst_at,
                                      _geomean(rl), optimal, wins, failures, secs))
        return sorted(out, key=lambda s: (s.solved == 0, -s.solved,
                                          s.geomean_best if s.geomean_best is not None else 0.0))

    def rows(self) -> list[dict[str, Any]]:
        """One row per (instance, planner), for CSV and data frames."""
        out = []
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
        cols = ["instance", "buffers", "planner", "outcome", "height", "lower_bound",
                "best_known", "ratio_bound", "ratio_best", "optimal", "seconds", "message"]
        buf = io.StringIO()
        w = csv.DictWriter(buf, cols, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for row in self.rows():
            w.writerow({k: ("" if v is None else v) for k, v in row.items()})
        return buf.getvalue()

    def to_json(self) -> str:
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
        return _markdown(self)


def _json_default(v: object) -> object:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    raise TypeError(type(v).__name__)


# -- markdown --------------------------------------------------------------------------------------
def _fmt_ratio(v: float | None) -> str:
    if v is None:
        return "–"
    if v == math.inf:
        return "∞"
    return f"{v:.3f}"


def _fmt_int(v: int | None) -> str:
    return "–" if v is None else f"{v:,}"


def _cell(r: Result, inst: InstanceReport) -> str:
    if r.outcome != "ok":
        return r.outcome
    text = _fmt_ratio(inst.ratio_best(r))
    if inst.optimal(r):
        text += " ✓"
    return f"**{text}**" if r.planner in inst.winners() else text


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown(rep: Report) -> str:
    graded = rep.graded
    lines: list[str] = []
    n = len(rep.instances)
    lines.append(f"# cpplan grade: {len(rep.planners)} planner{'s' * (len(rep.planners) != 1)} "
                 f"on {n} instance{'s' * (n != 1)}")
    lines.append("")
    if rep.time_limit > 0:
        opt = sum(1 for i in graded if i.proven_optimum is not None)
        engine = "`cpplan.solve`"
        cached = sum(1 for i in graded if i.reference is not None and i.reference.cached)
        lines.append(f"Reference: {engine}, {rep.time_limit:g} s per instance; optimum proven on "
                     f"{opt} of {len(graded)} instances"
                     + (f" ({cached} reference{'s' * (cached != 1)} from the cache)."
                        if cached else "."))
    else:
        lines.append("No reference (time limit 0): lower bound = max-load, best known = best "
                     "graded plan.")
    lines.append("Ratios are height / best known height (1.000 = as good as anything known); "
                 "✓ = proven optimal; **bold** = best of the graded planners.")
    lines.append("")
    lines.append("## Summary")
    lines.append("")
    lines.append("| planner | solved | geo-mean × best | worst × best | geo-mean × lower bound "
                 "| optimal | wins | total s |")
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in rep.summary():
        fails = ", ".join(f"{v} {k}" for k, v in sorted(s.failures.items()))
        solved = f"{s.solved}/{s.instances}" + (f" ({fails})" if fails else "")
        worst = _fmt_ratio(s.worst_best) + (f" ({s.worst_instance})" if s.worst_instance else "")
        lines.append(f"| {_md_escape(s.planner)} | {solved} | {_fmt_ratio(s.geomean_best)} | "
                     f"{worst} | {_fmt_ratio(s.geomean_bound)} | {s.optimal} | {s.wins} | "
                     f"{s.seconds:.2f} |")
    lines.append("")
    lines.append("## Per instance (height / best known)")
    lines.append("")
    head = ["instance", "buffers", "lower bound", "best known"] + [
        _md_escape(p) for p in rep.planners]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("| --- | ---: | ---: | ---: |" + " ---: |" * len(rep.planners))
    for inst in graded:
        best = _fmt_int(inst.best_known)
        if inst.proven_optimum is not None:
            best += " ✓"
        elif inst.best_known and inst.lower_bound is not None:
            best += f" (gap {100 * (inst.best_known - inst.lower_bound) / inst.best_known:.1f}%)"
        cells = []
        for p in rep.planners:
            r = inst.result(p)
            cells.append("–" if r is None else _cell(r, inst))
        lines.append(f"| {_md_escape(inst.name)} | {inst.buffers:,} | "
                     f"{_fmt_int(inst.lower_bound)} | {best} | " + " | ".join(cells) + " |")
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
                         f"{_fmt_int(ref.objective)} | "
                         f"{_fmt_ratio(_ratio(ref.objective, inst.lower_bound))} | "
                         f"{_fmt_ratio(_ratio(ref.objective, inst.best_known))} | "
                         f"{'yes' if ref.status == 'optimal' else 'no'} | {ref.seconds:.2f} |")
        for r in inst.results:
            height = _fmt_int(r.objective) if r.outcome == "ok" else r.outcome
            lines.append(f"| {_md_escape(inst.name)} | {_md_escape(r.planner)} | {height} | "
                         f"{_fmt_ratio(inst.ratio_bound(r))} | {_fmt_ratio(inst.ratio_best(r))} | "
                         f"{'yes' if inst.optimal(r) else 'no'} | {r.seconds:.3f} |")
    lines.append("")
    return "\n".join(lines)


# -- running ---------------------------------------------------------------------------------------
def find_instances(paths: Iterable[str | Path]) -> list[Path]:
    """Problem files named by ``paths``: files as given, directories searched recursively for
    ``.json`` and ``.csv`` files (sorted; ``*.plan.*`` files and hidden folders such as the cache
    skipped). A missing path is an error."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file()
                           and f.suffix.lower() in PROBLEM_SUFFIXES
                           and not f.name.lower().endswith(PLAN_ONLY_SUFFIXES)
                           and not any(part.startswith(".") for part in f.relative_to(p).parts))
            if not found:
                raise CpplanError(f"{p}: no .json or .csv problem files in this directory")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise CpplanError(f"{p}: no such file or directory")
    return out


def _names(paths: list[Path]) -> list[str]:
    """Instance names: file names without extension, with the folder where two collide."""
    stems = [p.stem for p in paths]
    out = []
    for p, s in zip(paths, stems, strict=True):
        out.append(f"{p.parent.name}/{s}" if stems.count(s) > 1 else s)
    return out


def _run_planner(spec: PlannerSpec, problem: Problem, path: Path, lb: int,
                 limit: float | None = None) -> Result:
    """One planner on one problem, under a time budget of ``limit`` seconds (every registered
    planner honours it; a user's function may, by calling :func:`cpplan.deadline.tick`)."""
    started = time.perf_counter()
    try:
        with Budget(limit).active():
            got = _call_planner(spec, problem, path)
        if isinstance(got, Result):
            return got
        seconds = time.perf_counter() - started
        plan = as_plan(problem, got, planner=spec.label, lower_bound=lb, seconds=seconds)
    except OutOfTime:
        return Result(spec.label, "timeout", seconds=time.perf_counter() - started,
                      message=f"no plan within {limit:g} s")
    except PlanError as e:
        return Result(spec.label, "invalid", seconds=time.perf_counter() - started,
                      message=str(e))
    except CapacityError as e:
        return Result(spec.label, "capacity", seconds=time.perf_counter() - started,
                      message=str(e))
    except Exception as e:  # a planner's bug is reported in its cell, not raised
        return Result(spec.label, "error", seconds=time.perf_counter() - started,
                      message=f"{type(e).__name__}: {e}")
    return Result(spec.label, "ok", plan.objective, dict(plan.heights), seconds)


def _call_planner(spec: PlannerSpec, problem: Problem, path: Path) -> object:
    """What the planner of ``spec`` returns for ``problem`` (a plan file read for ``plans``), or
    a ``missing`` result."""
    if spec.kind == "plans":
        file = plan_file_for(spec.target, path)
        if file is None:
            return Result(spec.label, "missing", message=f"no plan for {path.name} in "
                          f"{spec.target}")
        from .io import read_plan

        return read_plan(file, problem)
    if spec.kind == "builtin":
        from .planners import get

        return get(spec.target)(problem)
    return load_function(spec.target)(problem)


def grade_instance(path: str | Path, planners: Sequence[PlannerSpec], *, name: str | None = None,
                   time_limit: float = 10.0, cache_dir: str | Path | None = None,
                   workers: int = 2, planner_time_limit: float | None = None) -> InstanceReport:
    """Grade ``planners`` on the problem in ``path``; never raises for a bad instance or planner
    (the report carries the error)."""
    from .io import read_problem

    path = Path(path)
    name = name or path.stem
    started = time.perf_counter()
    try:
        problem = read_problem(path)
        lb = objective_lower_bound(problem)
        ref = None
        if time_limit > 0:
            ref = reference(problem, time_limit=time_limit, cache_dir=cache_dir, workers=workers)
            lb = max(lb, ref.lower_bound)
        results = tuple(_run_planner(s, problem, path, lb, planner_time_limit)
                        for s in planners)
    except Exception as e:
        msg = str(e) if isinstance(e, CpplanError) else f"{type(e).__name__}: {e}"
        return InstanceReport(name, str(path), seconds=time.perf_counter() - started, error=msg)
    return InstanceReport(name, str(path), len(problem.buffers), lb, ref, results,
                          time.perf_counter() - started)


class Progress:
    """A progress bar on ``stream`` (stderr): redrawn in place on a terminal, one line per
    finished instance otherwise."""

    def __init__(self, stream: TextIO | None = None, width: int = 28) -> None:
        self.done, self.width = 0, width
        self.stream = stream if stream is not None else sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.started = time.perf_counter()

    def __call__(self, done: int, total: int, inst: InstanceReport) -> None:
        self.done = done
        mark = "failed" if inst.error else f"{inst.seconds:.1f}s"
        elapsed = time.perf_counter() - self.started
        if self.tty:
            full = self.width * done // max(total, 1)
            bar = "#" * full + "." * (self.width - full)
            self.stream.write(f"\r[{bar}] {done}/{total} {elapsed:5.0f}s  {inst.name} ({mark})"
                              "\x1b[K")
            if done == total:
                self.stream.write("\n")
        else:
            self.stream.write(f"grade: {done}/{total} {inst.name} ({mark}), "
                              f"{elapsed:.0f}s elapsed\n")
        self.stream.flush()


def _child(conn: Any, args: tuple, kwargs: dict) -> None:
    try:
        report = grade_instance(*args, **kwargs)
    except BaseException as e:  # pragma: no cover - grade_instance catches Exception
        report = InstanceReport(kwargs.get("name") or str(args[0]), str(args[0]),
                                error=f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
    conn.send(report)
    conn.close()


def grade(
    instances: Iterable[str | Path],
    planners: Sequence[PlannerSpec | str] | None = None,
    *,
    time_limit: float = 10.0,
    jobs: int = 1,
    cache_dir: str | Path | None = None,
    progress: Callable[[int, int, InstanceReport], None] | None = None,
    planner_time_limit: float | None = None,
) -> Report:
    """Grade ``planners`` (default: every replica) on the problem files ``instances``.

    ``jobs > 1`` runs instances in separate processes, at most ``jobs`` at once; the exact engine
    then gets ``max(1, cpu_count // jobs)`` workers. ``progress(done, total, instance_report)``
    is called as each instance finishes. ``cache_dir=None`` disables the cache.
    ``planner_time_limit`` (seconds, None: none) interrupts a planner that runs longer; its cell
    says ``timeout``.
    """
    started = time.perf_counter()
    paths = find_instances(instances)
    specs = [p if isinstance(p, PlannerSpec) else parse_planner(p)
             for p in (planners if planners else default_planners())]
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        dup = next(x for x in labels if labels.count(x) > 1)
        raise CpplanError(f"planner {dup!r} given twice (name one with label=...)")
    names = _names(paths)
    jobs = max(1, min(jobs, len(paths)))
    workers = max(1, (os.cpu_count() or 2) // jobs)
    kwargs = {"time_limit": time_limit, "cache_dir": cache_dir, "workers": workers,
              "planner_time_limit": planner_time_limit}
    reports: list[InstanceReport | None] = [None] * len(paths)
    done = 0

    def finish(k: int, rep: InstanceReport) -> None:
        nonlocal done
        reports[k] = rep
        done += 1
        if progress is not None:
            progress(done, len(paths), rep)

    if jobs == 1:
        for k, (p, n) in enumerate(zip(paths, names, strict=True)):
            finish(k, grade_instance(p, specs, name=n, **kwargs))
    else:
        _run_parallel(paths, names, specs, kwargs, jobs, finish)
    return Report(tuple(r for r in reports if r is not None), tuple(labels), time_limit,
                  ENGINE if time_limit > 0 else "none", time.perf_counter() - started)


def _run_parallel(paths: list[Path], names: list[str], specs: list[PlannerSpec], kwargs: dict,
                  jobs: int, finish: Callable[[int, InstanceReport], None]) -> None:
    # One process per instance (fork where the platform has it: cheap, and the user's modules
    # come along); a crash or an out-of-memory kill loses only that instance.
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    pending = list(range(len(paths)))
    running: dict[Any, tuple[int, Any]] = {}  # reader connection -> (index, process)
    try:
        while pending or running:
            while pending and len(running) < jobs:
                k = pending.pop(0)
                reader, writer = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(writer, (paths[k], specs),
                                                        {**kwargs, "name": names[k]}),
                                   daemon=False)
                proc.start()
                writer.close()
                running[reader] = (k, proc)
            for reader in wait(list(running)):
                k, proc = running.pop(reader)
                try:
                    rep = reader.recv()
                except (EOFError, OSError):
                    rep = None  # the process ended without sending its report
                reader.close()
                proc.join()
                if rep is None:
                    rep = InstanceReport(names[k], str(paths[k]),
                                         error=f"worker process died (exit code {proc.exitcode})")
                finish(k, rep)
    finally:
        for _, proc in running.values():
            proc.kill()
            proc.join()


def run_cli(instances: Sequence[str], planners: Sequence[str], plan_dirs: Sequence[str], *,
            time_limit: float, jobs: int, fmt: str | None, output: str | None,
            cache: str | None, no_cache: bool, quiet: bool,
            planner_time_limit: float | None = None) -> None:
    """``cpplan grade``: the report on stdout or in ``output``; exit 1 when some instance could
    not be graded (the report still lists the others)."""
    specs = [parse_planner(p) for p in planners] if planners else default_planners()
    for folder in plan_dirs:
        specs.append(parse_planner(f"plans:{folder}"))
    if not specs:
        raise CpplanError("no planners to grade: no replica is registered; name one with "
                          "--planner")
    if jobs < 1:
        raise CpplanError(f"--jobs must be at least 1, got {jobs}")
    if time_limit < 0:
        raise CpplanError(f"--time-limit must be >= 0, got {time_limit:g}")
    if fmt is None:
        suffix = Path(output).suffix.lower() if output else ""
        fmt = {".csv": "csv", ".json": "json"}.get(suffix, "md")
    cache_dir = None if no_cache else Path(cache) if cache else default_cache_dir()
    report = grade(instances, specs, time_limit=time_limit, jobs=jobs, cache_dir=cache_dir,
                   progress=None if quiet else Progress(), planner_time_limit=planner_time_limit)
    text = {"md": report.to_markdown, "csv": report.to_csv, "json": report.to_json}[fmt]()
    if output:
        from .io.atomic import write_text_atomic

        write_text_atomic(output, text)
        if not quiet:
            print(f"wrote {output}: {len(report.planners)} planners on "
                  f"{len(report.instances)} instances", file=sys.stderr)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    if report.failed:
        print(f"cpplan: {len(report.failed)} of {len(report.instances)} instances could not be "
              "graded: " + "; ".join(f"{i.name}: {i.error.splitlines()[0] if i.error else ''}"
                                     for i in report.failed[:3]), file=sys.stderr)
        sys.exit(1)
