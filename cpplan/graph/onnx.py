"""ONNX front end: a model file to a :class:`cpplan.graph.Graph` (needs ``pip install
'cpplan[onnx]'``; ``onnx`` is imported only when a model is loaded).

What it does, in order:

1. Reads the model with ``onnx.load(..., load_external_data=False)``: weights stored outside the
   file are never read, and the file works from any folder whether ``M.onnx.data`` is beside it
   or not. A truncated or corrupt file gives a :class:`FormatError`.
2. Refuses control flow (``If``, ``Loop``, ``Scan``, or any node carrying a subgraph) and
   operators of domains without shape inference, with an error naming the node and what to do.
   ONNX Runtime's contrib operators (``com.microsoft``) that :mod:`.onnx_contrib` knows get their
   shapes from a shape twin; others are refused with the advice to save the model at the basic
   optimisation level.
3. Takes the node order as the schedule (reordered topologically, closest to the file's order,
   only if the file's order is not topological).
4. Takes the weights out of the graph (:func:`_detach_weights`: every initializer stored
   externally or larger than 4096 elements becomes a typed graph input, its data dropped), so the
   ONNX checker and shape inference run in memory and resolve no file against the current
   directory.
5. Gives the graph inputs static shapes (:mod:`.onnx_dims`): symbolic dimensions from ``dims``,
   whole shapes from ``input_shapes``, and every dimension that is an expression of them
   (``Min(512, s50)``) its value. Every input dimension still unknown is named in one error.
6. Infers shapes with ``onnx.shape_inference`` (strict, with data propagation), then evaluates
   the small constant sub-graphs (:mod:`.onnx_fold`: ``Shape -> Gather -> Concat``, ``Constant
   -> ConstantOfShape -> ... -> Where``) and infers again, until nothing more folds. A tensor
   whose shape stays unknown is an error naming the node that makes it and the missing
   dimension.
7. Initializers are constants; so is everything computed from constants alone (the ``light_*``
   models of the onnx package make their weights with ``ConstantOfShape``). Such nodes do not run
   at inference time and take no step of the schedule; a constant computed from weights records
   them (:attr:`Graph.derived`), so the constants figure counts each weight once.
8. Marks operators for the rewrites: element-wise operators, and ``Softmax``/``LogSoftmax`` as
   ONNX Runtime runs them, may run in place over an input of the output's size (see
   ``INPLACE_OPS``); reshapes and friends are views (``Dropout`` too: inference models);
   ``Concat`` records its axis.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import FormatError, ProblemError, missing_extra
from .ir import Graph, element_bytes, topological_order
from .onnx_fold import RANDOM_OPS

if TYPE_CHECKING:
    from onnx import GraphProto, ModelProto, NodeProto, ValueInfoProto

    from ..problem import Problem

__all__ = ["load_onnx", "ONNX_DTYPES", "INPLACE_OPS", "VIEW_OPS", "CONTROL_FLOW"]

CONTROL_FLOW = frozenset({"If", "Loop", "Scan", "SequenceMap"})

# ONNX element types -> cpplan dtype names (sizes per ir.dtype_bits).
ONNX_DTYPES = {
    "FLOAT": "float32", "UINT8": "uint8", "INT8": "int8", "UINT16": "uint16", "INT16": "int16",
    "INT32": "int32", "INT64": "int64", "BOOL": "bool", "FLOAT16": "float16",
    "DOUBLE": "float64", "UINT32": "uint32", "UINT64": "uint64", "COMPLEX64": "complex64",
    "COMPLEX128": "complex128", "BFLOAT16": "bfloat16", "FLOAT8E4M3FN": "float8_e4m3fn",
    "FLOAT8E4M3FNUZ": "float8_e4m3fnuz", "FLOAT8E5M2": "float8_e5m2",
    "FLOAT8E5M2FNUZ": "float8_e5m2fnuz", "UINT4": "uint4", "INT4": "int4",
    "FLOAT4E2M1": "float4_e2m1", "FLOAT8E8M0": "float8_e8m0fnu", "UINT2": "uint2",
    "INT2": "int2", "FLOAT6E2M3": "float6_e2m3", "FLOAT6E3M2": "float6_e3m2",
}

# Element-wise operators: output 0 may overwrite one of these inputs (when it has the output's
# size, which the rewrite checks). "all" = every input (variadic Sum/Max/Min/Mean).
_UNARY = ("Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid",
          "HardSwish", "Tanh", "Softplus", "Softsign", "Gelu", "Mish", "ThresholdedRelu", "Exp",
          "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Ceil", "Floor", "Round", "Sign", "Erf",
          "Sin", "Cos", "Clip", "Not", "BatchNormalization", "Shrink")
_BINARY = ("Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor")
INPLACE_OPS: dict[str, tuple[int, ...] | str] = {op: (0,) for op in _UNARY}
INPLACE_OPS.update({op: (0, 1) for op in _BINARY})
INPLACE_OPS.update({"Sum": "all", "Max": "all", "Min": "all", "Mean": "all"})
# Row-wise operators that ONNX Runtime's CPU kernels declare ``MayInplace(0, 0)``
# (onnxruntime/core/providers/cpu/math/softmax.cc): each row is read whole before it is
# written, so the output may take the input's bytes.
INPLACE_OPS.update({"Softmax": (0,), "LogSoftmax": (0,)})
# Cast is MayInplace(0, 0) too (cpu/tensor/cast_op.cc), where ONNX Runtime's allocation planner
# finds input and output of one size: between element types of one size (float32 <-> int32).
INPLACE_OPS["Cast"] = (0,)
# Left out on purpose: comparisons (the element size changes), LRN and the normalisations
# across rows (an element's output depends on rows not yet read).

VIEW_OPS = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"})
_KEEP_DATA_ELEMENTS = 4096  # integer initializers this small keep their data (shapes, axes)


def _import_onnx() -> ModuleType:
    try:
        import onnx  # noqa: F401
        import onnx.shape_inference  # noqa: F401
    except ImportError:
        raise missing_extra("the ONNX front end", "onnx", "onnx") from None
    return onnx


def file_digest(path: str | Path) -> str:
    """The SHA-256 of the file's bytes (hex)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _read(onnx: ModuleType, path: str) -> ModelProto:
    from google.protobuf.message import DecodeError

    try:
        model = onnx.load(path, load_external_data=False)
    except (DecodeError, RuntimeError, ValueError, UnicodeDecodeError) as e:
        raise FormatError(f"not a readable ONNX model (truncated or corrupt file?): {e}",
                          source=path) from None
    if not model.HasField("graph") or not model.graph.node:
        raise FormatError("not a readable ONNX model: it has no graph or no nodes (truncated or "
                          "corrupt file?)", source=path)
    return model


