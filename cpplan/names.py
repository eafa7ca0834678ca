"""What the front ends' ``problem.meta`` says about each buffer, in words a person searches for.

Buffer ids already name the tensor where the front end knows one (ONNX tensor names,
ExecuTorch node names, ``<tensor index>:<tensor name>`` for TFLM). Some front ends say more in
``meta``: TFLM's lists every step of the schedule (``meta["tflm"]["steps"]``: ``"operator 3
CONV_2D"``) and maps every buffer to its subgraph and tensor (``meta["tflm"]["tensors"]``).
:func:`buffer_names` reads these generically (any ``steps`` list and ``tensors`` mapping, at
the top of ``meta`` or one level down), so a new front end that records them is read too.
"""

from __future__ import annotations

from typing import Any

from .problem import Problem

__all__ = ["buffer_names"]


def _sections(meta: dict) -> list[dict]:
    return [meta] + [v for v in meta.values() if isinstance(v, dict)]


def buffer_names(problem: Problem) -> dict[str, str]:
    """Buffer id -> what the meta says of it: ``"subgraph 0 tensor 12; from operator 3
    DEPTHWISE_CONV_2D to operator 5 CONV_2D"`` (the tensor, the steps where its lifetime starts
    and ends). Buffers the meta says nothing of are absent; empty when it says nothing."""
    steps: list[str] = []
    tensors: dict[str, Any] = {}
    for section in _sections(problem.meta):
        s = section.get("steps")
        if not steps and isinstance(s, list) and s and all(isinstance(x, str) for x in s):
            steps = s
        t = section.get("tensors")
        if not tensors and isinstance(t, dict) and t:
            tensors = t
    if not steps and not tensors:
        return {}
    out = {}
    for b in problem.buffers:
        parts = []
        where = tensors.get(b.id)
        if isinstance(where, (list, tuple)) and len(where) == 2:
            parts.append(f"subgraph {where[0]} tensor {where[1]}")
        last = b.end - 1
        if 0 <= b.start < len(steps):
            parts.append(f"from {steps[b.start]}" + (f" to {steps[last]}"
                                                     if b.start < last < len(steps) else ""))
        if parts:
            out[b.id] = "; ".join(parts)
    return out
