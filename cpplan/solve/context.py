"""What every stage of a solve works with: :class:`Context` and :class:`Component`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..blocks import Blocks
from ..deadline import Budget
from ..problem import Problem
from .incumbent import Incumbent
from .params import SolverParams

__all__ = ["Component", "Context", "GOALS"]

#: ``minimise`` the objective; ``fit``: any plan within the pools' capacities (MiniMalloc's
#: question) ends the solve.
GOALS = ("minimise", "fit")


class Component:
    """Blocks of one pool that share no moment with the others, packed on their own.

    ``tiled``: the tiling search had its turn; ``proven``: CP-SAT proved its own optimum.
    """

    __slots__ = ("ids", "tiled", "proven")

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = ids
        self.tiled = False
        self.proven = False

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class Context:
    """One solve: the problem and its blocks, the goal, the time budget of the search (the time
    to build and check the final plan is kept out of it), the tuning constants, the incumbent
    (best plan and proofs) and the components of a one-pool problem."""

    problem: Problem
    blocks: Blocks
    goal: str
    budget: Budget
    params: SolverParams
    incumbent: Incumbent
    components: list[Component] = field(default_factory=list)

    @property
    def one_pool(self) -> bool:
        return self.blocks.n_pools == 1

    @property
    def capacity(self) -> int | None:
        """One pool: its capacity (scaled), or None when unbounded."""
        cap = int(self.blocks.pool_capacity[0])
        return cap if cap >= 0 else None

    def target(self) -> int:
        """One pool: the height (scaled) a component must reach: the capacity when the goal is
        ``fit``, the proven lower bound otherwise."""
        cap = self.capacity
        return cap if self.goal == "fit" and cap is not None else self.incumbent.lower_height()

    def settled(self) -> bool:
        """Nothing left to do: no plan can exist, the best plan is proven optimal, or (goal
        ``fit``) there is a plan within the capacities."""
        inc = self.incumbent
        if inc.infeasible is not None:
            return True
        return inc.objective is not None and (self.goal == "fit" or inc.optimal)

    def above_target(self, comp: Component) -> bool:
        """One pool: the component has no packing yet, or one above :meth:`target`."""
        h = self.incumbent.height(comp.ids)
        return h is None or h > self.target()
