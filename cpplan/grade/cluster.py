"""Running the jobs of a grading run on a Dask cluster (the ``distributed`` package, extra
``cpplan[distributed]``): the same :class:`~cpplan.grade.job.Job` as a local run, sent to a
running scheduler.

This process (the client) reads the instance files and the cache, and sends each worker a
self-contained job (the problem, the planners, the text of the user's ``file.py`` planners, the
cached reference if any); the worker sends back the reference it solved with its plan, and the
planners' results; the client writes the cache. Workers need cpplan (and the user's importable
modules) installed, never a shared disk. At most twice as many jobs as the cluster has threads
are in flight, so a corpus of thousands of instances is never read, nor held by the scheduler,
at once.

A job that raises costs its instance (reported as the same error a local run gives); a job that
kills its worker is retried on others by the scheduler up to its ``allowed-failures`` (Dask's
default 3), then its instance is reported as failed; the other instances carry on. Ctrl-C (any
exception in the client) cancels the jobs on the cluster: none starts any more, and those
running (Dask cannot interrupt a running task) finish their reference solve, at most
``time_limit`` seconds, for nothing.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CpplanError, missing_extra
from .job import Job, Outcome, failed, finish, prepare, run_job, user_sources
from .results import InstanceReport
from .specs import PlannerSpec


def connect(cluster: Any) -> tuple[Any, bool]:
    """A ``distributed.Client`` for ``cluster`` (a scheduler address such as
    ``tcp://host:8786``, a cluster object, or a client, used as is) and whether it is ours to
    close."""
    try:
        import distributed
    except ImportError:
        raise missing_extra("grading on a cluster", "distributed", "distributed") from None
    if isinstance(cluster, distributed.Client):
        return cluster, False
    try:
        return distributed.Client(cluster), True  # waits distributed.comm.timeouts.connect
    except (OSError, TimeoutError, ValueError) as e:
        raise CpplanError(f"cannot reach the Dask scheduler at {cluster}: {e}") from None


def _remote(job: Job) -> Outcome:
    """A job on a worker: the exact engine gets this machine's cores shared among the worker's
    threads (each runs one job), as a local run shares them among its jobs."""
    try:
        from distributed import get_worker

        threads = max(1, int(get_worker().state.nthreads))
    except (ImportError, ValueError, AttributeError):
        threads = 1
    return run_job(job, max(1, (os.cpu_count() or 2) // threads))


def _died(exc: BaseException) -> str:
    from distributed import KilledWorker

    if isinstance(exc, KilledWorker):
        return ("worker process died (on the cluster: every worker that ran this instance "
                "died, up to the scheduler's allowed-failures)")
    return ""


def run_cluster(paths: list[Path], names: list[str], specs: list[PlannerSpec], *, cluster: Any,
                time_limit: float, cache_dir: str | Path | None,
                planner_time_limit: float | None,
                finish_one: Callable[[int, InstanceReport], None]) -> None:
    """Grade instance ``k`` (``paths[k]``, ``names[k]``) on ``cluster``, calling
    ``finish_one(k, report)`` as each ends (in the order they end)."""
    client, owned = connect(cluster)
    from distributed import as_completed

    run = uuid.uuid4().hex[:8]
    sources = user_sources(specs)  # read once, here: the workers never read the user's files
    todo = iter(range(len(paths)))
    in_flight: dict[Any, tuple[int, Job, float]] = {}  # future -> (index, job, client seconds)
    done = as_completed()

    def window() -> int:  # workers may join or leave while the run goes on
        return max(2, 2 * sum(client.nthreads().values()))

    def submit_next() -> bool:
        """Send the next readable instance; ``False`` when there is none left."""
        for k in todo:
            started = time.perf_counter()
            try:
                job = prepare(paths[k], specs, name=names[k], time_limit=time_limit,
                              cache_dir=cache_dir, planner_time_limit=planner_time_limit,
                              sources=sources)
            except Exception as e:  # unreadable instance: failed here, nothing to send
                finish_one(k, failed(names[k], paths[k], e, time.perf_counter() - started))
                continue
            future = client.submit(_remote, job, key=f"cpplan-grade-{run}-{k}", pure=False)
            in_flight[future] = (k, job, time.perf_counter() - started)
            done.add(future)
            return True
        return False

    def fill() -> None:
        limit = window()
        while len(in_flight) < limit and submit_next():
            pass

    try:
        fill()
        for future in done:
            k, job, seconds = in_flight.pop(future)
            started = time.perf_counter()
            try:
                outcome = future.result()
                report = finish(job, outcome, specs, cache_dir=cache_dir, seconds=seconds)
            except Exception as e:  # the job raised, or its workers died
                report = failed(names[k], paths[k], _died(e) or e,
                                seconds + time.perf_counter() - started)
            future.release()
            finish_one(k, report)
            fill()
    finally:
        if in_flight:
            client.cancel(list(in_flight), force=True)
        if owned:
            client.close()