def _schedule(graph: GraphProto, source: str) -> None:
    """Put the nodes in a topological order (the file's own when it is one): shape inference
    and the checker need it, and it is the schedule."""
    defined = [t.name for t in graph.initializer] + [v.name for v in graph.input] + [""]
    try:
        order = topological_order([(list(n.input), list(n.output)) for n in graph.node],
                                  defined)
    except ProblemError as e:
        raise ProblemError(e.reason, source=source, field="schedule") from None
    if order != list(range(len(graph.node))):
        nodes = [graph.node[i] for i in order]
        copies = [type(n)() for n in nodes]
        for c, n in zip(copies, nodes, strict=True):
            c.CopyFrom(n)
        del graph.node[:]
        graph.node.extend(copies)


def _check(onnx: ModuleType, model: ModelProto, path: str) -> None:
    """The ONNX checker, in memory, on the graph without its weights (see
    :func:`_detach_weights`): nothing is resolved against the current directory."""
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else "invalid model"
        raise FormatError(f"not a valid ONNX model (truncated or corrupt file?): the ONNX "
                          f"checker says: {first}", source=path) from None


def _detach_weights(onnx: ModuleType, graph: GraphProto) -> dict[str, tuple[tuple[int, ...], int]]:
    """Take the weights out of ``graph``, in place: every initializer stored in an external
    file (present or not) or larger than ``_KEEP_DATA_ELEMENTS`` elements becomes a graph input
    of its type and shape, so the checker and shape inference see its shape and never its data.
    Small initializers stored in the file keep their data (shapes, axes, masks' constants).
    Returns ``{name: (dims, element type)}`` of the weights taken out."""
    weights: dict[str, tuple[tuple[int, ...], int]] = {}
    kept = []
    for t in graph.initializer:
        external = t.data_location == onnx.TensorProto.EXTERNAL
        n = 1
        for d in t.dims:
            n *= d
        if not external and n <= _KEEP_DATA_ELEMENTS:
            kept.append(t)
            continue
        weights[t.name] = (tuple(t.dims), t.data_type)
    if not weights:
        return weights
    listed = {vi.name for vi in graph.input}  # IR < 4 lists initializers among the inputs
    keep_copies = [type(t)() for t in kept]
    for c, t in zip(keep_copies, kept, strict=True):
        c.CopyFrom(t)
    del graph.initializer[:]
    graph.initializer.extend(keep_copies)
    for name, (dims, dtype) in weights.items():
        if name not in listed:
            graph.input.append(onnx.helper.make_tensor_value_info(name, dtype, list(dims)))
    return weights


