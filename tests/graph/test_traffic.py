"""Traffic from the graph front end: bytes moved per run, counted by hand on small graphs (views,
in-place, concat slices, inputs, outputs, workspaces), what the user states, round trips through
JSON and CSV, and the same figures from an ONNX file and `cpplan extract`."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cpplan.errors import ProblemError
from cpplan.graph import Graph, to_problem
from cpplan.io import read_problem, write_problem


def small() -> Graph:
    """x (input, 16 B) -> conv a -> relu b (in place) -> reshape c (a view) ; add d = c + x
    (with an 8-byte workspace) ; e = concat(d, c, w) along axis 0 (contiguous), the output."""
    g = Graph("small")
    g.add_input("x", (4,))
    g.add_constant("w", (4,))
    g.add_operator("Conv", ["x", "w"], [("a", (4,))])
    g.add_operator("Relu", ["a"], [("b", (4,))], inplace=[0])
    g.add_operator("Reshape", ["b"], [("c", (2, 2))], view=True)
    g.add_operator("Add", ["c", "x"], [("d", (2, 2))], workspace=[8])
    g.add_operator("Concat", ["d", "c", "w"], [("e", (6, 2))], concat_axis=0)
    g.mark_output("e")
    return g


def traffic(problem) -> dict[str, int]:
    return {b.id: b.traffic for b in problem.buffers}


# By hand, 16 bytes a tensor (e: 48). x: written by the caller, read by Conv and Add. a: Conv
# writes it, Relu reads it. b: Relu writes it; the view reads nothing. c: a view (no write), read
# by Add and Concat. The workspace: written and read once, 2 x 8. d: written, read by Concat.
# e: written by Concat (48), read by the caller after the run (48).
PLAIN = {"x": 48, "a": 32, "b": 16, "c": 32, "Add_3:workspace0": 16, "d": 32, "e": 96}


def test_a_small_graph_moves_what_was_counted_by_hand():
    assert traffic(to_problem(small())) == PLAIN
    # In place: Relu still reads a and writes b (same bytes, two passes): nothing changes.
    p = to_problem(small(), in_place=True)
    assert ("b", "a") in {(al.buffer, al.root) for al in p.aliases}
    assert traffic(p) == PLAIN
    assert p.meta["traffic"]["bytes"] == sum(PLAIN.values())


def test_a_copied_view_moves_its_bytes():
    # Without views the reshape copies: it reads b (16 more) and writes c (16 more).
    assert traffic(to_problem(small(), views=False)) == {**PLAIN, "b": 32, "c": 48}


def test_concat_slices_written_in_place_copy_nothing():
    p = to_problem(small(), concat_in_place=True)
    assert {(a.buffer, a.root) for a in p.aliases} >= {("d", "e"), ("b", "e")}
    # d and c (through b) are written into their slices: the concat reads neither, and writes
    # only the slice of the constant w (16 of its 48 bytes); the caller still reads all 48.
    assert traffic(p) == {**PLAIN, "c": 16, "d": 16, "e": 16 + 48}
    assert traffic(to_problem(small(), concat_in_place=True, in_place=True)) == traffic(p)


def test_what_the_user_states_wins_and_is_checked():
    p = to_problem(small(), traffic={"e": 5, "Add_3:workspace0": 0})
    assert traffic(p) == {**PLAIN, "e": 5, "Add_3:workspace0": 0}
    assert p.meta["traffic"]["stated"] == ["Add_3:workspace0", "e"]
    with pytest.raises(ProblemError, match="'w': a constant, not planned"):
        to_problem(small(), traffic={"w": 1})
    with pytest.raises(ProblemError, match="'nope': no planned buffer"):
        to_problem(small(), traffic={"nope": 1})
    with pytest.raises(ProblemError, match="buffer 'e'.*traffic.*>= 0"):
        to_problem(small(), traffic={"e": -1})


def test_inputs_in_the_arena_move_the_same_bytes():
    assert traffic(to_problem(small(), inputs_in_arena=True)) == PLAIN


def test_round_trips_keep_the_traffic(tmp_path):
    p = to_problem(small(), concat_in_place=True)
    write_problem(p, tmp_path / "p.json")
    assert traffic(read_problem(tmp_path / "p.json")) == traffic(p)
    flat = to_problem(small(), views=False, inputs_in_arena=True)  # one pool, no aliases: CSV
    write_problem(flat, tmp_path / "p.csv")
    assert traffic(read_problem(tmp_path / "p.csv")) == traffic(flat)


def onnx_model(path) -> None:
    """The small graph as an ONNX file (Mul by a weight for the conv, Identity for nothing)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    w = helper.make_tensor("w", TensorProto.FLOAT, (4,), np.ones(4, np.float32).tolist())
    shape = helper.make_tensor("shape", TensorProto.INT64, (2,), [2, 2])
    w2 = helper.make_tensor("w2", TensorProto.FLOAT, (2, 2), np.ones(4, np.float32).tolist())
    nodes = [
        helper.make_node("Mul", ["x", "w"], ["a"], name="conv"),
        helper.make_node("Relu", ["a"], ["b"], name="relu"),
        helper.make_node("Reshape", ["b", "shape"], ["c"], name="reshape"),
        helper.make_node("Reshape", ["x", "shape"], ["x2"], name="reshape_x"),
        helper.make_node("Add", ["c", "x2"], ["d"], name="add"),
        helper.make_node("Concat", ["d", "c", "w2"], ["e"], name="concat", axis=0),
    ]
    graph = helper.make_graph(nodes, "small", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, (4,))], [helper.make_tensor_value_info("e", TensorProto.FLOAT,
                                                                        (6, 2))],
        initializer=[w, shape, w2])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_an_onnx_model_and_cpplan_extract(tmp_path):
    pytest.importorskip("onnx")
    from cpplan.cli import main
    from cpplan.graph.onnx import extract_onnx

    model = tmp_path / "small.onnx"
    onnx_model(model)
    # x2 is a view of x: x is written by the caller and read by Mul; the view reads nothing and
    # writes nothing, and Add's read is x2's own.
    want = {"x": 32, "a": 32, "b": 16, "c": 32, "x2": 16, "d": 32, "e": 96}
    assert traffic(extract_onnx(model)) == want
    assert traffic(extract_onnx(model, concat_in_place=True)) == {**want, "c": 16, "d": 16,
                                                                   "e": 64}
    out = tmp_path / "small.json"
    r = CliRunner().invoke(main, ["extract", str(model), "-o", str(out), "--traffic", "e=7"])
    assert r.exit_code == 0, r.output
    assert f"traffic: {sum(want.values()) - 96 + 7} bytes moved per run" in r.output
    p = read_problem(out)
    assert traffic(p) == {**want, "e": 7} and "--traffic e=7" in p.meta["command"]
    for bad, says in ((["--traffic", "e"], "--traffic expects BUFFER=BYTES"),
                      (["--traffic", "w=3"], "'w': a constant, not planned")):
        r = CliRunner().invoke(main, ["extract", str(model), "-o", str(tmp_path / "bad.json"),
                                      *bad])
        assert r.exit_code == 2 and says in r.output and r.output.count("\n") == 1
        assert not (tmp_path / "bad.json").exists()
