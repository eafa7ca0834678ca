"""`cpplan extract`: writes the problem and a summary; user errors are one line, exit 2."""

import pytest
from click.testing import CliRunner

from cpplan.cli import main
from cpplan.io import read_problem

pytest.importorskip("onnx")
from cpplan.graph.instances import onnx_light_path  # noqa: E402


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_extract_writes_a_problem_and_summarises(tmp_path):
    out = tmp_path / "sq.json"
    r = run("extract", onnx_light_path("squeezenet"), "-o", out, "--in-place",
            "--concat-in-place")
    assert r.exit_code == 0, r.output
    assert "aliases" in r.output and "bytes saved by rewrites" in r.output
    p = read_problem(out)
    assert p.aliases and p.meta["options"]["concat_in_place"]
    assert p.meta["command"].startswith("cpplan extract ")
    assert "--in-place --concat-in-place" in p.meta["command"]


def test_inputs_in_arena_flag(tmp_path):
    out = tmp_path / "a.json"
    assert run("extract", onnx_light_path("bvlc_alexnet"), "-o", out,
               "--inputs-in-arena").exit_code == 0
    assert [pl.name for pl in read_problem(out).pools] == ["arena"]


@pytest.mark.parametrize(("args", "message"), [
    (["--dim", "batch"], "--dim expects NAME=VALUE"),
    (["--dim", "batch=1"], "no symbolic dimension of that name"),
])
def test_errors_are_one_line_exit_2(tmp_path, args, message):
    r = run("extract", onnx_light_path("zfnet512"), "-o", tmp_path / "z.json", *args)
    assert r.exit_code == 2
    assert message in r.output and r.output.count("\n") == 1
    assert not (tmp_path / "z.json").exists()


def test_truncated_model_is_one_line(tmp_path):
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(onnx_light_path("zfnet512").read_bytes()[:2000])
    r = run("extract", cut, "-o", tmp_path / "z.json")
    assert r.exit_code == 2 and "truncated or corrupt" in r.output
    assert r.output.count("\n") == 1