def _node_name(node: NodeProto, i: int) -> str:
    return node.name or f"{node.op_type}_{i}"


def _default_opset(model: ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)


def _infer(onnx: ModuleType, model: ModelProto, source: str, opset: int, contrib: bool
           ) -> ModelProto:
    """Shapes of every tensor: onnx's strict shape inference with data propagation; for graphs
    with ONNX Runtime contrib operators, on their shape twin (:mod:`.onnx_contrib`), the shapes
    then copied back."""
    from .onnx_contrib import shape_twin

    target = shape_twin(onnx, model, opset, source) if contrib else model
    try:
        inferred = onnx.shape_inference.infer_shapes(target, check_type=True, strict_mode=True,
                                                     data_prop=True)
    except Exception as e:  # onnx raises InferenceError and others; all mean "bad model"
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ProblemError(f"shape inference failed: {first}", source=source,
                           field="shape") from None
    if not contrib:
        return inferred
    made = {o for n in model.graph.node for o in n.output}
    del model.graph.value_info[:]
    model.graph.value_info.extend(vi for vi in inferred.graph.value_info if vi.name in made)
    by_name = {vi.name: vi for vi in inferred.graph.output}
    for vi in model.graph.output:
        if vi.name in by_name:
            vi.CopyFrom(by_name[vi.name])
    return model


def _forget_unknown_dims(model: ModelProto) -> None:
    """Drop the placeholders (``unk__k``) shape inference wrote for what it could not compute,
    so a later inference may fill them in."""
    for vi in model.graph.value_info:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for d in vi.type.tensor_type.shape.dim:
                if d.dim_param.startswith("unk__"):
                    d.ClearField("dim_param")


