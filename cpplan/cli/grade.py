"""``cpplan grade``: allocators against the optimum over many instances."""

from __future__ import annotations

import sys

import click

from ..errors import CpplanError
from .common import at_least, count, main, optional_seconds, seconds, user_errors


@main.command()
@click.argument("instances", nargs=-1, required=True, type=click.Path())
@click.option("--planner", "-p", "planners", multiple=True, metavar="NAME",
              help="A registered planner, module:function, file.py:function (label=... to name "
                   "it); repeat. Default: every replica.")
@click.option("--plan-dir", "plan_dirs", multiple=True, type=click.Path(file_okay=False),
              help="Also grade the plan files in this directory (NAME.plan.json, NAME.json, "
                   "NAME.csv for instance NAME); repeat.")
@click.option("--time-limit", default=10.0, show_default=True, callback=seconds,
              help="Seconds for the exact reference per instance (0: no reference).")
@click.option("--jobs", "-j", default=1, show_default=True, callback=at_least(1),
              help="Instances in parallel (graded; with html, their views written too).")
@click.option("--planner-time-limit", type=float, default=None, callback=optional_seconds,
              help="Seconds a graded planner may take per instance (its cell: timeout).")
@click.option("--format", "fmt", type=click.Choice(["md", "csv", "json", "html"]), default=None,
              help="Output format [default: from -o's extension, else md]. html: a page with "
                   "the heat map, each plan linked to its view in a folder beside it (needs -o).")
@click.option("--views/--no-views", default=True, show_default=True,
              help="With html: write the view of every valid plan (report.views/; needs bokeh).")
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
          cluster: str | None, views: bool) -> None:
    """Grade allocators against the optimum over INSTANCES (problem files or directories).

    The report goes to stdout or -o; exit 1 when some instance could not be graded (the report
    still lists the others)."""
    from pathlib import Path

    from ..grade import Progress, default_cache_dir, default_planners, parse_planner
    from ..grade import grade as grade_all

    specs = [parse_planner(p) for p in planners] if planners else default_planners()
    specs += [parse_planner(f"plans:{folder}") for folder in plan_dirs]
    if not specs:
        raise CpplanError("no planners to grade: no replica is registered; name one with "
                          "--planner")
    if fmt is None:
        fmt = {".csv": "csv", ".json": "json", ".html": "html", ".htm": "html"}.get(
            Path(output).suffix.lower() if output else "", "md")
    if fmt == "html":
        if not output:
            raise CpplanError("--format html writes a page and its views: give the file with -o")
        from ..io.atomic import ensure_writable

        ensure_writable(output)
        if views:
            from ..view import require_bokeh

            require_bokeh()
    cache_dir = None if no_cache else Path(cache) if cache else default_cache_dir()
    report = grade_all(instances, specs, time_limit=time_limit, jobs=jobs, cache_dir=cache_dir,
                       progress=None if quiet else Progress(),
                       planner_time_limit=planner_time_limit, cluster=cluster)
    if fmt == "html":
        from ..grade_html import views_dir, write_html

        assert output
        write_html(report, output, specs=specs, cache_dir=cache_dir, views=views,
                   planner_time_limit=planner_time_limit, jobs=jobs)
        if not quiet:
            click.echo(f"wrote {output}" + (f" and its views in {views_dir(output)}"
                                            if views else "") + ": "
                       f"{count(len(report.planners), 'planner')} on "
                       f"{count(len(report.instances), 'instance')}", err=True)
    else:
        text = {"md": report.to_markdown, "csv": report.to_csv, "json": report.to_json}[fmt]()
        if output:
            from ..io.atomic import write_text_atomic

            write_text_atomic(output, text)
            if not quiet:
                click.echo(f"wrote {output}: {count(len(report.planners), 'planner')} on "
                           f"{count(len(report.instances), 'instance')}", err=True)
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    if report.failed:
        click.echo(f"cpplan: {len(report.failed)} of {len(report.instances)} instances could not "
                   "be graded: " + "; ".join(f"{i.name}: {i.error.splitlines()[0]}"
                                              for i in report.failed[:3]), err=True)
        sys.exit(1)
