"""TensorFlow Lite Micro: a ``.tflite`` model to the problem TFLM plans, and a plan back into the
model as TFLM's offline memory plan (needs ``pip install 'cpplan[tflite]'``).

The problem is the one TFLM's own planner is given (tensorflow/tflite-micro,
``tensorflow/lite/micro/micro_allocation_info.cc``, ``AllocationInfoBuilder``, and
``micro_allocator.cc``, ``CreatePlan``):

* **steps**: TFLM's allocation scopes. Step 0 holds the inputs (and the outputs no operator
  makes) of subgraph 0; operator ``i`` of subgraph 0 is step ``i + 1``; a control-flow operator
  (``IF``, ``WHILE``, ``CALL_ONCE``) walks the subgraphs it calls in further steps before its own
  inputs' last use, as TFLM does. A tensor lives from the step that makes it to its last reader,
  both included (``[first, last + 1)`` here); subgraph outputs live to the subgraph's last step.
* **planned tensors**: no constant data, not a variable tensor (TFLM gives those persistent memory
  at the arena's tail), a non-zero size. A tensor is ``prod(shape) * element size`` bytes,
  rounded up to 16 (``AlignSizeUp(bytes, MicroArenaBufferAlignment())``), 16-byte aligned, in
  one pool ``arena``. Every subgraph's tensors count.
* **offline plan in the file** (metadata ``OfflineMemoryAllocation``): its offsets become fixed
  offsets. Its entries run over the tensors of all subgraphs, subgraph after subgraph (entry
  ``tensors in earlier subgraphs + index``). Measured in the tflite-micro package this module is
  tested with (a plan that shifts subgraph 0 alone moves only subgraph 0's tensors); older
  sources (``InitializeAllocationInfo`` at 01010b3e) read ``offline_offsets[i]`` in every
  subgraph.
* **scratch buffers** (``RequestScratchBufferInArena``, e.g. int8 ``MEAN``) are planned by TFLM
  online, around the offline plan. The kernels only say their size when they run, so they are
  measured in TFLM's interpreter (:func:`cpplan.runtimes.tflm_interpreter.scratch_bytes`) and
  given here as ``scratch={(subgraph, operator): bytes}``: one buffer
  ``scratch:<op>:<OPERATOR>`` (``scratch:<subgraph>.<op>:...`` outside subgraph 0) alive at
  the operator's step. They are in the problem, so the plan leaves room for them; they are not
  written to the file (TFLM has no slot for them) and TFLM's greedy first fit finds that room or
  a lower one (:func:`predicted_head`).
* **traffic** (:attr:`cpplan.Buffer.traffic`, bytes moved per run): a tensor's bytes
  (``prod(shape) * element size``, not the 16-byte padding) times one write and one read per
  operator that reads it: ``bytes x (1 + readers)``, as :mod:`cpplan.graph.traffic` counts
  for ONNX. The write of a subgraph's input is the caller's (subgraph 0: the application fills
  ``input(0)`` in the arena) or the control-flow operator's (TFLM's ``IF`` and ``WHILE`` copy
  their inputs into the called subgraph's); a subgraph's outputs are read once more, by the
  caller or by the operator that copies them back. Both branches of an ``IF`` count, and a
  subgraph called by ``WHILE`` counts one pass (which branch runs, and how many passes the
  loop makes, is known at run time only). A scratch buffer is written and
  read once by its kernel: ``2 x bytes``. ``traffic={"buffer id": bytes}`` states it instead.

Buffers are named ``<tensor index>:<tensor name>`` (``<subgraph>.<index>:<name>`` outside
subgraph 0); ``meta["tflm"]`` maps every buffer to its subgraph and tensor and lists the
operators per step, so a user finds them in the model.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CpplanError, FormatError, PlanError, missing_extra
from ..plan import Plan, ensure_valid
from ..problem import Buffer, Pool, Problem

__all__ = ["ALIGNMENT", "POOL", "OFFLINE_METADATA", "load_model", "pack_model", "schema",
           "extract_tflm", "offline_offsets", "offline_offsets_of", "offline_metadata",
           "subgraph_starts", "write_offline_plan",
           "align_model", "predicted_head", "tensor_bytes", "operator_name", "ints"]

ALIGNMENT = 16  # MicroArenaBufferAlignment()
POOL = "arena"
OFFLINE_METADATA = "OfflineMemoryAllocation"
ONLINE = -1  # kOnlinePlannedBuffer
TRAFFIC_HOW = ("bytes moved per run: tensor bytes x (1 write + 1 per operator that reads it); "
               "subgraph inputs written by the caller or the control-flow operator, subgraph "
               "outputs read once more, scratch buffers 2 x bytes")
FILE_IDENTIFIER = b"TFL3"

# Bytes per element (TfLiteTypeSizeOf as TFLM uses it in TfLiteEvalTensorByteLength).
_ELEMENT_BYTES = {"FLOAT32": 4, "FLOAT16": 2, "INT32": 4, "UINT8": 1, "INT64": 8, "BOOL": 1,
                  "INT16": 2, "COMPLEX64": 8, "INT8": 1, "FLOAT64": 8, "COMPLEX128": 16,
                  "UINT64": 8, "UINT32": 4, "UINT16": 2, "BFLOAT16": 2, "RESOURCE": 1}
_CONTROL_FLOW = {"IF": ("thenSubgraphIndex", "elseSubgraphIndex"),
                 "WHILE": ("condSubgraphIndex", "bodySubgraphIndex"),
                 "CALL_ONCE": ("initSubgraphIndex",)}


def schema() -> Any:
    """tflite-micro's generated flatbuffer schema module (object API: ``ModelT``)."""
    try:
        from tflite_micro.tensorflow.lite.micro.python import schema_py_generated
    except ImportError:
        raise missing_extra("reading TFLite Micro models", "tflite-micro", "tflite") from None
    return schema_py_generated


