"""The CP-SAT packing model: time x offset, one rectangle per piece.

For the blocks of one model (a component, or the whole problem):

* block ``i`` gets one pool among its candidates (a literal per candidate, exactly one true;
  a constant when there is one candidate) and an offset ``alignment * k_i`` (an affine
  expression of an integer ``k_i``, so alignment costs no constraint), or a constant when fixed;
* every piece ``(start, end, lo, hi)`` is a rectangle whose time side is fixed and whose byte
  side is ``[offset + lo, offset + hi)``, optional on the pool literal when there are several
  candidates;
* pieces in one pool must not overlap. Three formulations: ``2d`` is ``add_no_overlap_2d`` per
  pool (DESIGN.md's first design); ``cliques`` (the default) uses that time sides are fixed:
  two intervals of time overlap iff they share a moment, so it is enough that the pieces live at
  each *maximal* set of simultaneously live pieces do not overlap in bytes, one 1-D
  ``add_no_overlap`` per maximal clique of the interval graph (at most one per piece start);
  ``pairs`` gives every two pieces that share a moment an order literal (which is below), each
  side an enforced linear inequality: CP-SAT then branches on the orders and learns clauses
  over them, which on tight interlocking packings finds what the cliques' search does not
  (:func:`cpplan.exact.search.probe` races it beside the tiling search);
* ``height[p] >= offset + hi`` for every block in pool ``p``; capacities and probe targets are
  upper bounds on the heights; the objective is ``sum(cost[p] * height[p])`` plus the traffic
  cost of the blocks that choose their pool (:func:`objective_of`).

Offsets and heights are in the scaled units of :class:`cpplan.blocks.Blocks`; the objective is
in bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal, TypeAlias, cast

import numpy as np
from ortools.sat.python import cp_model

from ..blocks import Blocks
from ..sweep import events

__all__ = ["PackingModel", "build_model", "maximal_cliques", "objective_of", "ORDERS",
           "pair_count"]

# Block orders for the decision strategy, as sort keys over (size, lifetime length, start).
# Which one finds a packing fast varies wildly between instances (heavy-tailed search), which is
# why the search races several of them (see cpplan.exact.search).
ORDERS = {
    "size": lambda z, life, st: lambda j: (-int(z[j]), -int(life[j]), j),
    "start": lambda z, life, st: lambda j: (int(st[j]), -int(z[j]), j),
    "life": lambda z, life, st: lambda j: (-int(life[j]), -int(z[j]), j),
    "area": lambda z, life, st: lambda j: (-int(z[j]) * int(life[j]), j),
    "start-life": lambda z, life, st: lambda j: (int(st[j]), -int(life[j]), j),
    "end": lambda z, life, st: lambda j: (-int(st[j] + life[j]), -int(z[j]), j),
}


#: A block's literal for one of its candidate pools: a Boolean variable, or True when the block
#: has that one candidate
PoolLiteral: TypeAlias = "cp_model.IntVar | Literal[True]"


@dataclass
class PackingModel:
    """A built model and the handles to read a solution back."""

    model: cp_model.CpModel
    ids: np.ndarray  # block indices in this model
    offset: list[cp_model.LinearExprT]  # per model block: affine expression or int (scaled)
    k: list[cp_model.IntVar | None]  # per model block: k (offset = align * k), None when fixed
    align: list[int]
    presence: list[dict[int, PoolLiteral]]  # per model block: pool -> literal (or True)
    height: dict[int, cp_model.IntVar]
    order: list[int] = field(default_factory=list)  # model positions, largest first

    def read(self, solver: cp_model.CpSolver) -> tuple[np.ndarray, np.ndarray]:
        """(pool, scaled offset) of every model block in the solver's solution."""
        n = len(self.ids)
        pools = np.zeros(n, np.int64)
        offs = np.zeros(n, np.int64)
        for j in range(n):
            pres = self.presence[j]
            if len(pres) == 1:
                pools[j] = next(iter(pres))
            else:
                pools[j] = next(p for p, lit in pres.items() if solver.boolean_value(lit))
            o = self.offset[j]
            offs[j] = o if isinstance(o, int | np.integer) else solver.value(o)
        return pools, offs


