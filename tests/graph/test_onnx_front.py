"""The ONNX front end: the light models of the onnx package, and clear errors for bad models."""

from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from cpplan.errors import FormatError, ProblemError  # noqa: E402
from cpplan.graph import to_problem  # noqa: E402
from cpplan.graph.instances import onnx_light_path  # noqa: E402
from cpplan.graph.onnx import extract_onnx, load_onnx  # noqa: E402


def test_squeezenet_graph():
    g = load_onnx(onnx_light_path("squeezenet"))
    ops = [op.op_type for op in g.operators]
    # the weights are made by ConstantOfShape from shape initializers: folded into constants,
    # they take no step of the schedule
    assert "ConstantOfShape" not in ops
    assert ops.count("Concat") == 8 and ops.count("Conv") == 26
    assert [t.name for t in g.tensors_with_role("input")] == ["data_0"]
    assert g.tensors["data_0"].shape == (1, 3, 224, 224)
    assert g.tensors["data_0"].size == 3 * 224 * 224 * 4
    cat = next(op for op in g.operators if op.op_type == "Concat")
    assert cat.concat_axis == 1
    relu = next(op for op in g.operators if op.op_type == "Relu")
    assert relu.inplace == (0,)
    assert g.outputs == ["softmaxout_1"]


def test_resnet50_problem_and_rewrites():
    g = load_onnx(onnx_light_path("resnet50"))
    plain = to_problem(g)
    assert len(plain.buffers) == len(g.operators) + 1  # one output each, plus the input
    assert plain.meta["constants"]["count"] > 100  # weights listed, not planned
    p = to_problem(g, in_place=True, concat_in_place=True)
    rw = p.meta["rewrites"]
    assert rw["in-place"]["aliases"] > 50  # BatchNorm, Relu and the residual Sum
    assert rw["concat"]["concats"] == 0


def make_model(nodes, inputs, outputs, initializers=(), path=None):
    graph = helper.make_graph(nodes, "m", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    if path is not None:
        onnx.save(model, str(path))
    return model


def relu_model(tmp_path: Path, shape, name="m.onnx") -> Path:
    path = tmp_path / name
    make_model([helper.make_node("Relu", ["x"], ["y"], name="act")],
               [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None])], path=path)
    return path


def test_missing_shape_names_the_input_and_its_reader(tmp_path):
    with pytest.raises(ProblemError, match=r"graph input shapes unknown: 'x' \(read by node "
                                           r"'act' \(Relu\)\) has no shape.*--input-shape x="):
        load_onnx(relu_model(tmp_path, None))


def test_symbolic_dims_need_values(tmp_path):
    path = relu_model(tmp_path, ["batch", 8])
    with pytest.raises(ProblemError, match=r"'x' dimension 0 \('batch'\); give them with --dim "
                                           r"batch=N"):
        load_onnx(path)
    g = load_onnx(path, dims={"batch": 3})
    assert g.tensors["x"].shape == (3, 8) and g.tensors["y"].shape == (3, 8)
    with pytest.raises(ProblemError, match="no symbolic dimension of that name"):
        load_onnx(path, dims={"batch": 3, "seq": 2})


def test_shape_unknown_inside_the_graph_names_the_node(tmp_path):
    path = tmp_path / "reshape.onnx"
    make_model([helper.make_node("Reshape", ["x", "s"], ["y"], name="dyn")],
               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
                helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None])], path=path)
    with pytest.raises(ProblemError, match=r"node 'dyn' \(Reshape\) output 'y': dimension 0 "
                                           r"unknown \(it cannot be inferred"):
        load_onnx(path)


def test_control_flow_names_the_node(tmp_path):
    branch = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "b", [],
                               [helper.make_tensor_value_info("z", TensorProto.FLOAT, [4])])
    path = tmp_path / "if.onnx"
    make_model([helper.make_node("If", ["c"], ["y"], name="choose", then_branch=branch,
                                 else_branch=branch)],
               [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], path=path)
    with pytest.raises(ProblemError, match=r"node 'choose' \(If\): control flow"):
        load_onnx(path)


@pytest.mark.parametrize("keep", [0.0, 0.1, 0.5, 0.9, 0.999])
def test_truncated_file(tmp_path, keep):
    data = onnx_light_path("squeezenet").read_bytes()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(FormatError, match=r"cut.onnx: .*(truncated or corrupt)"):
        load_onnx(path)


def test_node_order_not_topological_is_repaired(tmp_path):
    path = tmp_path / "order.onnx"
    model = make_model([helper.make_node("Relu", ["a"], ["b"], name="second"),
                        helper.make_node("Relu", ["x"], ["a"], name="first")],
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                       [helper.make_tensor_value_info("b", TensorProto.FLOAT, [4])])
    path.write_bytes(model.SerializeToString())
    g = load_onnx(path)
    assert [op.name for op in g.operators] == ["first", "second"]


def test_initializers_are_constants_and_folded(tmp_path):
    path = tmp_path / "w.onnx"
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    make_model([helper.make_node("Neg", ["w"], ["nw"], name="fold"),
                helper.make_node("Add", ["x", "nw"], ["y"], name="add")],
               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w], path=path)
    p = extract_onnx(path, in_place=True)
    assert [b.id for b in p.buffers] == ["x", "y"]
    # a small constant expression is evaluated: its value replaces the weight it came from
    assert p.meta["constants"]["tensors"] == {"nw": 16}
    assert p.meta["source"]["sha256"] and p.meta["source"]["bytes"] == path.stat().st_size
    assert p.meta["options"]["in_place"] is True


