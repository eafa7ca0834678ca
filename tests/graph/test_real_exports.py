"""Real exports (tests/data/onnx, made by ``python -m cpplan.graph.exports``): graph-only files
whose weights file is absent, extracted from another folder, solved and checked; and the
errors a user meets on them."""

from __future__ import annotations

import math
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.shared import require

onnx = require("onnx", "onnx")

from cpplan.bounds import max_load  # noqa: E402
from cpplan.cli import main  # noqa: E402
from cpplan.errors import ProblemError  # noqa: E402
from cpplan.graph.exports import MODELS  # noqa: E402
from cpplan.graph.onnx import extract_onnx, load_onnx  # noqa: E402
from cpplan.plan import check  # noqa: E402
from cpplan.solve import solve  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "onnx"
PRESENT = {e.name: e for e in MODELS if (DATA / f"{e.name}.onnx").is_file()}


def shape_args(e) -> dict:
    """What a user gives for a dynamic export: the dims it names, else the inputs' shapes."""
    if e.variant != "dynamic":
        return {}
    if e.dims:
        return {"dims": e.dims}
    return {"input_shapes": {n: s for n, (s, _) in e.inputs.items()}}


def elsewhere(tmp_path: Path, monkeypatch, name: str) -> Path:
    """The model copied alone into a folder of its own, the current directory another one."""
    models = tmp_path / "models"
    models.mkdir()
    path = models / f"{name}.onnx"
    shutil.copy(DATA / f"{name}.onnx", path)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return path


def test_the_suite_holds_what_it_promises():
    archs = Counter(e.arch for e in PRESENT.values() if e.variant == "plain")
    assert len(archs) >= 10, sorted(archs)
    both = [a for a, n in archs.items() if n == 2]
    assert len(both) >= 8  # both exporters wherever they succeed
    assert {"qdq", "int8", "ort-extended", "dynamic"} <= {e.variant for e in PRESENT.values()}
    assert {"resnet18", "vit", "bert", "gpt2", "lstm"} <= set(archs)
    for name in PRESENT:  # graph only: weights point at a data file that is not there
        path = DATA / f"{name}.onnx"
        model = onnx.load(str(path), load_external_data=False)
        assert any(t.data_location == onnx.TensorProto.EXTERNAL
                   for t in model.graph.initializer), name
        assert not (DATA / f"{name}.onnx.data").exists()
        assert path.stat().st_size < 600_000


@pytest.mark.parametrize("name", sorted(PRESENT))
def test_extract_solve_check_from_another_folder(name, tmp_path, monkeypatch):
    e = PRESENT[name]
    path = elsewhere(tmp_path, monkeypatch, name)
    plain = extract_onnx(path, **shape_args(e))
    rewritten = extract_onnx(path, in_place=True, concat_in_place=True, alignment=64,
                             **shape_args(e))
    for problem in (plain, rewritten):
        plan = solve(problem, time_limit=5)
        assert not check(problem, plan)
        assert plan.heights["arena"] >= max_load(problem)["arena"].bytes > 0
    assert len(plain.buffers) > 10
    # weights count once: a listed constant computed from listed ones is an expansion (more
    # elements than all it comes from, like ConstantOfShape), never a copy (transposed, cast)
    graph = load_onnx(path, **shape_args(e))
    listed = set(plain.meta["constants"]["tensors"])

    def ancestors(t: str) -> set[str]:
        out, stack = set(), list(graph.derived.get(t, ()))
        while stack:
            p = stack.pop()
            if p not in out:
                out.add(p)
                stack.extend(graph.derived.get(p, ()))
        return out

    for t in listed:
        if ancestors(t) & listed:
            stored = sum(math.prod(graph.tensors[a].shape) for a in ancestors(t)
                         if a not in graph.derived)
            assert math.prod(graph.tensors[t].shape) > stored, t
    assert plain.meta["constants"]["bytes"] == sum(graph.tensors[t].size for t in listed)
    assert not list(tmp_path.joinpath("cwd").iterdir())  # nothing written where it ran


def test_quantised_weights_count_at_their_stored_size():
    """QDQ: DequantizeLinear of an int8 weight is computed before the run; the weight counts
    once, as the int8 bytes the file stores, not as the float copy."""
    path = DATA / "resnet18-qdq.torchscript.onnx"
    model = onnx.load(str(path), load_external_data=False)
    external = sum(int(next(kv.value for kv in t.external_data if kv.key == "length"))
                   for t in model.graph.initializer
                   if t.data_location == onnx.TensorProto.EXTERNAL)
    counted = extract_onnx(path).meta["constants"]["bytes"]
    assert external <= counted < external * 1.1


