"""MiniMalloc's own test suite, ported: every case of :mod:`tests.minimalloc_cases` must get
MiniMalloc's verdict from cpplan, through the files and commands a MiniMalloc user would use.

The agreement count is the number of passing tests here against the number of cases
(``python -m pytest tests/test_minimalloc_suite.py -q``); cases with MiniMalloc's gaps included.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cpplan import ProblemError, check
from cpplan.cli import main
from cpplan.io import read_plan, read_problem, write_problem
from cpplan.io.minimalloc import parse_problem, plan_to_csv, problem_to_csv
from cpplan.plan import Plan
from cpplan.solve import solve
from tests import minimalloc_cases as mm
from tests.bruteforce import fits as brute_fits


def cases(items) -> list:
    return [pytest.param(c, id=c.name.replace(" ", "-")) for c in items]


def run(*args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


def problem_of(tmp_path, text: str, capacity: int | None = None):
    path = tmp_path / "problem.csv"
    path.write_text(text)
    problem = read_problem(path)
    if capacity is not None:
        problem = problem.with_capacity({problem.pools[0].name: capacity})
    return problem


def with_offsets(text: str, offsets) -> str:
    """MiniMalloc's solution CSV: the problem's CSV with an ``offset`` column."""
    head, *rows = text.splitlines()
    return "\n".join([head + ",offset", *(f"{r},{o}" for r, o in zip(rows, offsets,
                                                                      strict=False))]) + "\n"


def test_every_case_cites_minimalloc():
    for case in mm.all_cases():
        assert case.cites and all(c.split()[0].endswith((".cc", ".py")) for c in case.cites)


@pytest.mark.parametrize("case", cases(mm.SOLVER))
def test_solver_verdicts(case, tmp_path):
    """Does the problem fit in the capacity? A yes is a checked plan; a no is a proof, with
    buffers that cannot fit together (MiniMalloc's irreducible infeasible subset)."""
    problem = problem_of(tmp_path, case.csv, case.capacity)
    plan = solve(problem, time_limit=20, deterministic=True, goal="fit")
    if case.fits:
        assert plan.status in ("optimal", "feasible"), plan.summary()
        assert not check(problem, plan)
        for bid, offset in (case.fixed or {}).items():
            assert plan.placements[bid].offset == offset
        return
    assert plan.status == "infeasible", plan.summary()
    conflict = plan.conflict
    assert conflict is not None and conflict.irreducible, plan.summary()
    if case.conflict is not None:
        assert conflict.buffers == case.conflict
    assert not brute_fits(problem, set(conflict.buffers))
    for b in conflict.buffers:
        assert brute_fits(problem, set(conflict.buffers) - {b})


@pytest.mark.parametrize("case", cases(mm.VALIDATOR))
def test_validator_verdicts(case, tmp_path):
    """``cpplan check`` on the problem and the solution (with its stated height, in cpplan
    JSON; in CSV where the problem has gaps, which JSON cannot hold)."""
    height = None
    if case.gaps:
        (tmp_path / "p.csv").write_text(case.csv)
        (tmp_path / "plan.csv").write_text(with_offsets(case.csv, case.offsets))
        result = run("check", tmp_path / "p.csv", tmp_path / "plan.csv")
    else:
        problem = problem_of(tmp_path, case.csv, case.capacity)
        write_problem(problem, tmp_path / "p.json")
        placements = [{"id": b.id, "pool": "default", "offset": o}
                      for b, o in zip(problem.buffers, case.offsets, strict=False)]
        (tmp_path / "plan.json").write_text(json.dumps({
            "format": "cpplan-plan", "version": 1, "status": "feasible",
            "heights": {"default": case.height}, "placements": placements}))
        result = run("check", tmp_path / "p.json", tmp_path / "plan.json")
        height = max(o + b.size for o, b in zip(case.offsets, problem.buffers, strict=False))
    if case.kind is None:
        assert result.exit_code == 0 and result.stdout.startswith("valid"), result.output
        return
    assert result.exit_code == 1, result.output
    assert f"  {case.kind}: " in result.stderr, result.stderr
    if case.kind == "height":  # the message gives both heights
        assert f"height is {height}, the plan says {case.height}" in result.stderr


@pytest.mark.parametrize("case", cases(mm.OVERLAP))
def test_buffer_overlaps(case, tmp_path):
    """Two buffers that never compete for bytes may share offset 0; otherwise ``b`` may start
    at ``a``'s offset plus the effective size, and not one byte lower."""
    problem = problem_of(tmp_path, case.csv)

    def valid(offsets) -> bool:
        path = tmp_path / "plan.csv"
        path.write_text(with_offsets(case.csv, offsets))
        return not check(problem, read_plan(path, problem))

    if case.effective_size is None:
        assert valid((0, 0))
    else:
        assert not valid((0, 0))
        assert valid((0, case.effective_size))
        assert not valid((0, case.effective_size - 1))


@pytest.mark.parametrize("case", cases(mm.READ))
def test_reading_csv(case, tmp_path):
    path = tmp_path / "in.csv"
    path.write_text(case.text)
    if case.buffers is None:
        with pytest.raises(ProblemError) as e:
            read_plan(path, read_problem(path)) if case.plan else read_problem(path)
        assert f": {case.field}" in str(e.value) or case.field in str(e.value), str(e.value)
        assert " line " in str(e.value)
        return
    problem = read_problem(path)
    got = tuple((b.id, b.start, b.end, b.size, b.alignment, b.offset, b.hint)
                for b in problem.buffers)
    assert got == case.buffers


@pytest.mark.parametrize("case", cases(mm.WRITE))
def test_writing_csv(case):
    problem, solution = parse_problem(case.text)
    if not solution:
        assert problem_to_csv(problem) == case.text
        return
    plan = Plan.build(problem, {k: (problem.pools[0].name, off) for k, (_, off) in
                                solution.items()})
    assert plan_to_csv(problem, plan) == case.text


# -- the command line (python/tests/test_cli.py) --------------------------------------------------

@pytest.fixture
def example(tmp_path):
    path = tmp_path / "input_example.csv"
    path.write_text(mm.CLI_INPUT)
    return path


def test_cli_success_and_validation(example, tmp_path):
    """python/tests/test_cli.py test_success and test_validation: capacity 12 fits, the plan
    is written, and it validates."""
    out = tmp_path / "output.csv"
    result = run("solve", example, "--capacity", "12", "--fit", "-o", out, "-q")
    assert result.exit_code == 0 and out.exists(), result.output
    checked = run("check", example, out)
    assert checked.exit_code == 0 and checked.stdout.startswith("valid"), checked.output


def test_cli_invalid_csv(tmp_path):
    """python/tests/test_cli.py test_invalid_csv: one error line, non-zero exit, no output."""
    path = tmp_path / "input_invalid.csv"
    path.write_text("invalid_header1,invalid_header2\nvalue1,value2\n")
    out = tmp_path / "output.csv"
    result = run("solve", path, "--capacity", "12", "-o", out)
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr.startswith("cpplan: error: ") and len(result.stderr.splitlines()) == 1


def test_cli_invalid_capacity(example, tmp_path):
    """python/tests/test_cli.py test_invalid_capacity: capacity 1 does not fit: non-zero exit,
    no output, and the one line names buffers that cannot fit together."""
    out = tmp_path / "output.csv"
    result = run("solve", example, "--capacity", "1", "--fit", "-o", out, "-q")
    assert result.exit_code == 1 and not out.exists()
    assert len(result.stdout.splitlines()) == 1
    assert "this buffer cannot fit on its own: b" in result.stdout


def test_cli_minimize_capacity(example, tmp_path):
    """python/tests/test_cli.py test_minimize_capacity: the smallest capacity, with its plan."""
    out = tmp_path / "output.csv"
    result = run("solve", example, "-o", out, "-q", "--deterministic")
    assert result.exit_code == 0 and out.exists(), result.output
    assert result.stdout.startswith("optimal: height 12,")
