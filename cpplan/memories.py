"""A device's memories, fastest first, as the pools of a problem (memory tiers).

A memory map is written ``NAME[:CAPACITY[:TRAFFIC_COST]]`` per memory, fastest first, as on
the command line (``--memory sram:256KiB:1 --memory dram::4``): an empty capacity means
unbounded, the traffic cost is what a byte moved in that memory costs (cycles or energy; 0 by
default). :func:`with_memories` gives a problem those memories as its pools: every buffer may
go to any of them (its fixed offset, if any, kept), and the objective becomes the traffic cost
(a memory's height costs nothing unless ``cost`` says so: on a device the memories are there,
what matters is what is served from where). ExecuTorch's front end numbers them as mem_ids
1..N in this order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .errors import ProblemError
from .problem import Pool, Problem

__all__ = ["Memory", "parse_memory", "parse_size", "with_memories"]

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2,
          "mib": 1024**2, "g": 1000**3, "gb": 1000**3, "gib": 1024**3}


@dataclass(frozen=True)
class Memory:
    """One memory: its name, capacity in bytes (None: unbounded), traffic cost per byte moved,
    base alignment and cost per byte of height.

    Args:
        name: The memory's name (the pool's).
        capacity: Its size in bytes; ``None`` for unbounded.
        traffic_cost: What a byte moved in it costs (cycles or energy).
        alignment: Its base alignment.
        cost: What a byte of its height costs (0: the memory is there anyway).
    """

    name: str
    capacity: int | None = None
    traffic_cost: int = 0
    alignment: int = 1
    cost: int = 0

    def pool(self) -> Pool:
        """The memory as a :class:`~cpplan.problem.Pool` of the same name and figures."""
        return Pool(self.name, self.capacity, self.alignment, self.cost, self.traffic_cost)


def parse_size(text: str, what: str = "capacity") -> int:
    """``262144``, ``256KiB``, ``1.5MiB``, ``4M`` as bytes (KiB/MiB/GiB are powers of 1024,
    k/M/G and kB/MB/GB of 1000); a clear error naming ``what`` otherwise.

    Args:
        text: A whole number of bytes, or a number and a unit (case does not matter).
        what: The field named in the error.

    Returns:
        The bytes.

    Raises:
        ProblemError: Not a size, an unknown unit, or not a whole number of bytes.

    Examples:
        >>> parse_size("256KiB"), parse_size("1.5MiB"), parse_size("4M")
        (262144, 1572864, 4000000)
    """
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _UNITS:
        raise ProblemError(f"not a size: {text!r} (bytes, or a number with KiB, MiB, GiB, "
                           "kB, MB, GB)", field=what)
    value = float(m.group(1)) * _UNITS[unit]
    if value != math.floor(value):
        raise ProblemError(f"not a whole number of bytes: {text!r}", field=what)
    return int(value)


def parse_memory(text: str) -> Memory:
    """``NAME[:CAPACITY[:TRAFFIC_COST]]`` as a :class:`Memory` (module docstring).

    Args:
        text: One memory as the command line's ``--memory`` takes it.

    Returns:
        The memory (alignment 1, cost 0).

    Raises:
        ProblemError: No name, more than three fields, a capacity that is not a size
            (:func:`parse_size`) or a traffic cost that is not a whole number >= 0.

    Examples:
        >>> parse_memory("sram:256KiB:1")
        Memory(name='sram', capacity=262144, traffic_cost=1, alignment=1, cost=0)
        >>> parse_memory("dram::4")
        Memory(name='dram', capacity=None, traffic_cost=4, alignment=1, cost=0)
    """
    parts = text.split(":")
    if len(parts) > 3 or not parts[0].strip():
        raise ProblemError(f"expected NAME[:CAPACITY[:TRAFFIC_COST]], got {text!r}",
                           field="--memory")
    name = parts[0].strip()
    capacity = None
    if len(parts) > 1 and parts[1].strip():
        capacity = parse_size(parts[1], "--memory capacity")
    traffic_cost = 0
    if len(parts) > 2 and parts[2].strip():
        if not parts[2].strip().isdigit():
            raise ProblemError(f"traffic cost must be a whole number >= 0, got {parts[2]!r}",
                               pool=name, field="--memory traffic_cost")
        traffic_cost = int(parts[2])
    return Memory(name, capacity, traffic_cost)


def with_memories(problem: Problem, memories: Sequence[Memory]) -> Problem:
    """``problem`` with ``memories`` (fastest first) as its pools: every buffer may go to any of
    them, first choice the fastest. Each memory's base alignment is at least the largest base
    alignment of the pools it replaces (an arena's alignment stays the runtime's). Raises
    :class:`ProblemError` for a memory named twice (the problem checks the rest).

    Args:
        problem: The problem, with the pools a front end gave it.
        memories: The device's memories, fastest first.

    Returns:
        The problem with one pool per memory and every buffer free to go to any of them.

    Raises:
        ProblemError: No memories, a memory named twice, or a problem that is not valid in
            these memories (a fixed offset beyond every capacity, say).
    """
    if not memories:
        raise ProblemError("no memories given", field="--memory")
    names = [m.name for m in memories]
    for name in names:
        if names.count(name) > 1:
            raise ProblemError("named twice", pool=name, field="--memory")
    base = max((p.alignment for p in problem.pools), default=1)
    pools = tuple(replace(m, alignment=math.lcm(m.alignment, base)).pool() for m in memories)
    buffers = tuple(replace(b, pools=()) if b.pools else b for b in problem.buffers)
    return problem.replace(buffers=buffers, pools=pools)
