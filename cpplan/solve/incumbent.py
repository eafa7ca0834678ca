"""What a solve knows as it runs: the best plan so far and what has been proven.

:class:`Incumbent` keeps the best plan (block arrays: a pool and a scaled offset per block) and
the proofs (:class:`Proof`): lower bounds on the objective, or that no plan exists. Every stage
of :func:`cpplan.solve.solve` offers it plans; it keeps one only when it is better, so no stage
can make the answer worse. :class:`Progress` is what progress displays receive.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..blocks import Blocks

__all__ = ["Incumbent", "Progress", "Proof"]


@dataclass(frozen=True)
class Progress:
    """One step of a solve, for progress displays: bound and best objective in bytes.

    Args:
        seconds: Since the solve began.
        phase: The stage, or the event (``bound``, ``plan``, ``done``...).
        lower_bound: The best proven lower bound so far.
        best: The best plan's objective so far, or ``None`` before the first plan.
        message: What moved (which planner, which proof).
    """

    seconds: float
    phase: str
    lower_bound: int
    best: int | None
    message: str = ""

    def __str__(self) -> str:
        best = "-" if self.best is None else str(self.best)
        gap = ""
        if self.best:
            gap = f"  gap {100 * (self.best - self.lower_bound) / self.best:.3f}%"
        msg = f"  {self.message}" if self.message else ""
        return (f"[{self.seconds:7.2f}s] {self.phase:<10} lower bound {self.lower_bound}  "
                f"best {best}{gap}{msg}")


@dataclass(frozen=True)
class Proof:
    """A proven fact: every plan's objective is at least ``bound`` bytes, or, when ``bound`` is
    None, no plan exists. ``by`` names the method (``max-load``, ``probe``, ``cp-sat``,
    ``peak window``, ``tier relaxation``), ``detail`` says what was shown.

    Args:
        by: The method that proved it.
        detail: What was shown (a pool, a moment, the bytes live then).
        bound: The proven lower bound on the objective; ``None`` for "no plan exists".
    """

    by: str
    detail: str
    bound: int | None = None

    @property
    def infeasible(self) -> bool:
        """Whether this proves that no plan exists."""
        return self.bound is None

    def __str__(self) -> str:
        if self.infeasible:
            return f"proved by {self.by}: {self.detail}"
        return f"lower bound {self.bound} proved by {self.by}: {self.detail}"


class Incumbent:
    """The best plan and the proven lower bound of one solve, as they move."""

    def __init__(self, blocks: Blocks, first: Proof,
                 progress: Callable[[Progress], None] | None, started: float) -> None:
        self.blocks = blocks
        self.pools: np.ndarray | None = None
        self.offsets: np.ndarray | None = None
        self.objective: int | None = None  # bytes
        self.planner = ""
        self.offered: dict[str, int] = {}  # the best objective each planner or stage offered
        self.proofs: list[Proof] = [first]
        self.lower: int = first.bound or 0  # bytes: the best proven bound
        # Per-component packings (one pool) before any whole plan exists: a plan once every
        # block has one.
        self.partial: np.ndarray | None = None
        self._progress = progress
        self._started = started

    # -- what is known --------------------------------------------------------------------------
    @property
    def infeasible(self) -> Proof | None:
        """The proof that no plan exists, if one was found."""
        return next((p for p in self.proofs if p.infeasible), None)

    @property
    def optimal(self) -> bool:
        return self.objective is not None and self.objective <= self.lower

    def height(self, ids: np.ndarray) -> int | None:
        """The best plan's height over blocks ``ids`` (scaled), or before any plan their
        packing's among the partial ones; None when they have none."""
        offsets = self.offsets
        if offsets is None:
            if self.partial is None or (self.partial[ids] < 0).any():
                return None
            offsets = self.partial
        return int((offsets[ids] + self.blocks.size[ids]).max())

    def as_height(self, objective: int) -> int:
        """One pool: the lowest height (scaled) whose plans' objective can reach ``objective``
        bytes (rounded up). Traffic costs the same in every plan of one pool."""
        b = self.blocks
        unit = b.scale * (int(b.pool_cost[0]) or 1)
        return -(-(objective - b.settled_traffic_cost) // unit)

    def as_objective(self, height: int) -> int:
        """One pool: the objective of a plan ``height`` (scaled) high, in bytes."""
        b = self.blocks
        return height * b.scale * int(b.pool_cost[0]) + b.settled_traffic_cost

    def lower_height(self) -> int:
        """One pool: the proven lower bound as a height (scaled)."""
        return self.as_height(self.lower)

    # -- what stages tell it ---------------------------------------------------------------------
    def prove(self, proof: Proof) -> None:
        """Record ``proof``; a bound above the best so far raises the lower bound."""
        if proof.infeasible:
            self.proofs.append(proof)
            self.emit("proof", str(proof))
        elif proof.bound is not None and proof.bound > self.lower:
            self.proofs.append(proof)
            self.lower = proof.bound
            self.emit(proof.by, f"lower bound raised ({proof.detail})")

    def offer(self, pools: np.ndarray, offsets: np.ndarray, planner: str, *,
              ties: bool = False) -> bool:
        """Keep the plan when its objective is lower (or, with ``ties``, not higher: a
        component's packing that got lower while another component sets the height). True when
        the objective went down."""
        obj = self.blocks.objective(pools, offsets)
        self.offered[planner] = min(obj, self.offered.get(planner, obj))
        if self.objective is None or obj < self.objective or (ties and obj == self.objective):
            lower = self.objective is None or obj < self.objective
            self.pools, self.offsets, self.objective, self.planner = pools, offsets, obj, planner
            return lower
        return False

    def offer_lower(self, pools: np.ndarray, offsets: np.ndarray, planner: str) -> bool:
        """Keep the plan when its objective is not higher and its heights add up to less (the
        objective's tie broken by the arenas). True when it was kept."""
        obj = self.blocks.objective(pools, offsets)
        if self.objective is None or self.pools is None or self.offsets is None:
            return self.offer(pools, offsets, planner)
        if obj > self.objective or _total_height(self.blocks, pools, offsets) >= \
                _total_height(self.blocks, self.pools, self.offsets):
            return False
        self.pools, self.offsets, self.objective, self.planner = pools, offsets, obj, planner
        return True

    def offer_packing(self, ids: np.ndarray, offsets: np.ndarray, planner: str) -> bool:
        """One pool: put a packing of component ``ids`` into the best plan when it is not higher
        than the component's packing there (a later component may bring the height down). True
        when the plan's objective went down.

        Without any plan yet (no heuristic met the capacity), packings are collected per
        component until every block has one.
        """
        b = self.blocks
        if self.offsets is None:
            if self.partial is None:
                self.partial = np.full(len(b), -1, np.int64)
            self.partial[ids] = offsets
            if (self.partial < 0).any():
                return False
            whole = self.partial
        else:
            current = self.offsets  # (its height over ids: self.height(ids))
            if int((offsets + b.size[ids]).max()) > int((current[ids] + b.size[ids]).max()):
                return False
            whole = current.copy()
            whole[ids] = offsets
        return self.offer(np.zeros(len(b), np.int64), whole, planner, ties=True)

    def emit(self, phase: str, message: str = "") -> None:
        if self._progress is not None:
            self._progress(Progress(time.perf_counter() - self._started, phase, self.lower,
                                    self.objective, message))


def _total_height(blocks: Blocks, pools: np.ndarray, offsets: np.ndarray) -> int:
    heights = np.zeros(blocks.n_pools, np.int64)
    np.maximum.at(heights, pools, offsets + blocks.size)
    return int(heights.sum())
