"""Replica of PaddlePaddle's memory optimisation transpiler (variable reuse by renaming).

Reproduces PaddlePaddle/Paddle,
``python/paddle/fluid/transpiler/memory_optimization_transpiler.py``
(``ControlFlowGraph.memory_optimize``, ``_fill_pool``, the ``level`` shape test).
"""

from __future__ import annotations

import numpy as np

from ..blocks import Blocks
from ..deadline import PlanOptions, tick
from ..plan import Plan
from ..planners.registry import register
from ..problem import Problem
from ._greedy import check_alignment, objects_plan, replay

NAME = "paddle-reuse"


@register(NAME, family="replica", reproduces="PaddlePaddle/Paddle, python/paddle/fluid/"
          "transpiler/memory_optimization_transpiler.py (memory_optimize)")
def plan(problem: Problem, options: PlanOptions, *, level: int = 0, alignment: int = 1) -> Plan:
    """Paddle memory_optimize: an output takes over the first dead variable that matches.

    Kept from the original:

    * program order: blocks by start (then index); a block dead before step ``t`` joins the
      pool (FIFO, oldest first) before the outputs of step ``t`` look for a variable to reuse,
      so an operator never reuses its own inputs (no in-place).
    * match: the *first* pool entry that fits, not the best: ``level=0`` (Paddle's default)
      needs exactly the same shape (here: the same size in bytes), ``level=1`` a size no
      larger than the pooled variable's. The reused variable is removed from the pool and never
      grows; when the output dies, the variable returns to the pool.
    * memory = the distinct variables laid end to end (the objects in order of creation).
    * ``alignment`` (bytes, default 1) aligns each variable's offset with its members' and
      pool's alignments.

    Extensions: only blocks with the same candidate pools share (Paddle's dtype check);
    fixed offsets, aliases (a block with its span) and zero-size blocks as in
    :mod:`cpplan.replicas._greedy`.
    """
    align_b = check_alignment(alignment)
    if level not in (0, 1):
        raise ValueError(f"level must be 0 or 1, got {level!r}")

    def assign(blocks: Blocks, group: np.ndarray) -> list[list[int]]:
        objects: list[list[int]] = []
        osize: list[int] = []
        var_of: dict[int, int] = {}
        pool: list[int] = []  # FIFO of dead variables (object ids)
        for i, ended in replay(blocks, group):
            tick()
            for j in ended:
                v = var_of[j]
                if v not in pool:
                    pool.append(v)
            s = int(blocks.size[i])
            v = -1
            for k, cand in enumerate(pool):
                if (osize[cand] == s) if level == 0 else (s <= osize[cand]):
                    v = pool.pop(k)
                    break
            if v < 0:
                v = len(objects)
                objects.append([])
                osize.append(s)
            objects[v].append(i)
            var_of[i] = v
        return objects

    return objects_plan(problem, NAME, assign, alignment=align_b)
