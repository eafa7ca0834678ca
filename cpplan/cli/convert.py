"""``cpplan convert`` (problems and plans between formats) and ``cpplan extract`` (a model's
problem, by its front end: ONNX, .tflite, .pt2, a torchvision training step)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import click

from ..errors import CpplanError
from .common import main, user_errors
from .frontend import alignment, command_flags, front_end_options, refuse

if TYPE_CHECKING:
    from ..graph.options import FrontEndOptions


@main.command()
@click.argument("source", metavar="IN", type=click.Path(dir_okay=False))
@click.argument("target", metavar="OUT", type=click.Path(dir_okay=False))
@click.option("--plan-of", "plan_of", type=click.Path(dir_okay=False), default=None,
              help="IN is a plan for this problem: convert the plan.")
@user_errors
def convert(source: str, target: str, plan_of: str | None) -> None:
    """Convert a problem (or, with --plan-of, a plan) between JSON and MiniMalloc CSV."""
    from ..io import check_output, read_plan, read_problem, write_plan, write_problem

    check_output(target)
    if plan_of is None:
        problem = read_problem(source)
        write_problem(problem, target)
        click.echo(f"wrote {target}: {len(problem.buffers)} buffers")
    else:
        problem = read_problem(plan_of)
        plan = read_plan(source, problem)
        write_plan(problem, plan, target)
        click.echo(f"wrote {target}: plan of {len(plan.placements)} buffers")


@main.command()
@click.argument("model", metavar="MODEL", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Problem file to write (.json keeps aliases and provenance).")
@front_end_options()
@click.option("--training", is_flag=True,
              help="MODEL torchvision:ARCH: trace one training step (forward, loss, backward; "
                   "--dim batch=N --dim resolution=R).")
@click.option("--memory", "memories", multiple=True, metavar="NAME[:CAPACITY[:TRAFFIC_COST]]",
              help="MODEL.pt2: a memory of the device, fastest first (repeatable); the problem "
                   "is then choosing each tensor's memory (ExecuTorch mem_id 1..N).")
@user_errors
def extract(model: str, output: str, training: bool, memories: tuple[str, ...],
            front_end: FrontEndOptions) -> None:
    """Extract the memory-planning problem of an ONNX model (needs cpplan[onnx]), a TFLite
    model as TFLite Micro plans it (needs cpplan[tflite]), a PyTorch ExportedProgram as
    ExecuTorch plans it (.pt2, needs cpplan[executorch]; the ONNX options do not apply) or one
    training step of a torchvision network (torchvision:ARCH --training, needs
    cpplan[exports]).

    Every buffer gets its traffic, the bytes it moves per run: size x (1 write + 1 read per
    operator that reads it), graph inputs written by the caller, graph outputs read by it once
    more (see cpplan.graph.traffic); --traffic states a buffer's own figure."""
    if memories and not model.lower().endswith(".pt2"):
        raise CpplanError("--memory applies to ExecuTorch programs (.pt2); for a problem file "
                          "give it to cpplan solve")
    if training or model.startswith("torchvision:"):
        if not (training and model.startswith("torchvision:")):
            raise CpplanError("--training traces a torchvision network: give "
                              "torchvision:ARCH --training, e.g. torchvision:resnet50")
        kind = "training"
    elif model.lower().endswith(".pt2"):
        kind = "pt2"
    elif model.lower().endswith(".tflite"):
        kind = "tflite"
    else:
        kind = "onnx"
    refuse(front_end, kind)
    if kind == "training":
        lines = _training(model, output, front_end)
    elif kind == "pt2":
        lines = _pt2(model, output, front_end, memories)
    elif kind == "tflite":
        lines = _tflite(model, output, front_end)
    else:
        lines = _onnx(model, output, front_end)
    for line in lines:
        click.echo(line)


def _training(model: str, output: str, front_end: FrontEndOptions) -> list[str]:
    """``cpplan extract torchvision:ARCH --training``: trace one training step of ``ARCH``
    (``--dim batch=N --dim resolution=R``, defaults in cpplan.graph.fx.TRAINING_MODELS)."""
    from ..graph.fx import training_problem, training_settings
    from ..graph.to_problem import describe
    from ..io import check_output, write_problem

    arch = model.partition(":")[2]
    if not arch:
        raise CpplanError(f"{model}: expected torchvision:ARCH, e.g. torchvision:resnet50")
    dims = front_end.dims
    extra = sorted(set(dims) - {"batch", "resolution"})
    if extra:
        raise CpplanError(f"--dim {extra[0]}: a training step knows batch and resolution only")
    align = alignment(front_end, "training")
    check_output(output)
    batch, resolution = training_settings(arch, dims.get("batch"), dims.get("resolution"))
    command = shlex.join(["cpplan", "extract", model, "--training", "-o", output, "--dim",
                          f"batch={batch}", "--dim", f"resolution={resolution}"]
                         + ([] if align == 1 else ["--alignment", str(align)]))
    problem = training_problem(arch, batch=batch, resolution=resolution, alignment=align,
                               command=command)
    write_problem(problem, output)
    return [f"wrote {output}: " + "\n".join(describe(problem))]


