"""The ``cpplan`` command.

Every user error is one line on stderr and exit code 2, with no traceback and no half-written
output (writers are atomic). ``cpplan check`` exits 1 when the plan is invalid.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType

_interrupted = False


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C: remember it (an interrupt inside a compiled module's import surfaces as an
    ImportError), then interrupt as Python does."""
    global _interrupted
    _interrupted = True
    signal.default_int_handler(signum, frame)


# Installed before anything heavy is imported, so that a Ctrl-C at start-up is one line too.
if threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, _on_sigint)
try:
    import functools
    import json
    import os
    from collections.abc import Callable
    from typing import Any

    import click

    from .errors import CpplanError
except KeyboardInterrupt:
    sys.stderr.write("cpplan: interrupted\n")
    sys.exit(130)

EXIT_USAGE = 2


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    click.echo(f"cpplan: error: {message}", err=True)
    sys.exit(code)


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn cpplan's errors (and unreadable/unwritable files) into one line and exit 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except CpplanError as e:
            _fail(str(e))
        except BrokenPipeError:
            # The reader went away (`cpplan info X | head -1`): stop quietly, like Unix tools.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except OSError as e:
            where = f"{e.filename}: " if getattr(e, "filename", None) else ""
            _fail(f"{where}{e.strerror or e}")
        except MemoryError:
            _fail("out of memory")
        except RecursionError:
            _fail("input nested too deeply")
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except Exception:
            # Ctrl-C inside a compiled module's import surfaces as its ImportError.
            if _interrupted:
                _fail("interrupted", 130)
            raise

    return wrapper



