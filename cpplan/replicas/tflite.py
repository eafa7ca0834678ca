"""Replica of TensorFlow Lite's CPU arena planner.

Reproduces tensorflow/tensorflow, ``tensorflow/lite/arena_planner.cc``
(``ArenaPlanner::CreateTensorAllocationVector``) and ``tensorflow/lite/simple_memory_arena.cc``
(``SimpleMemoryArena::Allocate``).
"""

from __future__ import annotations

import numpy as np

from ..blocks import Blocks
from ..deadline import PlanOptions
from ..plan import Plan
from ..planners.registry import register
from ..problem import Problem
from ._greedy import Arena, align_up, check_alignment, offset_plan, scan

NAME = "tflite-arena"


@register(NAME, family="replica", reproduces="tensorflow/tensorflow, tensorflow/lite/"
          "arena_planner.cc + tensorflow/lite/simple_memory_arena.cc")
def plan(problem: Problem, options: PlanOptions, *, alignment: int = 64) -> Plan:
    """TFLite ArenaPlanner: whole-run tensors first, then size descending, best-fit gap.

    Kept from the original:

    * order (``CreateTensorAllocationVector``): blocks alive over the whole schedule (TFLite's
      inputs, variables and outputs: allocated at node 0, never deallocated) first, by index;
      then size descending, ties by earlier first use. TFLite's ``std::sort`` leaves remaining
      ties implementation-defined; here they go by block index.
    * placement (``SimpleMemoryArena::Allocate``): scan the time-overlapping allocations in
      offset order, keeping the running maximum end; a gap below an allocation is a candidate if
      the aligned start plus the size fits; the *smallest* candidate wins (strict ``<``: the
      lowest on ties). Quirk kept: the fit is compared as ``offset - aligned_start`` but
      recorded as ``offset - unaligned_start``. No gap: on top of the highest overlapping end
      (not the arena's high-water mark).
    * ``alignment`` (bytes, default 64 = ``kDefaultTensorAlignment``) aligns offsets, never
      sizes; it joins each block's and pool's alignment. TFLite's own cost, kept on purpose: on
      tiny tensors it dominates (three live 4-byte tensors sit at 0, 64 and 128: 132 bytes, 11
      times the lower bound, on ``instances/tiny.csv``); ``alignment=1`` plans without it.

    Extensions: pools, fixed offsets, aliases and zero-size blocks as in
    :mod:`cpplan.replicas._greedy` (TFLite has one arena; zero-size tensors get offset 0 as in
    TFLite).
    """
    align_b = check_alignment(alignment)

    def order(blocks: Blocks, arena: Arena, todo: np.ndarray) -> np.ndarray:
        last = len(blocks.times) - 1
        whole = (blocks.start[todo] == 0) & (blocks.end[todo] == last)
        first = todo[whole]
        rest = todo[~whole]
        rest = rest[np.lexsort((rest, blocks.start[rest], -blocks.size[rest]))]
        return np.concatenate([first, rest])

    # The plain index: on idealloc Y_1 this order leaves too many runs for merging to pay.
    return offset_plan(problem, NAME, order=order, choose=_choose, alignment=align_b,
                       merged=False)


def _choose(arena: Arena, i: int, pool: int) -> int:
    lo, hi, _ = arena.obstacles(i, pool)
    if len(lo) == 0:
        return 0
    S = int(arena.top[i])
    A = arena.align(i, pool)
    L, cur, top = scan(lo, hi)
    cand = align_up(cur, A)
    ok = np.nonzero(cand + S <= L)[0]
    if len(ok) == 0:
        return int(align_up(top, A))
    compared = (L - cand)[ok]
    recorded = (L - cur)[ok]
    k = 0  # the first candidate always beats the initial "infinite" fit
    while True:
        better = compared[k + 1:] < recorded[k]
        if not better.any():
            return int(cand[ok[k]])
        k = k + 1 + int(np.argmax(better))
