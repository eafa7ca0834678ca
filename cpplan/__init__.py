"""cpplan: exact memory planning for programs with a fixed schedule.

Give every buffer (size, lifetime, alignment, candidate pools) a pool and a byte offset so that
buffers alive at the same moment never share a byte, keep the arenas as small as they can be,
and say how good the answer is: proven optimal, or the gap to a proven lower bound.

    >>> from cpplan import Buffer, Problem, check
    >>> problem = Problem((Buffer("a", 64, 0, 2), Buffer("b", 32, 1, 3), Buffer("c", 64, 2, 4)))
"""

from __future__ import annotations

# Names are imported on first use (PEP 562), so that `import cpplan.cli` stays light: the
# command answers --help, and a Ctrl-C at start-up, before numpy and OR-Tools are loaded.
_LAZY = {
    "Blocks": "blocks", "make_blocks": "blocks",
    "LoadBound": "bounds", "max_load": "bounds", "objective_lower_bound": "bounds",
    "CapacityError": "errors", "CpplanError": "errors", "FormatError": "errors",
    "PlanError": "errors", "ProblemError": "errors",
    "read_plan": "io", "read_problem": "io", "write_plan": "io", "write_problem": "io",
    "Conflict": "plan", "Placement": "plan", "Plan": "plan", "Violation": "plan",
    "check": "plan", "ensure_valid": "plan",
    "Alias": "problem", "Buffer": "problem", "Gap": "problem", "Pool": "problem",
    "Problem": "problem",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cpplan' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Alias", "Blocks", "Buffer", "CapacityError", "Conflict", "CpplanError", "FormatError",
    "Gap", "LoadBound",
    "Placement", "Plan", "PlanError", "Pool", "Problem", "ProblemError", "Violation", "check",
    "ensure_valid", "make_blocks", "max_load", "objective_lower_bound", "read_plan",
    "read_problem", "write_plan", "write_problem",
]

__version__ = "0.1.0"
