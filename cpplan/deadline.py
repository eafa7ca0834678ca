"""Time limits and stop flags that every planner honours, in wall or deterministic time.

A :class:`Budget` is a time limit, an optional stop flag (Ctrl-C, a caller giving up) and a
clock. The clock is the wall clock, or, in deterministic mode, the *work* reported so far:
planners report block placements (:func:`tick`), the exact engine reports CP-SAT's deterministic
time and branch-and-bound nodes, each converted to nominal seconds. Deterministic time depends
on the input alone, never on the machine's load, so a deterministic run stops at the same point
of the same search on every machine: that is what makes its output byte-identical.

Budgets nest: :meth:`Budget.within` makes a child whose limit is also bounded by the parent's,
and work reported to a child counts for every ancestor. The active budget of the current thread
is a context variable: :func:`tick` reports work to it and raises :class:`OutOfTime` once it
has expired, so a planner's inner loop needs one call and no parameter (threads start with no
active budget; pass the budget and :meth:`Budget.active` it there).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from .errors import CpplanError

__all__ = ["Budget", "OutOfTime", "tick", "current", "check_time_limit",
           "PLACEMENTS_PER_SECOND"]

#: Nominal speed of a block placement, turning placements into deterministic seconds.
PLACEMENTS_PER_SECOND = 20_000
# How often tick() reads the wall clock (every call would cost more than a placement).
_CLOCK_EVERY = 64


class OutOfTime(CpplanError):
    """The active budget expired (its time limit passed, or it was stopped)."""


def check_time_limit(value: object, name: str = "time limit") -> float:
    """``value`` as a finite, non-negative number of seconds, or a clear error naming it."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CpplanError(f"{name}: expected a number of seconds, got {value!r}")
    seconds = float(value)
    if not math.isfinite(seconds) or seconds < 0:
        raise CpplanError(f"{name}: must be a finite number >= 0, got {value!r}")
    return seconds


class Budget:
    """``seconds`` from now (``None``: no limit), a ``stop`` flag, wall or deterministic clock."""

    def __init__(self, seconds: float | None = None, *, stop: threading.Event | None = None,
                 deterministic: bool = False, parent: Budget | None = None) -> None:
        self.parent = parent
        self.deterministic = deterministic if parent is None else parent.deterministic
        self.stop_flag = stop if stop is not None else (
            parent.stop_flag if parent is not None else threading.Event())
        self._started = time.perf_counter()
        self._work = 0.0  # deterministic seconds reported to this budget and its children
        self._calls = 0
        self._limit = math.inf if seconds is None else check_time_limit(seconds)

    # -- the clock ---------------------------------------------------------------------------
    def elapsed(self) -> float:
        """Seconds spent since this budget was made, on its clock."""
        if self.deterministic:
            return self._work
        return time.perf_counter() - self._started

    def remaining(self) -> float:
        """Seconds left before this budget (or an ancestor) expires; 0 once stopped."""
        if self.stop_flag.is_set():
            return 0.0
        left = max(0.0, self._limit - self.elapsed())
        if self.parent is not None:
            left = min(left, self.parent.remaining())
        return left

    def expired(self) -> bool:
        return self.remaining() <= 0.0

    def report(self, seconds: float) -> None:
        """Add ``seconds`` of deterministic work here and to every ancestor."""
        b: Budget | None = self
        while b is not None:
            b._work += seconds
            b = b.parent

    # -- control -----------------------------------------------------------------------------
    def stop(self) -> None:
        """Expire this budget and everything sharing its stop flag, at once."""
        self.stop_flag.set()

    @property
    def stopped(self) -> bool:
        return self.stop_flag.is_set()

    def within(self, seconds: float | None) -> Budget:
        """A child budget of at most ``seconds`` (and never past this one)."""
        return Budget(seconds, parent=self)

    @contextmanager
    def active(self) -> Iterator[Budget]:
        """Make this the budget :func:`tick` reports to, in this thread, for the block."""
        token = _active.set(self)
        try:
            yield self
        finally:
            _active.reset(token)

    def tick(self, placements: int = 1) -> None:
        """Report ``placements`` block placements; raise :class:`OutOfTime` when expired."""
        self._calls += 1
        if self.deterministic:
            self.report(placements / PLACEMENTS_PER_SECOND)
        elif self._calls % _CLOCK_EVERY and not self.stop_flag.is_set():
            return
        if self.expired():
            raise OutOfTime("the time limit ran out" if not self.stopped else "stopped")


_active: ContextVar[Budget | None] = ContextVar("cpplan_budget", default=None)


def current() -> Budget | None:
    """The budget active in this thread, if any."""
    return _active.get()


def tick(placements: int = 1) -> None:
    """Report work to the active budget (if any); raise :class:`OutOfTime` once it expired.

    Planners call this once per block placed (or per comparable step) in their inner loops.
    """
    b = _active.get()
    if b is not None:
        b.tick(placements)
