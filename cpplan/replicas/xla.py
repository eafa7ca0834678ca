"""Replicas of XLA's heap simulator best-fit heap, with its two sort orders.

Reproduces openxla/xla, ``xla/service/heap_simulator/heap_simulator.cc``
(``GlobalDecreasingSizeBestFitHeap``: ``GetSortedBufferIntervals``, ``FindChunkCandidate``,
``CommitChunk``), types ``kSpatial`` and ``kTemporal``.
"""

from __future__ import annotations

import numpy as np

from ..blocks import Blocks
from ..deadline import PlanOptions
from ..plan import Plan
from ..planners.registry import register
from ..problem import Problem
from ._greedy import Arena, check_alignment, choose_best_fit, offset_plan

_DOC = """

    Kept from the original (the current openxla version, whose free-chunk list ends in an
    unbounded chunk):

    * placement: subtract the chunks of the time-overlapping buffers from the free list (the
      piece above a chunk starts at its end rounded up to the alignment); take the free chunk
      with the smallest (length, offset) that holds the buffer, i.e. best fit, lowest offset on
      ties; the unbounded top chunk only when no bounded one fits, so the buffer lands right
      above the highest overlapping end, not at the heap top.
    * durations are measured in schedule events (compressed time ranks), as XLA counts its
      Alloc/Free events; remaining ties go by block index (XLA's buffer id).
    * ``alignment`` (bytes, default 1; XLA takes it from the backend) aligns offsets, never
      sizes, combined with each block's and pool's alignment.
    * colocations are cpplan's aliases (the block is placed as one); no preferred offsets, no
      slicing, no size limit per heap.

    Extensions: pools, fixed offsets and zero-size blocks as in :mod:`cpplan.replicas._greedy`.
    """


def _run(problem: Problem, name: str, alignment: int, temporal: bool) -> Plan:
    align_b = check_alignment(alignment)

    def order(blocks: Blocks, arena: Arena, todo: np.ndarray) -> np.ndarray:
        size = blocks.size[todo]
        dur = (blocks.end - blocks.start)[todo]
        keys = (todo, -size, -dur) if temporal else (todo, -dur, -size)
        return todo[np.lexsort(keys)]

    return offset_plan(problem, name, order=order, choose=choose_best_fit, alignment=align_b)


@register("xla-best-fit-spatial", family="replica", reproduces="openxla/xla, xla/service/"
          "heap_simulator/heap_simulator.cc (GlobalDecreasingSizeBestFitHeap, kSpatial)")
def spatial(problem: Problem, options: PlanOptions, *, alignment: int = 1) -> Plan:
    """XLA GlobalDecreasingSizeBestFitHeap, kSpatial: size desc, then duration desc, best fit."""
    return _run(problem, "xla-best-fit-spatial", alignment, temporal=False)


@register("xla-best-fit-temporal", family="replica", reproduces="openxla/xla, xla/service/"
          "heap_simulator/heap_simulator.cc (GlobalDecreasingSizeBestFitHeap, kTemporal)")
def temporal(problem: Problem, options: PlanOptions, *, alignment: int = 1) -> Plan:
    """XLA GlobalDecreasingSizeBestFitHeap, kTemporal: duration desc, then size desc, best fit."""
    return _run(problem, "xla-best-fit-temporal", alignment, temporal=True)


spatial.function.__doc__ = (spatial.function.__doc__ or "") + _DOC
temporal.function.__doc__ = (temporal.function.__doc__ or "") + _DOC
