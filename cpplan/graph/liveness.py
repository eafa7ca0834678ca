"""Liveness: when each tensor needs its bytes, in schedule steps.

Operator ``i`` of the schedule runs at step ``i``. Lifetimes are half-open ``[start, end)``:

* an activation lives from its producer's step to the step after its last user
  (``end = last_use + 1``); a tensor nobody reads lives during its producer's step only;
* a graph output lives to the end of the run (``end = steps``);
* a graph input lives for the whole run ``[0, steps)`` by default (it sits in a pool of its own,
  like Glow's mutable weights); with ``inputs_in_arena`` it lives from step 0 to the step after
  its last use, so its bytes can be reused (Glow's request to allocate placeholders as
  activations);
* constants have no lifetime: they are not planned;
* a workspace of operator ``i`` lives during step ``i`` only: ``[i, i + 1)``.

One sweep over the operators' inputs: ``O(operators + edges)`` with no fixed point, so 100k
operators take well under a second (``benchmarks/liveness.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .ir import Graph

__all__ = ["Liveness", "liveness"]


@dataclass(frozen=True)
class Liveness:
    """``start[t]``, ``end[t]`` for every planned tensor (activations and inputs) of a graph
    whose schedule has ``steps`` steps (at least 1, so inputs of an empty graph still live)."""

    steps: int
    start: dict[str, int]
    end: dict[str, int]
    inputs_in_arena: bool

    def lifetime(self, tensor: str) -> tuple[int, int]:
        """``(start, end)`` of a planned tensor."""
        return self.start[tensor], self.end[tensor]


def liveness(graph: Graph, *, inputs_in_arena: bool = False) -> Liveness:
    """Lifetimes of the activations and inputs of ``graph`` (semantics in the module docstring).

    Args:
        graph: The graph, in schedule order.
        inputs_in_arena: Inputs live until their last use (default: the whole run).

    Returns:
        The lifetimes, half-open, in schedule steps.
    """
    steps = max(len(graph.operators), 1)
    last: dict[str, int] = {}
    for i, op in enumerate(graph.operators):  # the one sweep: the last reader wins
        for read in op.inputs:
            last[read] = i
    start: dict[str, int] = {}
    end: dict[str, int] = {}
    tensors = graph.tensors
    for name, t in tensors.items():
        if t.role == "constant":
            continue
        if t.role == "input":
            s = 0
            e = last.get(name, 0) + 1 if inputs_in_arena else steps
        else:
            s = graph.producer[name]
            e = max(last.get(name, s), s) + 1
        start[name] = s
        end[name] = e
    for name in graph.outputs:
        if name in start:
            end[name] = steps
    return Liveness(steps, start, end, inputs_in_arena)
