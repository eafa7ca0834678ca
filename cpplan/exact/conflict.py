"""Which buffers cannot fit together: an irreducible infeasible subset (IIS).

When no plan meets the pools' capacities, the user's next question is which buffers to shrink,
split or move. :func:`irreducible_conflict` answers with a set of buffers that cannot be placed
together, and (when ``irreducible``) such that removing any one of them lets the rest fit.
MiniMalloc computes the same thing (google/minimalloc ``src/solver.cc``,
``ComputeIrreducibleInfeasibleSubset``, tested in ``tests/solver_test.cc``); this is written anew.

How:

1. **Max-load** (DESIGN.md's first bound): when the blocks bound to one pool need more than its
   capacity at one moment, the largest of them taken until they exceed it cannot fit. When those
   blocks are plain rectangles with no alignment to respect and no fixed offset, a set of blocks
   that share a moment fits exactly when its sizes add up to the capacity at most (stack them),
   so this set is irreducible as it is: the last one taken is the smallest, and removing any one
   leaves at most the capacity. Otherwise the set is the start of step 2.
2. **Deletion filter** over decision probes ("do these blocks fit?"): starting from an infeasible
   set (the max-load set, or the first component the probes refute), drop chunks of blocks, then
   single blocks, whenever the rest is still *proven* infeasible. Fitting is monotone (a subset
   of a set that fits fits), so every block kept because the set without it was *shown* to fit
   stays necessary: the result is irreducible when every such answer was a proof or a packing.
   An answer that runs out of time keeps the block and marks the result not irreducible.

The probes are :func:`cpplan.exact.search.probe` (CP-SAT raced against the branch-and-bound
search): a "yes" comes with a packing, a "no" is a proof.

Sets are of blocks: a buffer stands for itself and the buffers aliased into it, named by the
root buffer's id.
"""

from __future__ import annotations

import numpy as np

from ..blocks import Blocks, make_blocks
from ..bounds import load_profile
from ..deadline import Budget, PlanOptions
from ..plan import Conflict
from ..problem import Problem
from .search import probe

__all__ = ["Conflict", "irreducible_conflict", "DEFAULT"]

FIRST_PROBE = 0.5  # seconds for a decision's first try
#: The default run: ten seconds, one worker.
DEFAULT = PlanOptions(time_limit=10.0, workers=1)

def irreducible_conflict(problem: Problem | Blocks,
                         options: PlanOptions | Budget = DEFAULT) -> Conflict | None:
    """A set of buffers that cannot be placed together, irreducible when time allows.

    ``None`` when no such set was proven within the time (``options``, a run of its own, by
    default :data:`DEFAULT`; or a :class:`Budget`, a stage of a larger run): the problem fits,
    or its infeasibility was not proven in time. The set returned is always proven infeasible.
    """
    blocks = problem if isinstance(problem, Blocks) else make_blocks(problem)
    budget = options if isinstance(options, Budget) else options.budget()
    found = _load_conflict(blocks)
    how = "max-load"
    if found is not None and found[1]:
        return _named(blocks, found[0], True, how)
    if found is not None:
        start = found[0]
    else:
        how = "exact"
        start = None
        for comp in sorted(blocks.components(), key=len):
            answer = _fits(blocks, comp, budget)
            if answer is False:
                start = comp
                break
            if answer is None and budget.remaining() <= 0:
                return None
    if start is None:
        return None
    kept, irreducible = _deletion_filter(blocks, start, budget)
    return _named(blocks, kept, irreducible, how)


def _named(blocks: Blocks, ids: np.ndarray, irreducible: bool, how: str) -> Conflict:
    buffers = blocks.problem.buffers
    roots = sorted(int(blocks.root[i]) for i in np.asarray(ids).tolist())
    return Conflict(tuple(buffers[r].id for r in roots), irreducible, how)


