"""The front-end options on the command line, defined once, as the library's
:class:`cpplan.graph.options.FrontEndOptions` is: :func:`front_end_options` gives a command the
flags and its function one ``front_end`` value; :func:`refuse` names the flags given that a
model's front end does not take (:data:`cpplan.graph.options.TAKES`); :func:`command_flags` gives
them back for the command in a problem's provenance."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from ..errors import CpplanError
from .common import fail

if TYPE_CHECKING:
    from ..graph.options import FrontEndOptions

#: Each option's flag (a field of FrontEndOptions -> its flag), in the order of --help.
FLAGS = {"inputs_in_arena": "--inputs-in-arena", "in_place": "--in-place",
         "concat_in_place": "--concat-in-place", "views": "--no-views",
         "alignment": "--alignment", "dims": "--dim", "input_shapes": "--input-shape",
         "traffic": "--traffic"}

_OPTIONS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "inputs_in_arena": click.option(
        "--inputs-in-arena", "inputs_in_arena", is_flag=True,
        help="Plan graph inputs in the arena, alive until their last use."),
    "in_place": click.option(
        "--in-place", "in_place", is_flag=True,
        help="Element-wise operators write over an input that dies at their step."),
    "concat_in_place": click.option(
        "--concat-in-place", "concat_in_place", is_flag=True,
        help="Write concat inputs straight into their (contiguous) slices of the output."),
    "views": click.option(
        "--no-views", "no_views", is_flag=True,
        help="Give reshapes and views buffers of their own."),
    "alignment": click.option(
        "--alignment", "alignment", type=int, default=None,
        help="Alignment of every buffer [default: 1; ExecuTorch's 16 for .pt2]."),
    "dims": click.option(
        "--dim", "dims", multiple=True, metavar="NAME=VALUE",
        help="Value of a symbolic dimension (repeatable), e.g. --dim batch=1."),
    "input_shapes": click.option(
        "--input-shape", "input_shapes", multiple=True, metavar="INPUT=D0,D1,...",
        help="Whole shape of a graph input (repeatable), e.g. --input-shape "
             "input_ids=1,128; its symbolic dimensions take these values."),
    "traffic": click.option(
        "--traffic", "traffic", multiple=True, metavar="BUFFER=BYTES",
        help="Bytes BUFFER moves per run (repeatable), in place of size x (1 + readers) "
             "(ONNX and .tflite models)."),
}
_PARAMS = {"views": "no_views"}  # a field whose click parameter has another name

#: What each kind of model is called where an option is refused, and how its front end works.
_WHERE = {"onnx": "ONNX models", "tflite": ".tflite models", "pt2": ".pt2 programs",
          "training": "torchvision training steps"}
_HOW = {"tflite": "a .tflite model is extracted as TFLite Micro plans it",
        "pt2": "a .pt2 is planned as ExecuTorch plans it",
        "training": "a training step is traced with views folded and its inputs in the arena"}


def front_end_options(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The front-end options named (fields of FrontEndOptions; all of them when none is) as
    click options; the command's function gets them as one ``front_end`` FrontEndOptions
    (the options not offered at their defaults). A malformed value is one line and exit 2."""
    chosen = names or tuple(FLAGS)
    unknown = set(chosen) - set(FLAGS)
    if unknown:
        raise ValueError(f"not a front-end option: {sorted(unknown)}")

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(_PARAMS.get(name, name)) for name in chosen}
            try:
                options = read_options(**given)
            except CpplanError as e:
                fail(str(e))
            return fn(*args, front_end=options, **kwargs)

        command: Callable[..., Any] = wrapper
        for name in reversed(FLAGS):  # click lists options in the order they are applied
            if name in chosen:
                command = _OPTIONS[name](command)
        return command

    return decorate


def read_options(*, inputs_in_arena: bool = False, in_place: bool = False,
                 concat_in_place: bool = False, views: bool = False,
                 alignment: int | None = None, dims: Sequence[str] = (),
                 input_shapes: Sequence[str] = (), traffic: Sequence[str] = ()
                 ) -> FrontEndOptions:
    """FrontEndOptions from the flags' values as click gives them (``views``: ``--no-views``
    given)."""
    from ..graph.options import FrontEndOptions

    return FrontEndOptions(inputs_in_arena=inputs_in_arena, in_place=in_place,
                           concat_in_place=concat_in_place, views=not views,
                           alignment=alignment, dims=dim_values(dims),
                           input_shapes=shape_values(input_shapes),
                           traffic=traffic_values(traffic))