def load_onnx(path: str | Path, *, dims: Mapping[str, int] | None = None,
              input_shapes: Mapping[str, Sequence[int]] | None = None,
              name: str | None = None) -> Graph:
    """The graph of the ONNX model at ``path`` (see the module docstring).

    ``dims`` gives values to symbolic dimensions (``{"batch": 1, "sequence": 128}``);
    ``input_shapes`` gives whole shapes of graph inputs (``{"input_ids": (1, 128)}``), and the
    symbolic dimensions in them take their values from it. Works from any folder, whether the
    weights' external data file is there or not: weights are never read.
    Raises :class:`FormatError` for an unreadable file and :class:`ProblemError` naming the node
    for control flow or a shape that stays unknown, or naming every input dimension missing.

    Args:
        path: The ``.onnx`` file.
        dims: Values of symbolic dimensions, by name.
        input_shapes: Whole shapes of graph inputs, by input name.
        name: The graph's name (default: the file's name without extension).

    Returns:
        The graph in schedule order, every tensor with a static shape.

    Raises:
        CpplanError: The ``onnx`` package is not installed (the ``onnx`` extra).
        FormatError: A missing, truncated or corrupt file.
        ProblemError: Control flow, an operator without shape inference, a dimension or
            input shape that is not a non-negative integer, input dimensions left unknown (all
            named), or a shape that stays unknown (naming the node).
    """
    from .onnx_contrib import CONTRIB_SHAPES
    from .onnx_dims import apply_dims
    from .onnx_fold import fold_constants

    onnx = _import_onnx()
    source = str(path)
    model = _read(onnx, source)
    graph = model.graph
    dims = dict(dims or {})
    for k, v in dims.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ProblemError(f"dimension {k!r} must be a non-negative integer, got {v!r}",
                               source=source, field="dims")
    shapes: dict[str, tuple[int, ...]] = {}
    for k, given in (input_shapes or {}).items():
        shape = tuple(given)
        if any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in shape):
            raise ProblemError(f"input shape for {k!r} must be non-negative integers, got "
                               f"{given!r}", source=source, field="input_shapes")
        shapes[k] = shape
    contrib = False
    for i, node in enumerate(graph.node):
        nn = _node_name(node, i)
        if node.op_type in CONTROL_FLOW or any(
                a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                for a in node.attribute):
            raise ProblemError(f"node {nn!r} ({node.op_type}): control flow is not supported; "
                               "cpplan plans programs with a fixed schedule (unroll or "
                               "specialise the model first)", source=source, field="node")
        if node.domain == "com.microsoft" and node.op_type in CONTRIB_SHAPES:
            contrib = True
        elif node.domain == "com.microsoft":
            raise ProblemError(f"node {nn!r} (com.microsoft.{node.op_type}): cpplan does not "
                               "know the shapes of this ONNX Runtime contrib operator; save "
                               "the model at the basic optimisation level (SessionOptions."
                               "graph_optimization_level = ORT_ENABLE_BASIC), where ONNX "
                               "Runtime keeps standard operators", source=source, field="node")
        elif node.domain not in ("", "ai.onnx"):
            raise ProblemError(f"node {nn!r} ({node.domain}.{node.op_type}): operators of "
                               f"domain {node.domain!r} have no shape inference; export the "
                               "model with standard ONNX operators only", source=source,
                               field="node")
    _schedule(graph, source)
    weights = _detach_weights(onnx, graph)
    consumers: dict[str, str] = {}
    for i, node in enumerate(graph.node):
        for t in node.input:
            consumers.setdefault(t, f"node {_node_name(node, i)!r} ({node.op_type})")
    apply_dims(model, dims, shapes, set(weights), consumers, source)
    _check(onnx, model, source)
    keep = {vi.name for vi in graph.output}
    opset = _default_opset(model)
    for _ in range(64):  # each round resolves one more link of shape arithmetic
        model = _infer(onnx, model, source, opset, contrib)
        if not fold_constants(onnx, model, opset, keep):
            break
        _forget_unknown_dims(model)
    return _build(onnx, model, source, name if name is not None else Path(source).stem,
                  weights)


