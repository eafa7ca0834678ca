"""Grading on a Dask cluster (extra ``distributed``): a LocalCluster on loopback gives the same
report as the local runner, a crashing job or a worker that dies costs its instance alone, the
cache is the client's, Ctrl-C cancels the cluster's jobs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cpplan import write_plan
from cpplan.grade import grade
from cpplan.planners import get
from tests.shared import require

from .shared import BROKEN, FIRST_FIT, random_problem, without_times

distributed = require("distributed", "distributed")


@pytest.fixture(scope="module")
def cluster():
    import dask

    # One job per worker thread at a time (worker-saturation 1), so that a worker that dies had
    # only the job that killed it; and no retry of that job on another worker (the default is 3,
    # each costing a worker restart), to keep the test short.
    with (dask.config.set({"distributed.scheduler.allowed-failures": 0,
                           "distributed.scheduler.worker-saturation": 1.0}),
          distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address=":0") as c):
        yield c


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster) as c:
        yield c


def test_a_cluster_grades_as_the_local_runner(instances: list[Path], tmp_path: Path,
                                              client) -> None:
    from cpplan import grade as grading

    plans = tmp_path / "plans"
    plans.mkdir()
    p0 = random_problem(0)
    write_plan(p0, get("naive")(p0), plans / "p0.plan.json")
    bad = tmp_path / "inst" / "bad.csv"
    bad.write_text("id,lower,upper,size\na,0,x,3\n")
    planners = ["naive", FIRST_FIT, BROKEN, "tests.grade.shared:raises", f"plans:{plans}"]
    local = grade([*instances, bad], planners, time_limit=2, cache_dir=tmp_path / "local")
    solves = grading.SOLVES
    seen = []
    remote = grade([*instances, bad], planners, time_limit=2, cache_dir=tmp_path / "remote",
                   cluster=client, progress=lambda d, t, r: seen.append((d, t)))
    assert solves == grading.SOLVES  # the workers solved the references, not this process
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert {r.name for r in remote.failed} == {"bad"} and len(remote.graded) == 3
    a, b = without_times(local), without_times(remote)
    assert a == b
    assert a.to_markdown() == b.to_markdown() and a.to_json() == b.to_json()
    assert local.to_csv().count("\n") == remote.to_csv().count("\n")
    # The client wrote the cache (a record and a plan per instance) as the local run did, and
    # reads it back: a second run sends the cached references along, nothing is solved again.
    names = sorted(p.name for p in (tmp_path / "local").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "remote").iterdir()) and len(names) == 6
    for name in names:
        a_rec, b_rec = (json.loads((tmp_path / side / name).read_text())
                        for side in ("local", "remote"))
        a_rec.pop("seconds"), b_rec.pop("seconds")
        assert a_rec == b_rec, name
    again = grade(instances, ["naive"], time_limit=2, cache_dir=tmp_path / "remote",
                  cluster=client)
    assert all(i.reference.cached for i in again.instances)
    assert [i.best_known for i in again.graded] == [i.best_known for i in remote.graded]


def test_a_dying_worker_costs_its_instance_alone(instances: list[Path], tmp_path: Path,
                                                 client) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text("import os\n\ndef plan(problem):\n"
                     "    if problem.name == 'p1':\n        os._exit(3)\n"
                     "    return {b.id: i * 64 for i, b in enumerate(problem.buffers)}\n")
    from cpplan.grade import parse_planner

    planners = [parse_planner("naive"), parse_planner(f"crash={crash}:plan")]
    local = grade(instances, planners, time_limit=0, jobs=2, cache_dir=None)
    remote = grade(instances, planners, time_limit=0, cache_dir=None, cluster=client)
    for report in (local, remote):
        assert [i.name for i in report.failed] == ["p1"], [i.error for i in report.failed]
        assert "worker process died" in report.failed[0].error
        assert [i.name for i in report.graded] == ["p0", "p2"]
        assert all(r.outcome == "ok" for i in report.graded for r in i.results)
    assert without_times(local).graded == without_times(remote).graded


def test_a_job_needs_no_file(instances: list[Path], tmp_path: Path) -> None:
    # What a worker gets: the problem, and the text of the user's file.py planners.
    from cpplan.grade import parse_planner
    from cpplan.grade.job import finish, prepare, run_job, user_sources

    mine = tmp_path / "mine.py"
    mine.write_text("def plan(problem):\n"
                    "    return {b.id: 64 * i for i, b in enumerate(problem.buffers)}\n")
    specs = [parse_planner(f"mine={mine}:plan")]
    job = prepare(instances[0], specs, name="p0", time_limit=0, cache_dir=None,
                  sources=user_sources(specs))
    mine.unlink()
    instances[0].unlink()
    report = finish(job, run_job(job), specs, cache_dir=None)
    assert report.results[0].outcome == "ok"  # the text in the job ran, not the file
    assert report.results[0].objective == 64 * (report.buffers - 1) + job.problem.buffers[-1].size


def raise_on_p1(job):
    """A stand-in for the job a worker runs that raises on instance p1 (imported by name on the
    worker)."""
    from cpplan.grade.job import run_job

    if job.name == "p1":
        raise ValueError("the job broke")
    return run_job(job, 1)


def test_a_job_that_raises_costs_its_instance_alone(instances: list[Path], client,
                                                    monkeypatch) -> None:
    from cpplan.grade import cluster as on_cluster

    monkeypatch.setattr(on_cluster, "_remote", raise_on_p1)
    report = grade(instances, ["naive"], time_limit=0, cache_dir=None, cluster=client)
    assert {i.name: i.error for i in report.failed} == {"p1": "ValueError: the job broke"}
    assert [i.name for i in report.graded] == ["p0", "p2"]


def test_an_interrupt_cancels_the_jobs_on_the_cluster(tmp_path: Path, client) -> None:
    from .shared import write_instances

    paths = write_instances(tmp_path / "many", 8)

    def interrupt(done: int, total: int, report: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        grade(paths, ["naive"], time_limit=5, cache_dir=None, cluster=client, progress=interrupt)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        left = client.run_on_scheduler(
            lambda dask_scheduler: [k for k in dask_scheduler.tasks if "cpplan-grade" in str(k)])
        if not left:
            break
        time.sleep(0.2)
    assert not left


def test_the_cli_grades_on_a_cluster(instances: list[Path], tmp_path: Path, cluster) -> None:
    from click.testing import CliRunner

    from cpplan.cli import main

    out = tmp_path / "grade.md"
    result = CliRunner().invoke(main, ["grade", str(instances[0].parent), "-p", "naive", "-q",
                                       "--time-limit", "0", "--cluster",
                                       cluster.scheduler_address, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("# cpplan grade: 1 planner on 3 instances")


def test_an_unreachable_scheduler_is_one_line(instances: list[Path]) -> None:
    import dask
    from click.testing import CliRunner

    from cpplan.cli import main

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        result = CliRunner().invoke(main, ["grade", str(instances[0]), "-p", "naive", "-q",
                                           "--cluster", "tcp://127.0.0.1:9"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("cpplan: error: cannot reach the Dask scheduler at "
                                    "tcp://127.0.0.1:9")
