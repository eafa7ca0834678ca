"""ONNX Runtime, measured: the peak bytes its CPU arena holds while it runs a model once
(needs ``pip install 'cpplan[ort]'``; ``onnxruntime`` is imported only when used).

The session runs the very graph cpplan reads: graph optimisation off, memory patterns off (the
first run of a session has none anyway), weights outside the arena
(``session.use_device_allocator_for_initializers``). With profiling on, ONNX Runtime records
after every node the arena's bytes in use and its peak (``mem_bytes_in_use``,
``mem_in_use_peak``, ``mem_in_use_delta``). The peak of the run is the largest
``mem_in_use_peak`` less the bytes in use before the first node (pre-packed weights). It counts
what ONNX Runtime's allocation planner and kernels really hold: activations after its own reuse
and in-place decisions, graph outputs, and the kernels' scratch buffers; graph inputs belong to
the caller and do not count.

A graph-only file (weights in an external file that is absent) runs too: :func:`with_weights`
gives each such weight zeros of its size, which changes no shape and so no allocation.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import CpplanError

if TYPE_CHECKING:
    import onnx

__all__ = ["measured_peak", "with_weights", "example_feeds"]


def _import_ort() -> ModuleType:
    try:
        import onnxruntime
    except ImportError:
        raise CpplanError("measuring ONNX Runtime needs onnxruntime: pip install "
                          "'cpplan[ort]'") from None
    return onnxruntime


def with_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` (an onnx ModelProto, changed in place) with every externally stored
    initializer given zeros of its recorded length, held in the file."""
    import onnx

    for t in model.graph.initializer:
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        length = int(next((kv.value for kv in t.external_data if kv.key == "length"), 0))
        del t.external_data[:]
        t.data_location = onnx.TensorProto.DEFAULT
        t.raw_data = bytes(length)
    return model


def example_feeds(shapes: Mapping[str, tuple[tuple[int, ...], str]]) -> dict[str, Any]:
    """Inputs of the given ``{name: (shape, dtype)}``: ones for integers (valid token ids and
    masks), seeded normal values for floats."""
    import numpy as np

    rng = np.random.default_rng(0)
    return {n: (np.ones(s, dtype=d) if d.startswith("int") else
                rng.standard_normal(s).astype(d)) for n, (s, d) in shapes.items()}


def measured_peak(model: str | Path | bytes, feeds: Mapping[str, Any]) -> int:
    """Peak bytes ONNX Runtime's CPU arena holds during one run of ``model`` (a path or the
    serialised model) on ``feeds`` (see the module docstring).

    Args:
        model: An ``.onnx`` path, or the serialised model (see :func:`with_weights` for a
            graph-only file).
        feeds: Input name -> array (:func:`example_feeds` makes some).

    Returns:
        The peak bytes of the run, less what the arena held before the first node.

    Raises:
        CpplanError: ``onnxruntime`` is not installed (the ``ort`` extra), or its profiler
            gave no arena figures.
    """
    ort = _import_ort()
    with tempfile.TemporaryDirectory() as tmp:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.enable_mem_pattern = False
        so.enable_profiling = True
        so.profile_file_prefix = str(Path(tmp) / "profile")
        so.log_severity_level = 3
        so.add_session_config_entry("session.use_device_allocator_for_initializers", "1")
        source = model if isinstance(model, bytes) else str(model)
        sess = ort.InferenceSession(source, so, providers=["CPUExecutionProvider"])
        sess.run(None, dict(feeds))
        events = json.loads(Path(sess.end_profiling()).read_text())
    nodes = [ev["args"] for ev in events
             if ev.get("cat") == "Node" and "mem_in_use_peak" in ev.get("args", {})]
    if not nodes:
        raise CpplanError("ONNX Runtime's profiler gave no arena figures (a build without "
                          "the BFC arena?)")
    first = nodes[0]
    before = int(first["mem_bytes_in_use"]) - int(first["mem_in_use_delta"])
    return max(int(a["mem_in_use_peak"]) for a in nodes) - before