def _tensor_type(onnx: ModuleType, vi: ValueInfoProto | None, what: str, source: str
                 ) -> tuple[tuple[int, ...], str]:
    if vi is None or not vi.type.HasField("tensor_type"):
        raise ProblemError(f"{what}: not a tensor, or its type is unknown", source=source,
                           field="shape")
    tt = vi.type.tensor_type
    elem = onnx.TensorProto.DataType.Name(tt.elem_type) if tt.elem_type else "UNDEFINED"
    if elem not in ONNX_DTYPES:
        raise ProblemError(f"{what}: element type {elem} has no fixed size", source=source,
                           field="dtype")
    if not tt.HasField("shape"):
        raise ProblemError(f"{what}: shape unknown after shape inference", source=source,
                           field="shape")
    shape: list[int] = []
    for k, dim in enumerate(tt.shape.dim):
        if not dim.HasField("dim_value"):
            p = dim.dim_param
            if p and not p.startswith("unk__") and p.isidentifier():
                missing = (f"symbolic dimension {p!r}; give it with dims={{{p!r}: N}} "
                           f"(cpplan extract --dim {p}=N)")
            elif p and not p.startswith("unk__"):
                missing = (f"the exporter's expression {p!r}, whose symbols are not all given "
                           "(give the graph inputs' dimensions with --dim or --input-shape)")
            else:  # shape inference names the dimensions it cannot compute unk__<k>
                missing = "it cannot be inferred: it depends on values known only at run time"
            raise ProblemError(f"{what}: dimension {k} unknown ({missing})", source=source,
                               field="shape")
        shape.append(dim.dim_value)
    return tuple(shape), ONNX_DTYPES[elem]


def _has_shape(types: dict[str, Any], name: str) -> bool:
    vi = types.get(name)
    return (vi is not None and vi.type.HasField("tensor_type")
            and vi.type.tensor_type.HasField("shape"))


def _build(onnx: ModuleType, model: ModelProto, source: str, name: str,
           weights: Mapping[str, tuple[tuple[int, ...], int]]) -> Graph:
    graph = model.graph
    types: dict[str, Any] = {}
    for vi in [*graph.input, *graph.value_info, *graph.output]:
        types.setdefault(vi.name, vi)
    g = Graph(name)
    constant: set[str] = set()
    for t in graph.initializer:
        dtype = ONNX_DTYPES.get(onnx.TensorProto.DataType.Name(t.data_type), "uint8")
        g.add_constant(t.name, tuple(t.dims), dtype)
        constant.add(t.name)
    for w, (dims, elem) in weights.items():
        if w not in constant:
            g.add_constant(w, dims, ONNX_DTYPES.get(onnx.TensorProto.DataType.Name(elem),
                                                    "uint8"))
            constant.add(w)
    for vi in graph.input:
        if vi.name in constant:
            continue  # IR < 4 lists initializers among the inputs
        shape, dtype = _tensor_type(onnx, vi, f"graph input {vi.name!r}", source)
        g.add_input(vi.name, shape, dtype)
    names: set[str] = set()
    for i, node in enumerate(graph.node):  # in schedule order (see _schedule)
        nn = _node_name(node, i)
        while nn in names:
            nn += "'"
        names.add(nn)
        ins = [t for t in node.input if t]
        outs = [t for t in node.output if t]
        if node.op_type not in RANDOM_OPS and all(t in constant for t in ins):
            for o in outs:  # folded: made once, before the run
                shape, dtype = _tensor_type(onnx, types.get(o),
                                            f"node {nn!r} ({node.op_type}) output {o!r}", source)
                g.add_constant(o, shape, dtype, derived_from=ins)
                constant.add(o)
            continue
        if node.op_type == "Dropout" and len(outs) > 1 and ins and not _has_shape(types, outs[1]):
            # the mask of opset < 10 is not inferred; it has the input's shape, one byte each
            out_types = [(outs[0], *_tensor_type(onnx, types.get(outs[0]),
                                                 f"node {nn!r} (Dropout) output {outs[0]!r}",
                                                 source)),
                         (outs[1], g.tensors[ins[0]].shape, "bool")]
        else:
            out_types = [(o, *_tensor_type(onnx, types.get(o),
                                           f"node {nn!r} ({node.op_type}) output {o!r}", source))
                         for o in outs]
        kw: dict[str, Any] = {}
        spec = INPLACE_OPS.get(node.op_type)
        if spec is not None and out_types:
            idx = range(len(ins)) if isinstance(spec, str) else spec  # (a str: "all")
            # only real inputs with the output's element type qualify
            kw["inplace"] = tuple(k for k in idx if k < len(ins) and ins[k] not in constant)
            if node.op_type == "BatchNormalization" and len(outs) > 1:
                kw["inplace"] = ()  # training mode also writes running statistics
            if (node.op_type == "Cast" and ins and ins[0] in g.tensors
                    and element_bytes(g.tensors[ins[0]].dtype) != element_bytes(out_types[0][2])):
                kw["inplace"] = ()  # ONNX Runtime casts in place only between equal sizes
        if node.op_type in VIEW_OPS and ins and ins[0] not in constant:
            kw["view"] = True
        if node.op_type == "Concat" and out_types:
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            rank = len(out_types[0][1])
            kw["concat_axis"] = axis + rank if axis < 0 else axis
        g.add_operator(node.op_type, ins, out_types, name=nn, **kw)
    for vi in graph.output:
        if vi.name not in g.tensors:
            raise FormatError(f"graph output {vi.name!r} is made by no node (truncated or "
                              "corrupt file?)", source=source)
        g.mark_output(vi.name)
    return g


