"""From a graph to a :class:`cpplan.Problem`: liveness, workspaces, rewrites, pools, provenance.

What becomes what:

* every activation is a buffer in pool ``arena``, alive as :mod:`cpplan.graph.liveness` says;
* every workspace of an operator is a buffer ``<operator>:workspace<k>`` in ``arena`` alive
  during that operator's step only, planned together with the tensors (TVM USMP's point: one
  plan for the buffers inside and between operators);
* graph inputs go to a pool ``inputs`` of their own for the whole run (like Glow's mutable
  weights), or with ``inputs_in_arena`` into ``arena``, alive until their last use;
* weights and constants are **not planned**: they are read-only and live outside the arena (in
  the model's constant section); they are listed in ``problem.meta["constants"]`` with their
  byte sizes;
* the rewrites of :mod:`cpplan.graph.rewrites` become :class:`cpplan.Alias` entries, and what
  they saved goes to ``problem.meta["rewrites"]``;
* every buffer's ``traffic`` is the bytes it moves per run, as :mod:`cpplan.graph.traffic`
  counts them (``size x (1 + readers)`` for an activation), or what ``traffic`` states; the
  total goes to ``problem.meta["traffic"]``.

``problem.meta`` records provenance: the source, the options, the cpplan version and the command
that regenerates the problem (callers pass ``source`` and ``command``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ProblemError
from ..problem import Alias, Buffer, Pool, Problem
from .ir import Graph
from .liveness import liveness
from .rewrites import find_aliases
from .traffic import HOW, WORKSPACE_PASSES, stated_traffic, tensor_traffic

__all__ = ["to_problem", "ARENA", "INPUTS"]

ARENA, INPUTS = "arena", "inputs"


def to_problem(
    graph: Graph,
    *,
    inputs_in_arena: bool = False,
    in_place: bool = False,
    concat_in_place: bool = False,
    views: bool = True,
    alignment: int = 1,
    name: str | None = None,
    source: Any = None,
    command: str | None = None,
    meta: dict | None = None,
    traffic: Mapping[str, int] | None = None,
) -> Problem:
    """The planning problem of ``graph`` (see the module docstring).

    ``in_place`` and ``concat_in_place`` turn on those rewrites; ``views`` (default on) makes
    reshapes and other views aliases of their input. ``alignment`` applies to every buffer.
    ``traffic`` maps buffer ids (tensor names, ``<operator>:workspace<k>``) to the bytes they
    move per run, in place of what :mod:`cpplan.graph.traffic` counts.
    ``source`` and ``command`` go to ``meta`` as provenance; ``meta`` adds further entries.

    Args:
        graph: The graph, in schedule order.
        inputs_in_arena: Graph inputs in ``arena``, alive until their last use (default: a
            pool ``inputs`` of their own, alive for the whole run).
        in_place: Element-wise operators write over an input that dies there.
        concat_in_place: Concatenations are written in place: their inputs become slices of
            the output.
        views: Reshapes and other views are aliases of their input.
        alignment: Every buffer's alignment.
        name: The problem's name (default: the graph's).
        source: Provenance, for ``meta["source"]``.
        command: The command that regenerates the problem, for ``meta["command"]``.
        meta: Further ``meta`` entries.
        traffic: Buffer id -> bytes moved per run, in place of the count.

    Returns:
        The problem, with pools ``arena`` (and ``inputs``), one buffer per activation, input and
        workspace, the rewrites as aliases, and what was done in ``meta``.

    Raises:
        ProblemError: An alignment that is not a positive integer, or a ``traffic`` entry for
            a buffer the problem does not have.
    """
    from .. import __version__

    if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment < 1:
        raise ProblemError(f"must be a positive integer, got {alignment!r}", field="alignment")
    live = liveness(graph, inputs_in_arena=inputs_in_arena)
    tensors = graph.tensors
    pool_of = {t: (INPUTS if tensors[t].role == "input" and not inputs_in_arena else ARENA)
               for t in live.start}
    aliasing = find_aliases(graph, live, pool_of, views=views, concat=concat_in_place,
                            in_place=in_place, alignment=alignment)
    pool = aliasing.pool
    moved = tensor_traffic(graph, live.start, aliasing.links)

    ids: set[str] = set(live.start)
    workspaces: list[list[tuple[str, int]]] = []  # per operator: (id, size)
    for op in graph.operators:
        workspaces.append([])
        for k, size in enumerate(op.workspace):
            wid = f"{op.name}:workspace{k}"
            while wid in ids:  # a tensor happens to carry that name
                wid += "'"
            ids.add(wid)
            pool[wid] = ARENA
            moved[wid] = WORKSPACE_PASSES * size
            workspaces[-1].append((wid, size))
    stated = stated_traffic(traffic, ids, (t.name for t in graph.tensors_with_role("constant")))
    moved.update(stated)

    buffers: list[Buffer] = []

    def add(tid: str, size: int, start: int, end: int) -> None:
        buffers.append(Buffer(tid, size, start, end, alignment, (pool[tid],),
                              traffic=moved[tid]))

    for t in tensors.values():  # inputs first, in definition order
        if t.role == "input":
            add(t.name, t.size, live.start[t.name], live.end[t.name])
    n_ws = ws_bytes = 0
    for step, op in enumerate(graph.operators):
        for wid, size in workspaces[step]:
            add(wid, size, step, step + 1)
            n_ws += 1
            ws_bytes += size
        for o in op.outputs:
            add(o, tensors[o].size, live.start[o], live.end[o])
    aliases = tuple(Alias(lk.buffer, lk.parent, lk.displacement) for lk in aliasing.links)
    used = set(pool.values())
    pools = tuple(Pool(p) for p in (ARENA, INPUTS) if p in used) or (Pool(ARENA),)

    constants = graph.stored_constants()
    info: dict[str, Any] = {
        "cpplan_version": __version__,
        "source": source,
        "command": command,
        "options": {"inputs_in_arena": inputs_in_arena, "in_place": in_place,
                    "concat_in_place": concat_in_place, "views": views, "alignment": alignment},
        "graph": {"operators": len(graph.operators), "tensors": len(tensors),
                  "outputs": list(graph.outputs), "steps": live.steps},
        "inputs": {
            "where": ("pool 'arena', alive until their last use" if inputs_in_arena
                      else "pool 'inputs' of their own, alive for the whole run"),
            "count": sum(t.role == "input" for t in tensors.values()),
            "bytes": sum(t.size for t in tensors.values() if t.role == "input"),
        },
        "workspaces": {"count": n_ws, "bytes": ws_bytes},
        "constants": {
            "where": "not planned: weights and constants are read-only and stay outside the "
                     "arena (the model's constant section); constants computed from others "
                     "before the run count as the ones they are computed from",
            "count": len(constants),
            "bytes": sum(t.size for t in constants),
            "tensors": {t.name: t.size for t in constants},
        },
        "rewrites": aliasing.report.as_dict(),
        "traffic": {"how": HOW, "bytes": sum(b.traffic for b in buffers),
                    "stated": sorted(stated)},
    }
    if meta:
        info.update(meta)
    return Problem(tuple(buffers), pools, aliases, name if name is not None else graph.name, info)


def describe(problem: Problem) -> list[str]:
    """A few lines summarising a problem made by :func:`to_problem`: buffers per pool, aliases
    per rewrite, bytes saved, constants left out, max-load per pool."""
    from ..bounds import max_load

    meta = problem.meta
    per_pool: dict[str, int] = {}
    for b in problem.buffers:
        pool = b.pools[0] if b.pools else "any pool"
        per_pool[pool] = per_pool.get(pool, 0) + 1
    lines = [f"{len(problem.buffers)} buffers ("
             + ", ".join(f"{n} in {p}" for p, n in per_pool.items()) + f"), "
             f"{meta.get('workspaces', {}).get('count', 0)} of them workspaces"]
    rw = meta.get("rewrites", {})
    kinds = [k for k in ("view", "concat", "in-place") if k in rw]
    lines.append(f"{len(problem.aliases)} aliases ("
                 + ", ".join(f"{k} {rw[k]['aliases']}" for k in kinds)
                 + f"); bytes saved by rewrites: {rw.get('bytes_saved', 0)} ("
                 + ", ".join(f"{k} {rw[k]['bytes_saved']}" for k in kinds) + ")")
    c = meta.get("constants", {})
    lines.append(f"{c.get('count', 0)} constants ({c.get('bytes', 0)} bytes) not planned")
    moved = sum(b.traffic for b in problem.buffers)
    if moved:
        stated = meta.get("traffic", {}).get("stated", [])
        lines.append(f"traffic: {moved} bytes moved per run (size x (1 + readers))"
                     + (f", {len(stated)} buffer(s) as stated" if stated else ""))
    loads = max_load(problem)
    lines.append("max-load: " + ", ".join(f"{p} {lb.bytes}" for p, lb in loads.items()))
    return lines