def maximal_cliques(starts: np.ndarray, ends: np.ndarray) -> list[np.ndarray]:
    """Maximal sets of half-open intervals that share a moment (indices into the arrays).

    Sweep: the live set right before the first end that follows a start is a maximal clique.
    Empty intervals are ignored.
    """
    live: dict[int, None] = {}
    out: list[np.ndarray] = []
    grew = False
    for kind, i in zip(*events(starts, ends), strict=True):
        if kind == 1:
            live[i] = None
            grew = True
        else:
            if grew and len(live) > 1:
                out.append(np.fromiter(live, np.int64, len(live)))
            grew = False
            del live[i]
    return out


def build_model(
    blocks: Blocks,
    ids: np.ndarray,
    *,
    height_max: dict[int, int],
    height_min: dict[int, int] | None = None,
    minimise: bool = True,
    overlap: str = "cliques",
    strategy: str | None = "lowest",
    hint: tuple[np.ndarray, np.ndarray] | None = None,
    order_by: str = "size",
    obstacles: tuple[np.ndarray, np.ndarray] | None = None,
    offset_min: int = 0,
) -> PackingModel:
    """Build the packing model of blocks ``ids`` (see the module docstring).

    ``height_max[p]`` bounds pool ``p``'s height (capacity, probe target or best known height);
    ``height_min[p]`` is a proven lower bound. ``strategy`` adds a decision strategy over the
    offsets, largest blocks first: ``lowest`` picks the block that can go lowest and puts it at
    its lowest offset (MiniMalloc-like), ties going to the first block in ``order_by`` (a key of
    :data:`ORDERS`); ``fixed`` takes blocks in that order at their lowest offset; ``None`` leaves
    the search to CP-SAT. ``hint`` is (pool, offset) per model block.

    ``obstacles`` is (block ids, scaled offsets) of blocks already placed in pool 0 (a large
    neighbourhood search's fixed blocks, :mod:`cpplan.exact.lns`): the model's blocks must not
    overlap them, but they are not variables and do not count in the heights: they become
    holes in the domains of the offsets they could collide with (only for blocks whose one
    candidate pool is pool 0). ``offset_min`` is a lower bound on every free offset (obstacles
    below it may then be left out).
    """
    m = cp_model.CpModel()
    ids = np.asarray(ids, np.int64)
    n = len(ids)
    height_min = height_min or {}
    used_pools = sorted({p for i in ids.tolist() for p in blocks.pools[i]})
    height = {
        p: m.new_int_var(min(height_min.get(p, 0), height_max[p]), height_max[p], f"height{p}")
        for p in used_pools
    }
    offset: list[cp_model.LinearExprT] = []
    kvars: list[cp_model.IntVar | None] = []
    aligns: list[int] = []
    presence: list[dict[int, PoolLiteral]] = []
    # Pieces per pool: (time start, time end, y interval, literal) for the overlap constraints.
    in_pool: dict[int, list[tuple[int, int, cp_model.IntervalVar, PoolLiteral]]] = {
        p: [] for p in used_pools}
    size = blocks.size
    placed = _placed_pieces(blocks, *obstacles) if obstacles is not None else None
    for i in ids.tolist():
        cands = [p for p in blocks.pools[i]
                 if blocks.fixed[i] < 0 or blocks.fixed[i] + size[i] <= height_max[p]]
        if not cands:
            cands = [blocks.pools[i][0]]  # infeasible; the model will say so
        if len(cands) == 1:
            pres: dict[int, PoolLiteral] = {cands[0]: True}
        else:
            pres = {p: m.new_bool_var(f"b{i}p{p}") for p in cands}
            m.add_exactly_one(pres.values())
        presence.append(pres)
        # The offset is a multiple of the gcd of the candidate pools' alignments, and of the
        # chosen pool's own alignment when that is coarser (an equality enforced by the pool's
        # literal): exact, where an lcm over the candidates would forbid valid plans.
        per_pool = {p: blocks.align_in(i, p) for p in cands}
        a = math.gcd(*per_pool.values())
        aligns.append(a)
        top = max(height_max[p] for p in cands) - int(size[i])
        if blocks.fixed[i] >= 0:
            o: cp_model.LinearExprT = int(blocks.fixed[i])
            kvars.append(None)
        else:
            if placed is not None and cands == [0]:
                free = _free_offsets(blocks, i, placed, offset_min, max(top, 0), a)
                if free:
                    kv = m.new_int_var_from_domain(cp_model.Domain.from_intervals(free),
                                                   f"k{i}")
                else:  # no room anywhere: the model is infeasible
                    kv = m.new_int_var(0, 0, f"k{i}")
                    m.add(kv == 1)
            else:
                kv = m.new_int_var(-(-offset_min // a), max(top, 0) // a, f"k{i}")
            kvars.append(kv)
            o = a * kv if a != 1 else kv
            for p, lit in pres.items():
                if per_pool[p] != a:
                    kp = m.new_int_var(0, max(height_max[p] - int(size[i]), 0) // per_pool[p],
                                       f"k{i}p{p}")
                    m.add(o == per_pool[p] * kp).only_enforce_if(lit)
        offset.append(o)
        for p, lit in pres.items():
            # Zero-size blocks count too: a plan's height is the top of every buffer in it.
            if lit is True:
                m.add(height[p] >= o + int(size[i]))
            else:
                m.add(height[p] >= o + int(size[i])).only_enforce_if(lit)
            for q in range(blocks.piece_ptr[i], blocks.piece_ptr[i + 1]):
                lo, hi = int(blocks.piece_lo[q]), int(blocks.piece_hi[q])
                if hi <= lo:
                    continue
                if lit is True:
                    y = m.new_fixed_size_interval_var(o + lo, hi - lo, f"y{i}.{q}")
                else:
                    y = m.new_optional_fixed_size_interval_var(o + lo, hi - lo, lit,
                                                               f"y{i}.{q}p{p}")
                in_pool[p].append((int(blocks.piece_start[q]), int(blocks.piece_end[q]), y, lit))
    for items in in_pool.values():
        if len(items) < 2:
            continue
        if overlap == "2d":
            xs = []
            for s, e, _y, lit in items:
                if lit is True:
                    xs.append(m.new_fixed_size_interval_var(s, e - s, ""))
                else:
                    xs.append(m.new_optional_fixed_size_interval_var(s, e - s, lit, ""))
            m.add_no_overlap_2d(xs, [y for _s, _e, y, _l in items])
        elif overlap == "cliques":
            st = np.asarray([s for s, _e, _y, _l in items], np.int64)
            en = np.asarray([e for _s, e, _y, _l in items], np.int64)
            for clique in maximal_cliques(st, en):
                m.add_no_overlap([items[c][2] for c in clique.tolist()])
        elif overlap == "pairs":
            _pairwise(m, items)
        else:
            raise ValueError(f"unknown overlap formulation {overlap!r}")
    groups = _identical_groups(blocks, ids, kvars, presence)
    for group in groups:
        # Identical blocks are interchangeable: keep them in id order, bottom to top. Copies
        # share every moment, so each piece of one clears the same piece of the other: they are
        # at least the tallest piece apart (the size for a rectangle; less for a buffer whose
        # gaps keep only a window of it, whose copies may interleave).
        i = int(ids[group[0]])
        a0, b0 = int(blocks.piece_ptr[i]), int(blocks.piece_ptr[i + 1])
        apart = int((blocks.piece_hi[a0:b0] - blocks.piece_lo[a0:b0]).max())
        for a, b in zip(group, group[1:], strict=False):
            m.add(offset[a] + apart <= offset[b])
    if minimise:
        m.minimize(objective_of(blocks, ids, height, presence))
    order = _order(blocks, ids, order_by)
    if strategy is not None:
        _decide(m, kvars, presence, order, strategy)
    if hint is not None:
        hp, ho = hint
        ho = np.array(ho, np.int64)
        for group in groups:
            # The hint must obey the symmetry breaking above, or CP-SAT throws it away.
            ho[group] = np.sort(ho[group])
        for j in range(n):
            if (k := kvars[j]) is not None:
                m.add_hint(k, int(ho[j]) // aligns[j])
            for p, lit in presence[j].items():
                if lit is not True:
                    m.add_hint(lit, int(int(hp[j]) == p))
    return PackingModel(m, ids, offset, kvars, aligns, presence, height, order)



def _order(blocks: Blocks, ids: np.ndarray, order_by: str) -> list[int]:
    """Model positions of blocks ``ids`` in the order of :data:`ORDERS`' ``order_by``."""
    size, life = blocks.size[ids], (blocks.end - blocks.start)[ids]
    return sorted(range(len(ids)), key=ORDERS[order_by](size, life, blocks.start[ids]))


def _decide(m: cp_model.CpModel, kvars: list[cp_model.IntVar | None],
            presence: list[dict[int, PoolLiteral]], order: list[int], strategy: str) -> None:
    """Add ``strategy``'s decisions (:func:`build_model`) over the blocks in ``order``: first
    each block's pool, then its offset."""
    ks = [k for j in order if (k := kvars[j]) is not None]
    lits = [lit for j in order for lit in presence[j].values() if lit is not True]
    if lits:
        m.add_decision_strategy(lits, cp_model.CHOOSE_FIRST, cp_model.SELECT_MAX_VALUE)
    chooser = {"lowest": cp_model.CHOOSE_LOWEST_MIN, "fixed": cp_model.CHOOSE_FIRST}[strategy]
    if ks:
        m.add_decision_strategy(ks, chooser, cp_model.SELECT_MIN_VALUE)


def variant(pm: PackingModel, blocks: Blocks, *, order_by: str | None,
            height_max: dict[int, int] | None = None, strategy: str = "lowest") -> PackingModel:
    """``pm`` (built with no strategy) with ``strategy``'s decisions in ``order_by``'s order
    (``None``: no decisions, CP-SAT's own search) and, with ``height_max``, pool ``p`` at most
    ``height_max[p]`` high: a copy of its model, not a new one (a few milliseconds where
    building 2000 blocks takes a tenth of a second, twice that in a thread beside the
    interpreter's other work). Its "none" at a height is a proof, as the model built at that
    height would give."""
    if len(pm.model.proto.search_strategy):
        raise ValueError("variant needs a model built with no strategy (strategy=None)")
    m = pm.model.clone()
    for p, h in (height_max or {}).items():
        if p in pm.height:
            m.add(pm.height[p] <= h)
    if order_by is None:
        return replace(pm, model=m)
    order = _order(blocks, pm.ids, order_by)
    _decide(m, pm.k, pm.presence, order, strategy)
    return replace(pm, model=m, order=order)


def objective_of(blocks: Blocks, ids: np.ndarray, height: dict[int, cp_model.IntVar],
                 presence: list[dict[int, PoolLiteral]]) -> cp_model.LinearExprT:
    """The model's objective, in bytes: ``sum(cost[p] * height[p])`` (heights scaled back) plus
    ``traffic * traffic_cost`` of every block of ``ids`` with several candidate pools, on the
    literal of each. The traffic of a block with one candidate is the same in every plan and is
    left out: a bound on this objective plus that constant bounds the plan's objective."""
    scale = blocks.scale
    terms: list[cp_model.LinearExprT] = [int(blocks.pool_cost[p]) * scale * h
                                         for p, h in height.items()]
    if blocks.traffic.any():
        rate = blocks.pool_traffic_cost
        for j, i in enumerate(np.asarray(ids).tolist()):
            moved = int(blocks.traffic[i])
            if moved and len(presence[j]) > 1:
                terms.extend(moved * int(rate[p]) * lit for p, lit in presence[j].items())
    return sum(terms)


def _pairwise(m: cp_model.CpModel,
              items: list[tuple[int, int, cp_model.IntervalVar, PoolLiteral]]) -> None:
    """Pieces that share a moment get an order literal: ``below`` puts the first under the
    second, its negation the second under the first (each only where both are in the pool).

    Where a clique's ``add_no_overlap`` leaves the order implicit, CP-SAT branches on these
    literals and learns clauses over them: on tight packings (every byte of a moment in use)
    whose rectangles interlock, which order a pair takes is the decision that matters.
    """
    order = sorted(range(len(items)), key=lambda k: items[k][0])
    for a, ka in enumerate(order):
        sa, ea, ya, la = items[ka]
        for kb in order[a + 1:]:
            sb, eb, yb, lb = items[kb]
            if sb >= ea:
                break
            below = m.new_bool_var("")
            when = [lit for lit in (la, lb) if lit is not True]
            m.add(_expr(ya.end_expr()) <= _expr(yb.start_expr())).only_enforce_if([below, *when])
            m.add(_expr(yb.end_expr()) <= _expr(ya.start_expr())).only_enforce_if([~below, *when])


def _expr(e: object) -> cp_model.LinearExpr:
    return cast(cp_model.LinearExpr, e)  # (OR-Tools' stubs type an interval's ends as object)


def pair_count(starts: np.ndarray, ends: np.ndarray) -> int:
    """How many pairs of ``[start, end)`` spans share a moment: the order literals of the
    ``pairs`` formulation."""
    s = np.sort(starts)
    e = np.sort(ends)
    # span k shares a moment with every span starting before it ends, itself included
    return int((np.searchsorted(s, ends, side="left") - np.searchsorted(e, starts, "right")
                ).sum() - len(s)) // 2


def _placed_pieces(blocks: Blocks, ids: np.ndarray,
                   offsets: np.ndarray) -> tuple[np.ndarray, ...]:
    """(time start, time end, byte low, byte high) of every piece of blocks ``ids`` placed at
    ``offsets``, absolute bytes."""
    ids = np.asarray(ids, np.int64)
    ptr = blocks.piece_ptr
    counts = ptr[ids + 1] - ptr[ids]
    q = np.repeat(ptr[ids], counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts)
                                                                          - counts, counts))
    base = np.repeat(np.asarray(offsets, np.int64), counts)
    keep = blocks.piece_hi[q] > blocks.piece_lo[q]
    q, base = q[keep], base[keep]
    return (blocks.piece_start[q], blocks.piece_end[q], base + blocks.piece_lo[q],
            base + blocks.piece_hi[q])


def _free_offsets(blocks: Blocks, i: int, placed: tuple[np.ndarray, ...], low: int, high: int,
                  align: int) -> list[list[int]]:
    """The values of ``k`` (offset ``align * k`` within ``[low, high]``) at which block ``i``
    meets none of the ``placed`` pieces, as sorted closed intervals (none: no such offset)."""
    st, en, lo, hi = placed
    f0: list[np.ndarray] = []
    f1: list[np.ndarray] = []
    for q in range(blocks.piece_ptr[i], blocks.piece_ptr[i + 1]):
        qlo, qhi = int(blocks.piece_lo[q]), int(blocks.piece_hi[q])
        if qhi <= qlo:
            continue
        meet = (st < blocks.piece_end[q]) & (en > blocks.piece_start[q])
        # Offsets o with o + qlo < hi and lo < o + qhi collide: o in [lo - qhi + 1, hi - qlo - 1].
        f0.append(lo[meet] - qhi + 1)
        f1.append(hi[meet] - qlo - 1)
    k_lo, k_hi = -(-low // align), high // align
    if not f0 or not sum(len(x) for x in f0):
        return [[k_lo, k_hi]] if k_hi >= k_lo else []
    a, b = np.concatenate(f0), np.concatenate(f1)
    order = np.argsort(a, kind="stable")
    a, b = a[order], np.maximum.accumulate(b[order])
    # Merge: a new run starts where an interval begins past every earlier one's end (+1).
    new = np.ones(len(a), bool)
    new[1:] = a[1:] > b[:-1] + 1
    starts = a[new]
    ends = b[np.r_[np.flatnonzero(new)[1:] - 1, len(a) - 1]]
    free: list[list[int]] = []
    cur = low
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        if s > cur:
            lo_k, hi_k = -(-cur // align), min(s - 1, high) // align
            if lo_k <= hi_k:
                free.append([lo_k, hi_k])
        cur = max(cur, e + 1)
        if cur > high:
            break
    if cur <= high:
        lo_k, hi_k = -(-cur // align), high // align
        if lo_k <= hi_k:
            free.append([lo_k, hi_k])
    return free


def _identical_groups(blocks: Blocks, ids: np.ndarray, kvars: list,
                      presence: list) -> list[list[int]]:
    """Model positions of blocks that are copies of each other (same pieces, pools, alignment),
    in groups of two or more. Fixed blocks are never in a group, nor blocks with several
    candidate pools: stacked in one pool is not where copies spread over pools must go."""
    seen: dict[tuple, list[int]] = {}
    for j, i in enumerate(ids.tolist()):
        if kvars[j] is None or blocks.size[i] == 0 or len(presence[j]) > 1:
            continue
        a, b = int(blocks.piece_ptr[i]), int(blocks.piece_ptr[i + 1])
        key = (tuple(blocks.piece_start[a:b].tolist()), tuple(blocks.piece_end[a:b].tolist()),
               tuple(blocks.piece_lo[a:b].tolist()), tuple(blocks.piece_hi[a:b].tolist()),
               tuple(presence[j]), int(blocks.alignment[i]))
        seen.setdefault(key, []).append(j)
    return [g for g in seen.values() if len(g) > 1]
