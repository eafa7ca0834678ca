"""The graph IR: dtypes and byte sizes (TVM rounding), building a graph, schedules."""

import pytest

from cpplan.errors import ProblemError
from cpplan.graph import Graph, Tensor, element_bytes, tensor_bytes
from cpplan.graph.ir import dtype_bits, topological_order


@pytest.mark.parametrize(("dtype", "per_element"), [
    ("float32", 4), ("float16", 2), ("bfloat16", 2), ("int64", 8), ("bool", 1), ("int8", 1),
    # sub-byte types round up per element, as TVM's GetDataSize: ceil(bits * lanes / 8)
    ("int4", 1), ("uint1", 1), ("uint2", 1), ("float4_e2m1", 1), ("int12", 2),
    # vector lanes multiply the bits first
    ("float16x4", 8), ("int4x2", 1), ("int4x3", 2), ("uint1x8", 1), ("uint1x9", 2),
])
def test_element_bytes_round_up_per_element(dtype, per_element):
    assert element_bytes(dtype) == per_element


def test_sub_byte_tensor_sizes_are_not_packed():
    assert tensor_bytes((10,), "int4") == 10  # not 5: every element rounds up to a byte
    assert tensor_bytes((2, 3), "int4x3") == 12
    assert tensor_bytes((0, 7), "float32") == 0
    assert Tensor("w", (3, 5), "uint1").size == 15


def test_dtype_names():
    assert dtype_bits("float16x4") == (16, 4)
    for bad in ("string", "floaty", "", "x4"):
        with pytest.raises(ProblemError):
            element_bytes(bad)


def test_tensor_validation():
    with pytest.raises(ProblemError, match="negative"):
        Tensor("t", (2, -1))
    with pytest.raises(ProblemError, match="role"):
        Tensor("t", (2,), role="weights")


def small() -> Graph:
    g = Graph("small")
    x = g.add_input("x", (1, 8))
    w = g.add_constant("w", (8, 8))
    g.add_operator("MatMul", [x, w], [("y", (1, 8))], name="mm")
    g.add_operator("Relu", ["y"], [("z", (1, 8))], name="relu", inplace=(0,))
    g.add_operator("Add", ["z", "y"], [("out", (1, 8))], name="add")
    g.mark_output("out")
    return g


def test_producer_users_and_dag():
    g = small()
    assert g.producer == {"y": 0, "z": 1, "out": 2}
    assert g.users["y"] == [1, 2] and g.users["w"] == [0] and g.users["out"] == []
    dag = g.dag()
    assert sorted((u, v, d["tensor"]) for u, v, d in dag.edges(data=True)) == [
        (0, 1, "y"), (0, 2, "y"), (1, 2, "z")]


def test_operators_must_come_in_schedule_order():
    g = Graph()
    g.add_input("x", (4,))
    with pytest.raises(ProblemError, match="'late'.*reads 'y'"):
        g.add_operator("Relu", ["y"], [("z", (4,))], name="late")
    g.add_operator("Relu", ["x"], [("y", (4,))], name="r")
    with pytest.raises(ProblemError, match="defined twice"):
        g.add_operator("Relu", ["x"], [("y", (4,))])
    with pytest.raises(ProblemError, match="defined twice"):
        g.add_operator("Relu", ["x"], [("y2", (4,))], name="r")
    with pytest.raises(ProblemError, match="concat axis"):
        g.add_operator("Concat", ["x", "y"], [("c", (8,))], concat_axis=1)
    with pytest.raises(ProblemError, match="not a tensor"):
        g.mark_output("nope")


def test_an_in_place_operator_without_outputs_keeps_its_inputs_alive():
    from cpplan.graph import liveness

    g = Graph()
    g.add_input("x", (4,))
    g.add_operator("Mul", ["x"], [("a", (4,))])
    g.add_operator("Mul", ["x"], [("b", (4,))])
    g.add_operator("AddInPlace", ["a", "b"], [])  # a += b: b is read here
    g.add_operator("Sum", ["a"], [("s", ())])
    live = liveness(g, inputs_in_arena=True)
    assert live.lifetime("b") == (1, 3) and live.lifetime("a") == (0, 4)
    with pytest.raises(ProblemError, match="makes no tensor and reads none"):
        g.add_operator("Nothing", [], [])
    with pytest.raises(ProblemError, match="cannot be in place, a view"):
        g.add_operator("View", ["a"], [], view=True)


def test_topological_order_keeps_a_valid_order_and_repairs_a_wrong_one():
    nodes = [(["x"], ["a"]), (["a"], ["b"]), (["a", "b"], ["c"])]
    assert topological_order(nodes, ["x"]) == [0, 1, 2]
    shuffled = [nodes[2], nodes[0], nodes[1]]
    assert topological_order(shuffled, ["x"]) == [1, 2, 0]
    with pytest.raises(ProblemError, match="nothing makes"):
        topological_order([(["q"], ["a"])], ["x"])
    with pytest.raises(ProblemError, match="cycle"):
        topological_order([(["b"], ["a"]), (["a"], ["b"])])
