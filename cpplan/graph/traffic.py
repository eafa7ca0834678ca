"""Traffic: the bytes each planned buffer of a graph moves per run (:attr:`cpplan.Buffer.traffic`).

A buffer's traffic is its size times the passes its bytes make through the memory it sits in
during one run: one when they are written, one per operator that reads them. For an ordinary
activation that is ``size x (1 + readers)``. What counts, in detail:

* **written**: an activation by the operator that makes it; a graph input by the caller, who
  fills it in its buffer before the run (wherever the plan puts it, the bytes go through that
  memory once); a workspace by its operator. *Not* written: the output of a view aliased to its
  input (a reshape makes no copy: its bytes are its input's, written by the input's maker); in
  a concatenation written in place, the slices its inputs were written into by their own makers
  (only the slices that kept a copy count for the output).
* **read**: once per operator that reads the tensor (an operator that reads it twice counts
  once, as :attr:`cpplan.graph.Graph.users` does), except the reads no longer made: a view's
  read of the input it aliases, a concatenation's read of an input written into its slice.
  An in-place output and the input it overwrites count their own passes each: the operator
  reads the input and writes the output, the same bytes twice. A graph output is read once
  more, by the caller after the run (the result leaves through the memory it is in). A
  workspace is read once, by its operator: ``2 x size``.
* weights and other constants are not planned, so they have no traffic here (they stay in the
  model's constant section, whatever the plan does). An operator that makes no tensor (a
  training graph's ``x.add_(y)``, which writes into one it reads) counts its reads only.

Traffic is the same whatever memory a buffer lands in; what it costs is the pool's
:attr:`cpplan.Pool.traffic_cost`. It is an estimate of the bytes the operators touch, not a
cache simulation: a convolution whose kernel reads its input once per filter row counts once,
like one tiled to read it once. Where the user knows better (a profile, a kernel's own figures),
``traffic={"buffer id": bytes}`` in :func:`cpplan.graph.to_problem` (``cpplan extract
--traffic ID=BYTES``) states a buffer's traffic instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..errors import ProblemError
from .ir import Graph
from .rewrites import CONCAT, VIEW, Link

__all__ = ["tensor_traffic", "stated_traffic", "WORKSPACE_PASSES", "HOW"]

#: A workspace is written and read once by its operator.
WORKSPACE_PASSES = 2

#: One line for ``problem.meta["traffic"]["how"]``: what the figures count.
HOW = ("bytes moved per run: size x (1 write + 1 per operator that reads it); graph inputs "
       "written by the caller, graph outputs read by the caller once more, workspaces 2 x size; "
       "views and concat slices written in place count no copy")


def tensor_traffic(graph: Graph, planned: Iterable[str], links: Iterable[Link]) -> dict[str, int]:
    """The traffic of every tensor in ``planned`` (activations and inputs), given the aliases
    the rewrites made (``links``), as the module docstring counts it."""
    parent = {lk.buffer: lk for lk in links}
    tensors = graph.tensors
    outputs = set(graph.outputs)
    written: dict[str, int] = {}
    reads: dict[str, int] = {t: len(graph.users.get(t, ())) for t in planned}
    for t in reads:
        written[t] = tensors[t].size
    for op in graph.operators:
        if not op.outputs:
            continue
        out = op.outputs[0]
        link = parent.get(out)
        if op.view and link is not None and link.kind == VIEW and link.parent == op.inputs[0]:
            written[out] = 0  # the input's bytes, under another shape
            if op.inputs[0] in reads:
                reads[op.inputs[0]] -= 1
        if op.concat_axis is not None and out in written:
            for t in dict.fromkeys(op.inputs):
                if op.inputs.count(t) == 1 and t in reads and _in_slice_of(t, out, parent):
                    reads[t] -= 1  # written straight into its slice: the concat copies nothing
                    written[out] -= tensors[t].size
    return {t: written[t] + tensors[t].size * (reads[t] + (t in outputs)) for t in reads}


def _in_slice_of(t: str, out: str, parent: dict[str, Link]) -> bool:
    """Whether ``t``, or the tensor it is a view of, is written into a slice of ``out``."""
    seen = 0
    while t in parent and seen <= len(parent):
        link = parent[t]
        if link.kind == CONCAT:
            return link.parent == out
        if link.kind != VIEW:
            return False
        t = link.parent
        seen += 1
    return False


def stated_traffic(traffic: Mapping[str, int] | None, ids: Iterable[str],
                   constants: Iterable[str] = ()) -> dict[str, int]:
    """The traffic the user states (``{buffer id: bytes}``), checked: every id a planned
    buffer's (a :class:`ProblemError` naming it otherwise); the values are checked where the
    buffers are built."""
    if not traffic:
        return {}
    if not isinstance(traffic, Mapping):
        raise ProblemError(f"must map buffer ids to bytes, got {traffic!r}", field="traffic")
    known = set(ids)
    const = set(constants)
    for name in traffic:
        if name not in known:
            why = ("a constant, not planned" if name in const else
                   "no planned buffer has this id")
            raise ProblemError(f"{name!r}: {why}", field="traffic")
    return dict(traffic)
