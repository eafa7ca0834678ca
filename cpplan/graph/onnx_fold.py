"""Constant sub-graphs of an ONNX model, evaluated: ``Shape -> Gather -> Concat`` over static
shapes, ``Constant -> ConstantOfShape -> Mul -> Equal -> Where`` and the like become small
initializers, so that shape inference can resolve the ``Expand``, ``Pad``, ``Slice`` and
``Reshape`` that read them.

Nodes are evaluated with onnx's own reference evaluator (``onnx.reference.ReferenceEvaluator``),
one node at a time, and only on small tensors: every input and output has at most
:data:`FOLD_ELEMENTS` elements. Weights (initializers without their data) are never evaluated;
whatever is computed from them stays a node, and the graph front end counts it as a constant
made before the run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from onnx import ModelProto, NodeProto, ValueInfoProto

__all__ = ["FOLD_ELEMENTS", "RANDOM_OPS", "fold_constants"]

FOLD_ELEMENTS = 1 << 16
# Operators whose output may be much larger than their inputs: evaluated only when shape
# inference already says the output is small.
_GROWING = frozenset({"ConstantOfShape", "Expand", "Tile", "Range", "Pad", "Resize",
                      "Upsample", "EyeLike", "OneHot"})
# operators whose outputs differ from run to run: never constants
RANDOM_OPS = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                     "Multinomial", "Bernoulli"})


def _static_shape(vi: ValueInfoProto | None) -> tuple[int, ...] | None:
    if vi is None or not vi.type.HasField("tensor_type"):
        return None
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return None
    dims: list[int] = []
    for d in tt.shape.dim:
        if not d.HasField("dim_value"):
            return None
        dims.append(d.dim_value)
    return tuple(dims)


def _shape_op(node: NodeProto, shape: tuple[int, ...], np: ModuleType) -> Any:
    if node.op_type == "Size":
        return np.array(math.prod(shape), dtype=np.int64)
    rank = len(shape)
    start = next((a.i for a in node.attribute if a.name == "start"), 0)
    end = next((a.i for a in node.attribute if a.name == "end"), rank)
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return np.array(shape[start:end], dtype=np.int64)


def fold_constants(onnx: ModuleType, model: ModelProto, opset: int, keep: set[str]) -> int:
    """Replace, in place, every node of ``model`` whose outputs can be computed before the run
    and are small by initializers holding their values; returns how many nodes were replaced.

    A node qualifies when it is in the default domain, not random, makes no name in ``keep``
    (graph outputs), and either reads only small known values or is a ``Shape``/``Size`` of a
    tensor whose shape is static. An evaluation that fails leaves the node as it is.
    """
    import numpy as np
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator

    graph = model.graph
    types = {vi.name: vi for vi in [*graph.input, *graph.value_info, *graph.output]}
    values: dict[str, Any] = {}
    for t in graph.initializer:
        if math.prod(t.dims) <= FOLD_ELEMENTS and t.data_location != onnx.TensorProto.EXTERNAL:
            values[t.name] = numpy_helper.to_array(t)
    kept, made = [], []
    for node in graph.node:
        outs = [o for o in node.output if o]
        ins = [i for i in node.input if i]
        result = None
        if (node.domain in ("", "ai.onnx") and node.op_type not in RANDOM_OPS and outs
                and not keep.intersection(outs)):
            if node.op_type in ("Shape", "Size") and len(outs) == 1:
                shape = None
                if ins and ins[0] in values:  # a folded value: no value_info any more
                    shape = tuple(int(d) for d in values[ins[0]].shape)
                elif ins:
                    shape = _static_shape(types.get(ins[0]))
                if shape is not None:
                    result = [_shape_op(node, shape, np)]
            elif all(i in values for i in ins) and _small_outputs(node, outs, types):
                result = _evaluate(ReferenceEvaluator, node, ins, values, opset)
        if result is None or any(getattr(r, "size", FOLD_ELEMENTS + 1) > FOLD_ELEMENTS
                                 for r in result):
            kept.append(node)
            continue
        names = outs if len(result) == len(outs) else list(node.output)
        for o, r in zip(names, result, strict=False):
            if not o:
                continue
            values[o] = r
            made.append(numpy_helper.from_array(np.asarray(r), o))
    if made:
        del graph.node[:]
        graph.node.extend(kept)
        graph.initializer.extend(made)
        if model.ir_version < 4:  # there initializers are typed only through the inputs
            graph.input.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type,
                                                                  list(t.dims)) for t in made)
        folded = {t.name for t in made}
        vis = [vi for vi in graph.value_info if vi.name not in folded]
        del graph.value_info[:]
        graph.value_info.extend(vis)
    return len(made)


def _small_outputs(node: NodeProto, outs: list[str], types: dict[str, ValueInfoProto]) -> bool:
    if node.op_type == "Constant":
        for a in node.attribute:
            if a.name == "value":
                return math.prod(a.t.dims) <= FOLD_ELEMENTS
            if a.name == "sparse_value":
                return False
        return True
    shapes = [_static_shape(types.get(o)) for o in outs]
    known = [s for s in shapes if s is not None]
    if len(known) < len(shapes):
        return node.op_type not in _GROWING
    return all(math.prod(s) <= FOLD_ELEMENTS for s in known)


def _evaluate(evaluator: Callable[..., Any], node: NodeProto, ins: list[str],
              values: dict[str, Any], opset: int) -> list[Any] | None:
    try:
        run = evaluator(node, opsets={"": opset})
        out = run.run(None, {i: values[i] for i in ins})
    except Exception:  # the evaluator lacks the operator or the case: the node stays
        return None
    return list(out)
