"""A grading run: planners over instances, on this machine or a cluster, as one report."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import CpplanError
from .cache import ENGINE
from .instances import find_instances, instance_names
from .job import GradeOptions, grade_instance
from .report import Report
from .results import InstanceReport
from .specs import PlannerSpec, default_planners, parse_planner


def grade(
    instances: Iterable[str | Path],
    planners: Sequence[PlannerSpec | str] | None = None,
    *,
    time_limit: float = 10.0,
    jobs: int = 1,
    cache_dir: str | Path | None = None,
    progress: Callable[[int, int, InstanceReport], None] | None = None,
    planner_time_limit: float | None = None,
    cluster: Any = None,
) -> Report:
    """Grade ``planners`` (default: every replica) on the problem files ``instances``.

    ``jobs > 1`` runs instances in separate processes, at most ``jobs`` at once; the exact engine
    then gets ``max(1, cpu_count // jobs)`` workers. ``cluster`` (a Dask scheduler address such
    as ``"tcp://host:8786"``, or a ``distributed.Client``) sends the instances to a cluster
    instead (:mod:`cpplan.grade.cluster`; ``jobs`` is then ignored): the report is the same.
    ``progress(done, total, instance_report)`` is called as each instance finishes.
    ``cache_dir=None`` disables the cache. ``planner_time_limit`` (seconds, None: none)
    interrupts a planner that runs longer; its cell says ``timeout``.

    Args:
        instances: Problem files, and folders searched for them (:func:`find_instances`).
        planners: Planner specs (:func:`parse_planner`: a registered name,
            ``module:function``, ``file.py:function``, ``plans:DIR``, each with an optional
            ``label=``); ``None`` or empty for every registered replica.
        time_limit: Seconds for the reference solve of each instance; 0 skips it (the bound
            is then the max-load).
        jobs: Instances graded at once, each in a process of its own when more than 1.
        cache_dir: The folder of cached references; ``None`` for no cache.
        progress: Called as ``progress(done, total, instance_report)`` after each instance.
        planner_time_limit: Seconds after which a planner is interrupted (``timeout``);
            ``None`` for none.
        cluster: A Dask scheduler address or ``distributed.Client``; ``None`` to run here.

    Returns:
        The :class:`~cpplan.grade.report.Report`, with one :class:`InstanceReport` per instance, in
        the order found, every plan checked again.

    Raises:
        CpplanError: A missing path, a folder with no problem files, an unknown planner, a
            user function that cannot be imported, or a planner given twice under one label.
            A planner that fails on an instance does not raise: its cell records the failure.
    """
    started = time.perf_counter()
    paths = find_instances(instances)
    specs = [p if isinstance(p, PlannerSpec) else parse_planner(p)
             for p in (planners if planners else default_planners())]
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        dup = next(x for x in labels if labels.count(x) > 1)
        raise CpplanError(f"planner {dup!r} given twice (name one with label=...)")
    names = instance_names(paths)
    reports: list[InstanceReport | None] = [None] * len(paths)
    done = 0

    def finish(k: int, rep: InstanceReport) -> None:
        nonlocal done
        reports[k] = rep
        done += 1
        if progress is not None:
            progress(done, len(paths), rep)

    if cluster is not None:
        from .cluster import run_cluster

        run_cluster(paths, names, specs, cluster=cluster, time_limit=time_limit,
                    cache_dir=cache_dir, planner_time_limit=planner_time_limit,
                    finish_one=finish)
    else:
        jobs = max(1, min(jobs, len(paths)))
        workers = max(1, (os.cpu_count() or 2) // jobs)
        kwargs: GradeOptions = {"time_limit": time_limit, "cache_dir": cache_dir,
                                "workers": workers, "planner_time_limit": planner_time_limit}
        if jobs == 1:
            for k, (p, n) in enumerate(zip(paths, names, strict=True)):
                finish(k, grade_instance(p, specs, name=n, **kwargs))
        else:
            from .local import run_local

            run_local(paths, names, specs, kwargs, jobs, finish)
    return Report(tuple(r for r in reports if r is not None), tuple(labels), time_limit,
                  ENGINE if time_limit > 0 else "none", time.perf_counter() - started)
