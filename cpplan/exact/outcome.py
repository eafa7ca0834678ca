"""What a search learned about one set of blocks: :class:`Outcome`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Outcome"]


@dataclass(frozen=True)
class Outcome:
    """What a search learned about one set of blocks: a packing (pools, scaled offsets) when
    ``status`` is ``feasible`` or ``optimal``; ``infeasible`` only with a proof; ``bound`` a
    proven lower bound (on the model's objective, in bytes, for :func:`cpplan.exact.search.
    minimise`; on the height, scaled, for :func:`cpplan.exact.peak.peak_first`)."""

    status: str  # "feasible", "optimal", "infeasible", "unknown"
    pools: np.ndarray | None = None
    offsets: np.ndarray | None = None
    bound: int | None = None
    detail: str = ""

    @property
    def packing(self) -> np.ndarray:
        """The offsets of a ``feasible`` or ``optimal`` outcome (ValueError on any other)."""
        if self.offsets is None:
            raise ValueError(f"an outcome {self.status!r} has no packing")
        return self.offsets
