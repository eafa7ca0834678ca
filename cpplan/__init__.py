"""cpplan: exact memory planning for programs with a fixed schedule.

Give every buffer (size, lifetime, alignment, candidate pools) a pool and a byte offset so that
buffers alive at the same moment never share a byte, keep the arenas as small as they can be,
and say how good the answer is: proven optimal, or the gap to a proven lower bound.

    >>> from cpplan import Buffer, Problem, check
    >>> problem = Problem((Buffer("a", 64, 0, 2), Buffer("b", 32, 1, 3), Buffer("c", 64, 2, 4)))
"""

from __future__ import annotations

from .blocks import Blocks, make_blocks
from .bounds import LoadBound, max_load, objective_lower_bound
from .errors import CapacityError, CpplanError, FormatError, PlanError, ProblemError
from .io import read_plan, read_problem, write_plan, write_problem
from .plan import Conflict, Placement, Plan, Violation, check, ensure_valid
from .problem import Alias, Buffer, Pool, Problem

__all__ = [
    "Alias", "Blocks", "Buffer", "CapacityError", "Conflict", "CpplanError", "FormatError",
    "LoadBound",
    "Placement", "Plan", "PlanError", "Pool", "Problem", "ProblemError", "Violation", "check",
    "ensure_valid", "make_blocks", "max_load", "objective_lower_bound", "read_plan",
    "read_problem", "write_plan", "write_problem",
]

__version__ = "0.1.0"