def _pt2(model: str, output: str, front_end: FrontEndOptions,
         memories: tuple[str, ...]) -> list[str]:
    """``cpplan extract MODEL.pt2``: the problem ExecuTorch plans; with ``memories``
    (``--memory`` values, fastest first) the problem of choosing each tensor's memory."""
    from ..io import check_output, write_problem
    from ..runtimes.executorch import describe, extract_pt2

    check_output(output)
    align = alignment(front_end, "pt2")
    parsed = None
    if memories:
        from ..memories import parse_memory
        from ..runtimes.executorch_tiers import memory_map

        parsed = [parse_memory(m) for m in memories]
        memory_map(parsed, field="--memory")
    command = shlex.join(["cpplan", "extract", model, "-o", output, "--alignment",
                          str(align), *(a for m in memories for a in ("--memory", m))])
    problem = extract_pt2(model, align, command=command, memories=parsed)
    write_problem(problem, output)
    return [f"wrote {output}: " + "\n".join(describe(problem))]


def _tflite(model: str, output: str, front_end: FrontEndOptions) -> list[str]:
    """``cpplan extract MODEL.tflite``: the problem TFLite Micro plans."""
    from ..io import check_output, write_problem
    from ..runtimes.tflm_plan import describe, extract_model

    check_output(output)
    problem = extract_model(model, command=shlex.join(["cpplan", "extract", model, "-o",
                                                       output, *command_flags(front_end)]),
                            traffic=front_end.traffic)
    write_problem(problem, output)
    return [f"wrote {output}: " + "\n".join(describe(problem))]


def _onnx(model: str, output: str, front_end: FrontEndOptions) -> list[str]:
    """``cpplan extract MODEL.onnx``: the graph's problem, with the rewrites asked for."""
    from ..graph.onnx import extract_onnx
    from ..graph.to_problem import describe
    from ..io import write_problem

    command = shlex.join(["cpplan", "extract", model, "-o", output, *command_flags(front_end)])
    problem = extract_onnx(model, dims=front_end.dims, input_shapes=front_end.input_shapes,
                           inputs_in_arena=front_end.inputs_in_arena, in_place=front_end.in_place,
                           concat_in_place=front_end.concat_in_place, views=front_end.views,
                           alignment=alignment(front_end, "onnx"), command=command,
                           traffic=front_end.traffic)
    if output.lower().endswith(".csv") and (problem.aliases or len(problem.pools) > 1):
        raise CpplanError(f"{output}: MiniMalloc CSV holds one pool and no aliases; this "
                          f"problem has {len(problem.aliases)} aliases (reshapes and other "
                          "views alias their input, and so do --in-place and --concat-in-place) "
                          f"and {len(problem.pools)} pools (graph inputs have their own); write "
                          ".json, or for a CSV add --no-views --inputs-in-arena (without "
                          "--in-place and --concat-in-place)")
    write_problem(problem, output)
    return [f"wrote {output}: " + "\n".join(describe(problem))]


@main.command()
@click.argument("problem_file", metavar="PROBLEM", type=click.Path(dir_okay=False))
@click.argument("plan_file", metavar="PLAN", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["chrome-trace"]), default="chrome-trace",
              show_default=True,
              help="chrome-trace: Chrome's trace events, which Perfetto UI and chrome://tracing "
                   "open (a track per pool, a slice per buffer, bytes live per pool).")
@click.option("-o", "output", required=True, type=click.Path(dir_okay=False),
              help="The file to write.")
@user_errors
def export(problem_file: str, plan_file: str, fmt: str, output: str) -> None:
    """Export a plan (checked first) for other tools to show."""
    from ..io import export_plan, read_plan, read_problem

    problem = read_problem(problem_file)
    export_plan(problem, read_plan(plan_file, problem), output, fmt)
    click.echo(f"wrote {output}: {fmt} of {len(problem.buffers)} buffers", err=True)
