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
           "FORMATS", "EXPORTS", "export_plan", "WRITE_SECONDS_PER_BUFFER"]

#: What writing a checked plan costs per buffer, kept out of a command's planning so that its
#: time limit holds (benchmarks/read_speed.py prints the figure).
WRITE_SECONDS_PER_BUFFER = 2e-6

class Format(Protocol):
    """What a format module provides (:mod:`.native`, :mod:`.minimalloc`): a new format is a
    module with these four functions, added to :data:`FORMATS` under its file extension."""

    def read_problem(self, path: str | Path, /) -> Problem: ...
    def write_problem(self, problem: Problem, path: str | Path, /) -> None: ...
    def read_plan(self, path: str | Path, problem: Problem, /) -> Plan: ...
    def write_plan(self, problem: Problem, plan: Plan, path: str | Path, /) -> None: ...


FORMATS: dict[str, Format] = {".json": native, ".csv": minimalloc}
"""File extension (lower case) -> the module that reads and writes that format."""


def _module(path: str | Path) -> Format:
    suffix = Path(path).suffix.lower()
    try:
        return FORMATS[suffix]
    except KeyError:
        raise FormatError(f"unknown file type {suffix or '(none)'!r}; expected .json or .csv",
                          source=str(path)) from None


def read_problem(path: str | Path) -> Problem:
    """The problem in ``path`` (validated; errors name the file, line and field).

    Args:
        path: A ``.json`` (cpplan's format) or ``.csv`` (MiniMalloc's) file.

    Returns:
        The validated problem, named after the file unless the file names it.

    Raises:
        FormatError: An unknown extension, a missing file, text that is not the format, or a
            field of the wrong type, naming the file, line and field.
        ProblemError: A problem that is not valid (a duplicate id, an alias overhanging its
            root...), naming the file, line and field where the format can tell them.
    """
    return _module(path).read_problem(path)


def write_problem(problem: Problem, path: str | Path) -> None:
    """Write ``problem`` to ``path``, all at once (a failed write leaves no partial file).

    Args:
        problem: The problem.
        path: A ``.json`` or ``.csv`` file; CSV holds one plain pool, no aliases and no fixed
            offsets.

    Raises:
        FormatError: An unknown extension.
        ProblemError: A problem the format cannot hold (CSV: several pools, a capacity,
            aliases, fixed offsets, an id with a comma or a line break), naming what.
        OSError: The file cannot be written (no such folder, permission denied).
    """
    _module(path).write_problem(problem, path)


def read_plan(path: str | Path, problem: Problem) -> Plan:
    """The plan in ``path`` for ``problem``; not yet checked (use :func:`cpplan.check`).

    Args:
        path: A ``.json`` plan, or a ``.csv`` with an ``offset`` column (MiniMalloc's
            solutions).
        problem: The problem the plan is for.

    Returns:
        The plan as the file states it (in JSON, the heights as stated, so that the checker
        can compare them with the offsets).

    Raises:
        FormatError: An unknown extension, a missing file, text that is not the format, a
            buffer the problem does not have, or a field of the wrong type, naming the file,
            line and field.
    """
    return _module(path).read_plan(path, problem)


def write_plan(problem: Problem, plan: Plan, path: str | Path) -> None:
    """Write ``plan`` to ``path`` once it has passed the checker (:class:`PlanError` if not):
    nothing invalid leaves cpplan through a file.

    Args:
        problem: The problem the plan is for.
        plan: The plan.
        path: A ``.json`` or ``.csv`` file (CSV: the problem's columns and an ``offset``, and
            a ``pool`` with several pools).

    Raises:
        FormatError: An unknown extension.
        PlanError: The plan does not pass :func:`~cpplan.plan.check` (nothing is written), or
            (CSV) leaves a buffer unplaced.
        ProblemError: An id that CSV cannot hold.
        OSError: The file cannot be written.
    """
    _module(path).write_plan(problem, ensure_valid(problem, plan), path)


def check_output(path: str | Path) -> Path:
    """``path`` if a problem or plan can be written there (a known format, an existing folder, a
    writable or new file); a clear error otherwise. Call it before long work.

    Args:
        path: Where a problem or plan will be written.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        FormatError: An unknown extension.
        FileNotFoundError: No such folder.
        IsADirectoryError: ``path`` is a folder.
        PermissionError: The file or the folder cannot be written.
    """
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
