"""From networks to problems: a graph IR, liveness, rewrites (views, in-place, concat without
copies), workspaces, and front ends (ONNX in :mod:`cpplan.graph.onnx`, behind the ``onnx``
extra). ``to_problem(graph, ...)`` turns a graph into a :class:`cpplan.Problem`; the options of
every front end are :class:`FrontEndOptions` (:mod:`cpplan.graph.options`).
"""

from __future__ import annotations

from .ir import Graph, Operator, Tensor, element_bytes, tensor_bytes
from .liveness import Liveness, liveness
from .options import FrontEndOptions
from .rewrites import RewriteReport, concat_is_contiguous, find_aliases
from .to_problem import ARENA, INPUTS, to_problem

__all__ = ["ARENA", "INPUTS", "FrontEndOptions", "Graph", "Liveness", "Operator", "RewriteReport",
           "Tensor", "concat_is_contiguous", "element_bytes", "find_aliases", "liveness",
           "tensor_bytes", "to_problem"]