def onnx_source(path: str | Path) -> dict[str, Any]:
    """Provenance of a model file for ``problem.meta``: path, bytes, sha256, onnx version."""
    onnx = _import_onnx()
    p = Path(path)
    return {"model": str(path), "bytes": p.stat().st_size, "sha256": file_digest(p),
            "onnx_version": onnx.__version__}


def extract_onnx(
    path: str | Path,
    *,
    dims: Mapping[str, int] | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    inputs_in_arena: bool = False,
    in_place: bool = False,
    concat_in_place: bool = False,
    views: bool = True,
    alignment: int = 1,
    name: str | None = None,
    source: Any = None,
    command: str | None = None,
    traffic: Mapping[str, int] | None = None,
) -> Problem:
    """The :class:`cpplan.Problem` of an ONNX model: :func:`load_onnx` then
    :func:`cpplan.graph.to_problem`, with the model's provenance (path, size, sha256, onnx
    version, ``dims``) in ``meta["source"]`` unless ``source`` is given. Every buffer's
    ``traffic`` is what :mod:`cpplan.graph.traffic` counts, or what ``traffic`` states.

    Args:
        path: The ``.onnx`` file.
        dims: As for :func:`load_onnx`.
        input_shapes: As for :func:`load_onnx`.
        inputs_in_arena: As for :func:`~cpplan.graph.to_problem`.
        in_place: As for :func:`~cpplan.graph.to_problem`.
        concat_in_place: As for :func:`~cpplan.graph.to_problem`.
        views: As for :func:`~cpplan.graph.to_problem`.
        alignment: Every buffer's alignment.
        name: The problem's name (default: the file's).
        source: Provenance for ``meta["source"]`` (default: the file's path, size, sha256).
        command: The command that regenerates the problem.
        traffic: Buffer id -> bytes moved per run, in place of the count.

    Returns:
        The problem (see :func:`~cpplan.graph.to_problem`).

    Raises:
        CpplanError: The ``onnx`` package is not installed.
        FormatError: As for :func:`load_onnx`.
        ProblemError: As for :func:`load_onnx` and :func:`~cpplan.graph.to_problem`.
    """
    from .to_problem import to_problem

    graph = load_onnx(path, dims=dims, input_shapes=input_shapes, name=name)
    if source is None:
        source = onnx_source(path)
    if dims:
        source = {**source, "dims": dict(dims)}
    if input_shapes:
        source = {**source, "input_shapes": {k: list(v) for k, v in input_shapes.items()}}
    return to_problem(graph, inputs_in_arena=inputs_in_arena, in_place=in_place,
                      concat_in_place=concat_in_place, views=views, alignment=alignment,
                      source=source, command=command, traffic=traffic)
