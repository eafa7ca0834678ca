"""``cpplan info``, ``check``, ``solve`` and ``planners``: the commands on a problem file."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .common import (
    at_least,
    count,
    elapsed,
    main,
    memory_option,
    read_problem_with,
    seconds,
    user_errors,
)

#: malloc arenas the ``solve`` command's process keeps (:func:`cpplan.exact.heap.few_arenas`):
#: the main thread's and one that the search threads share.
ARENAS = 2


@main.command()
@click.argument("problem_file", metavar="PROBLEM", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of text.")
@user_errors
def info(problem_file: str, as_json: bool) -> None:
    """Summarise a problem: buffers, pools, time span, lower bounds, components."""
    from ..blocks import make_blocks
    from ..bounds import max_load, objective_lower_bound, total_load
    from ..io import read_problem

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
        live = f"{count(p['live'], 'block')} live"
        at = "" if p["at_step"] is None else f" at step {p['at_step']} ({live})"
        click.echo(f"pool {p['name']}: {cap}, alignment {p['alignment']}, cost {p['cost']}; "
                   f"max-load {p['max_load']}{at}")
    if "total_load" in data:
        click.echo(f"all pools together: max-load {data['total_load']}")
    click.echo(f"lower bound: {data['lower_bound']}")


@main.command()
@click.argument("problem_file", metavar="PROBLEM", type=click.Path(dir_okay=False))
@click.argument("plan_file", metavar="PLAN", type=click.Path(dir_okay=False))
@click.option("--limit", default=20, show_default=True, callback=at_least(1),
              help="Violations to list at most.")
@memory_option
@user_errors
def check(problem_file: str, plan_file: str, limit: int, memories: tuple[str, ...]) -> None:
    """Check a plan against its problem: exit 0 if valid, 1 listing the violations (with
    --memory as the plan was made: cpplan solve PROBLEM --memory ...)."""
    from ..io import read_plan
    from ..plan import check as check_plan

    problem = read_problem_with(problem_file, memories)
    plan = read_plan(plan_file, problem)
    bad = check_plan(problem, plan, max_overlaps=limit * 10)
    if not bad:
        click.echo(f"valid: {len(problem.buffers)} buffers, "
                   + ", ".join(f"{k} height {v}" for k, v in plan.heights.items()))
        return
    click.echo(f"invalid: {count(len(bad), 'violation')}", err=True)
    for v in bad[:limit]:
        click.echo(f"  {v.kind}: {v.message}", err=True)
    if len(bad) > limit:
        click.echo(f"  ... and {'at least ' if len(bad) >= limit * 10 else ''}"
                   f"{len(bad) - limit} more", err=True)
    sys.exit(1)


def _capacities(values: tuple[str, ...], problem: Any) -> dict[str, int]:
    from ..errors import ProblemError

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
@click.option("--time-limit", type=float, default=60.0, show_default=True, callback=seconds,
              help="Seconds for the whole command: reading the problem, planning (heuristics, "
                   "probes, CP-SAT, the plan built and checked) and writing the plan. With "
                   "--deterministic, the planning's deterministic seconds.")
@click.option("--planner", default=None,
              help="Run this one registered planner instead of the solver (see `cpplan planners`).")
@click.option("--capacity", "capacities", multiple=True, metavar="[POOL=]BYTES",
              help="Set a pool's capacity (repeatable).")
@click.option("--fit", is_flag=True,
              help="Stop at the first plan within the capacities (MiniMalloc's question).")
@memory_option
@click.option("--workers", type=int, default=2, show_default=True, callback=at_least(1),
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
    from ..deadline import PlanOptions, finishing
    from ..io import WRITE_SECONDS_PER_BUFFER, check_output, write_plan
    from ..planners import registry

    if output is not None:
        check_output(output)  # before the solve, not after the whole time limit
    problem = read_problem_with(problem_file, memories)
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
    # The command owns its process: one arena per search thread would keep what each freed
    # (CP-SAT starts threads on every solve), and the process would grow with it.
    from ..exact.heap import few_arenas

    few_arenas(ARENAS)
    planning = time_limit
    if not deterministic:  # (deterministic seconds are the planning's own: read and write apart)
        writing = 0.0 if output is None else finishing(time_limit, len(problem.buffers),
                                                       WRITE_SECONDS_PER_BUFFER)
        planning = max(0.0, time_limit - elapsed() - writing)
    plan = chosen(problem, PlanOptions(planning, seed, deterministic, workers), **own)
    if as_json:
        from ..io.native import plan_to_dict

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
    from ..planners import registry

    for name in registry.names(family):
        meta = registry.info(name)
        extra = f"  [{meta.reproduces}]" if meta.reproduces else ""
        click.echo(f"{name:<38} {meta.family:<8} {meta.summary}{extra}")