def ints(values: Any) -> list[int]:
    """A flatbuffer index vector (None, a list or a numpy array in the object API) as ints."""
    return [] if values is None else [int(v) for v in values]


def _enum_names(enum: type) -> dict[int, str]:
    return {v: k for k, v in vars(enum).items() if not k.startswith("_") and isinstance(v, int)}


def load_model(source: str | Path | bytes) -> Any:
    """The model as tflite-micro's ``ModelT`` (a :class:`FormatError` if it is not a .tflite)."""
    s = schema()
    where = "model" if isinstance(source, bytes | bytearray) else str(source)
    data = bytes(source) if isinstance(source, bytes | bytearray) else Path(source).read_bytes()
    if len(data) < 8 or data[4:8] != FILE_IDENTIFIER:
        raise FormatError("not a TFLite flatbuffer (file identifier 'TFL3' missing)",
                          source=where)
    try:
        model = s.ModelT.InitFromObj(s.Model.GetRootAsModel(data, 0))
    except Exception as e:  # flatbuffers raises bare struct/index errors on corrupt input
        raise FormatError(f"corrupt TFLite flatbuffer ({type(e).__name__}: {e})",
                          source=where) from None
    if not model.subgraphs:
        raise FormatError("the model has no subgraph", source=where)
    return model


def pack_model(model: Any) -> bytes:
    """The model's flatbuffer bytes (not yet 16-byte aligned: see :func:`align_model`)."""
    import flatbuffers

    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


def align_model(data: bytes) -> bytes:
    """The model repacked by tflite-micro's own aligner (buffers on 16-byte boundaries, as TFLM
    requires of the weights it reads in place)."""
    from tflite_micro.tensorflow.lite.micro.tools.tflite_flatbuffer_align_wrapper import (
        align_tflite_model,
    )

    with tempfile.TemporaryDirectory(prefix="cpplan-tflm-") as tmp:
        src, dst = Path(tmp, "in.tflite"), Path(tmp, "out.tflite")
        src.write_bytes(data)
        align_tflite_model(str(src), str(dst))
        return dst.read_bytes()


def operator_name(model: Any, op: Any) -> str:
    """``CONV_2D``, ``MEAN``, ... (the custom code for custom operators)."""
    code = model.operatorCodes[op.opcodeIndex]
    if code.customCode:
        return code.customCode.decode() if isinstance(code.customCode, bytes) else code.customCode
    builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
    return _enum_names(schema().BuiltinOperator).get(builtin, f"BUILTIN_{builtin}")


def _name(tensor: Any) -> str:
    name = tensor.name
    return name.decode(errors="replace") if isinstance(name, bytes) else (name or "")


def tensor_bytes(tensor: Any, where: str = "") -> int:
    """``prod(shape) * element size``, as ``TfLiteEvalTensorByteLength`` computes it."""
    type_name = _enum_names(schema().TensorType).get(tensor.type, str(tensor.type))
    try:
        element = _ELEMENT_BYTES[type_name]
    except KeyError:
        raise FormatError(f"element type {type_name} has no byte size in TFLM",
                          source=where or None, field=f"tensor {_name(tensor)!r}") from None
    shape = ints(tensor.shape)
    if any(d < 0 for d in shape):
        raise FormatError(f"dynamic shape {shape}: TFLM needs every dimension known",
                          source=where or None, field=f"tensor {_name(tensor)!r}")
    return int(np.prod(shape, dtype=np.int64)) * element


