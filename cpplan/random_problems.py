"""Problems on random schedules, not tight: the instances nobody built a method for.

The perfect packings of :mod:`cpplan.perfect` have a known optimum (their max-load) and a
construction that leaves no byte free; real programs leave some. :func:`random_problem` draws
buffers with no structure at all, so that the optimum is unknown and above the max-load, and
alignments (where asked) are drawn apart from the offsets: the check that the solver is never
worse than its own heuristics or its peers on problems it was not made for
(``benchmarks/versus.py --families random aligned-random``).
"""

from __future__ import annotations

import numpy as np

from .problem import Buffer, Problem

__all__ = ["random_problem"]

SMALLEST = 64  # bytes, the least size drawn
LARGEST = 4 << 20  # bytes, the most
ALIGNMENTS = (64, 4096)  # the least and the most alignment drawn (powers of two between)


def random_problem(n: int, *, seed: int = 0, aligned: bool = False) -> Problem:
    """``n`` buffers on a random schedule (seeded): starts uniform over ``n // 4`` steps,
    lifetimes log-uniform from one step to a quarter of them, sizes log-uniform from
    :data:`SMALLEST` to :data:`LARGEST` bytes; with ``aligned``, each buffer aligned to a
    power of two between :data:`ALIGNMENTS` drawn at random (a model's tensors, scratch
    and inputs in one arena). The same ``n``, ``seed`` and ``aligned`` give the same problem.

    Raises:
        ValueError: ``n`` below 1.
    """
    if n < 1:
        raise ValueError(f"n: at least 1 buffer, got {n}")
    rng = np.random.default_rng(seed)
    steps = max(n // 4, 2)
    start = rng.integers(0, steps, n)
    life = np.exp(rng.uniform(0, np.log(max(steps // 4, 2)), n)).astype(np.int64)
    size = np.exp(rng.uniform(np.log(SMALLEST), np.log(LARGEST), n)).astype(np.int64)
    lo, hi = (a.bit_length() - 1 for a in ALIGNMENTS)
    align = 1 << rng.integers(lo, hi + 1, n) if aligned else np.ones(n, np.int64)
    kind = "aligned-random" if aligned else "random"
    return Problem(tuple(Buffer(f"b{i}", int(size[i]), int(start[i]), int(start[i] + life[i]),
                                alignment=int(align[i])) for i in range(n)),
                   name=f"{kind}-{n}-{seed}")
