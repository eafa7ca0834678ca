"""Replica of TensorFlow Lite Micro's greedy memory planner.

Reproduces tensorflow/tflite-micro,
``tensorflow/lite/micro/memory_planner/greedy_memory_planner.cc``
(``GreedyMemoryPlanner::CalculateOffsetsIfNeeded``) with the size rounding of
``tensorflow/lite/micro/micro_allocation_info.cc``. Its height equals the arena head TFLM's own
interpreter reports on every model of ``instances/tflite/`` (``tests/runtimes/test_tflm.py``).
"""

from __future__ import annotations

import numpy as np

from ..blocks import Blocks
from ..deadline import PlanOptions
from ..plan import Plan
from ..planners.registry import register
from ..problem import Problem
from ._greedy import Arena, check_alignment, choose_first_fit, offset_plan

NAME = "tflm-greedy"


@register(NAME, family="replica", reproduces="tensorflow/tflite-micro, tensorflow/lite/micro/"
          "memory_planner/greedy_memory_planner.cc")
def plan(problem: Problem, options: PlanOptions, *, alignment: int = 16) -> Plan:
    """TFLM GreedyMemoryPlanner: offline buffers first, then size descending, lowest first fit.

    Kept from the original:

    * fixed offsets are TFLM's offline-planned buffers: placed first, verbatim.
    * the online buffers are written into the order array from the tail (reverse insertion
      order) and then sorted by size descending with a *stable* bubble sort
      (``ReverseSortInPlace``): equal sizes go last-added first.
    * placement: walk the time-overlapping placed buffers in offset order keeping the running
      maximum end, stop at the first gap that holds the buffer; else on top of them all.
    * ``alignment`` (bytes, default 16 = ``MicroArenaBufferAlignment()``): TFLM's caller
      rounds sizes up to it (``AlignSizeUp``), so the padded size is what is placed (and what
      the capacity check sees); offsets are aligned to it too (lcm with each block's and
      pool's alignment), which TFLM gets for free from the rounded sizes.

    Extensions: pools, aliases and zero-size blocks as in :mod:`cpplan.replicas._greedy`.
    """
    align_b = check_alignment(alignment)

    def order(blocks: Blocks, arena: Arena, todo: np.ndarray) -> np.ndarray:
        rev = todo[::-1]
        return rev[np.argsort(-arena.top[rev], kind="stable")]

    return offset_plan(problem, NAME, order=order, choose=choose_first_fit, alignment=align_b,
                       round_to=align_b)

