"""Regenerate the project's real-network instances: ``python -m cpplan.graph.instances [DIR]``.

Writes, under ``DIR`` (default: ``instances/`` of the current directory):

* ``onnx/<model>.json`` and ``onnx/<model>.inplace-concat.json`` for the nine model graphs that
  ship inside the onnx package (``onnx/backend/test/data/light/light_<model>.onnx``: alexnet,
  densenet121, inception_v1, inception_v2, resnet50, shufflenet, squeezenet, vgg19, zfnet512);
* ``hand/unet.json``, ``hand/gpt2-block.json`` and their ``.inplace-concat`` variants, built in
  code by :mod:`cpplan.graph.models`.

Plain files have no in-place or concat rewrites (reshapes still alias their input: no runtime
copies a reshape); ``.inplace-concat`` files have both rewrites on. Graph inputs sit in a pool
``inputs`` of their own; weights are not planned (listed in ``meta["constants"]``). Each file
records in ``meta`` its source (with the model's sha256 and the onnx version), the options, the
cpplan version and this command. Output is deterministic: running it twice gives the same bytes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypedDict

from ..io import write_problem
from ..problem import Problem
from . import models
from .ir import Graph
from .to_problem import to_problem

__all__ = ["ONNX_MODELS", "HAND_MODELS", "VARIANTS", "generate", "onnx_light_path", "main"]

COMMAND = "python -m cpplan.graph.instances"
ONNX_MODELS = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
               "shufflenet", "squeezenet", "vgg19", "zfnet512")
class Variant(TypedDict, total=False):
    """The rewrites of one variant of an instance (:func:`cpplan.graph.to_problem` options)."""

    in_place: bool
    concat_in_place: bool


HAND_MODELS: dict[str, Callable[[], Graph]] = {"unet": models.unet,
                                                "gpt2-block": models.gpt2_block}
VARIANTS: dict[str, Variant] = {"": {},
                                ".inplace-concat": {"in_place": True, "concat_in_place": True}}


def onnx_light_path(model: str) -> Path:
    """Path of ``light_<model>.onnx`` inside the installed onnx package."""
    import onnx

    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    return light / f"light_{model}.onnx"


def generate() -> Iterator[tuple[str, Problem]]:
    """``(relative path, problem)`` for every instance, in a fixed order."""
    from .onnx import load_onnx, onnx_source

    for model in ONNX_MODELS:
        path = onnx_light_path(model)
        graph = load_onnx(path, name=model)
        source = onnx_source(path)  # the path inside the package says where, not this machine's
        source["model"] = (f"onnx package {source['onnx_version']}: "
                           f"onnx/backend/test/data/light/light_{model}.onnx")
        for suffix, options in VARIANTS.items():
            yield f"onnx/{model}{suffix}.json", to_problem(
                graph, name=f"{model}{suffix}", source=source, command=COMMAND, **options)
    for name, build in HAND_MODELS.items():
        graph = build()
        source = {"model": f"cpplan.graph.models.{build.__name__}() ({graph.name})"}
        for suffix, options in VARIANTS.items():
            yield f"hand/{name}{suffix}.json", to_problem(
                graph, name=f"{name}{suffix}", source=source, command=COMMAND, **options)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else Path("instances")
    for rel, problem in generate():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        write_problem(problem, target)
        rw = problem.meta["rewrites"]
        print(f"{target}: {len(problem.buffers)} buffers, {len(problem.aliases)} aliases, "
              f"{rw['bytes_saved']} bytes saved by rewrites")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