def test_softmax_runs_in_place_as_onnx_runtime_does():
    path = DATA / "bert.dynamo.onnx"
    problem = extract_onnx(path, in_place=True)
    softmax = [n.output[0] for n in onnx.load(str(path), load_external_data=False).graph.node
               if n.op_type == "Softmax"]
    aliased = {a.buffer for a in problem.aliases} | {a.root for a in problem.aliases}
    assert softmax and set(softmax) <= aliased


def test_dynamic_export_names_every_missing_dimension_at_once(tmp_path, monkeypatch):
    path = elsewhere(tmp_path, monkeypatch, "bert-dynamic.dynamo")
    with pytest.raises(ProblemError) as info:
        extract_onnx(path)
    message = str(info.value)
    names = {d.dim_param for vi in onnx.load(str(path), load_external_data=False).graph.input
             for d in vi.type.tensor_type.shape.dim if d.dim_param}
    assert len(names) >= 2 and all(f"--dim {n}=N" in message for n in names)
    assert "\n" not in message
    one = next(iter(sorted(names)))
    with pytest.raises(ProblemError, match="given, but the model has no symbolic dimension"):
        extract_onnx(path, dims={one: 1, "nonsense": 3})


def test_input_shape_flag_from_another_folder(tmp_path, monkeypatch):
    path = elsewhere(tmp_path, monkeypatch, "bert-dynamic.dynamo")
    r = CliRunner().invoke(main, ["extract", str(path), "-o", "b.json", "--input-shape",
                                  "input_ids=1,32", "--input-shape", "attention_mask=1,32",
                                  "--in-place"])
    assert r.exit_code == 0, r.output
    fixed = extract_onnx(DATA / "bert.dynamo.onnx", in_place=True)
    from cpplan.io import read_problem

    dynamic = read_problem(Path("b.json"))
    assert max_load(dynamic)["arena"].bytes == max_load(fixed)["arena"].bytes
    assert "--input-shape input_ids=1,32" in dynamic.meta["command"]
    r = CliRunner().invoke(main, ["extract", str(path), "-o", "c.json", "--input-shape",
                                  "input_ids=1,32,4"])
    assert r.exit_code == 2 and "has 3 dimensions, the model's has 2" in r.output


def test_csv_output_says_what_to_add(tmp_path, monkeypatch):
    path = elsewhere(tmp_path, monkeypatch, "resnet18.dynamo")
    r = CliRunner().invoke(main, ["extract", str(path), "-o", "r.csv"])
    assert r.exit_code == 2 and "--no-views --inputs-in-arena" in r.output
    assert r.output.count("\n") == 1 and not Path("r.csv").exists()
    r = CliRunner().invoke(main, ["extract", str(path), "-o", "r.csv", "--no-views",
                                  "--inputs-in-arena"])
    assert r.exit_code == 0 and Path("r.csv").is_file()


def test_unknown_contrib_operator_says_what_to_do(tmp_path):
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16])
    node = helper.make_node("Attention", ["x"], ["y"], name="att", domain="com.microsoft")
    model = helper.make_model(helper.make_graph([node], "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17),
                                             helper.make_opsetid("com.microsoft", 1)])
    path = tmp_path / "att.onnx"
    onnx.save(model, str(path))
    r = CliRunner().invoke(main, ["extract", str(path), "-o", str(tmp_path / "a.json")])
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert "com.microsoft.Attention" in r.output and "ORT_ENABLE_BASIC" in r.output


def test_contrib_operators_get_their_shapes():
    problem = extract_onnx(DATA / "bert-ort-extended.torchscript.onnx")
    model = onnx.load(str(DATA / "bert-ort-extended.torchscript.onnx"), load_external_data=False)
    fused = [n for n in model.graph.node if n.domain == "com.microsoft"]
    assert fused
    sizes = {b.id: b.size for b in problem.buffers}
    for n in fused:  # hidden size 64, sequence 32, float32
        assert sizes[n.output[0]] == 32 * 64 * 4 or n.op_type in ("FusedMatMul", "Gelu")
