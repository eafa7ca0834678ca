"""Grading allocators: many planners over many instances, measured against the best possible.

:func:`grade` runs planners over problem files and returns a :class:`Report`; the report renders
itself as a markdown page (:meth:`Report.to_markdown`), CSV rows or JSON, and
:func:`cpplan.grade_html.write_html` (a layer above, with the views) as a web page. A planner is
one of

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
:func:`problem_key`: the first 32 hex digits (128 bits) of a SHA-256 of the buffers, pools and
aliases (not the name or provenance).
A cached result is reused when it comes from the same engine and is final (optimal or
infeasible) or was given at least as much time. Deleting the directory is always safe.

**Processes.** With ``jobs > 1`` every instance runs in a process of its own (at most ``jobs`` at
a time), so an instance that crashes its process, or runs out of memory, is reported as failed
and the others carry on. With ``cluster=`` the same jobs go to a Dask cluster
(:mod:`cpplan.grade.cluster`), with the same report. Ratios are ``height / lower bound`` and
``height / best known``; summaries take the geometric mean over the instances a planner solved.

The package, one module per concern: :mod:`~cpplan.grade.specs` (which planners, the user's
code), :mod:`~cpplan.grade.instances` (which files), :mod:`~cpplan.grade.reference_solve` and
:mod:`~cpplan.grade.cache` (the reference), :mod:`~cpplan.grade.job` (one instance),
:mod:`~cpplan.grade.local` and :mod:`~cpplan.grade.cluster` (running),
:mod:`~cpplan.grade.run` (:func:`grade`), :mod:`~cpplan.grade.report` and
:mod:`~cpplan.grade.markdown` (the report), :mod:`~cpplan.grade.progress`.
"""

from __future__ import annotations

from typing import Any

from ..errors import CapacityError, CpplanError, PlanError
from .cache import ENGINE, cached_plan, default_cache_dir, problem_key
from .instances import (
    PLAN_ONLY_SUFFIXES,
    PLAN_SUFFIXES,
    PROBLEM_SUFFIXES,
    find_instances,
    plan_file_for,
)
from .job import grade_instance
from .progress import Progress
from .reference_solve import reference
from .report import PlannerSummary, Report
from .results import OUTCOMES, InstanceReport, Reference, Result
from .run import grade
from .specs import PlannerSpec, as_plan, default_planners, load_function, parse_planner

__all__ = [
    "PlannerSpec", "Reference", "Result", "InstanceReport", "PlannerSummary", "Report",
    "parse_planner", "default_planners", "find_instances", "problem_key", "reference",
    "cached_plan", "grade", "grade_instance",
    "plan_file_for", "as_plan", "default_cache_dir", "Progress", "OUTCOMES",
    "load_function", "ENGINE", "PROBLEM_SUFFIXES", "PLAN_SUFFIXES", "PLAN_ONLY_SUFFIXES",
    "CpplanError", "CapacityError", "PlanError",
]


def __getattr__(name: str) -> Any:
    # SOLVES counts the references this process computed: read it where it changes.
    if name == "SOLVES":
        from . import reference_solve

        return reference_solve.SOLVES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
