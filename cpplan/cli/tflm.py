"""``cpplan tflm``: a TFLite Micro model's arena planned, written as its offline plan."""

from __future__ import annotations

import click

from .common import main, seconds, user_errors


@main.command()
@click.argument("model", metavar="MODEL.tflite", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The planned model to write (.tflite).")
@click.option("--time-limit", default=10.0, show_default=True, callback=seconds,
              help="Seconds for the solver.")
@click.option("--deterministic", is_flag=True, help="Same plan on every run (one thread).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
@click.option("--plan", "plan_file", type=click.Path(dir_okay=False),
              help="Write this plan (for the problem 'cpplan extract MODEL.tflite' writes) "
                   "instead of solving.")
@click.option("--view", "view_file", type=click.Path(dir_okay=False),
              help="Also write the interactive page of TFLM's default plan beside cpplan's "
                   "(.html; needs cpplan[view]).")
@user_errors
def tflm(model: str, output: str, time_limit: float, deterministic: bool, quiet: bool,
         plan_file: str | None, view_file: str | None) -> None:
    """Plan a TFLite Micro model's arena; write it as the model's offline plan, verified in TFLM
    (needs cpplan[tflite])."""
    from ..io.atomic import ensure_writable, write_bytes_atomic
    from ..runtimes.tflm_plan import plan_model

    ensure_writable(output)  # before the work, not after it
    if view_file is not None:
        from ..view import require_bokeh

        ensure_writable(view_file)
        require_bokeh()
    progress = None if quiet else (lambda p: click.echo(str(p), err=True))
    result = plan_model(model, time_limit=time_limit, deterministic=deterministic,
                        progress=progress, plan_file=plan_file)
    write_bytes_atomic(output, result.model)
    click.echo("\n".join(result.lines()))
    click.echo(f"wrote {output}")
    if view_file is not None:
        from ..view import write_view

        write_view(result.problem, result.compared(), view_file)
        click.echo(f"wrote {view_file}")
