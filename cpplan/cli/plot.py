"""``cpplan plot`` (a picture of a plan) and ``cpplan view`` (an interactive page of plans)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..errors import CpplanError
from .common import count, main, memory_option, read_problem_with, seconds, user_errors

if TYPE_CHECKING:
    from ..plan import Plan


@main.command()
@click.argument("problem_file", metavar="PROBLEM", type=click.Path(dir_okay=False))
@click.argument("plan_file", metavar="[PLAN]", required=False, type=click.Path(dir_okay=False))
@click.option("-o", "output", required=True, type=click.Path(dir_okay=False),
              help="Picture to write (.png, .svg, .pdf).")
@click.option("--planner", default=None,
              help="Without PLAN: plan with this planner [default: the exact reference].")
@click.option("--time-limit", default=10.0, show_default=True, callback=seconds,
              help="Without PLAN and --planner: seconds for the exact reference (cached).")
@click.option("--color", "color_by",
              type=click.Choice(["size", "lifetime", "start", "traffic", "none"]),
              default="size", show_default=True,
              help="What the colour of a buffer shows (traffic: bytes moved per byte).")
@click.option("--size", "size", default="1600x900", show_default=True,
              help="Picture size in pixels, WIDTHxHEIGHT.")
@memory_option
@user_errors
def plot(problem_file: str, plan_file: str | None, output: str, planner: str | None,
         time_limit: float, color_by: str, size: str, memories: tuple[str, ...]) -> None:
    """Draw a plan: time across, offset up, a rectangle per buffer, a panel per pool.

    Without PLAN, one is made now (--planner, else the exact reference, from the grader's cache
    $CPPLAN_CACHE or .cpplan-cache where it exists; none is created)."""
    from ..io import read_plan
    from ..plan import check
    from ..plot import save_plot

    try:
        width, height = (int(v) for v in size.lower().split("x"))
    except ValueError:
        raise CpplanError(f"--size must be WIDTHxHEIGHT in pixels, got {size!r}") from None
    problem = read_problem_with(problem_file, memories)
    if plan_file is not None:
        if planner is not None:
            raise CpplanError("give a PLAN file or --planner, not both")
        plan = read_plan(plan_file, problem)
    elif planner is not None:
        from ..planners import get

        plan = get(planner)(problem)
    else:
        from ..grade import cached_plan, default_cache_dir, reference
        from ..grade.reference_solve import solve_reference

        cache = default_cache_dir()
        found: Plan | None
        if cache.is_dir():  # the grader's cache where there is one; a plot makes none
            reference(problem, time_limit=time_limit, cache_dir=cache)
            found = cached_plan(problem, cache)
        else:
            found = solve_reference(problem, time_limit=time_limit)[1]
        if found is None or found.status == "infeasible":
            raise CpplanError("the exact reference found no plan (is the problem infeasible?)")
        plan = found
    bad = check(problem, plan)
    if bad:
        click.echo(f"cpplan: warning: the plan is invalid ({len(bad)} violations, first: "
                   f"{bad[0]}); drawn anyway", err=True)
    save_plot(problem, plan, output, width=width, height=height, color_by=color_by)
    click.echo(f"wrote {output}: {plan.summary()}", err=True)


@main.command()
@click.argument("problem_file", metavar="PROBLEM", type=click.Path(dir_okay=False))
@click.argument("plan_files", metavar="[PLAN ...]", nargs=-1, type=click.Path(dir_okay=False))
@click.option("-o", "output", required=True, type=click.Path(dir_okay=False),
              help="The page to write (.html: one file, opens from disk, nothing fetched).")
@click.option("--planner", "planners", multiple=True,
              help="Also plan with this planner and show it (repeatable); with no PLAN and no "
                   "--planner: best-fit.")
@click.option("--time-limit", default=10.0, show_default=True, callback=seconds,
              help="Seconds for each --planner.")
@click.option("--backend", type=click.Choice(["canvas", "webgl"]), default="canvas",
              show_default=True,
              help="How the browser draws (webgl: faster on a GPU, slower in software).")
@memory_option
@user_errors
def view(problem_file: str, plan_files: tuple[str, ...], output: str, planners: tuple[str, ...],
         time_limit: float, backend: str, memories: tuple[str, ...]) -> None:
    """Write an interactive page of one plan, or of several side by side on linked axes: a
    panel per pool, hover for a buffer's id, size, lifetime, offset and names, the load curve,
    the lower bound and the peak; the first plan is the one the others are compared with
    (needs cpplan[view])."""
    from pathlib import Path

    from ..deadline import PlanOptions
    from ..io import read_plan
    from ..io.atomic import ensure_writable
    from ..planners import get
    from ..view import write_view

    ensure_writable(output)
    problem = read_problem_with(problem_file, memories)
    plans: dict[str, Plan] = {}
    for path in plan_files:
        label = Path(path).name.split(".")[0]
        plans[label if label not in plans else path] = read_plan(path, problem)
    for name in planners or (() if plan_files else ("best-fit",)):
        plans[name] = get(name)(problem, PlanOptions(time_limit))
    write_view(problem, plans, output, backend=backend)
    click.echo(f"wrote {output}: {count(len(plans), 'plan')} of {len(problem.buffers)} buffers "
               f"in {count(len(problem.pools), 'pool')}", err=True)