def test_weights_count_once_through_folded_operators(tmp_path):
    """A weight read directly and through a Transpose computed before the run counts once; a
    ConstantOfShape expanded from a few bytes counts as itself."""
    path = tmp_path / "tied.onnx"
    w = helper.make_tensor("w", TensorProto.FLOAT, [64, 100], [0.5] * 6400)
    shape = helper.make_tensor("s", TensorProto.INT64, [2], [64, 64])
    make_model([helper.make_node("Transpose", ["w"], ["wt"], name="t"),
                helper.make_node("ConstantOfShape", ["s"], ["ones"], name="c",
                                 value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
                helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
                helper.make_node("MatMul", ["y", "wt"], ["z"], name="mm2"),
                helper.make_node("MatMul", ["z", "ones"], ["out"], name="mm3")],
               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
               [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 64])], [w, shape],
               path=path)
    p = extract_onnx(path)
    assert p.meta["constants"]["tensors"] == {"w": 25600, "ones": 16384}
    assert [b.id for b in p.buffers] == ["x", "y", "z", "out"]


@pytest.mark.parametrize(("text", "value"), [
    ("s50", 128), ("Min(512, s50)", 128), ("Max(1, s0)", 3), ("2*s0 + 1", 7),
    ("s50//2", 64), ("(s0 - 1)*s50", 256), ("s50/2", 64), ("s0/2", None), ("s9 + 1", None),
    ("__import__('os')", None), ("s0 - 4", None), ("Min(512", None),
])
def test_dimension_expressions(text, value):
    from cpplan.graph.onnx_dims import evaluate_dim

    assert evaluate_dim(text, {"s0": 3, "s50": 128}) == value


def test_constant_shape_arithmetic_is_evaluated(tmp_path):
    """Shape -> Gather -> Concat and ConstantOfShape -> Mul -> Equal -> Where feed an Expand,
    as TorchScript exports write them: every value is known, so the Expand's shape is too."""
    i64 = TensorProto.INT64

    def const(name, values, dims=None):
        return helper.make_node("Constant", [], [name], value=helper.make_tensor(
            name + "_v", i64, [len(values)] if dims is None else dims, values))

    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        const("one", [1], []),
        helper.make_node("Gather", ["shape", "one"], ["seq"], axis=0),
        const("axes", [0]),
        helper.make_node("Unsqueeze", ["seq", "axes"], ["seq1"]),
        const("four", [4]),
        helper.make_node("Concat", ["four", "seq1"], ["target"], axis=0),
        const("len", [2]),
        helper.make_node("ConstantOfShape", ["len"], ["ones"],
                         value=helper.make_tensor("o", i64, [1], [1])),
        const("minus", [-1], []),
        helper.make_node("Mul", ["ones", "minus"], ["neg"]),
        helper.make_node("Equal", ["target", "neg"], ["is_neg"]),
        helper.make_node("Where", ["is_neg", "ones", "target"], ["final"]),
        helper.make_node("Expand", ["x", "final"], ["y"], name="expand"),
        helper.make_node("Relu", ["y"], ["z"], name="relu"),
    ]
    path = tmp_path / "chain.onnx"
    make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6])],
               [helper.make_tensor_value_info("z", TensorProto.FLOAT, [None, None])], path=path)
    g = load_onnx(path)
    assert [op.op_type for op in g.operators] == ["Expand", "Relu"]
    assert g.tensors["y"].shape == (4, 6) and g.tensors["z"].size == 4 * 6 * 4


def test_external_weights_absent_and_another_folder(tmp_path, monkeypatch):
    """Weights in M.onnx.data: the model extracts from any folder, data file there or not."""
    from onnx import numpy_helper

    w = numpy_helper.from_array(__import__("numpy").ones((64, 64), "float32"), "w")
    folder = tmp_path / "models"
    folder.mkdir()
    model = make_model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 64])], [w])
    onnx.save(model, str(folder / "m.onnx"), save_as_external_data=True,
              location="m.onnx.data", size_threshold=0)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    with_data = extract_onnx(folder / "m.onnx")
    (folder / "m.onnx.data").unlink()
    without = extract_onnx(folder / "m.onnx")
    assert [b.size for b in with_data.buffers] == [b.size for b in without.buffers] == [512, 512]
    assert without.meta["constants"]["tensors"] == {"w": 64 * 64 * 4}


def test_cast_in_place_only_between_equal_element_sizes(tmp_path):
    path = tmp_path / "cast.onnx"
    make_model([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                helper.make_node("Cast", ["r"], ["i"], name="same", to=TensorProto.INT32),
                helper.make_node("Cast", ["i"], ["h"], name="half", to=TensorProto.FLOAT16)],
               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
               [helper.make_tensor_value_info("h", TensorProto.FLOAT16, [4, 4])], path=path)
    ops = {op.name: op for op in load_onnx(path).operators}
    assert ops["same"].inplace == (0,) and ops["half"].inplace == ()
    p = extract_onnx(path, in_place=True)
    assert {(a.buffer, a.root) for a in p.aliases} == {("i", "r")}
