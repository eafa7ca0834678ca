"""The options of the front ends, defined once: how a model becomes a problem.

:class:`FrontEndOptions` holds them; :data:`TAKES` says which front end (which kind of model)
takes which of them. Every command that takes a model reads them into one
:class:`FrontEndOptions` (``cpplan.cli.frontend``), and refuses, naming them, the options the
model's front end does not take.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

__all__ = ["FrontEndOptions", "ONNX", "TFLITE", "PT2", "TRAINING", "KINDS", "TAKES"]

#: The front ends, by the kind of model they read: an ONNX model (:mod:`cpplan.graph.onnx`), a
#: TFLite model as TFLite Micro plans it (:mod:`cpplan.runtimes.tflm_plan`), a PyTorch
#: ExportedProgram as ExecuTorch plans it (:mod:`cpplan.runtimes.executorch`), one training
#: step of a torchvision network (:mod:`cpplan.graph.fx`).
ONNX, TFLITE, PT2, TRAINING = "onnx", "tflite", "pt2", "training"
KINDS = (ONNX, TFLITE, PT2, TRAINING)


@dataclass(frozen=True)
class FrontEndOptions:
    """How a front end turns a model into a problem. A field at its default is not given.

    ``inputs_in_arena``: graph inputs are planned in the arena, alive until their last use.
    ``in_place``: element-wise operators write over an input that dies at their step.
    ``concat_in_place``: concat inputs are written straight into their slices of the output.
    ``views``: reshapes and views alias their input (``False``: buffers of their own).
    ``alignment``: of every buffer, in bytes (``None``: the front end's default, 1, or
    ExecuTorch's 16 for a .pt2). ``dims``: values of symbolic dimensions (a training step's
    ``batch`` and ``resolution``). ``input_shapes``: whole shapes of graph inputs.
    ``traffic``: bytes a buffer moves per run, in place of what the front end counts.
    """

    inputs_in_arena: bool = False
    in_place: bool = False
    concat_in_place: bool = False
    views: bool = True
    alignment: int | None = None
    dims: Mapping[str, int] = field(default_factory=dict)
    input_shapes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    traffic: Mapping[str, int] = field(default_factory=dict)

    def given(self) -> tuple[str, ...]:
        """The names of the fields set away from their defaults, in field order."""
        return tuple(f.name for f in fields(self) if getattr(self, f.name) != _default(f))

    def refused(self, kind: str) -> tuple[str, ...]:
        """The fields given that the front end of ``kind`` (one of :data:`KINDS`) does not
        take."""
        return tuple(name for name in self.given() if name not in TAKES[kind])


def _default(f: Any) -> Any:
    return f.default_factory() if f.default is MISSING else f.default


#: The options each front end takes (the others are refused). The ONNX front end takes them all;
#: a .tflite model and a .pt2 are planned as their runtimes plan them; a training step is traced
#: with views folded and its inputs in the arena, its dimensions ``batch`` and ``resolution``.
TAKES: dict[str, frozenset[str]] = {
    ONNX: frozenset(f.name for f in fields(FrontEndOptions)),
    TFLITE: frozenset({"traffic"}),
    PT2: frozenset({"alignment"}),
    TRAINING: frozenset({"alignment", "dims"}),
}
