"""TFLM's own interpreter (``tflite_micro.runtime``, from ``pip install 'cpplan[tflite]'``), as
cpplan uses it: run a model, read the arena head it really used, measure the kernels' scratch
buffers, find the smallest arena a model runs in.

The interpreter reports its memory with ``print_allocations``, which writes through C stdio
(``MicroPrintf``), not through Python's ``sys.stdout``: it is captured at the file-descriptor
level (:func:`captured`). Its error messages go the same way and are captured too, so a failed
allocation is one :class:`TflmError` carrying TFLM's own words.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CpplanError, missing_extra
from .tflm import (
    ALIGNMENT,
    ints,
    load_model,
    operator_name,
    pack_model,
    schema,
    tensor_bytes,
)

__all__ = ["TflmError", "Run", "captured", "run", "arena_head", "scratch_bytes",
           "smallest_arena", "random_inputs", "ensure_runs", "DEFAULT_ARENA"]

DEFAULT_ARENA = 1 << 24  # 16 MiB: room for every model cpplan is pointed at
_HEAD = re.compile(r"Arena allocation head (\d+) bytes")
_TAIL = re.compile(r"Arena allocation tail (\d+) bytes")


class TflmError(CpplanError):
    """TFLM refused the model (its own message follows)."""


def _runtime() -> Any:
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError:
        raise missing_extra("running TFLM", "tflite-micro", "tflite") from None
    return runtime


@contextlib.contextmanager
def captured() -> Iterator[list[str]]:
    """Collect what C code writes to file descriptors 1 and 2 inside the block (the list is
    filled when the block ends)."""
    libc = ctypes.CDLL(None)
    out: list[str] = []
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as sink:
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            yield out
        finally:
            libc.fflush(None)
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            sink.seek(0)
            out.append(sink.read().decode(errors="replace"))


@dataclass(frozen=True)
class Run:
    """One inference: the outputs, and the arena's head (the planned tensors and scratch
    buffers) and tail (persistent data) in bytes as TFLM's recording allocator reports them."""

    outputs: tuple[np.ndarray, ...]
    head: int
    tail: int


def _interpreter(model: bytes, arena_size: int, preserve_all_tensors: bool = False) -> Any:
    rt = _runtime()
    config = (rt.InterpreterConfig.kPreserveAllTensors if preserve_all_tensors
              else rt.InterpreterConfig.kAllocationRecording)
    with captured() as log:
        try:
            return rt.Interpreter.from_bytes(model, arena_size=arena_size,
                                             intrepreter_config=config)
        except RuntimeError as e:
            failure = e
    lines = [ln.strip() for ln in log[0].splitlines() if ln.strip()]
    raise TflmError(f"TFLM: {failure}" + (f" ({'; '.join(lines[:4])})" if lines else ""))


def random_inputs(model: bytes, seed: int = 0) -> list[np.ndarray]:
    """One random input per graph input, of its shape and type (integers over their range)."""
    m = load_model(model)
    rng = np.random.default_rng(seed)
    types = {v: k for k, v in vars(schema().TensorType).items() if not k.startswith("_")}
    out = []
    for t in ints(m.subgraphs[0].inputs):
        tensor = m.subgraphs[0].tensors[t]
        dtype = np.dtype(types[tensor.type].lower())
        shape = tuple(ints(tensor.shape))
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, int(info.max) + 1, size=shape, dtype=dtype))
        elif dtype.kind == "b":
            out.append(rng.integers(0, 2, size=shape).astype(bool))
        else:
            out.append(rng.standard_normal(shape).astype(dtype))
    return out


def _head_tail(interpreter: Any) -> tuple[int, int]:
    with captured() as log:
        interpreter.print_allocations()
    head, tail = _HEAD.search(log[0]), _TAIL.search(log[0])
    if head is None or tail is None:
        raise TflmError(f"TFLM printed no arena usage: {log[0][:200]!r}")
    return int(head.group(1)), int(tail.group(1))


def run(model: bytes, inputs: Sequence[np.ndarray] | None = None, *,
        arena_size: int = DEFAULT_ARENA, preserve_all_tensors: bool = False) -> Run:
    """Run the model once in TFLM (random inputs, seed 0, by default)."""
    interpreter = _interpreter(model, arena_size, preserve_all_tensors)
    inputs = random_inputs(model) if inputs is None else inputs
    for i, x in enumerate(inputs):
        interpreter.set_input(x, i)
    with captured() as log:
        try:
            interpreter.invoke()
            failure = None
        except RuntimeError as e:
            failure = e
    if failure is not None:
        raise TflmError(f"TFLM: invoke failed: {failure} ({log[0].strip()[:300]})")
    n_out = len(ints(load_model(model).subgraphs[0].outputs))
    outputs = tuple(np.array(interpreter.get_output(i)) for i in range(n_out))
    head, tail = _head_tail(interpreter) if not preserve_all_tensors else (0, 0)
    return Run(outputs, head, tail)


def arena_head(model: bytes, *, arena_size: int = DEFAULT_ARENA) -> int:
    """The arena head TFLM plans for the model (after allocation, before any inference)."""
    return _head_tail(_interpreter(model, arena_size))[0]


