"""``cpplan executorch``: a PyTorch ExportedProgram planned by cpplan, written as the ExecuTorch
program, beside what ExecuTorch's own planners would allocate."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..errors import CpplanError
from .common import fail, main, seconds, user_errors
from .frontend import alignment, front_end_options

if TYPE_CHECKING:
    from ..graph.options import FrontEndOptions


@main.command()
@click.argument("model", metavar="MODEL.pt2", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="ExecuTorch program to write (.pte).")
@click.option("--time-limit", default=10.0, show_default=True, callback=seconds,
              help="Seconds per arena.")
@front_end_options("alignment")
@click.option("--memory", "memories", multiple=True, metavar="NAME[:CAPACITY[:TRAFFIC_COST]]",
              help="A memory of the device, fastest first (repeatable): the arenas mem_id "
                   "1..N; cpplan chooses each tensor's memory to minimise what its traffic "
                   "costs (e.g. --memory sram:256KiB:1 --memory dram::4).")
@click.option("--constant-prop", is_flag=True,
              help="Run ExecuTorch's constant_prop_pass first (weights computed from weights, "
                   "such as a transposed linear weight, become constants, not arena tensors).")
@click.option("--view", "view_file", type=click.Path(dir_okay=False),
              help="Also write the interactive page of ExecuTorch's greedy plan of the program's "
                   "graph beside cpplan's (.html; needs cpplan[view]; not with --memory).")
@user_errors
def executorch(model: str, output: str, time_limit: float, memories: tuple[str, ...],
               constant_prop: bool, view_file: str | None, front_end: FrontEndOptions) -> None:
    """Plan a PyTorch ExportedProgram (torch.export.save) with cpplan and write the ExecuTorch
    program; prints ExecuTorch's greedy arena beside cpplan's (needs cpplan[executorch]).

    With --memory, prints per memory the bytes and the traffic of ExecuTorch's banked_greedy,
    of the Cadence backend's two planners and of cpplan, with cpplan's proven lower bound; exit
    1 without writing when no plan fits the memories (the tensors that cannot fit together
    are named)."""
    from ..io.atomic import ensure_writable, write_bytes_atomic

    ensure_writable(output)  # before the work, not after it
    align = alignment(front_end, "pt2")
    if view_file is not None:
        if memories:
            raise CpplanError("--view shows ExecuTorch's greedy plan beside cpplan's in one "
                              "arena; with --memory the table compares the planners")
        from ..view import require_bokeh

        ensure_writable(view_file)
        require_bokeh()
    if not memories:
        import functools

        from ..runtimes.executorch import lower_pt2, report_lines

        view = None
        if view_file is not None:
            from ..view import write_view

            view = functools.partial(write_view, path=view_file)
        data, arenas = lower_pt2(model, time_limit, align, constant_prop=constant_prop,
                                 view=view)
        write_bytes_atomic(output, data)
        for line in [f"wrote {output} ({len(data)} bytes)", *report_lines(arenas)]:
            click.echo(line)
        if view_file is not None:
            click.echo(f"wrote {view_file}")
        return
    from ..memories import parse_memory
    from ..runtimes.executorch_tiers import NoPlanError, lower_pt2_in_memories, memory_map

    parsed = [parse_memory(m) for m in memories]
    mems, mem_ids = memory_map(parsed, field="--memory")  # (named twice: refused before the work)
    try:
        data, reports, sizes = lower_pt2_in_memories(model, parsed, time_limit, align,
                                                     constant_prop=constant_prop)
    except NoPlanError as e:
        for line in e.report.lines(verdict=False):
            click.echo(line)
        fail(str(e), 1)
    write_bytes_atomic(output, data)
    click.echo(f"wrote {output} ({len(data)} bytes); arenas in the program: " + ", ".join(
        f"{m.name} (mem_id {i}) {sizes[i] if i < len(sizes) else 0} bytes"
        for m, i in zip(mems, mem_ids, strict=True)))
    for r in reports:
        for line in r.lines():
            click.echo(line)
