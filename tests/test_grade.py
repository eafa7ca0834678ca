"""Grading: planners of every kind over small instances, the cache of exact results, failures
that stay local, and the tables."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from cpplan import Alias, Buffer, Pool, Problem, write_plan, write_problem
from cpplan import grade as grading
from cpplan.cli import main
from cpplan.grade import as_plan, grade, parse_planner, plan_file_for, problem_key
from cpplan.planners import get

ROOT = Path(__file__).resolve().parents[1]
FIRST_FIT = f"ff={ROOT / 'examples' / 'first_fit.py'}:plan"
BROKEN = f"broken={ROOT / 'examples' / 'first_fit.py'}:overlapping"


def random_problem(seed: int, n: int = 12, name: str = "") -> Problem:
    rng = random.Random(seed)
    bufs = []
    for i in range(n):
        s = rng.randrange(0, 20)
        bufs.append(Buffer(f"b{i}", rng.choice([8, 16, 24, 32, 64]), s, s + rng.randrange(1, 8)))
    return Problem(tuple(bufs), name=name or f"p{seed}")


@pytest.fixture
def instances(tmp_path: Path) -> list[Path]:
    paths = []
    for seed in range(3):
        p = tmp_path / "inst" / f"p{seed}.json"
        p.parent.mkdir(exist_ok=True)
        write_problem(random_problem(seed), p)
        paths.append(p)
    return paths


# Planners a user could write, for the failure tests (module:function of this very module).
def raises(problem: Problem) -> dict:
    raise RuntimeError("my allocator has a bug")


def returns_nonsense(problem: Problem) -> object:
    return [1, 2, 3]


def pooled(problem: Problem) -> dict:
    """id -> (pool, offset), stacking every buffer (valid, never good)."""
    out, top = {}, 0
    for b in problem.buffers:
        out[b.id] = (problem.pools[0].name, top)
        top += b.size
    return out


def test_grade_builtin_user_and_broken_planners(instances: list[Path], tmp_path: Path) -> None:
    report = grade(instances, ["naive", FIRST_FIT, BROKEN, "tests.test_grade:raises",
                               "tests.test_grade:returns_nonsense"],
                   time_limit=2, cache_dir=tmp_path / "cache")
    assert report.planners == ("naive", "ff", "broken", "tests.test_grade:raises",
                               "tests.test_grade:returns_nonsense")
    assert len(report.graded) == 3 and not report.failed
    for inst in report.instances:
        by = {r.planner: r for r in inst.results}
        assert by["naive"].outcome == "ok" and by["ff"].outcome == "ok"
        assert by["broken"].outcome == "invalid" and "share bytes" in by["broken"].message
        assert by["tests.test_grade:raises"].outcome == "error"
        assert "my allocator has a bug" in by["tests.test_grade:raises"].message
        assert by["tests.test_grade:returns_nonsense"].outcome == "invalid"
        # Ratios: nothing beats the lower bound, the best known is the lowest valid height.
        ok = [r for r in inst.results if r.outcome == "ok"]
        assert inst.best_known == min([r.objective for r in ok] + [inst.reference.objective])
        for r in ok:
            assert inst.ratio_bound(r) >= 1.0 and inst.ratio_best(r) >= 1.0
            assert inst.optimal(r) == (r.objective == inst.lower_bound)
    summary = {s.planner: s for s in report.summary()}
    assert summary["ff"].solved == 3 and summary["broken"].solved == 0
    assert summary["broken"].failures == {"invalid": 3}
    assert summary["ff"].geomean_best <= summary["naive"].geomean_best
    assert summary["ff"].wins + summary["naive"].wins >= 3
    md = report.to_markdown()
    assert "## Summary" in md and "| ff |" in md and "invalid" in md
    assert md.count("\n| p") >= 6  # per-instance rows and detail rows for the three instances
    rows = report.rows()
    assert len(rows) == 3 * 5 and {r["outcome"] for r in rows} == {"ok", "invalid", "error"}
    assert report.to_csv().splitlines()[0].startswith("instance,buffers,planner,outcome")
    assert json.loads(report.to_json())["format"] == "cpplan-grade"


def test_reference_is_cached_by_content(instances: list[Path], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    before = grading.SOLVES
    first = grade(instances, ["naive"], time_limit=2, cache_dir=cache)
    assert grading.SOLVES - before == 3
    assert all(not i.reference.cached for i in first.instances)
    records = sorted(cache.glob("*.json"))
    assert len(records) == 6  # a record and a plan per instance
    stamps = {p: p.stat().st_mtime_ns for p in records}
    second = grade(instances, ["naive"], time_limit=2, cache_dir=cache)
    assert grading.SOLVES - before == 3  # nothing solved again
    assert all(i.reference.cached for i in second.instances)
    assert {p: p.stat().st_mtime_ns for p in records} == stamps
    assert [i.best_known for i in second.instances] == [i.best_known for i in first.instances]
    assert "from the cache" in second.to_markdown()
    # A longer time limit asks again unless the cached result is final (optimal).
    third = grade(instances[:1], ["naive"], time_limit=5, cache_dir=cache)
    assert third.instances[0].reference.cached == (first.instances[0].reference.status
                                                    == "optimal")
    # The same content under another name is the same key; other content is not.
    p = random_problem(0)
    assert problem_key(p) == problem_key(p.replace(name="other", meta={"from": "x"}))
    assert problem_key(p) != problem_key(random_problem(1))


def test_failing_instances_do_not_lose_the_others(instances: list[Path], tmp_path: Path) -> None:
    bad = tmp_path / "inst" / "bad.csv"
    bad.write_text("id,lower,upper,size\na,0,x,3\n")
    crash = tmp_path / "crash.py"
    crash.write_text("import os\n\ndef plan(problem):\n"
                     "    if problem.name == 'p1':\n        os._exit(3)\n"
                     "    return {b.id: i * 64 for i, b in enumerate(problem.buffers)}\n")
    seen = []
    report = grade([*instances, bad], ["naive", f"crash={crash}:plan"], time_limit=0, jobs=2,
                   cache_dir=None, progress=lambda d, t, r: seen.append((d, t, r.name)))
    assert [s[:2] for s in seen] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert {s[2] for s in seen} == {"p0", "p1", "p2", "bad"}
    failed = {i.name: i.error for i in report.failed}
    assert set(failed) == {"p1", "bad"}
    assert "exit code 3" in failed["p1"] and "not an integer" in failed["bad"]
    assert [i.name for i in report.graded] == ["p0", "p2"]
    assert all(r.outcome == "ok" for i in report.graded for r in i.results)
    md = report.to_markdown()
    assert "could not be graded" in md and "**bad**" in md


def test_user_dicts_are_wrapped_and_checked() -> None:
    problem = Problem(
        (Buffer("x", 64, 0, 4, alignment=16), Buffer("y", 32, 1, 3, alignment=16),
         Buffer("z", 64, 2, 6, alignment=16, pools=("dram",))),
        (Pool("sram", capacity=128), Pool("dram")), (Alias("y", "x", 32),))
    # y is aliased into x: left out, it follows its root.
    plan = as_plan(problem, {"x": ("sram", 0), "z": 0}, planner="mine")
    assert plan.placements["y"] == ("sram", 32) and plan.placements["z"] == ("dram", 0)
    assert plan.heights == {"sram": 64, "dram": 64}
    with pytest.raises(grading.PlanError, match="alignment"):
        as_plan(problem, {"x": ("sram", 8), "z": ("dram", 0)})
    with pytest.raises(grading.PlanError, match="capacity"):
        as_plan(problem, {"x": ("sram", 96), "z": ("dram", 0)})
    with pytest.raises(grading.PlanError, match="expected a Plan"):
        as_plan(problem, None)
    single = random_problem(3)
    assert as_plan(single, pooled(single)).objective == sum(b.size for b in single.buffers)


def test_plan_files_are_matched_by_instance_name(instances: list[Path], tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    plans.mkdir()
    p0 = random_problem(0)
    write_plan(p0, get("naive")(p0), plans / "p0.plan.json")
    assert plan_file_for(plans, instances[0]) == plans / "p0.plan.json"
    assert plan_file_for(plans, instances[1]) is None
    assert plan_file_for(instances[0].parent, instances[0]) is None  # never the problem itself
    report = grade(instances[:2], [parse_planner(f"plans:{plans}")], time_limit=0)
    cells = [i.results[0].outcome for i in report.instances]
    assert cells == ["ok", "missing"]
    assert report.planners == ("plans:plans",)


def test_cli_grade_writes_markdown(instances: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "grade.md"
    result = CliRunner().invoke(main, [
        "grade", str(instances[0].parent), "-p", "naive", "-p", FIRST_FIT, "--time-limit", "1",
        "--cache", str(tmp_path / "c"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.startswith("# cpplan grade: 2 planners on 3 instances")
    assert "| naive |" in text and "| ff |" in text
    assert "grade: 3/3" in result.output  # progress (stderr is mixed in by CliRunner)
    csv_out = tmp_path / "grade.csv"
    result = CliRunner().invoke(main, ["grade", str(instances[0]), "-p", "naive", "-q",
                                       "--time-limit", "0", "-o", str(csv_out)])
    assert result.exit_code == 0 and csv_out.read_text().startswith("instance,")
    result = CliRunner().invoke(main, ["grade", str(instances[0]), "-p", "nosuch"])
    assert result.exit_code == 2 and "unknown planner 'nosuch'" in result.output
    result = CliRunner().invoke(main, ["grade", str(instances[0]), "-p", "nosuchmod:fn"])
    assert result.exit_code == 2 and "cannot import 'nosuchmod'" in result.output


def test_a_planner_over_its_time_limit_costs_its_cell_alone(tmp_path: Path) -> None:
    # Nothing places 400 buffers in 0 s: the cell says timeout; given a minute, naive is graded.
    write_problem(random_problem(7, n=400), tmp_path / "big.json")
    report = grade([tmp_path / "big.json"], ["usmp-hill-climb", "naive"], time_limit=0,
                   planner_time_limit=0.0)
    cells = {r.planner: r for r in report.instances[0].results}
    assert cells["usmp-hill-climb"].outcome == "timeout"
    assert "within 0 s" in cells["usmp-hill-climb"].message
    report = grade([tmp_path / "big.json"], ["naive"], time_limit=0, planner_time_limit=60)
    assert report.instances[0].results[0].outcome == "ok"
