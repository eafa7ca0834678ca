"""Running the jobs of a grading run on this machine: one process per instance, at most
``jobs`` at a time, so that an instance that crashes its process, or runs out of memory, is
reported as failed and the others carry on."""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, cast

from .job import GradeOptions, grade_instance
from .results import InstanceReport
from .specs import PlannerSpec


def _child(conn: Any, args: tuple, kwargs: dict) -> None:
    try:
        report = grade_instance(*args, **kwargs)
    except BaseException as e:  # pragma: no cover - grade_instance catches Exception
        report = InstanceReport(kwargs.get("name") or str(args[0]), str(args[0]),
                                error=f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
    conn.send(report)
    conn.close()


def run_local(paths: list[Path], names: list[str], specs: list[PlannerSpec], kwargs: GradeOptions,
              jobs: int, finish: Callable[[int, InstanceReport], None]) -> None:
    """Grade instance ``k`` (``paths[k]``, ``names[k]``) with :func:`grade_instance` and
    ``kwargs`` in a process of its own, calling ``finish(k, report)`` as each ends."""
    # Fork where the platform has it: cheap, and the user's modules come along.
    methods = multiprocessing.get_all_start_methods()
    ctx = (multiprocessing.get_context("fork") if "fork" in methods
           else multiprocessing.get_context("spawn"))
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
            for ready in wait(list(running)):
                reader = cast(Connection, ready)  # (one of the connections it was given)
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