def _has_data(model: Any, tensor: Any) -> bool:
    buffers = model.buffers or []
    if not 0 <= tensor.buffer < len(buffers):
        return False
    b = buffers[tensor.buffer]
    return (b.data is not None and len(b.data) > 0) or (b.offset > 1 and b.size > 0)


def offline_metadata(model: Any) -> int | None:
    """Index in ``model.metadata`` of the offline plan, or None."""
    for i, m in enumerate(model.metadata or []):
        name = m.name.decode() if isinstance(m.name, bytes) else m.name
        if name == OFFLINE_METADATA:
            return i
    return None


def offline_offsets(model: Any) -> list[int] | None:
    """The offsets of the offline plan in the model (``-1``: planned by TFLM), or None."""
    i = offline_metadata(model)
    if i is None:
        return None
    data = model.buffers[model.metadata[i].buffer].data
    words = np.frombuffer(np.asarray(data, dtype=np.uint8).tobytes(), dtype="<i4")
    if len(words) < 3 or len(words) != 3 + int(words[2]):
        raise FormatError(f"metadata {OFFLINE_METADATA}: expected [version, subgraph, n, n "
                          f"offsets], got {len(words)} words")
    return [int(w) for w in words[3:]]


def _buffer_id(subgraph: int, index: int, name: str, prefix: str = "") -> str:
    where = f"{index}" if subgraph == 0 else f"{subgraph}.{index}"
    return f"{prefix}{where}:{name}"


def subgraph_starts(model: Any) -> list[int]:
    """Entry of each subgraph's tensor 0 in TFLM's tensor numbering over all subgraphs."""
    starts, total = [], 0
    for sg in model.subgraphs:
        starts.append(total)
        total += len(sg.tensors or [])
    return starts


