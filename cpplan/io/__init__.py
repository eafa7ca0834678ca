"""Reading and writing problems and plans; the format follows the file extension.

``.json`` is cpplan's native format (:mod:`cpplan.io.native`), ``.csv`` is MiniMalloc's
(:mod:`cpplan.io.minimalloc`). Writers are atomic: a failed write leaves no partial file.

Exports are files for other tools, written only (never read back), named by format rather than
extension (:data:`EXPORTS`, :func:`export_plan`): ``chrome-trace``, the Chrome trace-event
JSON that Perfetto UI opens (:mod:`cpplan.io.chrome_trace`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..errors import FormatError
from ..plan import Plan, ensure_valid
from ..problem import Problem
from . import chrome_trace, minimalloc, native
from .atomic import ensure_writable

__all__ = ["read_problem", "write_problem", "read_plan", "write_plan", "check_output",
           "FORMATS", "EXPORTS", "export_plan"]

class Format(Protocol):
    """What a format module provides (:mod:`.native`, :mod:`.minimalloc`)."""

    def read_problem(self, path: str | Path, /) -> Problem: ...
    def write_problem(self, problem: Problem, path: str | Path, /) -> None: ...
    def read_plan(self, path: str | Path, problem: Problem, /) -> Plan: ...
    def write_plan(self, problem: Problem, plan: Plan, path: str | Path, /) -> None: ...


FORMATS: dict[str, Format] = {".json": native, ".csv": minimalloc}


def _module(path: str | Path) -> Format:
    suffix = Path(path).suffix.lower()
    try:
        return FORMATS[suffix]
    except KeyError:
        raise FormatError(f"unknown file type {suffix or '(none)'!r}; expected .json or .csv",
                          source=str(path)) from None


def read_problem(path: str | Path) -> Problem:
    """The problem in ``path`` (validated; errors name the file, line and field)."""
    return _module(path).read_problem(path)


def write_problem(problem: Problem, path: str | Path) -> None:
    _module(path).write_problem(problem, path)


def read_plan(path: str | Path, problem: Problem) -> Plan:
    """The plan in ``path`` for ``problem``; not yet checked (use :func:`cpplan.check`)."""
    return _module(path).read_plan(path, problem)


def write_plan(problem: Problem, plan: Plan, path: str | Path) -> None:
    """Write ``plan`` to ``path`` once it has passed the checker (:class:`PlanError` if not):
    nothing invalid leaves cpplan through a file."""
    _module(path).write_plan(problem, ensure_valid(problem, plan), path)


def check_output(path: str | Path) -> Path:
    """``path`` if a problem or plan can be written there (a known format, an existing folder, a
    writable or new file); a clear error otherwise. Call it before long work."""
    _module(path)
    return ensure_writable(path)


#: Export formats by name: ``write(problem, plan, path)`` (the plan checked first).
EXPORTS: dict[str, Callable[[Problem, Plan, Path], Path]] = {
    "chrome-trace": chrome_trace.write_chrome_trace,
}


def export_plan(problem: Problem, plan: Plan, path: str | Path, fmt: str) -> Path:
    """Write ``plan`` to ``path`` in export format ``fmt`` (one of :data:`EXPORTS`), once it
    has passed the checker (:class:`PlanError` if not). Atomic."""
    try:
        write = EXPORTS[fmt]
    except KeyError:
        raise FormatError(f"unknown export format {fmt!r}; expected one of "
                          f"{', '.join(sorted(EXPORTS))}", source=str(path)) from None
    return write(problem, ensure_valid(problem, plan), Path(path))
