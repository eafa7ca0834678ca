"""Handing freed memory back to the operating system between searches.

The searches allocate in bursts: a CP-SAT solve builds its model copies, LP relaxations and
worker threads and frees them when it ends; a branch-and-bound search frees its undo records
when it returns. glibc's malloc keeps what is freed inside its arenas (one more per thread
that allocates, and CP-SAT starts new threads on every solve) and hands it back only from the
top of each heap, so a run of many short solves grows the process's resident memory with
memory that nothing uses. :func:`release` asks glibc to hand back every free page
(``malloc_trim(0)``, which walks every arena). Elsewhere (another C library, another system)
it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from typing import Any

__all__ = ["release"]


def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None where there is none (another C library or system)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_MALLOC_TRIM = _malloc_trim()


def release() -> None:
    """Hand the memory that the process freed back to the operating system, where the C
    library can (glibc); the process's live objects are untouched. Takes milliseconds."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