class _Lifetimes:
    """TFLM's allocation scopes (``MarkAllocationLifetimes``), per (subgraph, tensor)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.scope = 0
        self.first: dict[tuple[int, int], int] = {}
        self.last: dict[tuple[int, int], int] = {}
        self.steps: list[str] = []  # what runs at each step (step 0: the inputs)
        self.ops: dict[tuple[int, int], int] = {}  # (subgraph, operator) -> step
        self.steps.append("subgraph 0 inputs")
        self.walk(0, set())

    def created(self, key: tuple[int, int]) -> None:
        self.first[key] = self.last[key] = self.scope

    def used(self, key: tuple[int, int]) -> None:
        self.last[key] = self.scope

    def walk(self, sg: int, active: set[int]) -> None:
        if sg in active:
            raise FormatError(f"subgraph {sg} calls itself; TFLM does not plan recursion")
        subgraph = self.model.subgraphs[sg]
        for t in ints(subgraph.inputs) + ints(subgraph.outputs):
            self.created((sg, int(t)))
        for i, op in enumerate(subgraph.operators or []):
            self.scope += 1
            name = operator_name(self.model, op)
            self.steps.append(f"{'' if sg == 0 else f'subgraph {sg} '}operator {i} {name}")
            self.ops[(sg, i)] = self.scope
            for t in ints(op.outputs):
                self.created((sg, int(t)))
            for field in _CONTROL_FLOW.get(name, ()):
                self.scope += 1
                self.steps.append(f"{name} operator {i} calls subgraph "
                                  f"{getattr(op.builtinOptions, field)}")
                self.walk(int(getattr(op.builtinOptions, field)), active | {sg})
            for t in ints(op.inputs):
                if t >= 0:
                    self.used((sg, int(t)))
            for t in ints(op.outputs):
                self.used((sg, int(t)))
        for t in ints(subgraph.outputs):
            self.used((sg, int(t)))


def _readers(model: Any) -> dict[tuple[int, int], int]:
    """(subgraph, tensor) -> the passes that read it in a run: one per operator that reads it
    (twice in one operator: once), one more for a subgraph's outputs (read by the caller, or
    copied back by the control-flow operator that called the subgraph)."""
    readers: dict[tuple[int, int], int] = {}
    for sg, subgraph in enumerate(model.subgraphs):
        for op in subgraph.operators or []:
            for t in set(ints(op.inputs)):
                if t >= 0:
                    readers[(sg, t)] = readers.get((sg, t), 0) + 1
        for t in set(ints(subgraph.outputs)):
            readers[(sg, t)] = readers.get((sg, t), 0) + 1
    return readers


def extract_tflm(source: str | Path | bytes, *,
                 scratch: Mapping[tuple[int, int], int] | None = None,
                 command: str | None = None, name: str | None = None,
                 traffic: Mapping[str, int] | None = None) -> Problem:
    """The problem TFLM's planner solves for this model (see the module docstring).

    ``scratch`` maps (subgraph, operator) to the scratch bytes its kernel requests (as
    measured by :func:`cpplan.runtimes.tflm_interpreter.scratch_bytes`); without it, the
    problem has the tensors only. ``traffic`` maps buffer ids to the bytes they move per run,
    in place of ``bytes x (1 + readers)``. Raises :class:`FormatError` naming the tensor for
    what TFLM cannot plan (dynamic shapes, tensors no operator reaches, non-empty
    intermediates).

    Args:
        source: The ``.tflite`` file, or its bytes.
        scratch: ``(subgraph, operator)`` -> the scratch bytes its kernel requests.
        command: The command that regenerates the problem, for ``meta``.
        name: The problem's name (default: the file's).
        traffic: Buffer id -> bytes moved per run, in place of the count.

    Returns:
        The problem, with one pool ``arena`` (16-byte aligned buffers), the file's offline plan as
        fixed offsets, and ``meta["tflm"]`` mapping buffers back to the model's tensors.

    Raises:
        CpplanError: The ``tflite-micro`` package is not installed (the ``tflite`` extra).
        FormatError: Not a ``.tflite`` flatbuffer, an offline plan of the wrong length, or a
            tensor TFLM cannot plan, naming it.
        ProblemError: A ``traffic`` entry for a buffer the problem does not have.
    """
    from .. import __version__

    where = "model" if isinstance(source, bytes | bytearray) else str(source)
    model = load_model(source)
    offsets = offline_offsets(model)
    total = sum(len(sg.tensors or []) for sg in model.subgraphs)
    if offsets is not None and len(offsets) != total:
        raise FormatError(f"metadata {OFFLINE_METADATA}: {len(offsets)} offsets for {total} "
                          "tensors (TFLM refuses the model)", source=where)
    life = _Lifetimes(model)
    readers = _readers(model)
    starts = subgraph_starts(model)
    last_step = life.scope
    buffers: list[Buffer] = []
    tensors: dict[str, list[int]] = {}
    constants = variables = empty = 0
    for sg, subgraph in enumerate(model.subgraphs):
        for op in subgraph.operators or []:
            for t in ints(op.intermediates):
                if tensor_bytes(subgraph.tensors[t], where):
                    raise FormatError("intermediate tensor of non-zero size (TFLM refuses it)",
                                      source=where,
                                      field=f"tensor {_name(subgraph.tensors[t])!r}")
        for i, tensor in enumerate(subgraph.tensors or []):
            size = tensor_bytes(tensor, where)
            if _has_data(model, tensor):
                constants += 1
                continue
            if tensor.isVariable:
                variables += 1
                continue
            if size == 0:
                empty += 1
                continue
            bid = _buffer_id(sg, i, _name(tensor))
            if (sg, i) not in life.first:
                raise FormatError("no operator reads or writes it and it is no graph input or "
                                  "output: TFLM would plan it at scope -1", source=where,
                                  field=f"tensor {bid!r}")
            fixed = None
            if offsets is not None and offsets[starts[sg] + i] != ONLINE:
                fixed = offsets[starts[sg] + i]
            buffers.append(Buffer(bid, -(-size // ALIGNMENT) * ALIGNMENT, life.first[(sg, i)],
                                  life.last[(sg, i)] + 1, alignment=ALIGNMENT, pools=(POOL,),
                                  offset=fixed,
                                  traffic=size * (1 + readers.get((sg, i), 0))))
            tensors[bid] = [sg, i]
    scratch_ids: dict[str, list[int]] = {}
    for (sg, op_index), size in sorted((scratch or {}).items()):
        step = life.ops.get((sg, op_index))
        if step is None:
            raise CpplanError(f"scratch for operator {op_index} of subgraph {sg}: no such "
                              "operator, or no control flow reaches it")
        if size <= 0:
            continue
        op = model.subgraphs[sg].operators[op_index]
        bid = _buffer_id(sg, op_index, operator_name(model, op), "scratch:")
        buffers.append(Buffer(bid, -(-size // ALIGNMENT) * ALIGNMENT, step, step + 1,
                              alignment=ALIGNMENT, pools=(POOL,), traffic=2 * size))
        scratch_ids[bid] = [sg, op_index]
    if traffic:
        from ..graph.traffic import stated_traffic

        stated = stated_traffic(traffic, (b.id for b in buffers))
        buffers = [replace(b, traffic=stated[b.id]) if b.id in stated else b for b in buffers]
    data = source if isinstance(source, bytes | bytearray) else Path(source).read_bytes()
    meta = {
        "source": {"runtime": "tflite-micro", "model": where,
                   "sha256": hashlib.sha256(data).hexdigest()},
        "cpplan_version": __version__,
        "tflm": {
            "tensors": tensors, "scratch": scratch_ids, "steps": life.steps,
            "last_step": last_step, "tensor_count": total, "subgraphs": len(model.subgraphs),
            "offline_plan_in_file": offsets is not None,
            "not_planned": {"constants": constants, "variables": variables,
                            "zero_size": empty},
        },
        "traffic": {"how": TRAFFIC_HOW, "bytes": sum(b.traffic for b in buffers),
                    "stated": sorted(traffic or {})},
    }
    if command:
        meta["command"] = command
    return Problem(tuple(buffers), (Pool(POOL, alignment=ALIGNMENT),), (),
                   name if name is not None else Path(where).stem, meta)


def _tensor_map(problem: Problem) -> dict[str, list[int]]:
    try:
        return problem.meta["tflm"]["tensors"]
    except (KeyError, TypeError):
        raise CpplanError("the problem was not extracted from a .tflite model "
                          "(meta['tflm'] is missing)") from None


def offline_offsets_of(model: Any, problem: Problem, plan: Plan) -> list[int]:
    """Entry per tensor of the model: the plan's offset, ``-1`` for what TFLM plans itself."""
    starts = subgraph_starts(model)
    out = [ONLINE] * sum(len(sg.tensors or []) for sg in model.subgraphs)
    for bid, (sg, index) in _tensor_map(problem).items():
        out[starts[sg] + index] = plan.offset(bid)
    return out


