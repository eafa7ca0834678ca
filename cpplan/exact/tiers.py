"""Memory tiers: a proven lower bound on the objective when blocks choose their pool.

The **tier relaxation** keeps each block's choice of pool and forgets offsets: in every pool,
at every moment, the bytes of the blocks live there must fit under the pool's height, as if
fragmentation were free (each moment's load may be cut anywhere), and the height stays within
the capacity. Any plan is a solution of it (its heights are at least its loads), so the
relaxation's optimum, and CP-SAT's proven bound on it, are lower bounds on every plan's
objective ``sum(cost * height) + sum(traffic * traffic_cost)``. Alignment padding and fixed
offsets only add constraints to the real problem, so leaving them out keeps the bound proven.

In the model every block with several candidate pools gets a literal per candidate (exactly one
true); in each pool, the bytes of the pieces live together at each maximal clique of the
interval graph (a moment where the live set is largest locally) sum, on their literals, to at
most the pool's height variable: knapsack constraints over time, whose LP relaxation CP-SAT
tightens with cuts (one ``add_cumulative`` instead when there would be too many terms).
The objective is in bytes, like :func:`cpplan.exact.model.objective_of`, without the traffic of
the blocks that have one candidate (the same in every plan; the caller adds it).

Its solution is also a choice of pools that is worth packing: the fastest memories filled with
the blocks that save the most traffic, up to what their loads allow
(:func:`cpplan.solve.tiers` packs it and repairs what does not fit).

This is the relaxation of the knapsack-over-time ("unsplittable flow on a path") family that
tier assignment without fragmentation is; Arm's Vela decides SRAM placement on the same
live-bytes test (``ethos-u-vela``, ``tensor_allocation.py``), without its proof.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from ..blocks import Blocks
from ..deadline import Budget
from ..load import max_load
from .cpsat import new_solver, run
from .model import PoolLiteral, maximal_cliques

__all__ = ["TierBound", "tier_bound", "MAX_CLIQUE_TERMS"]

#: Terms (pieces x the maximal cliques they are in) beyond which a pool's loads are one
#: cumulative constraint rather than a knapsack constraint per maximal clique.
MAX_CLIQUE_TERMS = 2_000_000


@dataclass(frozen=True)
class TierBound:
    """What the tier relaxation proved: ``bound`` (bytes, without the settled traffic cost) is a
    lower bound on the objective; ``pools`` is the relaxation's best choice of pool per block
    and ``objective`` its value in the relaxation (None when it found none: a plan of that
    choice costs at least that much), ``optimal`` whether CP-SAT proved that choice optimal
    for the relaxation."""

    bound: int
    pools: np.ndarray | None
    optimal: bool
    objective: int | None = None


def tier_bound(blocks: Blocks, budget: Budget,
               report: Callable[[int, int], None] | None = None) -> TierBound | None:
    """The tier relaxation of ``blocks`` (module docstring) solved by CP-SAT within ``budget``;
    None when the relaxation itself is infeasible (then no plan exists: the caller proves it
    elsewhere) or nothing was learned in time. ``report(objective, bound)`` on each solution."""
    if budget.remaining() <= 0.01:
        return None
    m = cp_model.CpModel()
    n, scale = len(blocks), blocks.scale
    loads = max_load(blocks)
    heights = {}
    for p, pool in enumerate(blocks.problem.pools):
        own = loads[pool.name].bytes // scale
        cap = int(blocks.pool_capacity[p])
        top = cap if cap >= 0 else max(int(_total_load(blocks)), own)
        heights[p] = m.new_int_var(min(own, top), max(top, 0), f"h{p}")
    literal: list[dict[int, PoolLiteral]] = []
    # Per pool: (start, end, bytes, literal; None when certain) of every piece that may land
    # there.
    demands: dict[int, list[tuple[int, int, int, cp_model.IntVar | None]]] = {
        p: [] for p in range(blocks.n_pools)}
    ptr = blocks.piece_ptr
    for i in range(n):
        cands = blocks.pools[i]
        if len(cands) == 1:
            lits: dict[int, PoolLiteral] = {cands[0]: True}
        else:
            lits = {p: m.new_bool_var(f"b{i}p{p}") for p in cands}
            m.add_exactly_one(lits.values())
        literal.append(lits)
        for q in range(int(ptr[i]), int(ptr[i + 1])):
            s, e = int(blocks.piece_start[q]), int(blocks.piece_end[q])
            z = int(blocks.piece_hi[q] - blocks.piece_lo[q])
            if z <= 0 or e <= s:
                continue
            for p, lit in lits.items():
                demands[p].append((s, e, z, None if lit is True else lit))
    for p, items in demands.items():
        if not items:
            continue
        # Each maximal set of pieces live together (a maximal clique of the interval graph)
        # under the height: the knapsack constraints whose LP relaxation is the strong one;
        # one cumulative where there would be too many terms for them.
        st = np.fromiter((s for s, _, _, _ in items), np.int64, len(items))
        en = np.fromiter((e for _, e, _, _ in items), np.int64, len(items))
        cliques = maximal_cliques(st, en) if len(items) > 1 else [np.arange(len(items))]
        if sum(map(len, cliques)) <= MAX_CLIQUE_TERMS:
            for clique in cliques:
                load: list[cp_model.LinearExprT] = [
                    z if lit is None else z * lit
                    for _, _, z, lit in (items[c] for c in clique.tolist())]
                m.add(sum(load) <= heights[p])
        else:
            intervals = [m.new_fixed_size_interval_var(s, e - s, "") if lit is None else
                         m.new_optional_fixed_size_interval_var(s, e - s, lit, "")
                         for s, e, _, lit in items]
            m.add_cumulative(intervals, [z for _, _, z, _ in items], heights[p])
    terms: list[cp_model.LinearExprT] = [int(blocks.pool_cost[p]) * scale * h
                                         for p, h in heights.items()]
    rate = blocks.pool_traffic_cost
    for i in range(n):
        moved = int(blocks.traffic[i])
        if moved and len(literal[i]) > 1:
            terms.extend(moved * int(rate[p]) * lit for p, lit in literal[i].items())
    m.minimize(sum(terms))
    solver = new_solver(budget, budget.remaining(), budget.workers)
    box: list[cp_model.CpSolverStatus] = []

    class _Report(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            if report is not None:
                report(int(self.objective_value), int(self.best_objective_bound))

    def solve() -> None:
        box.append(run(budget, solver, m, _Report()))

    t = threading.Thread(target=solve, daemon=True)
    t.start()
    while t.is_alive():
        t.join(timeout=0.05)
    status = box[0] if box else cp_model.UNKNOWN
    if status in (cp_model.INFEASIBLE, cp_model.MODEL_INVALID):
        return None
    x = solver.best_objective_bound
    bound = max(0, math.ceil(x - 1e-6 - math.ulp(x)))  # (see cpplan.exact.search.minimise)
    pools = objective = None
    if status in (cp_model.FEASIBLE, cp_model.OPTIMAL):
        objective = round(solver.objective_value)
        pools = np.fromiter(
            (next(iter(lits)) if len(lits) == 1 else
             next(p for p, lit in lits.items() if solver.boolean_value(lit))
             for lits in literal), np.int64, n)
    return TierBound(bound, pools, status == cp_model.OPTIMAL, objective)


def _total_load(blocks: Blocks) -> int:
    from ..load import load_profile

    load, _ = load_profile(blocks)
    return int(load.max()) if len(load) else 0