def _load_conflict(blocks: Blocks) -> tuple[np.ndarray, bool] | None:
    """(blocks that exceed a pool's capacity at one moment, whether that set is irreducible).

    Per pool, the blocks whose only candidate it is; else, with every pool bounded, all blocks
    against the pools' total capacity. Largest first until the capacity is exceeded.
    """
    n_pools = blocks.n_pools
    caps = blocks.pool_capacity
    checks: list[tuple[np.ndarray, int, int | None]] = []
    for p in range(n_pools):
        if caps[p] >= 0:
            mask = np.fromiter((c == (p,) for c in blocks.pools), bool, len(blocks))
            checks.append((mask, int(caps[p]), p))
    if n_pools > 1 and (caps >= 0).all():
        checks.append((np.ones(len(blocks), bool), int(caps.sum()), None))
    for mask, cap, pool in checks:
        load, _ = load_profile(blocks, mask)
        if len(load) == 0 or load.max() <= cap:
            continue
        k = int(np.argmax(load))
        live = [i for i in np.nonzero(mask)[0].tolist()
                if blocks.start[i] <= k < blocks.end[i] and _bytes_at(blocks, i, k) > 0]
        live.sort(key=lambda i: (-_bytes_at(blocks, i, k), i))
        chosen, total = [], 0
        for i in live:
            chosen.append(i)
            total += _bytes_at(blocks, i, k)
            if total > cap:
                break
        plain = pool is not None and all(
            blocks.piece_ptr[i + 1] - blocks.piece_ptr[i] == 1 and blocks.fixed[i] < 0
            and blocks.align_in(i, pool) == 1 for i in chosen)
        return np.asarray(chosen, np.int64), plain
    return None


def _bytes_at(blocks: Blocks, i: int, k: int) -> int:
    """Scaled bytes block ``i`` covers during compressed step ``k``."""
    a, b = int(blocks.piece_ptr[i]), int(blocks.piece_ptr[i + 1])
    return sum(int(blocks.piece_hi[q] - blocks.piece_lo[q]) for q in range(a, b)
               if blocks.piece_start[q] <= k < blocks.piece_end[q])


def _deletion_filter(blocks: Blocks, start: np.ndarray,
                     budget: Budget) -> tuple[np.ndarray, bool]:
    """Shrink the proven infeasible set ``start``: chunks first, then one block at a time."""
    kept = list(np.asarray(start).tolist())
    # Small blocks first: they are the likeliest to be unnecessary.
    kept.sort(key=lambda i: (int(blocks.size[i]), i))
    chunk = len(kept) // 2
    while chunk > 1:
        pos = 0
        while pos < len(kept) and budget.remaining() > 0:
            trial = kept[:pos] + kept[pos + chunk:]
            if trial and _fits(blocks, np.asarray(trial, np.int64), budget) is False:
                kept = trial
            else:
                pos += chunk
        chunk //= 2
    irreducible = True
    pos = 0
    while pos < len(kept):
        trial = kept[:pos] + kept[pos + 1:]
        answer = _fits(blocks, np.asarray(trial, np.int64), budget) if trial else True
        if answer is False:
            kept = trial
            continue
        if answer is None:
            irreducible = False
        pos += 1
    return np.asarray(kept, np.int64), irreducible


def _fits(blocks: Blocks, ids: np.ndarray, budget: Budget) -> bool | None:
    """Whether blocks ``ids`` fit within the pools' capacities: True, False (proven) or None."""
    ids = np.asarray(ids, np.int64)
    if len(ids) == 0:
        return True
    if budget.remaining() <= 0:
        return None
    heights = _heights(blocks, ids)
    for i in ids.tolist():
        if all(max(int(blocks.fixed[i]), 0) + int(blocks.size[i]) > heights[p]
               for p in blocks.pools[i]):
            return False  # fits in none of its pools, whatever the others do
    return _probe(blocks, ids, heights, budget)


def _probe(blocks: Blocks, ids: np.ndarray, heights: dict[int, int],
           budget: Budget) -> bool | None:
    """One decision, with budgets that grow fourfold (a probe given the whole remaining budget
    would spend half of it in the branch-and-bound search first, in deterministic mode)."""
    seconds = FIRST_PROBE
    while True:
        seconds = min(seconds, budget.remaining())
        out = probe(blocks, ids, heights, budget.within(seconds))
        if out.status in ("feasible", "infeasible"):
            return out.status == "feasible"
        if seconds >= budget.remaining() or budget.remaining() <= 0:
            return None
        seconds *= 4


def _heights(blocks: Blocks, ids: np.ndarray) -> dict[int, int]:
    """Scaled height limit per pool: its capacity, or (unbounded) a height every set fits in."""
    size = blocks.size[ids]
    room = int(size.sum()) + sum(max(blocks.align_in(i, p) for p in blocks.pools[i])
                                 for i in ids.tolist())
    top = int((np.where(blocks.fixed[ids] >= 0, blocks.fixed[ids] + size, 0)).max())
    return {p: int(blocks.pool_capacity[p]) if blocks.pool_capacity[p] >= 0 else room + top
            for p in range(blocks.n_pools)}