def write_offline_plan(source: str | Path | bytes, problem: Problem, plan: Plan) -> bytes:
    """The model with ``plan`` as its ``OfflineMemoryAllocation`` metadata, buffers aligned.

    The plan must pass the checker against ``problem`` (raises :class:`PlanError` otherwise):
    TFLM takes any offsets it is given, overlapping or not, and computes wrong numbers with a
    broken plan. ``problem`` must have been extracted from this model (same tensor count).
    Tensors not in the problem (constants, variable tensors, zero-size ones) get ``-1``; so do
    the scratch buffers, which have no entry (TFLM places them online).

    Args:
        source: The ``.tflite`` file, or its bytes.
        problem: The problem :func:`extract_tflm` made of this model.
        plan: A plan for it.

    Returns:
        The new model's bytes (an existing offline plan replaced), 16-byte aligned.

    Raises:
        PlanError: The plan does not pass the checker, or the problem is not this model's.
        FormatError: Not a ``.tflite`` flatbuffer.
    """
    ensure_valid(problem, plan)
    model = load_model(source)
    meta = problem.meta.get("tflm", {})
    total = sum(len(sg.tensors or []) for sg in model.subgraphs)
    if meta.get("tensor_count") != total:
        raise PlanError(f"the problem has {meta.get('tensor_count')} tensors, the model {total}: "
                        "extract the problem from this model")
    words = np.array([1, 0, total, *offline_offsets_of(model, problem, plan)], dtype="<i4")
    s = schema()
    buffer = s.BufferT()
    buffer.data = np.frombuffer(words.tobytes(), dtype=np.uint8).copy()
    at = offline_metadata(model)
    if at is not None:  # replace the old plan's buffer in place
        model.buffers[model.metadata[at].buffer] = buffer
    else:
        model.buffers = list(model.buffers or []) + [buffer]
        entry = s.MetadataT()
        entry.name = OFFLINE_METADATA
        entry.buffer = len(model.buffers) - 1
        model.metadata = list(model.metadata or []) + [entry]
    return align_model(pack_model(model))


def predicted_head(problem: Problem, plan: Plan) -> int:
    """The arena head TFLM will use with ``plan`` written offline: the tensors where the plan
    puts them, the scratch buffers placed online by TFLM's greedy first fit around them (the
    ``tflm-greedy`` replica). Never above ``plan.height``: the plan left room for every scratch
    buffer at its step, and first fit finds that room or lower."""
    from ..planners.registry import get

    scratch = set(problem.meta.get("tflm", {}).get("scratch", {}))
    fixed = tuple(b if b.id in scratch else Buffer(b.id, b.size, b.start, b.end, b.alignment,
                                                     b.pools, plan.offset(b.id))
                  for b in problem.buffers)
    return get("tflm-greedy")(problem.replace(buffers=fixed)).height
