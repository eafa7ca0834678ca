"""The process's memory around the searches: freed memory handed back to the operating system,
and a watch that stops a solve whose memory grows too far.

The searches allocate in bursts: a CP-SAT solve builds its model copies, LP relaxations and
worker threads and frees them when it ends; a branch-and-bound search frees its undo records
when it returns. glibc's malloc keeps what is freed inside its arenas (one more per thread
that allocates, and CP-SAT starts new threads on every solve) and hands it back only from the
top of each heap, so a run of many short solves grows the process's resident memory with
memory that nothing uses. :func:`release` asks glibc to hand back every free page
(``malloc_trim(0)``, which walks every arena). Elsewhere (another C library, another system)
it does nothing.

CP-SAT's own memory grows with its search time on large models (each bound it learns on an
offset is a new literal), and its ``max_memory_in_mb`` does not stop it in time;
:func:`watch` stops a search once the process passes a ceiling, :func:`ceiling` a given
amount above where it was when the search began (Linux, where ``/proc`` says how much is
resident; elsewhere it watches nothing).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ceiling", "few_arenas", "release", "resident_mb", "watch"]

WATCH_SECONDS = 0.01  # between looks at the process's memory while a solve runs


def _glibc(name: str, argtypes: list[Any]) -> Any:
    """glibc's function ``name`` taking ``argtypes`` and returning an int, or None where there
    is none (another C library or system)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), name)
    except (OSError, AttributeError):
        return None
    function.argtypes = argtypes
    function.restype = ctypes.c_int
    return function


_MALLOC_TRIM = _glibc("malloc_trim", [ctypes.c_size_t])
_M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)


def release() -> None:
    """Hand the memory that the process freed back to the operating system, where the C
    library can (glibc); the process's live objects are untouched. Takes milliseconds."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def few_arenas(arenas: int) -> None:
    """Let glibc's malloc keep at most ``arenas`` arenas for the whole process (one per thread
    by default, up to eight per core, each keeping what its threads freed): for a process that
    owns its allocator, such as the ``cpplan`` command, before its threads start. Elsewhere it
    does nothing."""
    mallopt = _glibc("mallopt", [ctypes.c_int, ctypes.c_int])
    if mallopt is not None:
        mallopt(_M_ARENA_MAX, arenas)


def resident_mb() -> float | None:
    """The process's resident memory now, in MB (2**20 bytes); None where it is not known."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def ceiling(growth_mb: float | None) -> float | None:
    """The resident memory (MB) ``growth_mb`` above the process's now: a ceiling for
    :func:`watch` that a whole search keeps (each solve starting from where the last one left
    would ratchet it up). None: no ceiling (or an unknown resident memory)."""
    now = None if growth_mb is None else resident_mb()
    return None if now is None or growth_mb is None else now + growth_mb


@contextmanager
def watch(ceiling_mb: float | None, stop: Callable[[], None]) -> Iterator[list[bool]]:
    """Context: while it is open, ``stop()`` is called (once) when the process's resident
    memory passes ``ceiling_mb``. Yields a list that holds ``True`` once that happened.
    ``None`` watches nothing."""
    tripped: list[bool] = []
    if ceiling_mb is None:
        yield tripped
        return
    done = threading.Event()

    def look() -> None:
        while not done.wait(WATCH_SECONDS):
            now = resident_mb()
            if now is not None and now > ceiling_mb:
                tripped.append(True)
                stop()
                return

    watcher = threading.Thread(target=look, daemon=True)
    watcher.start()
    try:
        yield tripped
    finally:
        done.set()
        watcher.join()
