"""cpplan's native JSON format: everything the model expresses round-trips; bad files are named."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cpplan import Alias, Buffer, FormatError, Plan, PlanError, Pool, Problem, ProblemError
from cpplan.io import read_plan, read_problem, write_plan, write_problem
from cpplan.io.atomic import write_text_atomic
from cpplan.io.native import plan_from_dict, plan_to_dict, problem_from_dict, problem_to_dict
from tests.strategies import json_ids, problems, valid_plans

EXAMPLE = Problem(
    (Buffer("x", 1024, 0, 3, alignment=64, pools=("sram", "dram"), hint=0),
     Buffer("y", 512, 2, 4, offset=512, pools=("sram",)),
     Buffer("z", 256, 1, 2)),
    (Pool("sram", 262144, 64, 1), Pool("dram", None, 4096, 8)),
    (Alias("z", "x", 512),), name="example", meta={"from": "a test", "steps": [0, 4]})


def write_json(path, data) -> None:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


# -- round trips ----------------------------------------------------------------------------------

def test_example_round_trips(tmp_path):
    path = tmp_path / "example.json"
    write_problem(EXAMPLE, path)
    assert read_problem(path) == EXAMPLE
    data = json.loads(path.read_text())
    assert data["format"] == "cpplan-problem" and data["version"] == 1


@given(problems(ids=json_ids))
def test_problems_round_trip(problem):
    data = json.loads(json.dumps(problem_to_dict(problem)))
    assert problem_from_dict(data) == problem


@given(problems(ids=json_ids, max_buffers=4))
def test_problems_round_trip_through_files(tmp_path_factory, problem):
    path = tmp_path_factory.mktemp("json") / "some problem.json"
    write_problem(problem, path)
    back = read_problem(path)
    assert back == (problem if problem.name else problem.replace(name="some problem"))
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind


@given(st.data())
def test_plans_round_trip(data):
    problem = data.draw(problems(ids=json_ids))
    plan = data.draw(valid_plans(problem))
    plan = plan.with_record(
        planner=data.draw(st.sampled_from(["naive", "best-fit", ""])),
        seconds=data.draw(st.floats(0, 100, allow_nan=False)),
        explanation=data.draw(st.text("ab \n\"é", max_size=5)),
        stats={"nodes": data.draw(st.integers(0, 9)), "note": "x"})
    back = plan_from_dict(json.loads(json.dumps(plan_to_dict(plan))), problem)
    assert back.placements == plan.placements
    assert back.heights == plan.heights and back.objective == plan.objective
    assert (back.planner, back.lower_bound, back.status, back.explanation, back.stats) == (
        plan.planner, plan.lower_bound, plan.status, plan.explanation, plan.stats)
    assert back.seconds == pytest.approx(plan.seconds, abs=1e-6)


def test_plan_files_round_trip(tmp_path):
    plan = Plan.build(EXAMPLE, {"x": ("dram", 0), "y": ("sram", 512), "z": ("dram", 512)},
                      planner="hand", lower_bound=1024 + 8 * 1024, seconds=0.25)
    write_plan(EXAMPLE, plan, tmp_path / "plan.json")
    back = read_plan(tmp_path / "plan.json", EXAMPLE)
    assert back == plan and back.status == "optimal"


def test_an_invalid_plan_is_never_written(tmp_path):
    # x and y share bytes [512, 1024) of sram during step 2: the writer refuses, no file.
    plan = Plan.build(EXAMPLE, {"x": ("sram", 0), "y": ("sram", 512), "z": ("sram", 512)})
    with pytest.raises(PlanError, match="share bytes"):
        write_plan(EXAMPLE, plan, tmp_path / "plan.json")
    assert not list(tmp_path.iterdir())


def test_infeasible_plan_round_trips():
    plan = Plan.infeasible(EXAMPLE, "no room", planner="exact")
    back = plan_from_dict(plan_to_dict(plan), EXAMPLE)
    assert (back.status, back.explanation, back.placements) == ("infeasible", "no room", {})


def test_a_claim_of_optimality_needs_its_numbers():
    plan = Plan.build(EXAMPLE, {"x": ("sram", 0), "y": ("sram", 512), "z": ("sram", 512)},
                      lower_bound=100)
    data = plan_to_dict(plan) | {"status": "optimal"}
    assert plan_from_dict(data, EXAMPLE).status == "feasible"


def test_fields_at_their_defaults_may_be_left_out():
    p = problem_from_dict({"format": "cpplan-problem", "version": 1,
                           "buffers": [{"id": 1, "size": 8, "start": 0, "end": 1}]})
    assert p == Problem((Buffer("1", 8, 0, 1),))
    assert "aliases" not in problem_to_dict(p) and "alignment" not in problem_to_dict(p)[
        "buffers"][0]
    plan = plan_from_dict({"format": "cpplan-plan", "version": 1,
                           "placements": [{"id": "1", "offset": 8}]}, p)
    assert plan.placements == {"1": ("default", 8)} and plan.heights == {"default": 16}


# -- malformed files ------------------------------------------------------------------------------

def test_malformed_json_gives_the_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "cpplan-problem",\n "version": 1,\n "buffers": [}\n')
    with pytest.raises(FormatError, match=r"bad.json line 3: malformed JSON") as e:
        read_problem(path)
    assert e.value.line == 3


@pytest.mark.parametrize("change,match", [
    ({"format": "cpplan-plan"}, "format: not a cpplan problem"),
    ({"version": 2}, "version: unsupported version 2"),
    ({"extra": 1}, None),
    ({"buffers": {"x": 1}}, "buffers: expected list"),
    ({"pools": "sram"}, "pools: expected list"),
    ({"meta": []}, "meta: expected dict"),
])
def test_bad_top_level(change, match):
    data = problem_to_dict(EXAMPLE) | change
    if match is None:  # unknown top-level fields are tolerated (room for later versions)
        problem_from_dict(data)
        return
    with pytest.raises(FormatError, match=match):
        problem_from_dict(data, source="p.json")


def test_not_an_object():
    with pytest.raises(FormatError, match="top level: expected dict"):
        problem_from_dict([1, 2])


def buffers_with(**fields):
    data = problem_to_dict(EXAMPLE)
    data["buffers"][1].update(fields)
    return data


@pytest.mark.parametrize("fields,field,match", [
    ({"size": -8}, "size", ">= 0"),
    ({"size": 8.5}, "size", "must be an integer"),
    ({"size": "8"}, "size", "must be an integer"),
    ({"end": 2}, "end", "must be > start"),
    ({"alignment": 0}, "alignment", "positive"),
    ({"pools": ["l2"]}, "pools", "unknown pool 'l2'"),
    ({"pools": "sram"}, "pools", "list of pool names"),
    ({"offset": 100}, "offset", "multiple"),
    ({"id": "x"}, "id", "duplicate id"),
    ({"colour": "red"}, "buffers[1]", "unknown field 'colour'"),
])
def test_bad_buffer_fields_name_the_file_buffer_and_field(fields, field, match):
    with pytest.raises(ProblemError, match=match) as e:
        problem_from_dict(buffers_with(**fields), source="p.json")
    assert e.value.source == "p.json" and e.value.field == field
    assert str(e.value).startswith("p.json")
    if field != "buffers[1]":
        assert e.value.buffer in ("y", "x")


def test_missing_buffer_field():
    data = problem_to_dict(EXAMPLE)
    del data["buffers"][2]["size"]
    with pytest.raises(FormatError, match=r"buffers\[2\]\.size: missing"):
        problem_from_dict(data)


def test_bad_aliases_and_pools():
    data = problem_to_dict(EXAMPLE)
    data["aliases"] = [{"buffer": "z", "root": "x", "displacement": 896}]
    with pytest.raises(ProblemError, match="overhangs"):
        problem_from_dict(data)
    data["aliases"] = [{"buffer": "z", "root": "x"}, {"buffer": "x", "root": "z"}]
    with pytest.raises(ProblemError, match="alias cycle"):
        problem_from_dict(data)
    data["aliases"] = [{"buffer": "z"}]
    with pytest.raises(FormatError, match=r"aliases\[0\]\.root: missing"):
        problem_from_dict(data)
    data = problem_to_dict(EXAMPLE)
    data["pools"][0]["capacity"] = 1000  # fixed y ends at 1024
    with pytest.raises(ProblemError, match="capacity 1000"):
        problem_from_dict(data)
    del data["pools"][0]["name"]
    with pytest.raises(FormatError, match=r"pools\[0\].name: missing"):
        problem_from_dict(data)


@pytest.mark.parametrize("change,match", [
    ({"format": "cpplan-problem"}, "not a cpplan plan"),
    ({"version": 0}, "unsupported version"),
    ({"status": "great"}, "unknown status"),
    ({"placements": [{"id": "x", "offset": "0"}]}, "offset: must be an integer"),
    ({"placements": [{"id": "x", "offset": 0}, {"id": "x", "offset": 0}]}, "placed twice"),
    ({"placements": [{"id": "w", "offset": 0}]}, "buffer 'w'.*not a buffer of the problem"),
    ({"placements": [{"id": "x"}]}, "needs 'id' and 'offset'"),
    ({"placements": {"x": 0}}, "placements: expected list"),
    ({"seconds": "fast"}, "seconds: must be a number"),
    ({"lower_bound": "1024", "status": "optimal"}, "lower_bound: must be an integer"),
    ({"lower_bound": 1.5}, "lower_bound: must be an integer"),
    ({"stats": [1]}, "stats: expected dict"),
])
def test_bad_plans(change, match):
    plan = Plan.build(EXAMPLE, {"x": ("sram", 0), "y": ("sram", 512), "z": ("sram", 512)})
    with pytest.raises(FormatError, match=match):
        plan_from_dict(plan_to_dict(plan) | change, EXAMPLE)


def test_atomic_write_leaves_nothing_half_written(tmp_path):
    path = tmp_path / "out.json"
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(path, '{"a": "\udc80"}')
    assert list(tmp_path.iterdir()) == []
    path.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(path, "\udc80")
    assert path.read_text() == "old" and list(tmp_path.iterdir()) == [path]


# -- anything at all: a problem or a clear error, never a crash -----------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**64) | st.floats(allow_nan=False)
    | st.text("ab0 ", max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner,
                                                                 max_size=3),
    max_leaves=6)


def mutate(data, draw):
    """``data`` with one value somewhere inside replaced by an arbitrary JSON value."""
    if isinstance(data, dict) and data and draw(st.integers(0, 2)):
        key = draw(st.sampled_from(sorted(data)))
        return data | {key: mutate(data[key], draw)}
    if isinstance(data, list) and data and draw(st.integers(0, 2)):
        k = draw(st.integers(0, len(data) - 1))
        return [*data[:k], mutate(data[k], draw), *data[k + 1:]]
    return draw(json_values)


@given(st.data())
def test_mutated_files_give_a_problem_or_a_clear_error(data):
    source = data.draw(st.sampled_from([EXAMPLE, Problem((Buffer("a", 8, 0, 1),))]))
    broken = mutate(problem_to_dict(source), data.draw)
    with contextlib.suppress(ProblemError):
        problem_from_dict(broken)
    plan = Plan.build(EXAMPLE, {"x": ("sram", 0), "y": ("sram", 512), "z": ("sram", 512)},
                      lower_bound=10, stats={"n": 1})
    broken = mutate(plan_to_dict(plan), data.draw)
    try:
        back = plan_from_dict(broken, EXAMPLE)
    except ProblemError:
        return
    plan_to_dict(back)  # whatever was read can be written
    back.summary()


# -- stated heights -------------------------------------------------------------------------------

def test_a_plan_file_keeps_its_stated_heights(tmp_path):
    """A runtime allocates the height a plan states: reading keeps it, the checker compares."""
    from cpplan import check

    problem = Problem((Buffer("a", 8, 0, 2), Buffer("b", 8, 1, 3)), (Pool("sram", 64),))
    plan = Plan.build(problem, {"a": ("sram", 0), "b": ("sram", 8)})
    data = plan_to_dict(plan)
    assert plan_from_dict(data, problem).heights == {"sram": 16}
    assert not check(problem, plan_from_dict(data, problem))
    for stated in (12, 20):
        got = plan_from_dict({**data, "heights": {"sram": stated}}, problem)
        assert got.heights == {"sram": stated} and got.objective == stated
        (bad,) = check(problem, got)
        assert bad.kind == "height" and "16" in bad.message and str(stated) in bad.message
    without = {k: v for k, v in data.items() if k != "heights"}
    assert plan_from_dict(without, problem).heights == {"sram": 16}
    with pytest.raises(FormatError, match="heights: no pool 'dram'"):
        plan_from_dict({**data, "heights": {"dram": 16}}, problem)
    with pytest.raises(FormatError, match="pool 'sram': heights: must be an integer"):
        plan_from_dict({**data, "heights": {"sram": "16"}}, problem)


def test_an_infeasible_plan_keeps_its_conflict():
    from cpplan.plan import Conflict

    problem = Problem((Buffer("a", 8, 0, 2), Buffer("b", 8, 1, 3)), (Pool("sram", 12),))
    plan = Plan.infeasible(problem, "too small", conflict=Conflict(("a", "b"), True, "max-load"))
    data = json.loads(json.dumps(plan_to_dict(plan)))
    assert data["conflict"] == {"buffers": ["a", "b"], "irreducible": True, "how": "max-load"}
    assert plan_from_dict(data, problem).conflict == plan.conflict
    with pytest.raises(FormatError, match="buffer 'zz': conflict"):
        plan_from_dict({**data, "conflict": {"buffers": ["zz"]}}, problem)
