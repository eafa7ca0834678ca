"""Shapes of ONNX Runtime's contrib operators (domain ``com.microsoft``), as ONNX Runtime's
optimiser leaves them in a saved model (``FusedConv``, ``FusedMatMul``, ``Gelu``,
``SkipLayerNormalization``...).

onnx's shape inference does not know them. For each one cpplan knows, a *shape twin* of the
model replaces the node by standard operators whose outputs have the same shapes and types (the
shape functions of ONNX Runtime's ``contrib_defs.cc``, written again: ``FusedConv`` is a ``Conv``
plus an activation, ``FusedMatMul`` an ``Einsum`` with the transposes folded in, the Gelu family
element-wise, ``SkipLayerNormalization`` an ``Add`` then a ``LayerNormalization``); onnx infers
the twin and the shapes are copied back to the real graph, whose nodes stay as they are.

A contrib operator outside this list gets an error that says what to do: save the model at the
basic optimisation level, where ONNX Runtime keeps standard operators.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from ..errors import ProblemError

if TYPE_CHECKING:
    from onnx import ModelProto, NodeProto

__all__ = ["CONTRIB_SHAPES", "shape_twin"]

_DROP_ATTRS = {"activation", "activation_params", "alpha"}
_ELEMENTWISE = {"Gelu", "FastGelu", "QuickGelu", "BiasGelu", "BiasAdd", "BiasSplitGelu"}
CONTRIB_SHAPES = frozenset({"FusedConv", "FusedGemm", "FusedMatMul", "SkipLayerNormalization",
                            "SkipSimplifiedLayerNormalization", "LayerNormalization",
                            "SimplifiedLayerNormalization", "Gelu", "FastGelu", "QuickGelu",
                            "BiasGelu", "BiasAdd"})


def _attr(node: NodeProto, name: str, default: int = 0) -> int:
    return next((a.i for a in node.attribute if a.name == name), default)


def shape_twin(onnx: ModuleType, model: ModelProto, opset: int, source: str) -> ModelProto:
    """A copy of ``model`` whose ``com.microsoft`` nodes are replaced by standard operators
    making outputs of the same names, shapes and types. Raises :class:`ProblemError` naming a
    contrib node it cannot stand in for, with what to do."""
    helper = onnx.helper
    twin = type(model)()
    twin.CopyFrom(model)
    nodes = []
    for i, node in enumerate(twin.graph.node):
        if node.domain != "com.microsoft":
            nodes.append(node)
            continue
        nn = node.name or f"{node.op_type}_{i}"
        made = _stand_in(helper, node, opset)
        if made is None:
            raise ProblemError(
                f"node {nn!r} (com.microsoft.{node.op_type}): cpplan does not know the shapes "
                "of this ONNX Runtime contrib operator; save the model at the basic "
                "optimisation level (SessionOptions.graph_optimization_level = "
                "ORT_ENABLE_BASIC), where ONNX Runtime keeps standard operators",
                source=source, field="node")
        nodes.extend(made)
    del twin.graph.node[:]
    twin.graph.node.extend(nodes)
    return twin


def _stand_in(helper: ModuleType, node: NodeProto, opset: int) -> list[NodeProto] | None:
    op, ins, outs = node.op_type, list(node.input), list(node.output)
    tmp = f"{outs[0]}::cpplan-twin"
    keep = [a for a in node.attribute if a.name not in _DROP_ATTRS]
    if op in ("FusedConv", "FusedGemm"):
        n = helper.make_node(op[len("Fused"):], ins[:3], outs[:1])
        n.attribute.extend(keep)
        return [n]
    if op == "FusedMatMul":
        if _attr(node, "transBatchA") or _attr(node, "transBatchB"):
            return None
        a = "...ji" if _attr(node, "transA") else "...ij"
        b = "...kj" if _attr(node, "transB") else "...jk"
        return [helper.make_node("Einsum", ins[:2], outs[:1], equation=f"{a},{b}->...ik")]
    if op in _ELEMENTWISE:
        real = [t for t in ins if t]
        if op in ("Gelu", "QuickGelu") or len(real) == 1:
            return [helper.make_node("Identity", real[:1], outs[:1])]
        return [helper.make_node("Add", real[:2], outs[:1])]
    if op in ("LayerNormalization", "SimplifiedLayerNormalization"):
        if opset < 17:
            return None
        scale = ins[1]
        return [helper.make_node("LayerNormalization", [ins[0], scale], outs[:3],
                                 axis=_attr(node, "axis", -1))]
    if op in ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization"):
        if opset < 17:
            return None
        total = outs[3] if len(outs) > 3 and outs[3] else tmp
        made = [helper.make_node("Add", ins[:2], [total])]
        if len(ins) > 4 and ins[4]:  # a bias added to the sum
            made = [helper.make_node("Add", ins[:2], [tmp + "0"]),
                    helper.make_node("Add", [tmp + "0", ins[4]], [total])]
        made.append(helper.make_node("LayerNormalization", [total, ins[2]], outs[:3],
                                     axis=-1))
        return made
    return None