def smallest_arena(model: bytes, *, high: int = DEFAULT_ARENA) -> int:
    """The smallest ``arena_size`` (a multiple of 16) in which TFLM allocates the model and runs
    one inference (bisection: TFLM either fits or refuses, monotonically in the size)."""
    def works(size: int) -> bool:
        try:
            run(model, arena_size=size)
        except TflmError:
            return False
        return True

    if not works(high):
        raise TflmError(f"the model does not run in an arena of {high} bytes")
    lo, hi = 0, high // ALIGNMENT  # works(lo * 16) is False (nothing runs in 0 bytes)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if works(mid * ALIGNMENT) else (mid, hi)
    return hi * ALIGNMENT


def _one_operator(model: Any, subgraph: int, index: int) -> bytes:
    """Operator ``index`` of ``subgraph`` alone: its tensors, its constants, its operator code;
    non-constant inputs become the graph inputs, outputs the graph outputs."""
    s = schema()
    sg = model.subgraphs[subgraph]
    op = sg.operators[index]
    used = [t for t in ints(op.inputs) + ints(op.outputs) + ints(op.intermediates) if t >= 0]
    order = list(dict.fromkeys(used))
    remap = {t: i for i, t in enumerate(order)}
    buffers = [s.BufferT()]
    tensors = []
    for t in order:
        tensor = sg.tensors[t]
        copy = s.TensorT()
        vars(copy).update(vars(tensor))
        src = model.buffers[tensor.buffer] if 0 <= tensor.buffer < len(model.buffers) else None
        if src is not None and src.data is not None and len(src.data) > 0:
            copy.buffer = len(buffers)
            buffers.append(src)
        else:
            copy.buffer = 0
        tensors.append(copy)
    new_op = s.OperatorT()
    vars(new_op).update(vars(op))
    new_op.opcodeIndex = 0
    new_op.inputs = [remap[t] if t >= 0 else -1 for t in ints(op.inputs)]
    new_op.outputs = [remap[t] for t in ints(op.outputs)]
    new_op.intermediates = [remap[t] for t in ints(op.intermediates)] or None
    sub = s.SubGraphT()
    sub.tensors = tensors
    sub.operators = [new_op]
    sub.inputs = [remap[t] for t in ints(op.inputs) if t >= 0 and tensors[remap[t]].buffer == 0
                  and not tensors[remap[t]].isVariable]
    sub.outputs = new_op.outputs
    one = s.ModelT()
    one.version = model.version
    one.operatorCodes = [model.operatorCodes[op.opcodeIndex]]
    one.subgraphs = [sub]
    one.buffers = buffers
    one.description = "cpplan: one operator, to measure its scratch buffers"
    return pack_model(one)


def scratch_bytes(model: bytes) -> dict[tuple[int, int], int]:
    """Scratch bytes (each request rounded up to 16) per (subgraph, operator), measured in
    TFLM: every operator runs alone in a model of its own, where all its buffers are alive at
    once, so TFLM's head is their sum plus the operator's scratch requests. Operators with no
    scratch are left out, and so are the control-flow operators (``IF``, ``WHILE``,
    ``CALL_ONCE``: their kernels request none; the operators they call are measured)."""
    from .tflm import align_model

    m = load_model(model)
    out: dict[tuple[int, int], int] = {}
    ops = [(sg, i, op) for sg, sub in enumerate(m.subgraphs)
           for i, op in enumerate(sub.operators or [])]
    for sg, i, op in ops:
        name = operator_name(m, op)
        if name in ("IF", "WHILE", "CALL_ONCE"):
            continue
        alone = load_model(_one_operator(m, sg, i))
        sub = alone.subgraphs[0]
        planned = sum(-(-tensor_bytes(t) // ALIGNMENT) * ALIGNMENT for t in sub.tensors
                      if t.buffer == 0 and not t.isVariable)
        try:
            head = arena_head(align_model(pack_model(alone)))
        except TflmError as e:
            raise TflmError(f"subgraph {sg} operator {i} {name}: {e}") from None
        if head > planned:
            out[(sg, i)] = head - planned
    return out


def ensure_runs(model: bytes, *, arena_size: int = DEFAULT_ARENA) -> None:
    """Raise :class:`TflmError` unless TFLM allocates the model and runs it once, tried in a
    child process: some kernels abort the whole process on inputs they reject (e.g. int8
    ``SOFTMAX`` with an input scale near 1e-8), and cpplan must answer with an error, not die."""
    with tempfile.TemporaryDirectory(prefix="cpplan-tflm-") as tmp:
        path = os.path.join(tmp, "model.tflite")
        with open(path, "wb") as f:
            f.write(model)
        # the child imports this very cpplan, installed or not
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (root, os.environ.get("PYTHONPATH")) if p)}
        child = subprocess.run([sys.executable, "-m", __name__, path, str(arena_size)],
                               capture_output=True, text=True, errors="replace", env=env)
    if child.returncode == 0:
        return
    said = [ln.strip() for ln in (child.stdout + child.stderr).splitlines() if ln.strip()]
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name
        raise TflmError(f"TFLM aborted ({name}) while loading or running the model"
                        + (f": {said[-1]}" if said else " and said nothing"))
    raise TflmError(said[-1] if said else f"TFLM failed (exit {child.returncode})")


if __name__ == "__main__":  # the child of ensure_runs
    try:
        with open(sys.argv[1], "rb") as f:
            run(f.read(), arena_size=int(sys.argv[2]))
    except CpplanError as e:
        print(e)
        sys.exit(1)
