"""MiniMalloc's CSV: what it holds round-trips, the public benchmarks read, bad lines are named."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpplan import Alias, Buffer, FormatError, Plan, PlanError, Pool, Problem, ProblemError
from cpplan import max_load as max_load_of
from cpplan.io import minimalloc, read_plan, read_problem, write_plan, write_problem
from cpplan.io.minimalloc import parse_problem, plan_to_csv, problem_to_csv
from tests.shared import benchmark
from tests.strategies import csv_problems, problems, valid_plans


def parse(text: str) -> Problem:
    return parse_problem(text, source="t.csv")[0]


def test_minimalloc_problem():
    p = parse("id,lower,upper,size\n0,0,3,1024\n1,2,4,512\n")
    assert p.buffers == (Buffer("0", 1024, 0, 3), Buffer("1", 512, 2, 4))
    assert p.pools == (Pool(),)


def test_a_traffic_column_is_read_and_written():
    text = "id,lower,upper,size,traffic\na,0,3,1024,4096\nb,2,4,512,0\n"
    p = parse(text)
    assert p.buffers == (Buffer("a", 1024, 0, 3, traffic=4096), Buffer("b", 512, 2, 4))
    with mock.patch.object(minimalloc, "_plain", lambda text, name: None):
        assert parse(text) == p  # the line-by-line path reads it the same
    assert problem_to_csv(p) == text
    with pytest.raises(FormatError, match="traffic"):
        parse("id,lower,upper,size,traffic,hint\na,0,3,1024,-4,-1\n")


def test_optional_columns_and_solutions():
    text = "id,lower,upper,size,alignment,hint,offset\na,0,3,1024,64,-1,0\nb,2,4,512,1,2048,1024\n"
    p, solution = parse_problem(text)
    assert p.buffers == (Buffer("a", 1024, 0, 3, alignment=64), Buffer("b", 512, 2, 4, hint=2048))
    assert solution == {"a": (None, 0), "b": (None, 1024)}


def test_column_names_and_order(tmp_path):
    # Case, order and MiniMalloc's synonyms; an 'end' column is inclusive, as in MiniMalloc.
    p = parse("Size,Buffer,Begin,End\n1024,a,0,2\n")
    assert p.buffers == (Buffer("a", 1024, 0, 3),)
    p = parse("\n\nsize,upper,lower,id,comment\n8,5,4,x,anything\n")  # unknown columns ignored
    assert p.buffers == (Buffer("x", 8, 4, 5),)


def test_empty_gaps_read_and_gaps_are_read():
    assert parse("id,lower,upper,size,gaps\na,0,2,8,\n").buffers == (Buffer("a", 8, 0, 2),)
    got = parse("id,lower,upper,size,gaps\na,0,2,8,\nb,0,4,8,1-2 2-3@0:4\n").buffers[1]
    assert got == Buffer("b", 8, 0, 4, gaps=((1, 2), (2, 3, 0, 4)))
    with pytest.raises(FormatError, match="line 3, buffer 'b': gaps: '1:2' is not a gap"):
        parse("id,lower,upper,size,gaps\na,0,2,8,\nb,0,4,8,1:2\n")


def test_an_offset_column_fixes_offsets_in_a_problem(tmp_path):
    """MiniMalloc reads offsets in a problem as fixed; an empty cell leaves the buffer free."""
    path = tmp_path / "p.csv"
    path.write_text("id,lower,upper,size,alignment,offset\na,0,3,16,8,8\nb,2,4,8,1,\n")
    problem = read_problem(path)
    assert problem.buffers == (Buffer("a", 16, 0, 3, alignment=8, offset=8), Buffer("b", 8, 2, 4))
    path.write_text("id,lower,upper,size,alignment,offset\na,0,3,16,8,4\n")
    with pytest.raises(FormatError, match="line 2, buffer 'a': offset"):
        read_problem(path)
    path.write_text("id,lower,upper,size,offset\na,0,3,16,0\nb,2,4,8,8\n")
    with pytest.raises(ProblemError, match="line 2, buffer 'a'.*overlaps fixed buffer 'b'"):
        read_problem(path)


# -- round trips ----------------------------------------------------------------------------------

@given(csv_problems())
def test_problems_round_trip(problem):
    back = parse(problem_to_csv(problem))
    assert back.buffers == problem.buffers
    assert back.pools == (Pool(),) and back.aliases == ()


@given(csv_problems(max_buffers=4))
def test_problems_round_trip_through_files(tmp_path_factory, problem):
    path = tmp_path_factory.mktemp("csv") / "net.csv"
    write_problem(problem, path)
    back = read_problem(path)
    assert back.buffers == problem.buffers and back.name == "net"


@given(st.data())
def test_plans_round_trip(data):
    """Plans keep every placement (with a pool column when there are several pools)."""
    problem = data.draw(problems(ids=st.text("abcXYZ019_-", min_size=1, max_size=4)))
    plan = data.draw(valid_plans(problem))
    text = plan_to_csv(problem, plan)
    assert text.splitlines()[0].endswith(",offset")
    assert ("pool" in text.splitlines()[0]) == (len(problem.pools) > 1)
    path_free, solution = parse_problem(text)
    assert [b.id for b in path_free.buffers] == [b.id for b in problem.buffers]
    assert {k: v[1] for k, v in solution.items()} == {k: v.offset
                                                      for k, v in plan.placements.items()}


@given(st.data())
def test_plan_files_round_trip(tmp_path_factory, data):
    problem = data.draw(problems(ids=st.text("abcXYZ019_-", min_size=1, max_size=4),
                                 max_buffers=5))
    plan = data.draw(valid_plans(problem))
    path = tmp_path_factory.mktemp("csv") / "plan.csv"
    write_plan(problem, plan, path)
    back = read_plan(path, problem)
    assert back.placements == plan.placements and back.heights == plan.heights


def test_a_minimalloc_solution_is_a_plan(tmp_path):
    problem = parse("id,lower,upper,size\n0,0,2,64\n1,1,3,32\n")
    path = tmp_path / "solution.csv"
    path.write_text("id,lower,upper,size,offset\n0,0,2,64,0\n1,1,3,32,64\n")
    plan = read_plan(path, problem)
    assert plan.placements == {"0": ("default", 0), "1": ("default", 64)}
    assert plan.heights == {"default": 96}


# -- the shared benchmarks ------------------------------------------------------------------------

# Buffer counts and max-loads published with the instances (shared/benchmarks/README.md).
PUBLISHED = {
    ("minimalloc-challenging", "A.1048576.csv"): (154, 1048576),
    ("minimalloc-challenging", "C.1048576.csv"): (203, 1039360),
    ("minimalloc-challenging", "D.1048576.csv"): (213, 986112),
    ("minimalloc-challenging", "J.1048576.csv"): (409, 989184),
    ("minimalloc-challenging", "K.1048576.csv"): (454, 1048576),
    ("idealloc", "resnet50.csv"): (1042, 1515472556),
    ("idealloc", "G_1.csv"): (816, 3030937746),
    ("idealloc", "pangu_2.6B.csv"): (18692, 5530099775),
}


@pytest.mark.parametrize("folder,name", sorted(PUBLISHED))
def test_reads_the_shared_benchmarks(folder, name):
    problem = read_problem(benchmark(folder, name))
    buffers, load = PUBLISHED[folder, name]
    assert len(problem.buffers) == buffers
    assert max_load_of(problem)["default"].bytes == load
    assert problem.name == name.removesuffix(".csv")
    again = parse(problem_to_csv(problem))
    assert again.buffers == problem.buffers


# -- malformed files ------------------------------------------------------------------------------

@pytest.mark.parametrize("text,line,field,match", [
    ("", 1, None, "empty file"),
    ("\n  \n", 1, None, "empty file"),
    ("id,lower,size\n", 1, "header", "no 'upper' column"),
    ("id,lower,upper,size,size\n", 1, "header", "appears twice"),
    ("id,lower,upper,size\na,0,1\n", 2, None, "expected 4 fields, got 3"),
    ("id,lower,upper,size\na,0,1,8,9\n", 2, None, "expected 4 fields, got 5"),
    ("id,lower,upper,size\na,0,1,8\n\nb,0,1,x\n", 4, "size", "not an integer: 'x'"),
    ("id,lower,upper,size\na,0,1,1.5\n", 2, "size", "not an integer"),
    ("id,lower,upper,size\na,0,1,-8\n", 2, "size", ">= 0"),
    ("id,lower,upper,size\na,3,3,8\n", 2, "upper", "must be > start"),
    ("id,lower,upper,size\na,0,1,8\nb,0,1,8\na,0,1,8\n", 4, "id",
     r"duplicate id \(first on line 2\)"),
    ("id,lower,upper,size\n,0,1,8\n", 2, "id", "empty id"),
    ("id,lower,upper,size,alignment\na,0,1,8,0\n", 2, "alignment", "positive"),
    ("id,lower,upper,size,alignment\na,0,1,8,x\n", 2, "alignment", "not an integer"),
    ("id,lower,upper,size,hint\na,0,1,8,-5\n", 2, "hint", ">= 0"),
])
def test_malformed_lines_are_named(text, line, field, match):
    with pytest.raises(FormatError, match=match) as e:
        parse(text)
    assert e.value.line == line and e.value.field == field
    assert str(e.value).startswith(f"t.csv line {line}")


@pytest.mark.parametrize("problem,match", [
    (Problem((Buffer("a", 8, 0, 1), Buffer("v", 8, 0, 1)), aliases=(Alias("v", "a"),)),
     "aliases"),
    (Problem((Buffer("a", 8, 0, 1, offset=0),)), "fixed offsets"),
    (Problem((Buffer("a", 8, 0, 1),), (Pool("x"), Pool("y"))), "one plain pool"),
    (Problem((Buffer("a", 8, 0, 1),), (Pool("x", 64),)), "one plain pool"),
    (Problem((Buffer("a", 8, 0, 1),), (Pool("x", alignment=8),)), "one plain pool"),
    (Problem((Buffer("a,b", 8, 0, 1),)), "comma"),
    (Problem((Buffer(" a", 8, 0, 1),)), "blanks"),
    (Problem((Buffer("a\u2028b", 8, 0, 1),)), "line break"),
])
def test_what_csv_cannot_hold_is_refused_and_nothing_written(tmp_path, problem, match):
    with pytest.raises(ProblemError, match=match):
        write_problem(problem, tmp_path / "out.csv")
    assert list(tmp_path.iterdir()) == []


def plan_file(tmp_path, text: str):
    path = tmp_path / "plan.csv"
    path.write_text(text)
    return path


TWO = Problem((Buffer("a", 64, 0, 2), Buffer("b", 32, 1, 3)))


@pytest.mark.parametrize("text,match", [
    ("id,lower,upper,size\na,0,2,64\n", "needs an 'offset' column"),
    ("id,offset,lower,upper,size\na,x,0,2,64\n", "line 2, buffer 'a': offset: not an integer"),
    ("id,lower,upper,size,offset\na,0,2,64,0\na,0,2,64,0\n", "line 3, buffer 'a': id: duplicate"),
    ("id,lower,upper,size,offset\na,0,2,64,0\nc,1,3,32,64\n",
     "line 3, buffer 'c': id: not a buffer of the problem"),
])
def test_malformed_plans(tmp_path, text, match):
    with pytest.raises(FormatError, match=match):
        read_plan(plan_file(tmp_path, text), TWO)


def test_a_plan_missing_a_buffer_reads_but_does_not_write(tmp_path):
    plan = read_plan(plan_file(tmp_path, "id,lower,upper,size,offset\na,0,2,64,0\n"), TWO)
    assert plan.placements == {"a": ("default", 0)}
    with pytest.raises(PlanError, match="'b' has no placement"):
        write_plan(TWO, plan, tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()


def test_plan_in_several_pools(tmp_path):
    p = Problem((Buffer("a", 64, 0, 2), Buffer("b", 32, 1, 3)), (Pool("x"), Pool("y")))
    plan = Plan.build(p, {"a": ("y", 0), "b": ("x", 0)})
    write_plan(p, plan, tmp_path / "plan.csv")
    assert (tmp_path / "plan.csv").read_text().splitlines()[0] == "id,lower,upper,size,pool,offset"
    assert read_plan(tmp_path / "plan.csv", p).placements == plan.placements


@given(st.data())
def test_mutated_files_give_a_problem_or_a_clear_error(data):
    text = "id,lower,upper,size,alignment,hint,offset\na,0,3,1024,64,-1,0\nb,2,4,512,1,2048,1024\n"
    k = data.draw(st.integers(0, len(text)))
    cut = data.draw(st.integers(0, 4))
    junk = data.draw(st.text(",\n -019ax_.", max_size=4))
    broken = text[:k] + junk + text[k + cut:]
    try:
        problem, solution = parse_problem(broken, source="t.csv")
    except FormatError as e:
        assert e.line is not None and str(e).startswith("t.csv line")
        return
    except ProblemError as e:  # a problem-level error, located at its buffer's line
        assert e.line is not None, str(e)
        return
    assert all(isinstance(off, int) for _, off in solution.values())
    problem_to_csv(problem)


@settings(max_examples=60, deadline=None)
@given(csv_problems(hints=False), st.booleans())
def test_the_fast_path_reads_what_the_line_by_line_path_reads(problem, inclusive):
    """Plain files take a one-regex path (``minimalloc._plain``); it must agree exactly."""
    text = problem_to_csv(problem)
    if inclusive:  # MiniMalloc's inclusive end column
        head, *rows = [line.split(",") for line in text.splitlines()]
        head[2] = "end"
        text = "".join(",".join([*r[:2], str(int(r[2]) - 1), *r[3:]]) + "\n" for r in rows)
        text = ",".join(head) + "\n" + text
    fast = parse_problem(text)[0]
    if problem.buffers:  # (the fast path did read it)
        assert minimalloc._plain(text, "") is not None
    with mock.patch.object(minimalloc, "_plain", lambda text, name: None):
        slow = parse_problem(text)[0]
    assert fast == slow
    assert fast.buffers == problem.buffers
