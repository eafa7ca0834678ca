"""The baseline with no reuse at all: every block gets bytes of its own."""

from __future__ import annotations

import time

from ..blocks import make_blocks
from ..deadline import PlanOptions
from ..plan import Plan
from ..planners.registry import register
from ..planners.stacking import stack
from ..problem import Problem


@register("naive", family="replica", reproduces="the no-reuse baseline of the memory-planning "
          "papers (every tensor its own allocation)")
def plan(problem: Problem, options: PlanOptions) -> Plan:
    """No reuse: blocks stacked end to end in buffer order, each in its first candidate pool.

    Fixed blocks keep their offsets; the others are stacked above every fixed block of the
    pool, each at the next aligned offset. Raises :class:`CapacityError` when a pool overflows
    and no later candidate pool has room.
    """
    started = time.perf_counter()
    blocks = make_blocks(problem)
    pool_of, offset = stack(blocks)
    return blocks.to_plan(pool_of, offset, planner="naive", started=started)

