"""The ``cpplan`` command: info, check, convert, and one clear line for every user error."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from cpplan import Alias, Buffer, Plan, Pool, Problem
from cpplan.cli import main
from cpplan.io import minimalloc, native, read_plan, read_problem, write_plan, write_problem
from tests.shared import benchmark
from tests.strategies import naive_plan


def run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_user_error(result, *, contains: tuple[str, ...] = ()):
    """Exit 2, exactly one line on stderr, no traceback."""
    lines = result.stderr.splitlines()
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert len(lines) == 1, lines
    assert lines[0].startswith("cpplan: error: "), lines
    assert "Traceback" not in result.output
    for text in contains:
        assert text in lines[0], (text, lines[0])
    return lines[0]


PROBLEM = Problem((Buffer("a", 64, 0, 4), Buffer("b", 32, 2, 6, alignment=16),
                   Buffer("c", 64, 4, 8)))


@pytest.fixture
def files(tmp_path):
    write_problem(PROBLEM, tmp_path / "p.json")
    write_problem(PROBLEM, tmp_path / "p.csv")
    return tmp_path


def plan_csv(path, offsets: dict[str, int]):
    """A plan file as a user may bring it, valid or not (the format's own writer checks
    nothing; cpplan.io.write_plan refuses invalid plans)."""
    plan = Plan.build(PROBLEM, {k: ("default", v) for k, v in offsets.items()})
    minimalloc.write_plan(PROBLEM, plan, path)
    return path


# -- info -----------------------------------------------------------------------------------------

def test_info_on_the_first_challenging_instance():
    path = benchmark("minimalloc-challenging", "A.1048576.csv")
    result = run("info", path)
    assert result.exit_code == 0, result.output
    assert "154 buffers" in result.stdout
    assert "lower bound: 1048576" in result.stdout
    assert "max-load 1048576 at step" in result.stdout
    data = json.loads(run("info", "--json", path).stdout)
    assert (data["buffers"], data["lower_bound"]) == (154, 1048576)
    assert data["pools"][0]["max_load"] == 1048576 and data["pools"][0]["at_step"] is not None


def test_info_on_a_problem_with_pools_and_aliases(tmp_path):
    p = Problem((Buffer("x", 64, 0, 3, pools=("sram",)), Buffer("y", 64, 2, 5),
                 Buffer("w", 32, 0, 2, offset=0, pools=("dram",)), Buffer("z", 8, 9, 10)),
                (Pool("sram", 256), Pool("dram", cost=4)), (Alias("y", "x"),))
    write_problem(p, tmp_path / "p.json")
    out = run("info", tmp_path / "p.json")
    assert out.exit_code == 0, out.output
    assert "4 buffers (1 aliased, 1 fixed) in 3 blocks" in out.stdout
    assert "pool sram: capacity 256" in out.stdout and "max-load 64 at step 0" in out.stdout
    assert "pool dram: unbounded" in out.stdout and "max-load 32" in out.stdout
    assert "2 components" in out.stdout
    data = json.loads(run("info", "--json", tmp_path / "p.json").stdout)
    # sram needs x (y is in place over it), dram the fixed w; z fits at a moment of less load.
    assert data["lower_bound"] == 64 + 4 * 32


# -- check ----------------------------------------------------------------------------------------

def test_check_accepts_a_valid_plan(files):
    plan = plan_csv(files / "plan.csv", {"a": 0, "b": 64, "c": 0})
    for problem in ("p.json", "p.csv"):
        result = run("check", files / problem, plan)
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith("valid: 3 buffers") and "height 96" in result.stdout


def test_check_rejects_an_overlap_of_one_byte(files):
    plan = plan_csv(files / "plan.csv", {"a": 0, "b": 48, "c": 0})  # b = [48, 80) over a's end
    result = run("check", files / "p.json", plan)
    assert result.exit_code == 1
    assert "overlap" in result.stderr and "'a'" in result.stderr and "'b'" in result.stderr
    assert "[48, 64)" in result.stderr
    plan = plan_csv(files / "plan.csv", {"a": 0, "b": 64, "c": 95})  # c over b's last byte
    result = run("check", files / "p.json", plan)
    assert result.exit_code == 1 and "'b'" in result.stderr and "'c'" in result.stderr
    assert "[95, 96)" in result.stderr


def test_check_rejects_one_byte_off_alignment(files):
    plan = plan_csv(files / "plan.csv", {"a": 0, "b": 65, "c": 0})
    result = run("check", files / "p.json", plan)
    assert result.exit_code == 1
    assert "alignment" in result.stderr and "'b'" in result.stderr and "off by 1" in result.stderr


def test_check_lists_at_most_limit_violations(tmp_path):
    p = Problem(tuple(Buffer(f"b{i}", 8, 0, 2) for i in range(6)))
    write_problem(p, tmp_path / "p.json")
    native.write_plan(p, Plan.build(p, {f"b{i}": ("default", 0) for i in range(6)}),
                      tmp_path / "x.json")
    result = run("check", "--limit", "4", tmp_path / "p.json", tmp_path / "x.json")
    assert result.exit_code == 1
    assert "15 violations" in result.stderr and "... and 11 more" in result.stderr


def test_check_on_a_challenging_instance(tmp_path):
    path = benchmark("minimalloc-challenging", "A.1048576.csv")
    problem = read_problem(path)
    write_plan(problem, naive_plan(problem), tmp_path / "plan.csv")
    assert run("check", path, tmp_path / "plan.csv").exit_code == 0
    # Move one buffer onto the last byte of another that is live with it.
    lines = (tmp_path / "plan.csv").read_text().splitlines()
    rows = [line.split(",") for line in lines[1:]]
    a, b = next((a, b) for a in rows for b in rows if a[0] != b[0]
                and int(a[1]) < int(b[2]) and int(b[1]) < int(a[2]))
    b[4] = str(int(a[4]) + int(a[3]) - 1)
    (tmp_path / "bad.csv").write_text("\n".join([lines[0]] + [",".join(r) for r in rows]))
    result = run("check", path, tmp_path / "bad.csv")
    assert result.exit_code == 1
    assert f"'{a[0]}'" in result.stderr and f"'{b[0]}'" in result.stderr


# -- convert --------------------------------------------------------------------------------------

def test_convert_problems_and_plans(files):
    result = run("convert", files / "p.json", files / "q.csv")
    assert result.exit_code == 0 and "wrote" in result.stdout
    assert read_problem(files / "q.csv").buffers == PROBLEM.buffers
    plan = plan_csv(files / "plan.csv", {"a": 0, "b": 64, "c": 0})
    result = run("convert", "--plan-of", files / "p.csv", plan, files / "plan.json")
    assert result.exit_code == 0, result.output
    assert read_plan(files / "plan.json", PROBLEM).placements == read_plan(
        plan, PROBLEM).placements


# -- every user error: one line, exit 2, nothing written ------------------------------------------

CSV_HEAD = "id,lower,upper,size\n"

# name -> (file name, content, text the error line must contain)
MALFORMED = {
    "missing file": ("nope.csv", None, "no such file"),
    "directory": ("dir.csv", "<dir>", "is a directory"),
    "not UTF-8": ("p.csv", b"id,lower,upper,size\n\xff,0,1,8\n", "not UTF-8"),
    "empty CSV": ("p.csv", "", "line 1"),
    "bad header": ("p.csv", "id,lower,upper\n0,0,1\n", "no 'size' column"),
    "wrong field count": ("p.csv", CSV_HEAD + "0,0,1,8\n1,0,1\n", "line 3"),
    "non-integer size": ("p.csv", CSV_HEAD + "0,0,1,8\n1,0,1,8k\n", "line 3, buffer '1': size"),
    "size beyond 64 bits": ("p.csv", CSV_HEAD + "0,0,1,99999999999999999999\n",
                            "line 2, buffer '0': size: too large"),
    "negative size": ("p.csv", CSV_HEAD + "0,0,1,-8\n", "line 2, buffer '0': size"),
    "end <= start": ("p.csv", CSV_HEAD + "0,5,5,8\n", "line 2, buffer '0': upper"),
    "duplicate id": ("p.csv", CSV_HEAD + "x,0,1,8\ny,0,1,8\nx,0,1,8\n", "line 4, buffer 'x': id"),
    "unknown pool": ("p.json", {"buffers": [{"id": "x", "size": 8, "start": 0, "end": 1,
                                             "pools": ["l2"]}]}, "buffer 'x': pools"),
    "misaligned fixed offset": ("p.json", {"buffers": [
        {"id": "x", "size": 8, "start": 0, "end": 1, "alignment": 64, "offset": 32}]},
        "buffer 'x': offset"),
    "overlapping fixed buffers": ("p.json", {"buffers": [
        {"id": "x", "size": 8, "start": 0, "end": 2, "offset": 0},
        {"id": "y", "size": 8, "start": 1, "end": 3, "offset": 7}]}, "overlaps fixed buffer"),
    "capacity below a fixed buffer": ("p.json", {"pools": [{"name": "sram", "capacity": 8}],
                                                 "buffers": [{"id": "x", "size": 8, "start": 0,
                                                              "end": 2, "offset": 8}]},
                                      "capacity 8"),
    "alias cycle": ("p.json", {"buffers": [{"id": "x", "size": 8, "start": 0, "end": 1},
                                           {"id": "y", "size": 8, "start": 0, "end": 1}],
                               "aliases": [{"buffer": "x", "root": "y"},
                                           {"buffer": "y", "root": "x"}]}, "alias cycle"),
    "alias outside its root": ("p.json", {"buffers": [{"id": "x", "size": 8, "start": 0, "end": 1},
                                                      {"id": "y", "size": 4, "start": 0, "end": 1}],
                                          "aliases": [{"buffer": "y", "root": "x",
                                                       "displacement": 6}]},
                               "buffer 'y': alias displacement"),
    "non-integer JSON value": ("p.json", {"buffers": [{"id": "x", "size": 1.5, "start": 0,
                                                       "end": 1}]}, "buffer 'x': size"),
    "malformed JSON": ("p.json", '{"format": "cpplan-problem",\n"version": 1,\n"buffers": [,]}',
                       "line 3: malformed JSON"),
    "unknown extension": ("p.txt", "whatever", "unknown file type '.txt'"),
    "wrong JSON format tag": ("p.json", {"format": "cpplan-plan"}, "not a cpplan problem"),
    "JSON not an object": ("p.json", "[1, 2]", "top level"),
    "JSON nested 100,000 deep": ("p.json", '{"format": "cpplan-problem", "version": 1, "meta": '
                                 + "[" * 100_000 + "]" * 100_000 + ', "buffers": []}',
                                 "nested too deeply"),
    "JSON integer of 5000 digits": ("p.json", '{"format": "cpplan-problem", "version": 1, '
                                    '"buffers": [{"id": "a", "size": ' + "9" * 5000
                                    + ', "start": 0, "end": 1}]}', "5000 digits"),
    "CSV integer of 5000 digits": ("p.csv", CSV_HEAD + "0,0,1," + "9" * 5000 + "\n",
                                   "size: too many digits"),
    "pool without a name": ("p.json", {"pools": [{"name": "a"}, {"capacity": 3}], "buffers": []},
                            "pools[1].name: missing"),
    "version true": ("p.json", '{"format": "cpplan-problem", "version": true, "buffers": []}',
                     "version"),
    "digits with underscores": ("p.csv", CSV_HEAD + "0,0,1,1_000\n", "size: not an integer"),
    "non-ASCII digits": ("p.csv", CSV_HEAD + "0,0,1,\u0661\u0662\n", "size: not an integer"),
    "alignment padding beyond 2**62": ("p.json", {"buffers": [
        {"id": f"b{i}", "size": 8, "start": 0, "end": 1, "alignment": 2**61} for i in range(4)]},
        "alignment: with alignment padding"),
}


def make(tmp_path, name: str, content) -> str:
    path = tmp_path / name
    if content == "<dir>":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, dict):
        path.write_text(json.dumps({"format": "cpplan-problem", "version": 1} | content))
    elif content is not None:
        path.write_text(content)
    return str(path)


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_malformed_input(tmp_path, kind):
    name, content, contains = MALFORMED[kind]
    path = make(tmp_path, name, content)
    out = tmp_path / "out.json"
    assert_user_error(run("convert", path, out), contains=(contains,))
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]
    assert_user_error(run("info", path), contains=(contains,))


@pytest.mark.parametrize("plan_text,contains", [
    ("id,lower,upper,size,offset\na,0,4,64,0\nghost,2,6,32,64\n", "line 3, buffer 'ghost'"),
    ("id,lower,upper,size\na,0,4,64\n", "'offset' column"),
    ("id,lower,upper,size,offset\na,0,4,64,zero\n", "line 2, buffer 'a': offset"),
])
def test_malformed_plans(files, plan_text, contains):
    (files / "plan.csv").write_text(plan_text)
    assert_user_error(run("check", files / "p.json", files / "plan.csv"), contains=(contains,))
    out = files / "out.json"
    assert_user_error(run("convert", "--plan-of", files / "p.json", files / "plan.csv", out),
                      contains=(contains,))
    assert not out.exists()


def test_plan_json_naming_an_unknown_buffer(files):
    (files / "plan.json").write_text(json.dumps({"format": "cpplan-plan", "version": 1,
                                                 "placements": [{"id": "zz", "offset": 0}]}))
    assert_user_error(run("check", files / "p.json", files / "plan.json"),
                      contains=("buffer 'zz'",))


def test_what_csv_cannot_hold(tmp_path):
    p = Problem((Buffer("x", 8, 0, 1), Buffer("y", 8, 0, 1)), aliases=(Alias("y", "x"),))
    write_problem(p, tmp_path / "p.json")
    assert_user_error(run("convert", tmp_path / "p.json", tmp_path / "p.csv"),
                      contains=("aliases",))
    assert not (tmp_path / "p.csv").exists()


def test_converting_a_plan_that_misses_a_buffer(files):
    (files / "plan.json").write_text(json.dumps({"format": "cpplan-plan", "version": 1,
                                                 "placements": [{"id": "a", "offset": 0}]}))
    assert_user_error(run("convert", "--plan-of", files / "p.json", files / "plan.json",
                          files / "out.csv"), contains=("'b' has no placement",))
    assert not (files / "out.csv").exists()


@pytest.mark.parametrize("target,contains", [
    ("out.txt", "unknown file type"), ("no/such/dir/out.json", "no/such/dir/out.json: cannot "
                                       "write here: no directory"),
    ("outdir", "directory"),
])
def test_unwritable_outputs(files, target, contains):
    (files / "outdir").mkdir()
    assert_user_error(run("convert", files / "p.json", files / target), contains=(contains,))


def test_a_real_process_prints_one_line(tmp_path):
    (tmp_path / "p.csv").write_text(CSV_HEAD + "0,0,1,8\n0,0,1,8\n")
    for args in (["info", str(tmp_path / "p.csv")], ["info", str(tmp_path / "missing.csv")]):
        done = subprocess.run([sys.executable, "-m", "cpplan.cli", *args], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2
        assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
        assert done.stdout == ""


@pytest.mark.parametrize("args", [["check", "p.json"], ["info"], ["nosuch"], ["info", "-x", "p"]])
def test_usage_errors_are_one_line_too(files, args):
    assert_user_error(run(*args))


def test_a_byte_order_mark_is_accepted(tmp_path):
    (tmp_path / "p.csv").write_bytes(b"\xef\xbb\xbf" + (CSV_HEAD + "0,0,1,8\n").encode())
    result = run("info", tmp_path / "p.csv")
    assert result.exit_code == 0 and "1 buffers" in result.output


def test_offsets_beyond_64_bits_are_violations_not_crashes(files):
    (files / "plan.json").write_text(json.dumps({"format": "cpplan-plan", "version": 1,
        "placements": [{"id": "a", "offset": 2**63 - 8}, {"id": "b", "offset": 2**70},
                       {"id": "c", "offset": 0}]}))
    result = run("check", files / "p.json", files / "plan.json")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "'a' has offset 9223372036854775800" in result.stderr and "2**62" in result.stderr


@pytest.mark.parametrize("args,contains", [
    (["--time-limit", "nan"], "'--time-limit'"), (["--time-limit", "-1"], "'--time-limit'"),
    (["--time-limit", "inf"], "'--time-limit'"), (["--workers", "-3"], "'--workers'"),
    (["--workers", "0"], "'--workers'"),
])
def test_solve_options_out_of_range(files, args, contains):
    assert_user_error(run("solve", files / "p.json", *args), contains=(contains,))


@pytest.mark.parametrize("limit", ["-1", "0"])
def test_check_limit_out_of_range(files, limit):
    plan = plan_csv(files / "plan.csv", {"a": 0, "b": 64, "c": 0})
    assert_user_error(run("check", "--limit", limit, files / "p.json", plan),
                      contains=("'--limit'",))


def test_a_read_only_output_is_never_replaced(files):
    out = files / "out.json"
    out.write_text("keep me")
    out.chmod(0o444)
    for args in (["solve", files / "p.json", "-o", out, "--time-limit", "1", "-q"],
                 ["convert", files / "p.json", out]):
        assert_user_error(run(*args), contains=(str(out), "read-only"))
        assert out.read_text() == "keep me" and (out.stat().st_mode & 0o777) == 0o444
    assert [p.name for p in files.iterdir() if p.name.startswith(".out")] == []


def test_an_output_in_a_missing_folder_is_refused_before_solving(files):
    out = files / "nodir" / "out.csv"
    result = run("solve", files / "p.json", "-o", out, "--time-limit", "600")
    assert_user_error(result, contains=(str(out), "no directory"))
    assert "lower bound" not in result.output  # refused before any solving began


@pytest.mark.parametrize("flags, planning", [
    ([], 10.0 - 3.0 - 3 * 2e-6),  # the limit, less what the command took, less the writing
    (["--deterministic"], 10.0),  # deterministic seconds are the planning's own
])
def test_the_time_limit_counts_the_whole_command(files, monkeypatch, flags, planning):
    from cpplan.cli import solve as solve_cli
    from cpplan.planners import registry

    given = []
    naive = registry.info("naive")
    spy = dataclasses.replace(naive, function=lambda problem, options: (
        given.append(options.time_limit) or naive.function(problem, options)))
    monkeypatch.setattr(solve_cli, "elapsed", lambda: 3.0)  # reading took 3 s, say
    monkeypatch.setattr(registry, "info", lambda name: spy)
    result = run("solve", files / "p.json", "--time-limit", "10", "-q", "-o",
                 files / "plan.json", *flags)
    assert result.exit_code == 0, result.output
    assert given == [pytest.approx(planning)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process's start: /proc")
def test_the_command_counts_its_time_from_the_process_start():
    # Half a second spent before the command is imported (a slow interpreter start-up, say) is
    # part of the command's time, as a user's clock measures it; a command invoked later in a
    # long-lived process (this one) counts from its own invocation.
    code = ("import time; time.sleep(0.5)\n"
            "from cpplan.cli import common, main\n"
            "common.count_from_process_start()\n"
            "main(['planners'], standalone_mode=False)\n"
            "print('elapsed', common.elapsed())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    took = float(done.stdout.split("elapsed")[-1])
    assert took >= 0.5
    from cpplan.cli import common

    assert run("planners").exit_code == 0
    assert common.elapsed() < 0.5


def test_convert_never_writes_an_invalid_plan(files):
    plan = plan_csv(files / "plan.csv", {"a": 0, "b": 48, "c": 0})
    out = files / "out.json"
    assert_user_error(run("convert", "--plan-of", files / "p.json", plan, out),
                      contains=("invalid", "share bytes"))
    assert not out.exists()


def test_an_interrupted_run_says_so():
    plan = Plan.build(PROBLEM, {"a": ("default", 0), "b": ("default", 64), "c": ("default", 0)},
                      stats={"interrupted": True})
    assert "interrupted" in plan.summary()


VALID_JSON = json.dumps({"format": "cpplan-problem", "version": 1,
                         "pools": [{"name": "sram", "capacity": 4096, "alignment": 16}],
                         "buffers": [{"id": "a", "size": 64, "start": 0, "end": 4, "offset": 0},
                                     {"id": "b", "size": 32, "start": 2, "end": 6,
                                      "alignment": 16}],
                         "aliases": []})
VALID_CSV = CSV_HEAD + "a,0,4,64\nb,2,6,32\n"


@given(st.sampled_from([("p.json", VALID_JSON), ("p.csv", VALID_CSV)]),
       st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), st.text(max_size=4)),
                min_size=1, max_size=4))
def test_mangled_files_get_one_line_or_work(tmp_path_factory, base, edits):
    # Fuzzing: cut, repeat, replace or insert characters of a valid file; the CLI either reads
    # it or says what is wrong in one line; it never shows a traceback.
    name, text = base
    for where, how, piece in edits:
        k = int(where * len(text))
        text = [text[:k], text[:k] + text[k:] * 2, text[:k] + piece + text[k + 1:],
                text[:k] + piece + text[k:]][how]
    path = tmp_path_factory.mktemp("fuzz") / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    result = run("info", path)
    assert result.exit_code in (0, 2), (result.exit_code, result.output, result.exception)
    if result.exit_code == 2:
        assert_user_error(result)


@pytest.mark.parametrize("moment", ["importing numpy", "reading the file", "solving"])
def test_ctrl_c_at_any_moment_is_one_line_or_the_best_plan(tmp_path, moment):
    # Ctrl-C during start-up (imports, reading) says the command was interrupted, in one line;
    # during the solve it prints the best plan so far. Never a traceback. The signal is sent
    # when the process says it got there (import times, then the progress lines), not after a
    # guessed delay, so that the test does not depend on the machine's load.
    import signal

    problem = Problem(tuple(Buffer(f"b{i}", 8 + i % 50, i % 400, i % 400 + 1 + i % 37)
                            for i in range(20000)))
    write_problem(problem, tmp_path / "p.csv")
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "cpplan.cli", "solve",
                             str(tmp_path / "p.csv"), "--time-limit", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    marker = {"importing numpy": " numpy.", "reading the file": " cpplan.io.minimalloc",
              "solving": "lower bound"}[moment]
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if marker in line:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    lines = [x for x in seen + err.splitlines(keepends=True) if "import time:" not in x]
    assert not any("Traceback" in x for x in lines), "".join(lines)
    if moment == "solving":
        assert proc.returncode == 0 and "interrupted" in out
    elif proc.returncode == 130:
        assert lines[-1].strip() in ("cpplan: interrupted", "cpplan: error: interrupted")
    else:  # the signal came late: the plan so far
        assert proc.returncode == 0 and "interrupted" in out


# -- --help of every command, and the front-end options -------------------------------------------

def _commands(group, path=()):
    """``(path, command)`` of every command and subcommand under ``group``, found by walking it
    (a command added later is covered with no change here)."""
    import click

    for name, command in sorted(group.commands.items()):
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


@pytest.mark.parametrize("path", [(), *(p for p, _ in _commands(main))],
                         ids=lambda p: " ".join(p) or "cpplan")
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_of_every_command(path, flag):
    result = CliRunner().invoke(main, [*path, flag], prog_name="cpplan")
    assert result.exit_code == 0, result.output
    usage = result.output.splitlines()[0]
    assert usage.startswith(" ".join(("Usage: cpplan", *path)) + " "), usage
    assert "Traceback" not in result.output


def test_every_command_is_covered_by_the_help_test():
    assert {p[0] for p, _ in _commands(main)} >= {
        "info", "check", "convert", "solve", "planners", "grade", "plot", "extract", "tflm",
        "executorch"}


def test_every_front_end_option_has_one_flag():
    from dataclasses import fields

    from cpplan.cli.frontend import FLAGS
    from cpplan.graph.options import KINDS, TAKES, FrontEndOptions

    assert list(FLAGS) == [f.name for f in fields(FrontEndOptions)]
    assert set(TAKES) == set(KINDS) and TAKES["onnx"] == set(FLAGS)
    assert FrontEndOptions().given() == ()


@pytest.mark.parametrize("model,args,contains", [
    # A .pt2 refuses every ONNX option it is given, --input-shape included, and --traffic.
    ("m.pt2", ["--in-place", "--input-shape", "x=1,2", "--traffic", "a=1"],
     ("--in-place and --input-shape are for ONNX models only", "--traffic is for ONNX and "
      ".tflite models", "a .pt2 is planned as ExecuTorch plans it")),
    ("m.pt2", ["--dim", "batch=1"], ("--dim is for ONNX models and torchvision training steps",)),
    ("m.tflite", ["--alignment", "8", "--no-views"],
     ("--no-views is for ONNX models only", "--alignment is for ONNX models, .pt2 programs "
      "and torchvision training steps", "TFLite Micro")),
    ("torchvision:resnet18", ["--training", "--input-shape", "x=1", "--traffic", "a=1"],
     ("--input-shape is for ONNX models only", "--traffic is for ONNX and .tflite models",
      "a training step is traced")),
])
def test_front_end_options_a_model_does_not_take(tmp_path, model, args, contains):
    """Refused before any work (no model file needed), naming what was given."""
    assert_user_error(run("extract", model, "-o", tmp_path / "p.json", *args), contains=contains)
    assert not (tmp_path / "p.json").exists()


def test_executorch_takes_the_shared_alignment(tmp_path):
    assert_user_error(run("executorch", "m.pt2", "-o", tmp_path / "m.pte", "--alignment", "0"),
                      contains=("--alignment must be a positive number of bytes",))
    assert_user_error(run("executorch", "m.pt2", "-o", tmp_path / "m.pte", "--in-place"),
                      contains=("No such option", "--in-place"))


# -- memory tiers ---------------------------------------------------------------------------------

def test_memories_on_solve_check_and_plot(tmp_path):
    path = tmp_path / "p.json"
    write_problem(Problem((Buffer("hot", 64, 0, 2, traffic=640), Buffer("cold", 64, 1, 3,
                                                                        traffic=64))), path)
    memories = ("--memory", "sram:64:1", "--memory", "dram::4")
    plan = tmp_path / "plan.json"
    got = run("solve", path, *memories, "--time-limit", "5", "-q", "-o", plan)
    assert got.exit_code == 0, got.output
    assert "optimal" in got.output and "served fast" in got.output
    record = json.loads(plan.read_text())
    assert {p["id"]: p["pool"] for p in record["placements"]} == {"hot": "sram", "cold": "dram"}
    assert run("check", path, plan, *memories).exit_code == 0
    assert_user_error(run("check", path, plan), contains=("no pool 'sram'", "--memory"))
    assert_user_error(run("solve", path, "--memory", "sram:lots:1"), contains=("--memory",))
