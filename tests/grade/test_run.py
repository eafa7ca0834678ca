"""Grading on this machine: planners of every kind, the cache of exact results, failures that
stay local, time limits."""

from __future__ import annotations

import json
from pathlib import Path

from cpplan import grade as grading
from cpplan import write_problem
from cpplan.grade import grade, problem_key

from .shared import BROKEN, FIRST_FIT, random_problem


def test_grade_builtin_user_and_broken_planners(instances: list[Path], tmp_path: Path) -> None:
    report = grade(instances, ["naive", FIRST_FIT, BROKEN, "tests.grade.shared:raises",
                               "tests.grade.shared:returns_nonsense"],
                   time_limit=2, cache_dir=tmp_path / "cache")
    assert report.planners == ("naive", "ff", "broken", "tests.grade.shared:raises",
                               "tests.grade.shared:returns_nonsense")
    assert len(report.graded) == 3 and not report.failed
    for inst in report.instances:
        by = {r.planner: r for r in inst.results}
        assert by["naive"].outcome == "ok" and by["ff"].outcome == "ok"
        assert by["broken"].outcome == "invalid" and "share bytes" in by["broken"].message
        assert by["tests.grade.shared:raises"].outcome == "error"
        assert "my allocator has a bug" in by["tests.grade.shared:raises"].message
        assert by["tests.grade.shared:returns_nonsense"].outcome == "invalid"
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
