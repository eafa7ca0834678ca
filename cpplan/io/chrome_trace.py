"""Plans as Chrome trace-event files, which Perfetto UI (ui.perfetto.dev) and ``chrome://tracing``
open: the timeline of a plan, buffer by buffer, beside the bytes live.

The file is the trace-event format's JSON object form (Google's "Trace Event Format"
document): ``{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}``. Time is the
schedule: step ``t`` is at ``(t - first step) * step_us`` microseconds (``step_us`` 1 by
default; ``otherData`` says so). Events, of three phases only:

* ``"M"`` (metadata): a process per pool, named ``pool NAME`` (``process_name``), in pool order
  (``process_sort_index``); its threads are lanes, ``lane K`` (``thread_name``,
  ``thread_sort_index``).
* ``"X"`` (complete slice): a slice per buffer, in its pool's process, from its first step
  (``ts``) for its lifetime (``dur``), named by its id; ``args`` hold ``id``, ``offset``,
  ``size``, ``end_offset`` (offset + size), ``pool``, ``lifetime`` ``[start, end)`` in steps,
  ``alignment``, and where they apply ``inside`` (the root an aliased buffer lives in, at
  ``displacement``), ``gaps`` and ``name`` (:func:`cpplan.names.buffer_names`). Slices of one
  lane never overlap (a trace viewer nests slices of one thread): each pool's buffers are laid
  in the fewest lanes, by start step, each into the lowest lane free.
* ``"C"`` (counter): ``live`` in each pool's process, ``{"bytes": B}`` at every step where the
  bytes live in that pool change (aliased buffers count once, by the bytes their root's block
  covers, as the lower bound counts them).

``ts`` and ``dur`` are integers. Every plan passes the checker before it is written.
"""

from __future__ import annotations

import heapq
import json
from pathlib import Path
from typing import Any

import numpy as np

from ..blocks import make_blocks
from ..errors import CpplanError
from ..load import load_profile
from ..names import buffer_names
from ..plan import Plan, ensure_valid
from ..problem import Problem
from .atomic import ensure_writable, write_text_atomic

__all__ = ["chrome_trace", "write_chrome_trace", "PHASES"]

#: The event phases the file uses: complete slices, counters, metadata.
PHASES = ("X", "C", "M")


def _lanes(starts: list[int], ends: list[int], order: list[int]) -> dict[int, int]:
    """Buffer -> lane: the fewest lanes in which no two lifetimes overlap (by start, each into
    the lowest lane free)."""
    free: list[int] = []
    busy: list[tuple[int, int]] = []  # (end, lane)
    lanes: dict[int, int] = {}
    count = 0
    for i in order:
        while busy and busy[0][0] <= starts[i]:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            lane = count
            count += 1
        lanes[i] = lane
        heapq.heappush(busy, (ends[i], lane))
    return lanes


def chrome_trace(problem: Problem, plan: Plan, *, step_us: int = 1) -> dict[str, Any]:
    """The trace of ``plan`` (see the module docstring) as a JSON-ready object."""
    if type(step_us) is not int or step_us < 1:
        raise CpplanError(f"step_us must be a positive integer (microseconds per step), got "
                          f"{step_us!r}")
    if plan.status == "infeasible" or not plan.placements:
        raise CpplanError(f"nothing to trace: the plan has no placements ({plan.status})")
    ensure_valid(problem, plan)
    t0, t1 = problem.time_span
    names = buffer_names(problem)
    root_of = problem.root_of
    placements = plan.placements
    events: list[dict[str, Any]] = []
    buffers = problem.buffers
    by_pool: dict[str, list[int]] = {p.name: [] for p in problem.pools}
    for i, b in enumerate(buffers):
        by_pool[placements[b.id].pool].append(i)
    starts = [b.start for b in buffers]
    ends = [b.end for b in buffers]

    blocks = make_blocks(problem)
    block_pool, _ = blocks.arrays(placements)
    times = np.asarray(blocks.times, np.int64)

    for p, pool in enumerate(problem.pools):
        pid = p + 1
        members = by_pool[pool.name]
        height = plan.heights.get(pool.name, 0)
        events.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                       "args": {"name": f"pool {pool.name} ({height:,} bytes)"}})
        events.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                       "args": {"sort_index": p}})
        order = sorted(members, key=lambda i: (starts[i], placements[buffers[i].id].offset, i))
        lanes = _lanes(starts, ends, order)
        for lane in range(max(lanes.values(), default=-1) + 1):
            events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": lane + 1,
                           "args": {"name": f"lane {lane}"}})
            events.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": lane + 1,
                           "args": {"sort_index": lane}})
        for i in order:
            b = buffers[i]
            offset = placements[b.id].offset
            args: dict[str, Any] = {"id": b.id, "offset": offset, "size": b.size,
                                    "end_offset": offset + b.size, "pool": pool.name,
                                    "lifetime": [b.start, b.end], "alignment": b.alignment}
            if b.id in root_of:
                root, disp = root_of[b.id]
                args["inside"] = root
                args["displacement"] = disp
            if b.gaps:
                args["gaps"] = [[s, e, lo, hi] for s, e, lo, hi in b.pieces()]
            if b.id in names:
                args["name"] = names[b.id]
            events.append({"name": b.id, "cat": "alias" if b.id in root_of else "buffer",
                           "ph": "X", "ts": (b.start - t0) * step_us,
                           "dur": (b.end - b.start) * step_us, "pid": pid, "tid": lanes[i] + 1,
                           "args": args})
        load, _ = load_profile(blocks, block_pool == p)
        load = load * blocks.scale
        previous = None
        for t, value in zip(times[:len(load)].tolist(), load.tolist(), strict=True):
            if value != previous:
                events.append({"name": "live", "ph": "C", "ts": (t - t0) * step_us, "pid": pid,
                               "tid": 0, "args": {"bytes": value}})
                previous = value
    other = {"problem": problem.name, "planner": plan.planner, "status": plan.status,
             "objective": plan.objective, "lower_bound": plan.lower_bound,
             "heights": dict(plan.heights), "buffers": len(buffers),
             "time": f"schedule step t is at (t - {t0}) x {step_us} microseconds",
             "steps": [t0, t1], "step_us": step_us}
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": other}


def write_chrome_trace(problem: Problem, plan: Plan, path: str | Path, *,
                       step_us: int = 1) -> Path:
    """Write the trace of ``plan`` (:func:`chrome_trace`) to ``path`` as JSON (atomic)."""
    path = ensure_writable(path)
    trace = chrome_trace(problem, plan, step_us=step_us)
    write_text_atomic(path, json.dumps(trace, separators=(",", ":")) + "\n")
    return path
