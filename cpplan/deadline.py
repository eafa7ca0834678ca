"""Time limits, stop flags and the options every planner honours, in wall or deterministic
time.

:class:`PlanOptions` is what every planner is given (:mod:`cpplan.planners.registry`): the time
limit, the seed, determinism and the worker threads. Its :meth:`PlanOptions.budget` is the one
time object of a run: a :class:`Budget` is a time limit, a stop flag (Ctrl-C, a caller giving
up) and a clock, and it carries the options down to every stage and search. The clock is the
wall clock, or, in deterministic mode, the *work* reported so far: planners report block
placements (:func:`tick`), the exact engine reports CP-SAT's deterministic time and
branch-and-bound nodes, each converted to nominal seconds. Deterministic time depends on the
input alone, never on the machine's load, so a deterministic run stops at the same point of the
same search on every machine: that is what makes its output byte-identical.

Budgets nest: :meth:`Budget.within` (seconds) and :meth:`Budget.share` (a share of what is
left) make a child whose limit is also bounded by the parent's, and work reported to a child
counts for every ancestor. Stopping any budget stops the whole tree, and runs the hooks that
searches register while they run (:meth:`Budget.stopping`: CP-SAT's ``stop_search``), so a
stop reaches a solver thread at once. The active budget of the current thread is a context
variable: :func:`tick` reports work to it and raises :class:`OutOfTime` once it has expired, so
a planner's inner loop needs one call and no parameter (threads start with no active budget;
pass the budget and :meth:`Budget.active` it there).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from .errors import CpplanError

__all__ = ["Budget", "PlanOptions", "OutOfTime", "StopFlag", "tick", "current",
           "check_time_limit", "finishing", "PLACEMENTS_PER_SECOND"]

#: Nominal speed of a block placement, turning placements into deterministic seconds.
PLACEMENTS_PER_SECOND = 20_000


def finishing(limit: float, buffers: int, per_buffer: float) -> float:
    """The seconds of a ``limit`` kept for a last step costing ``per_buffer`` seconds for each
    of ``buffers`` buffers (building and checking the plan, writing it), at most all of it: a
    limit too short for the search and its last step ends the search at once, so that the
    answer (the fallback, if nothing else) still comes on time."""
    return min(limit, per_buffer * buffers)


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


@dataclass(frozen=True)
class PlanOptions:
    """What every planner honours: at most ``time_limit`` seconds (``None``: no limit), the
    ``seed`` of its random choices, ``deterministic`` (the same plan on every run and machine:
    one thread, deterministic time) and ``workers`` (threads it may use).

    Args:
        time_limit: Seconds, a finite number >= 0; ``None`` for no limit.
        seed: The seed of the planner's random choices (>= 0).
        deterministic: One thread on a deterministic clock: the same plan on every run and
            machine.
        workers: Threads the planner may use (>= 1; 1 when deterministic).

    Raises:
        CpplanError: A field out of range, naming it.
    """

    time_limit: float | None = None
    seed: int = 0
    deterministic: bool = False
    workers: int = 2

    def __post_init__(self) -> None:
        if self.time_limit is not None:
            object.__setattr__(self, "time_limit",
                               check_time_limit(self.time_limit, "time_limit"))
        for name, low in (("seed", 0), ("workers", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise CpplanError(f"{name}: must be a whole number >= {low}, got {value!r}")
        if not isinstance(self.deterministic, bool):
            raise CpplanError(f"deterministic: must be True or False, got "
                              f"{self.deterministic!r}")

    def budget(self, stop: StopFlag | None = None) -> Budget:
        """The budget of a run with these options (its own stop flag unless one is given).

        Args:
            stop: A stop flag to share with other runs (Ctrl-C, a caller giving up).

        Returns:
            A new :class:`Budget` of ``time_limit`` seconds, starting now.
        """
        return Budget(self.time_limit, options=self, stop=stop)


class StopFlag(threading.Event):
    """A stop flag that also runs the hooks registered while it is clear (see
    :meth:`Budget.stopping`) when it is set."""

    def __init__(self) -> None:
        super().__init__()
        self._hooks: set[Callable[[], None]] = set()
        self._lock = threading.Lock()

    def set(self) -> None:
        super().set()
        with self._lock:
            hooks = list(self._hooks)
        for hook in hooks:
            hook()

    @contextmanager
    def hook(self, fn: Callable[[], None]) -> Iterator[None]:
        with self._lock:
            self._hooks.add(fn)
        try:
            if self.is_set():
                fn()
            yield
        finally:
            with self._lock:
                self._hooks.discard(fn)


class Budget:
    """``seconds`` from now (``None``: no limit), a ``stop`` flag, wall or deterministic clock,
    and the run's :class:`PlanOptions` (a child's are its parent's).

    Args:
        seconds: The limit, from now; ``None`` for none (a child is still bounded by its
            parent).
        stop: The stop flag; a child shares its parent's, a root makes its own by default.
        deterministic: Whether the clock is the work reported (used when no ``options`` are
            given).
        parent: The budget this one is a child of (see :meth:`within`, :meth:`share`).
        options: The run's options; a child takes its parent's.

    Raises:
        CpplanError: ``seconds`` is negative or not finite.
    """

    def __init__(self, seconds: float | None = None, *, stop: StopFlag | None = None,
                 deterministic: bool = False, parent: Budget | None = None,
                 options: PlanOptions | None = None) -> None:
        self.parent = parent
        if parent is not None:
            options = parent.options
        elif options is None:
            options = PlanOptions(seconds, deterministic=deterministic)
        self.options: PlanOptions = options
        self.deterministic = options.deterministic
        self.stop_flag: StopFlag = stop if stop is not None else (
            parent.stop_flag if parent is not None else StopFlag())
        self._started = time.perf_counter()
        self._work = 0.0  # deterministic seconds reported to this budget and its children
        self._limit = math.inf if seconds is None else check_time_limit(seconds)
        # The wall-clock moment this budget or an ancestor ends: what tick() compares with.
        self._ends = self._started + self._limit
        if parent is not None:
            self._ends = min(self._ends, parent._ends)

    @property
    def workers(self) -> int:
        """Threads a search may use (1 in deterministic mode)."""
        return 1 if self.deterministic else self.options.workers

    @property
    def seed(self) -> int:
        """The run's seed."""
        return self.options.seed

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
        """Whether no time is left (or the budget was stopped)."""
        return self.remaining() <= 0.0

    def deadline(self, seconds: float | None = None) -> float:
        """The wall-clock moment (``time.perf_counter``) at which a search given ``seconds``
        (default: all that is left) stops: never in deterministic mode, where node budgets end
        searches instead."""
        if self.deterministic:
            return math.inf
        left = self.remaining()
        return time.perf_counter() + (left if seconds is None else min(seconds, left))

    def nodes(self, rate: float, share: float = 1.0) -> int | None:
        """The node budget of a search given ``share`` of the time left, at ``rate`` nodes a
        second, in deterministic mode (where node budgets end searches, not the clock); None in
        wall-clock mode."""
        return int(share * self.remaining() * rate) if self.deterministic else None

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
        """Whether this budget, or one sharing its stop flag, was stopped."""
        return self.stop_flag.is_set()

    def stopping(self, hook: Callable[[], None]) -> AbstractContextManager[None]:
        """Context: while it is open, a stop runs ``hook`` (a solver's ``stop_search``)."""
        return self.stop_flag.hook(hook)

    def within(self, seconds: float | None) -> Budget:
        """A child budget of at most ``seconds`` (and never past this one)."""
        return Budget(seconds, parent=self)

    def share(self, fraction: float) -> Budget:
        """A child budget of ``fraction`` of the time left now."""
        return Budget(max(0.0, fraction * self.remaining()), parent=self)

    @contextmanager
    def active(self) -> Iterator[Budget]:
        """Make this the budget :func:`tick` reports to, in this thread, for the block."""
        token = _active.set(self)
        try:
            yield self
        finally:
            _active.reset(token)

    def tick(self, placements: int = 1) -> None:
        """Report ``placements`` block placements; raise :class:`OutOfTime` when expired.

        Raises:
            OutOfTime: The budget has expired or was stopped. The wall clock is read on every
                call (a comparison with the moment the budget ends, tens of nanoseconds beside
                a placement's microseconds), so that steps far slower than a placement (a
                replica's conflict scan on 62185 buffers) still stop on time.
        """
        if self.deterministic:
            self.report(placements / PLACEMENTS_PER_SECOND)
        elif time.perf_counter() < self._ends and not self.stop_flag.is_set():
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

    Args:
        placements: How many placements (or comparable steps) this call stands for.

    Raises:
        OutOfTime: The active budget has expired or was stopped.
    """
    b = _active.get()
    if b is not None:
        b.tick(placements)
