"""Which planners: user dicts wrapped and checked, plan files matched by instance name."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpplan import Alias, Buffer, Pool, Problem, write_plan
from cpplan import grade as grading
from cpplan.grade import as_plan, grade, parse_planner, plan_file_for
from cpplan.planners import get

from .shared import pooled, random_problem


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
    assert report.planners == ("plans",)  # the column: the folder's name


def test_every_name_of_the_one_file_grader_is_still_there() -> None:
    # What `from cpplan.grade import ...` gave before grading became a package (run_cli, the
    # CLI's glue, moved into cpplan.cli).
    names = ["PlannerSpec", "Reference", "Result", "InstanceReport", "PlannerSummary", "Report",
             "parse_planner", "default_planners", "find_instances", "problem_key", "reference",
             "cached_plan", "grade", "grade_instance", "plan_file_for", "as_plan",
             "default_cache_dir", "Progress", "OUTCOMES", "load_function", "ENGINE", "SOLVES",
             "PlanError", "CpplanError", "CapacityError"]
    missing = [n for n in names if not hasattr(grading, n)]
    assert not missing
    assert callable(grading.grade) and callable(grading.reference)
    assert isinstance(grading.SOLVES, int)