def dim_values(dims: Sequence[str]) -> dict[str, int]:
    """``--dim NAME=VALUE`` options as a dict."""
    values: dict[str, int] = {}
    for d in dims:
        name, eq, value = d.partition("=")
        if not eq or not name or not value.strip().isdigit():
            raise CpplanError(f"--dim expects NAME=VALUE with a non-negative integer, got {d!r}")
        values[name] = int(value)
    return values


def shape_values(input_shapes: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """``--input-shape INPUT=D0,D1,...`` options as a dict."""
    shapes: dict[str, tuple[int, ...]] = {}
    for d in input_shapes:
        name, eq, value = d.partition("=")
        parts = value.split(",")
        if not eq or not name or not all(p.strip().isdigit() for p in parts):
            raise CpplanError("--input-shape expects INPUT=D0,D1,... with non-negative "
                              f"integers, got {d!r}")
        shapes[name] = tuple(int(p) for p in parts)
    return shapes


def traffic_values(values: Sequence[str]) -> dict[str, int]:
    """``--traffic BUFFER=BYTES`` options as a dict (the last value of a buffer named twice)."""
    out: dict[str, int] = {}
    for v in values:
        name, eq, num = v.rpartition("=")
        if not eq or not name or not num.strip().isdigit():
            raise CpplanError(f"--traffic expects BUFFER=BYTES with a whole number of bytes, "
                              f"got {v!r}")
        out[name] = int(num)
    return out


def refuse(options: FrontEndOptions, kind: str) -> None:
    """Raise CpplanError naming every option given that the front end of ``kind`` does not
    take, and the models each is for."""
    from ..graph.options import KINDS, TAKES

    groups: dict[tuple[str, ...], list[str]] = {}
    for name in options.refused(kind):
        takers = tuple(k for k in KINDS if name in TAKES[k])
        groups.setdefault(takers, []).append(FLAGS[name])
    if not groups:
        return
    parts = [f"{_and(flags)} {'is' if len(flags) == 1 else 'are'} for {_for(takers)}"
             for takers, flags in groups.items()]
    raise CpplanError("; ".join(parts) + f": {_HOW[kind]}")


def _for(kinds: tuple[str, ...]) -> str:
    if kinds == ("onnx",):
        return "ONNX models only"
    names = [_WHERE[k] for k in kinds]
    if all(n.endswith(" models") for n in names):
        return _and([n.removesuffix(" models") for n in names]) + " models"
    return _and(names)


def _and(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def command_flags(options: FrontEndOptions) -> list[str]:
    """The flags that give ``options``, as a problem's provenance records its command (the
    alignment when not 1)."""
    flags = [FLAGS[name] for name in ("inputs_in_arena", "in_place", "concat_in_place")
             if getattr(options, name)]
    flags += [] if options.views else ["--no-views"]
    flags += [] if options.alignment in (None, 1) else ["--alignment", str(options.alignment)]
    flags += [a for k, v in options.dims.items() for a in ("--dim", f"{k}={v}")]
    flags += [a for k, v in options.input_shapes.items()
              for a in ("--input-shape", f"{k}={','.join(map(str, v))}")]
    flags += [a for k, v in options.traffic.items() for a in ("--traffic", f"{k}={v}")]
    return flags


def alignment(options: FrontEndOptions, kind: str) -> int:
    """The alignment ``options`` give, else the front end's default (ExecuTorch's 16 for a
    .pt2, else 1). A .pt2 or a training step refuses one below 1 here (an ONNX model's buffers
    say so themselves)."""
    if options.alignment is None:
        if kind == "pt2":
            from ..runtimes.executorch import DEFAULT_ALIGNMENT

            return DEFAULT_ALIGNMENT
        return 1
    if kind in ("pt2", "training") and options.alignment < 1:
        raise CpplanError(f"--alignment must be a positive number of bytes, got "
                          f"{options.alignment}")
    return options.alignment