def _seconds(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """A time limit: a finite number of seconds, at least 0."""
    from .deadline import check_time_limit

    try:
        return check_time_limit(value, "")
    except CpplanError:
        raise click.BadParameter(f"must be a finite number of seconds >= 0, got {value}") \
            from None


def _optional_seconds(ctx: click.Context, param: click.Parameter,
                      value: float | None) -> float | None:
    return None if value is None else _seconds(ctx, param, value)


def _at_least(low: int) -> Callable[[click.Context, click.Parameter, int], int]:
    def callback(ctx: click.Context, param: click.Parameter, value: int) -> int:
        if value is not None and value < low:
            raise click.BadParameter(f"must be at least {low}, got {value}")
        return value

    return callback


class _OneLineError(click.ClickException):
    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(f"cpplan: error: {self.format_message()}", err=True)


class _Group(click.Group):
    """click prints a usage error (missing argument, a directory given for a file, ...) as
    four lines; cpplan's rule is one line for every user error, so say it in one."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as e:
            hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
            message = " ".join(e.format_message().splitlines())
            raise _OneLineError(message + hint) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cpplan")
def main() -> None:
    """Plan the memory of programs with a fixed schedule, and prove how good the plan is."""


@main.command()
@click.argument("problem_file", metavar="PROBLEM", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of text.")
@user_errors
def info(problem_file: str, as_json: bool) -> None:
    """Summarise a problem: buffers, pools, time span, lower bounds, components."""
    from .blocks import make_blocks
    from .bounds import max_load, objective_lower_bound, total_load
    from .io import read_problem

    problem = read_problem(problem_file)
    blocks = make_blocks(problem)
    loads = max_load(blocks)
    comps = blocks.components()
    t0, t1 = problem.time_span
    data: dict[str, Any] = {
        "name": problem.name,
        "buffers": len(problem.buffers),
        "aliases": len(problem.aliases),
        "blocks": len(blocks),
        "fixed": sum(b.offset is not None for b in problem.buffers),
        "bytes": sum(b.size for b in problem.buffers),
        "time_span": [t0, t1],
        "components": len(comps),
        "largest_component": max((len(c) for c in comps), default=0),
        "scale": blocks.scale,
        "pools": [
            {"name": p.name, "capacity": p.capacity, "alignment": p.alignment, "cost": p.cost,
             "max_load": loads[p.name].bytes, "at_step": loads[p.name].moment,
             "live": loads[p.name].live}
            for p in problem.pools
        ],
        "lower_bound": objective_lower_bound(blocks),
    }
    if len(problem.pools) > 1:
        data["total_load"] = total_load(blocks).bytes
    if as_json:
        click.echo(json.dumps(data, indent=1))
        return
    click.echo(f"{problem.name or problem_file}: {data['buffers']} buffers "
               f"({data['aliases']} aliased, {data['fixed']} fixed) in {data['blocks']} blocks, "
               f"{data['bytes']} bytes in all")
    click.echo(f"time span: steps [{t0}, {t1}); {data['components']} components "
               f"(largest {data['largest_component']} blocks); sizes share the factor "
               f"{blocks.scale}")
    for p in data["pools"]:
        cap = "unbounded" if p["capacity"] is None else f"capacity {p['capacity']}"
        live = f"{p['live']} block{'s' if p['live'] != 1 else ''} live"
        at = "" if p["at_step"] is None else f" at step {p['at_step']} ({live})"
        click.echo(f"pool {p['name']}: {cap}, alignment {p['alignment']}, cost {p['cost']}; "
                   f"max-load {p['max_load']}{at}")
    if "total_load" in data:
        click.echo(f"all pools together: max-load {data['total_load']}")
    click.echo(f"lower bound: {data['lower_bound']}")


def _memory_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--memory NAME[:CAPACITY[:TRAFFIC_COST]]`` (repeatable), for every command that reads a
    problem: its buffers may then go to any of the memories (cpplan.memories)."""
    return click.option(
        "--memory", "memories", multiple=True, metavar="NAME[:CAPACITY[:TRAFFIC_COST]]",
        help="A memory of the device, fastest first (repeatable): the problem's buffers may go "
             "to any of them, and what they move costs TRAFFIC_COST a byte (e.g. --memory "
             "sram:256KiB:1 --memory dram::4).")(fn)


def _problem(path: str, memories: tuple[str, ...] = ()) -> Any:
    """The problem in ``path``, with ``memories`` (``--memory``) as its pools when given."""
    from .io import read_problem

    problem = read_problem(path)
    if memories:
        from .memories import parse_memory, with_memories

        problem = with_memories(problem, [parse_memory(m) for m in memories])
    return problem


@main.command()
@click.argument("problem_file", metavar="PROBLEM", type=click.Path(dir_okay=False))
@click.argument("plan_file", metavar="PLAN", type=click.Path(dir_okay=False))
@click.option("--limit", default=20, show_default=True, callback=_at_least(1),
              help="Violations to list at most.")
@_memory_option
@user_errors
def check(problem_file: str, plan_file: str, limit: int, memories: tuple[str, ...]) -> None:
    """Check a plan against its problem: exit 0 if valid, 1 listing the violations (with
    --memory as the plan was made: cpplan solve PROBLEM --memory ...)."""
    from .io import read_plan
    from .plan import check as check_plan

    problem = _problem(problem_file, memories)
    plan = read_plan(plan_file, problem)
    bad = check_plan(problem, plan, max_overlaps=limit * 10)
    if not bad:
        click.echo(f"valid: {len(problem.buffers)} buffers, "
                   + ", ".join(f"{k} height {v}" for k, v in plan.heights.items()))
        return
    click.echo(f"invalid: {len(bad)} violation{'s' if len(bad) > 1 else ''}", err=True)
    for v in bad[:limit]:
        click.echo(f"  {v.kind}: {v.message}", err=True)
    if len(bad) > limit:
        click.echo(f"  ... and {'at least ' if len(bad) >= limit * 10 else ''}"
                   f"{len(bad) - limit} more", err=True)
    sys.exit(1)


@main.command()
@click.argument("source", metavar="IN", type=click.Path(dir_okay=False))
@click.argument("target", metavar="OUT", type=click.Path(dir_okay=False))
@click.option("--plan-of", "plan_of", type=click.Path(dir_okay=False), default=None,
              help="IN is a plan for this problem: convert the plan.")
@user_errors
def convert(source: str, target: str, plan_of: str | None) -> None:
    """Convert a problem (or, with --plan-of, a plan) between JSON and MiniMalloc CSV."""
    from .io import check_output, read_plan, read_problem, write_plan, write_problem

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


def _capacities(values: tuple[str, ...], problem: Any) -> dict[str, int]:
    from .errors import ProblemError

    out: dict[str, int] = {}
    for v in values:
        name, sep, num = v.rpartition("=")
        if not sep:
            if len(problem.pools) != 1:
                raise ProblemError("give the pool: --capacity POOL=BYTES", field="--capacity")
            name = problem.pools[0].name
        if name not in problem.pool_index:
            raise ProblemError(f"no pool {name!r} in this problem", field="--capacity")
        try:
            out[name] = int(num)
        except ValueError:
            raise ProblemError(f"not an integer: {num!r}", pool=name, field="--capacity") from None
    return out


@main.command()
@click.argument("problem_file", metavar="PROBLEM", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the plan here (.json native, .csv MiniMalloc with an offset column).")
@click.option("--time-limit", type=float, default=60.0, show_default=True, callback=_seconds,
              help="Seconds for the planning (heuristics, probes, CP-SAT, the plan built and "
                   "checked); reading the problem comes before.")
@click.option("--planner", default=None,
              help="Run this one registered planner instead of the solver (see `cpplan planners`).")
@click.option("--capacity", "capacities", multiple=True, metavar="[POOL=]BYTES",
              help="Set a pool's capacity (repeatable).")
@click.option("--fit", is_flag=True,
              help="Stop at the first plan within the capacities (MiniMalloc's question).")
@_memory_option
@click.option("--workers", type=int, default=2, show_default=True, callback=_at_least(1),
              help="CP-SAT threads.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--deterministic", is_flag=True, help="Same plan on every run (one thread).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan's record as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
@user_errors
def solve(problem_file: str, output: str | None, time_limit: float, planner: str | None,
          capacities: tuple[str, ...], fit: bool, memories: tuple[str, ...], workers: int,
          seed: int, deterministic: bool, as_json: bool, quiet: bool) -> None:
    """Plan a problem: the best plan in the time limit, proven optimal or with its gap.

    Progress (lower bound and best height as they move) goes to stderr; the summary line (status,
    height, lower bound, gap, seconds) to stdout. Exit 1 when no plan exists (infeasible) or none
    was found (unknown: a planner out of time returns the no-reuse stacking instead, written
    with status unknown). Ctrl-C returns the best plan so far. With --memory the problem's
    buffers may go to any of the memories given, and the objective is what their traffic costs.
    """
    from .deadline import PlanOptions
    from .io import check_output, write_plan
    from .planners import registry

    if output is not None:
        check_output(output)  # before the solve, not after the whole time limit
    problem = _problem(problem_file, memories)
    if capacities:
        problem = problem.with_capacity(_capacities(capacities, problem))
    chosen = registry.info(planner or "cpplan")
    # What a planner takes beyond the options it honours: a goal and a progress display (the
    # solver's); a heuristic's plan is within the capacities already, and it shows no progress.
    own: dict[str, Any] = {}
    takes = chosen.own or frozenset()
    if fit and "goal" in takes:
        own["goal"] = "fit"
    if not quiet and "progress" in takes:
        own["progress"] = lambda p: click.echo(str(p), err=True)
    plan = chosen(problem, PlanOptions(time_limit, seed, deterministic, workers), **own)
    if as_json:
        from .io.native import plan_to_dict

        record = plan_to_dict(plan)
        record.pop("placements")
        click.echo(json.dumps(record, indent=1))
    else:
        click.echo(plan.summary())
    if not plan.placements:  # infeasible, or no plan found (a planner out of time has one)
        sys.exit(1)
    if output is not None:
        write_plan(problem, plan, output)
        if not quiet:
            click.echo(f"wrote {output}", err=True)


@main.command()
@click.option("--family", type=click.Choice(["replica", "own", "exact"]), default=None)
def planners(family: str | None) -> None:
    """List the registered planners (what --planner accepts)."""
    from .planners import registry

    for name in registry.names(family):
        meta = registry.info(name)
        extra = f"  [{meta.reproduces}]" if meta.reproduces else ""
        click.echo(f"{name:<38} {meta.family:<8} {meta.summary}{extra}")


@main.command()
@click.argument("instances", nargs=-1, required=True, type=click.Path())
@click.option("--planner", "-p", "planners", multiple=True, metavar="NAME",
              help="A registered planner, module:function, file.py:function (label=... to name "
                   "it); repeat. Default: every replica.")
@click.option("--plan-dir", "plan_dirs", multiple=True, type=click.Path(file_okay=False),
              help="Also grade the plan files in this directory (NAME.plan.json, NAME.json, "
                   "NAME.csv for instance NAME); repeat.")
@click.option("--time-limit", default=10.0, show_default=True, callback=_seconds,
              help="Seconds for the exact reference per instance (0: no reference).")
@click.option("--jobs", "-j", default=1, show_default=True, callback=_at_least(1),
              help="Instances in parallel.")
@click.option("--planner-time-limit", type=float, default=None, callback=_optional_seconds,
              help="Seconds a graded planner may take per instance (its cell: timeout).")
@click.option("--format", "fmt", type=click.Choice(["md", "csv", "json"]), default=None,
              help="Output format [default: from -o's extension, else md].")
@click.option("-o", "output", type=click.Path(dir_okay=False), default=None,
              help="Write the report here instead of stdout.")
@click.option("--cache", "cache", type=click.Path(file_okay=False), default=None,
              help="Cache of exact results [default: $CPPLAN_CACHE or .cpplan-cache].")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--cluster", default=None, metavar="tcp://HOST:PORT",
              help="Grade on this Dask scheduler (pip install \".[distributed]\"); --jobs is "
                   "then ignored.")
@user_errors
def grade(instances: tuple[str, ...], planners: tuple[str, ...], plan_dirs: tuple[str, ...],
          time_limit: float, jobs: int, planner_time_limit: float | None, fmt: str | None,
          output: str | None, cache: str | None, no_cache: bool, quiet: bool,
          cluster: str | None) -> None:
    """Grade allocators against the optimum over INSTANCES (problem files or directories).

    The report goes to stdout or -o; exit 1 when some instance could not be graded (the report
    still lists the others)."""
    from pathlib import Path

    from .grade import Progress, default_cache_dir, default_planners, parse_planner
    from .grade import grade as grade_all

    specs = [parse_planner(p) for p in planners] if planners else default_planners()
    specs += [parse_planner(f"plans:{folder}") for folder in plan_dirs]
    if not specs:
        raise CpplanError("no planners to grade: no replica is registered; name one with "
                          "--planner")
    if fmt is None:
        fmt = {".csv": "csv", ".json": "json"}.get(Path(output).suffix.lower() if output else "",
                                                   "md")
    cache_dir = None if no_cache else Path(cache) if cache else default_cache_dir()
    report = grade_all(instances, specs, time_limit=time_limit, jobs=jobs, cache_dir=cache_dir,
                       progress=None if quiet else Progress(),
                       planner_time_limit=planner_time_limit, cluster=cluster)
    text = {"md": report.to_markdown, "csv": report.to_csv, "json": report.to_json}[fmt]()
    if output:
        from .io.atomic import write_text_atomic

        write_text_atomic(output, text)
        if not quiet:
            click.echo(f"wrote {output}: {len(report.planners)} planners on "
                       f"{len(report.instances)} instances", err=True)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    if report.failed:
        click.echo(f"cpplan: {len(report.failed)} of {len(report.instances)} instances could not "
                   "be graded: " + "; ".join(f"{i.name}: {i.error.splitlines()[0]}"
                                              for i in report.failed[:3]), err=True)
        sys.exit(1)


@main.command()
@click.argument("problem_file", metavar="PROBLEM", type=click.Path(dir_okay=False))
@click.argument("plan_file", metavar="[PLAN]", required=False, type=click.Path(dir_okay=False))
@click.option("-o", "output", required=True, type=click.Path(dir_okay=False),
              help="Picture to write (.png, .svg, .pdf).")
@click.option("--planner", default=None,
              help="Without PLAN: plan with this planner [default: the exact reference].")
@click.option("--time-limit", default=10.0, show_default=True, callback=_seconds,
              help="Without PLAN and --planner: seconds for the exact reference (cached).")
@click.option("--color", "color_by",
              type=click.Choice(["size", "lifetime", "start", "traffic", "none"]),
              default="size", show_default=True,
              help="What the colour of a buffer shows (traffic: bytes moved per byte).")
@click.option("--size", "size", default="1600x900", show_default=True,
              help="Picture size in pixels, WIDTHxHEIGHT.")
@_memory_option
@user_errors
def plot(problem_file: str, plan_file: str | None, output: str, planner: str | None,
         time_limit: float, color_by: str, size: str, memories: tuple[str, ...]) -> None:
    """Draw a plan: time across, offset up, a rectangle per buffer, a panel per pool.

    Without PLAN, one is made now (--planner, else the exact reference, from the grader's cache
    when it holds one)."""
    from .io import read_plan
    from .plan import check
    from .plot import save_plot

    try:
        width, height = (int(v) for v in size.lower().split("x"))
    except ValueError:
        raise CpplanError(f"--size must be WIDTHxHEIGHT in pixels, got {size!r}") from None
    problem = _problem(problem_file, memories)
    if plan_file is not None:
        if planner is not None:
            raise CpplanError("give a PLAN file or --planner, not both")
        plan = read_plan(plan_file, problem)
    elif planner is not None:
        from .planners import get

        plan = get(planner)(problem)
    else:
        from .grade import cached_plan, default_cache_dir, reference

        cache = default_cache_dir()
        reference(problem, time_limit=time_limit, cache_dir=cache)
        cached = cached_plan(problem, cache)
        if cached is None:
            raise CpplanError("the exact reference found no plan (is the problem infeasible?)")
        plan = cached
    bad = check(problem, plan)
    if bad:
        click.echo(f"cpplan: warning: the plan is invalid ({len(bad)} violations, first: "
                   f"{bad[0]}); drawn anyway", err=True)
    save_plot(problem, plan, output, width=width, height=height, color_by=color_by)
    click.echo(f"wrote {output}: {plan.summary()}", err=True)


def _traffic_flags(traffic: dict[str, int]) -> list[str]:
    """``--traffic`` options as they were given, for the command in a problem's provenance."""
    return [a for k, v in traffic.items() for a in ("--traffic", f"{k}={v}")]


def _traffic_values(values: tuple[str, ...]) -> dict[str, int]:
    """``--traffic BUFFER=BYTES`` options as a dict (the last value of a buffer named twice)."""
    out: dict[str, int] = {}
    for v in values:
        name, eq, num = v.rpartition("=")
        if not eq or not name or not num.strip().isdigit():
            raise CpplanError(f"--traffic expects BUFFER=BYTES with a whole number of bytes, "
                              f"got {v!r}")
        out[name] = int(num)
    return out


def _dim_values(dims: tuple[str, ...]) -> dict[str, int]:
    """``--dim NAME=VALUE`` options as a dict."""
    values: dict[str, int] = {}
    for d in dims:
        name, eq, value = d.partition("=")
        if not eq or not name or not value.strip().isdigit():
            raise CpplanError(f"--dim expects NAME=VALUE with a non-negative integer, got {d!r}")
        values[name] = int(value)
    return values


@main.command()
@click.argument("model", metavar="MODEL", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Problem file to write (.json keeps aliases and provenance).")
@click.option("--inputs-in-arena", is_flag=True,
              help="Plan graph inputs in the arena, alive until their last use.")
@click.option("--in-place", "in_place", is_flag=True,
              help="Element-wise operators write over an input that dies at their step.")
@click.option("--concat-in-place", is_flag=True,
              help="Write concat inputs straight into their (contiguous) slices of the output.")
@click.option("--no-views", is_flag=True, help="Give reshapes and views buffers of their own.")
@click.option("--alignment", type=int, default=None,
              help="Alignment of every buffer [default: 1; ExecuTorch's 16 for .pt2].")
@click.option("--dim", "dims", multiple=True, metavar="NAME=VALUE",
              help="Value of a symbolic dimension (repeatable), e.g. --dim batch=1.")
@click.option("--input-shape", "input_shapes", multiple=True, metavar="INPUT=D0,D1,...",
              help="Whole shape of a graph input (repeatable), e.g. --input-shape "
                   "input_ids=1,128; its symbolic dimensions take these values.")
@click.option("--training", is_flag=True,
              help="MODEL torchvision:ARCH: trace one training step (forward, loss, backward; "
                   "--dim batch=N --dim resolution=R).")
@click.option("--memory", "memories", multiple=True, metavar="NAME[:CAPACITY[:TRAFFIC_COST]]",
              help="MODEL.pt2: a memory of the device, fastest first (repeatable); the problem "
                   "is then choosing each tensor's memory (ExecuTorch mem_id 1..N).")
@click.option("--traffic", "traffic", multiple=True, metavar="BUFFER=BYTES",
              help="Bytes BUFFER moves per run (repeatable), in place of size x (1 + readers) "
                   "(ONNX and .tflite models).")
@user_errors
def extract(model: str, output: str, inputs_in_arena: bool, in_place: bool,
            concat_in_place: bool, no_views: bool, alignment: int | None,
            dims: tuple[str, ...], input_shapes: tuple[str, ...], training: bool,
            memories: tuple[str, ...], traffic: tuple[str, ...]) -> None:
    """Extract the memory-planning problem of an ONNX model (needs cpplan[onnx]), a TFLite
    model as TFLite Micro plans it (needs cpplan[tflite]), a PyTorch ExportedProgram as
    ExecuTorch plans it (.pt2, needs cpplan[executorch]; the ONNX options do not apply) or one
    training step of a torchvision network (torchvision:ARCH --training, needs
    cpplan[exports]).

    Every buffer gets its traffic, the bytes it moves per run: size x (1 write + 1 read per
    operator that reads it), graph inputs written by the caller, graph outputs read by it once
    more (see cpplan.graph.traffic); --traffic states a buffer's own figure."""
    import shlex

    if memories and not model.lower().endswith(".pt2"):
        raise CpplanError("--memory applies to ExecuTorch programs (.pt2); for a problem file "
                          "give it to cpplan solve")
    stated = _traffic_values(traffic)
    if stated and (training or model.startswith("torchvision:")
                   or model.lower().endswith(".pt2")):
        raise CpplanError("--traffic applies to ONNX and .tflite models")
    if training or model.startswith("torchvision:"):
        if not (training and model.startswith("torchvision:")):
            raise CpplanError("--training traces a torchvision network: give "
                              "torchvision:ARCH --training, e.g. torchvision:resnet50")
        from .graph.fx import extract_cli as extract_training

        for line in extract_training(model, output, dims=_dim_values(dims), alignment=alignment,
                                     other_flags=bool(in_place or concat_in_place or no_views
                                                      or inputs_in_arena or input_shapes)):
            click.echo(line)
        return

    if model.lower().endswith(".pt2"):
        from .io import check_output
        from .runtimes.executorch import extract_cli

        check_output(output)
        onnx_only = (in_place or concat_in_place or no_views or inputs_in_arena or dims
                     or input_shapes)
        for line in extract_cli(model, output, alignment=alignment, onnx_flags=bool(onnx_only),
                                memories=memories):
            click.echo(line)
        return
    if model.lower().endswith(".tflite"):
        if (inputs_in_arena or in_place or concat_in_place or no_views or alignment is not None
                or dims or input_shapes):
            raise CpplanError("--inputs-in-arena, --in-place, --concat-in-place, --no-views, "
                              "--alignment, --dim and --input-shape apply to ONNX models "
                              "only: a .tflite model is extracted as TFLite Micro plans it")
        from .io import check_output, write_problem
        from .runtimes.tflm_plan import describe, extract_model

        check_output(output)
        problem = extract_model(model, command=shlex.join(["cpplan", "extract", model, "-o",
                                                           output, *_traffic_flags(stated)]),
                                traffic=stated)
        write_problem(problem, output)
        click.echo(f"wrote {output}: " + "\n".join(describe(problem)))
        return
    alignment = 1 if alignment is None else alignment
    from .graph.onnx import extract_onnx
    from .graph.to_problem import describe
    from .io import write_problem

    values = _dim_values(dims)
    shapes: dict[str, tuple[int, ...]] = {}
    for d in input_shapes:
        name, eq, value = d.partition("=")
        parts = value.split(",")
        if not eq or not name or not all(p.strip().isdigit() for p in parts):
            raise CpplanError("--input-shape expects INPUT=D0,D1,... with non-negative "
                              f"integers, got {d!r}")
        shapes[name] = tuple(int(p) for p in parts)
    flags = [f for f, on in (("--inputs-in-arena", inputs_in_arena), ("--in-place", in_place),
                             ("--concat-in-place", concat_in_place), ("--no-views", no_views))
             if on]
    flags += [] if alignment == 1 else ["--alignment", str(alignment)]
    flags += [a for k, v in values.items() for a in ("--dim", f"{k}={v}")]
    flags += [a for k, v in shapes.items()
              for a in ("--input-shape", f"{k}={','.join(map(str, v))}")]
    flags += _traffic_flags(stated)
    command = shlex.join(["cpplan", "extract", model, "-o", output, *flags])
    problem = extract_onnx(model, dims=values, input_shapes=shapes, inputs_in_arena=inputs_in_arena,
                           in_place=in_place, concat_in_place=concat_in_place,
                           views=not no_views, alignment=alignment, command=command,
                           traffic=stated)
    if output.lower().endswith(".csv") and (problem.aliases or len(problem.pools) > 1):
        raise CpplanError(f"{output}: MiniMalloc CSV holds one pool and no aliases; this "
                          f"problem has {len(problem.aliases)} aliases (reshapes and other "
                          "views alias their input, and so do --in-place and --concat-in-place) "
                          f"and {len(problem.pools)} pools (graph inputs have their own); write "
                          ".json, or for a CSV add --no-views --inputs-in-arena (without "
                          "--in-place and --concat-in-place)")
    write_problem(problem, output)
    click.echo(f"wrote {output}: " + "\n".join(describe(problem)))


@main.command()
@click.argument("model", metavar="MODEL.tflite", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The planned model to write (.tflite).")
@click.option("--time-limit", default=10.0, show_default=True, callback=_seconds,
              help="Seconds for the solver.")
@click.option("--deterministic", is_flag=True, help="Same plan on every run (one thread).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
@click.option("--plan", "plan_file", type=click.Path(dir_okay=False),
              help="Write this plan (for the problem 'cpplan extract MODEL.tflite' writes) "
                   "instead of solving.")
@user_errors
def tflm(model: str, output: str, time_limit: float, deterministic: bool, quiet: bool,
         plan_file: str | None) -> None:
    """Plan a TFLite Micro model's arena; write it as the model's offline plan, verified in TFLM
    (needs cpplan[tflite])."""
    from .io.atomic import ensure_writable, write_bytes_atomic
    from .runtimes.tflm_plan import plan_model

    ensure_writable(output)  # before the work, not after it
    progress = None if quiet else (lambda p: click.echo(str(p), err=True))
    result = plan_model(model, time_limit=time_limit, deterministic=deterministic,
                        progress=progress, plan_file=plan_file)
    write_bytes_atomic(output, result.model)
    click.echo("\n".join(result.lines()))
    click.echo(f"wrote {output}")


@main.command()
@click.argument("model", metavar="MODEL.pt2", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="ExecuTorch program to write (.pte).")
@click.option("--time-limit", default=10.0, show_default=True, callback=_seconds,
              help="Seconds per arena.")
@click.option("--alignment", default=16, show_default=True, help="Alignment in bytes.")
@click.option("--memory", "memories", multiple=True, metavar="NAME[:CAPACITY[:TRAFFIC_COST]]",
              help="A memory of the device, fastest first (repeatable): the arenas mem_id "
                   "1..N; cpplan chooses each tensor's memory to minimise what its traffic "
                   "costs (e.g. --memory sram:256KiB:1 --memory dram::4).")
@click.option("--constant-prop", is_flag=True,
              help="Run ExecuTorch's constant_prop_pass first (weights computed from weights, "
                   "such as a transposed linear weight, become constants, not arena tensors).")
@user_errors
def executorch(model: str, output: str, time_limit: float, alignment: int,
               memories: tuple[str, ...], constant_prop: bool) -> None:
    """Plan a PyTorch ExportedProgram (torch.export.save) with cpplan and write the ExecuTorch
    program; prints ExecuTorch's greedy arena beside cpplan's (needs cpplan[executorch]).

    With --memory, prints per memory the bytes and the traffic of ExecuTorch's banked_greedy,
    of the Cadence backend's two planners and of cpplan, with cpplan's proven lower bound; exit
    1 without writing when no plan fits the memories (the tensors that cannot fit together
    are named)."""
    from .io.atomic import ensure_writable
    from .runtimes.executorch import run_cli

    ensure_writable(output)  # before the work, not after it
    if not memories:
        for line in run_cli(model, output, time_limit=time_limit, alignment=alignment,
                            constant_prop=constant_prop):
            click.echo(line)
        return
    from .memories import parse_memory
    from .runtimes.executorch_tiers import NoPlanError, memory_map

    parsed = [parse_memory(m) for m in memories]
    memory_map(parsed, field="--memory")  # (named twice: refused before the work)
    try:
        lines = run_cli(model, output, time_limit=time_limit, alignment=alignment,
                        memories=parsed, constant_prop=constant_prop)
    except NoPlanError as e:
        for line in e.report.lines(verdict=False):
            click.echo(line)
        _fail(str(e), 1)
    for line in lines:
        click.echo(line)


def run() -> None:
    """The ``cpplan`` command's entry point: :func:`main`, with Ctrl-C at any moment (start-up
    included) one line and exit code 130."""
    try:
        main()
    except KeyboardInterrupt:
        click.echo("cpplan: interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    run()
