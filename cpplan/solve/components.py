"""One pool: the exact engine, component by component.

Components (blocks that share no moment with the rest) are packed on their own, the smallest
first, each with a fair share of the time left (what the small ones, mostly answered at once,
leave goes to the larger after them), and each by the strategy its size calls for:

* a component of at most ``lns_above`` blocks is **probed and bisected**: "does it fit at the
  target?" (the proven lower bound, or with goal ``fit`` the capacity) goes to a race of CP-SAT
  and the branch-and-bound search (:func:`cpplan.exact.search.probe`; tight components to the
  tiling search first). A yes is a packing, a proven no raises the lower bound; then a
  bisection between the bound and the best height, and CP-SAT's own minimisation from the best
  plan with what is left. Where the first probe does not answer, the gap-fill search
  (:mod:`cpplan.exact.gapfill`) follows it, which lowers the best plan where the probes'
  searches get lost among the blocks, and before it, on a component of ``local_search_from``
  blocks or more that is not tight (random schedules: the optimum need not be the bound), most
  of the time left goes to cpplan's order local search (:mod:`cpplan.planners.local_search`),
  which goes lower there in seconds than the bisection's probes in the whole limit; a tight
  component of ``first_look_from`` blocks or more has a first look before it, and LNS
  (:mod:`cpplan.exact.lns`) takes the bisection's place after its first probe proper; one
  that is not tight but near a tiling (its free bytes at the bound take few rectangles: the
  air of :mod:`cpplan.exact.air`) leaves the last ``lns_tail`` of its time to LNS;
* a larger one, when tight at the target, goes to the tiling search first
  (:mod:`cpplan.exact.tiling`); otherwise it is **packed exact at its peak and greedy
  elsewhere** (:mod:`cpplan.exact.peak`), then improved by **large neighbourhood search**
  (:mod:`cpplan.exact.lns`).

Time a component leaves unspent goes, at the end, to LNS on the components still above the
bound (goal ``minimise``), or to more probes on those without a packing (goal ``fit``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..blocks import Blocks
from ..bounds import stacking_height
from ..deadline import Budget, OutOfTime
from ..errors import CpplanError
from ..exact.air import RULES, with_air
from ..exact.dfs import single_pool
from ..exact.gapfill import improve as gap_fill
from ..exact.lazy import improve, minimise, peak_first, probe
from ..exact.outcome import Outcome
from ..exact.realign import aligned_apart, realigned, unaligned
from ..exact.tiling import TILE_NODES_PER_SECOND, is_tight, merge_deadline, tight_share, tile
from ..planners import registry
from .context import Component, Context
from .incumbent import Proof

__all__ = ["solve_components", "tile_tight"]


def solve_components(ctx: Context) -> None:
    """Every component above the target, the smallest first, each with a fair share of the
    time left, by its strategy (module docstring); then the time left to those still above
    it. (Small components mostly answer in a fraction of their share, and what they leave
    goes to the larger ones after them, where the searches at the bound need it: taken the
    largest first, a perfect packing's component of 830 blocks had a fifth of the time, and
    the four after it, answered in 0.2 s, left the rest to LNS, which does not rebuild it. A
    small component that does not answer still has its fair share, not one by its blocks.)"""
    todo = sorted((c for c in ctx.components if len(c) and ctx.above_target(c)), key=len)
    budget = ctx.budget
    for k, comp in enumerate(todo):
        if budget.expired() or ctx.incumbent.infeasible is not None:
            return
        share = budget.within(budget.remaining() / (len(todo) - k))
        if len(comp) > ctx.params.lns_above:
            _large(ctx, comp, share)
        else:
            _probe_and_bisect(ctx, comp, share)
    if ctx.goal == "fit":
        _probe_again(ctx, todo)
    else:
        _lns_the_rest(ctx, todo)


def tile_tight(ctx: Context, comp: Component, budget: Budget,
               target: int) -> tuple[Outcome, str] | None:
    """Pack a tight component (of more than ``lns_above`` blocks) at height ``target``
    (scaled) within ``budget``: by the tiling search; at zero slack (every moment full at the
    target: every packing a tiling) as a probe does (:func:`cpplan.exact.search.probe`), a
    glance of it (``tight_glance`` of the time left), the hole search
    (:mod:`cpplan.exact.refill`), then the tiling search again from where it stopped: the
    skyline rebuilds in a second the packings made by cuts, the holes those that an
    allocator's reuse, a training step's stack or a ring buffer makes, and each thrashes on
    the other's. Where alignments differ, the searches run first without them (a tiling
    realigned: :mod:`cpplan.exact.realign`, a plan a little above the target), then with them:
    on thousands of blocks the searches without alignments run ten times as many nodes a
    second and answer where those with them do not. Each search but the glance has
    ``tight_turn`` of the time left (the last all of it); the rest are skipped once one packs
    at the target, and the others without alignments once one packs without them. Each
    packing is offered to the incumbent; the lowest is returned with what made it
    (``tiling``, ``refill`` or ``realigned``), None where none is. The component is marked as
    tried either way."""
    comp.tiled = True
    b, params = ctx.blocks, ctx.params
    pool = single_pool(b, comp.ids)
    apart = pool if pool is not None and aligned_apart(b, comp.ids, pool) else None
    # (its candidates listed once, for both kinds of search; imported only at zero slack)
    hole_search = _hole_search() if tight_share(b, comp.ids, target) >= 1.0 else None
    runs: list[tuple[tuple[str, Callable[..., Outcome], int], bool, float]] = []
    for aligned in ([False, True] if apart is not None else [True]):
        tiling = ("tiling", _tiling_search(budget), TILE_NODES_PER_SECOND)
        if hole_search is not None:  # (a glance of the tiling search, the holes, it again)
            runs += [(tiling, aligned, params.tight_glance),
                     (hole_search, aligned, params.tight_turn),
                     (tiling, aligned, params.tight_turn)]
        else:
            runs.append((tiling, aligned, params.tight_turn))
    relaxed = unaligned(b) if apart is not None else b
    best: tuple[Outcome, str] | None = None
    for k, ((name, search, rate), aligned, share) in enumerate(runs):
        if not aligned and best is not None:
            continue  # (one realigned tiling is enough: the searches with the alignments next)
        turn = budget if k == len(runs) - 1 else budget.share(share)
        out = search(b if aligned else relaxed, comp.ids, target, turn,
                     node_budget=turn.nodes(rate))
        if out.status != "feasible":
            continue
        if not aligned:
            assert apart is not None
            out = realigned(b, comp.ids, apart, out.packing, target)
            if out.offsets is None:
                continue
        by = name if out.status == "feasible" else "realigned"
        _offer(ctx, comp, out.packing, by)
        if best is None or _top(b, comp, out) < _top(b, comp, best[0]):
            best = out, by
        if out.status == "feasible":
            break
    return best


def _top(blocks: Blocks, comp: Component, out: Outcome) -> int:
    """The height of a packing of the component (scaled)."""
    return int((out.packing + blocks.size[comp.ids]).max())


def _tiling_search(budget: Budget) -> Callable[..., Outcome]:
    """The tiling search (:func:`cpplan.exact.tiling.tile`), each call going on from where
    the last stopped; the blocks are merged into rectangles on the first call, once for all of
    them, within :func:`cpplan.exact.tiling.merge_deadline` of ``budget`` (all the searches'
    time), not of that call's: merging perfect packing's 3500 blocks takes 0.26 s, the glance
    of a 15 s solve let it 0.11 s, and the calls after it searched what it had merged."""
    resume: dict = {}

    def search(blocks: Blocks, ids: np.ndarray, height: int, turn: Budget, *,
               node_budget: int | None) -> Outcome:
        # (the deadline matters only to the first call, which makes the merges)
        return tile(blocks, ids, height, turn, node_budget=node_budget, resume=resume,
                    merge_until=merge_deadline(budget, len(ids)))

    return search


def _hole_search() -> tuple[str, Callable[..., Outcome], int]:
    """The hole search, what it is called, and the rate at which its nodes are charged as
    seconds; imported here, on first use: it loads OR-Tools, which a solve that the tiling
    search answers never needs (:mod:`cpplan.exact.lazy`). Its candidate holes are listed
    once, for the search with the alignments and the one without them (seconds on thousands
    of blocks with many equal sums)."""
    from ..exact.refill import REFILL_NODES_PER_SECOND, refill

    return "refill", functools.partial(refill, keep={}), REFILL_NODES_PER_SECOND


def _large(ctx: Context, comp: Component, budget: Budget) -> None:
    """A component beyond ``lns_above`` blocks: the tiling search when tight, else peak-first
    packing then LNS. A window that cannot fit at the target is a proof."""
    b, inc, params = ctx.blocks, ctx.incumbent, ctx.params
    target = ctx.target()
    if not comp.tiled and is_tight(b, comp.ids, target):
        got = tile_tight(ctx, comp, budget.share(params.large_tile), target)
        if got is not None and got[0].status == "feasible":
            return

    def report(height: int, offsets: np.ndarray) -> None:
        _offer(ctx, comp, offsets.copy(), "peak")
        inc.emit("peak", f"component of {len(comp)}: height {height * b.scale}")

    out = peak_first(b, comp.ids, _packing(ctx, comp), budget.share(params.peak),
                     target=target, report=report)
    if out.bound is not None:
        _refuted(ctx, comp, target, "peak window", out.detail)
    if inc.offsets is not None and ctx.above_target(comp):
        _lns(ctx, comp, budget)


def _probe_and_bisect(ctx: Context, comp: Component, budget: Budget) -> None:
    """Probes at the target, then (goal ``minimise``) a bisection between the proven bound and
    the best height: a yes lowers the best height, a proven no raises the bound, a probe that
    runs out of time moves the next target up towards the best height (probes with slack are
    much easier); then CP-SAT's minimisation with the time left.

    The first probe that does not answer is followed by the gap-fill search (on the graphs of
    real networks the first probe answers at once; on a tight component below
    ``first_look_from`` blocks the gap fill lowers best-fit's plan where the bisection's probes
    find nothing), and on components of ``local_search_from`` blocks or more by the order local
    search too (before the gap fill, or after it where the component is tight). A component
    of ``first_look_from`` blocks or more, when tight, has a first look (``first_look``:
    perfect packings are rebuilt in it) before the gap fill, the first probe proper
    (``first_probe_before_lns``) after it, and with goal ``minimise`` LNS from the best
    packing then has the rest (:func:`_lns`, on every core), not the bisection.

    A component whose free bytes at the target take few blocks (``air_blocks`` per block, not
    none) has a glance of the first probe first (``air_glance``), then, where it does not
    answer, the hole search with those bytes as blocks (:func:`_air`), then the first probe
    as above. Such a component of ``first_look_from`` blocks or more that is not tight,
    minimised, leaves ``lns_tail`` of its time to LNS from the best packing after all that (a
    perfect packing with buffers taken away goes percents lower in it than with the probes)."""
    b, inc, params = ctx.blocks, ctx.incumbent, ctx.params
    gave_up = ctx.target() - 1  # the highest target a probe ran out of time on
    first = True
    large = len(comp) >= params.first_look_from  # (a first look, and probes above the height)
    filled = False  # (whether the gap-fill search had its turn)
    tight = is_tight(b, comp.ids, ctx.target())  # (at the first target: the bound)
    quick = large and tight  # (a first look, then it)
    # (such a component, minimised: after the first probe proper, LNS from the best packing,
    # where the bisection's probes between it and the bound find nothing on thousands of blocks)
    lns_after = quick and ctx.goal == "minimise"
    keep: dict = {}  # (what the probes make once: the holes at zero slack, their model, the
    # tiling searches and their merges, which may take a share of all the probes' time, not
    # of the first's: merging 2500 blocks takes 0.2 s, the first look of a 5 s solve had 0.06 s)
    merge_until = merge_deadline(budget, len(comp))
    # (the free bytes as blocks, each way of cutting them: their turn after a glance)
    ways = _air_ways(ctx, comp)
    # (a large component near a tiling, not tight: the probes and the air, then LNS the rest)
    tail = large and bool(ways) and not lns_after and ctx.goal == "minimise"
    whole, budget = budget, budget.share(1 - params.lns_tail) if tail else budget
    while budget.remaining() > params.min_probe and inc.infeasible is None:
        lo = ctx.target()
        h = inc.height(comp.ids)
        if h is not None and h <= lo:
            break
        hi = h if h is not None else _ceiling(ctx, comp) + 1
        if first:  # (a component without a packing gets one: at most its ceiling, it fits)
            target = min(lo, hi - 1)
        elif ctx.goal == "fit":
            target = lo
        else:
            target = (max(gave_up, lo - 1) + hi) // 2
            if target >= hi or target <= gave_up:
                break
        if first and ways:
            share = params.air_glance
        elif quick:
            share = params.first_look
        elif ctx.goal == "fit":
            share = 1.0  # one question, all of the component's time
        elif first and lns_after:
            share = params.first_probe_before_lns
        elif first:  # (the first probe, at the bound)
            share = params.first_probe_tight if tight else params.first_probe
        else:
            share = params.bisect_probe
        # (a large component's probes at the bound share their alongside core with probes
        # above it, whose lowest packing is a plan to go on from; where LNS follows, the
        # probe ends with them)
        out = probe(b, comp.ids, {0: target}, budget.share(share),
                    above=h if large else None,
                    above_ends=lns_after,
                    near=lambda plan, by: _offer(ctx, comp, plan.packing, by), keep=keep,
                    merge_until=merge_until)
        if ways and out.status == "unknown":  # (the glance, then the air, then the first)
            _air(ctx, comp, budget.share(params.air), ways)
            ways = []
            continue
        first, quick = quick, False  # (after the first look, the first probe proper)
        if not filled and out.status == "unknown":
            searched = ctx.goal == "minimise" and len(comp) >= params.local_search_from
            if searched and not tight:
                _local_search(ctx, comp, budget.share(params.local_search))
            _gap_fill(ctx, comp, budget.share(params.gap_fill))
            if searched and tight:
                _local_search(ctx, comp, budget.share(params.local_search_tight))
            filled = True
        if out.status == "feasible":
            _offer(ctx, comp, out.packing, "probe")
        elif out.status == "infeasible":
            _refuted(ctx, comp, target, "probe", out.detail)
        elif ctx.goal == "fit":
            continue  # the same question again, with more of the time
        else:
            gave_up = target
        if lns_after and not first:  # (the first probe proper is done)
            break
    keep.clear()  # (the searches kept, their trees and models: tens of MB that LNS never reads)
    budget = whole
    if ctx.goal == "minimise" and inc.infeasible is None:
        if (lns_after or tail) and inc.offsets is not None and ctx.above_target(comp):
            _lns(ctx, comp, budget, workers=budget.workers)  # (the machine is its own now)
        else:
            _minimise(ctx, comp, budget)


def _air_ways(ctx: Context, comp: Component) -> list[tuple[Blocks, np.ndarray]]:
    """The component's blocks with the bytes they leave free at the target as blocks
    (:func:`cpplan.exact.air.with_air`), one for each distinct way of cutting them
    (:data:`cpplan.exact.air.RULES`); an empty list where those bytes take more than
    ``air_blocks`` blocks per block, or no block at all (at zero slack the probes have the
    hole search themselves)."""
    b, n = ctx.blocks, len(comp)
    ways: dict[bytes, tuple[Blocks, np.ndarray]] = {}
    for rule in RULES:
        got = with_air(b, comp.ids, ctx.target(), most=int(ctx.params.air_blocks * n),
                       rule=rule)
        if got is None:
            return []
        more, ids = got
        cut = np.stack((more.start[ids[n:]], more.end[ids[n:]], more.size[ids[n:]])).tobytes()
        ways.setdefault(cut, got)
    return list(ways.values())


def _air(ctx: Context, comp: Component, budget: Budget,
         ways: list[tuple[Blocks, np.ndarray]]) -> None:
    """The hole search (:mod:`cpplan.exact.refill`) on the component at the target with the
    bytes left free as blocks, cut each of the ``ways`` (:func:`_air_ways`): a perfect
    packing with a few buffers taken away is rebuilt so, where every other search ends above
    it. The searches of the ways take turns, ``air_slice`` of ``budget`` each, then twice as
    much, each going on from where it stopped, until one packs (each way of cutting is a
    different tiling, or none: most answer at once, "no" or a packing, and where two search
    on, the one that packs in seconds is not starved by the other). A packing is offered (the
    air taken out); a "no" proves nothing for the blocks alone, and is dropped."""
    n, params = len(comp), ctx.params
    target = ctx.target()
    if not ctx.above_target(comp):
        return
    # (OR-Tools, loaded on first use: exact.lazy)
    from ..exact.events import PAIRS_ENUMERATED, holes_of
    from ..exact.refill import REFILL_NODES_PER_SECOND, refill

    searches: list[tuple[Blocks, np.ndarray, dict]] = [(more, ids, {}) for more, ids in ways]
    turn = params.air_slice * budget.remaining()
    while searches and budget.remaining() > params.min_probe:
        for way in list(searches):
            more, ids, keep = way
            if "holes" not in keep:  # (listed within the air's time: seconds on thousands)
                keep["holes"] = holes_of(more, ids, PAIRS_ENUMERATED, until=budget.deadline())
                if budget.expired():
                    return
            spent, slot = budget.elapsed(), budget.within(turn)
            out = refill(more, ids, target, slot, keep=keep,
                         node_budget=slot.nodes(REFILL_NODES_PER_SECOND))
            if out.status == "feasible":
                _offer(ctx, comp, out.packing[:n], "air")
                return
            if out.status == "infeasible" or budget.elapsed() - spent < turn / 2:
                # (no tiling, or the search declined: alignments, time)
                searches = [w for w in searches if w is not way]
        turn *= 2


def _gap_fill(ctx: Context, comp: Component, budget: Budget) -> None:
    """Lower the component's height by the gap-fill search (:mod:`cpplan.exact.gapfill`),
    from its packing in the best plan, within ``budget`` (when it is above the target)."""
    b, inc = ctx.blocks, ctx.incumbent
    if not ctx.above_target(comp):
        return

    def report(height: int, offsets: np.ndarray) -> None:
        _offer(ctx, comp, offsets.copy(), "gap-fill")
        inc.emit("gap-fill", f"component of {len(comp)}: height {height * b.scale}")

    gap_fill(b, comp.ids, _packing(ctx, comp), budget, lower=ctx.target(), report=report)


def _local_search(ctx: Context, comp: Component, budget: Budget) -> None:
    """Lower the component's height by cpplan's order local search
    (:mod:`cpplan.planners.local_search`) on the problem, within ``budget`` (when it is above
    the target); the packing it gives every component is offered (kept where it is lower)."""
    if not ctx.above_target(comp):
        return
    try:
        with budget.active():
            plan = registry.get("local-search")(
                ctx.problem, replace(budget.options, time_limit=budget.remaining()))
    except (OutOfTime, CpplanError):  # (its time, or a start beyond a capacity)
        return
    if not plan.placements:
        return
    pools, offsets = ctx.blocks.arrays(plan.placements)
    ctx.incumbent.offer(pools, offsets, "local-search")
    for other in ctx.components:
        if len(other) and ctx.above_target(other):
            _offer(ctx, other, offsets[other.ids], "local-search")


def _minimise(ctx: Context, comp: Component, budget: Budget) -> None:
    """CP-SAT's own minimisation of the component from the best plan, with what ``budget`` has
    left; its proven bound raises the lower bound."""
    b, inc = ctx.blocks, ctx.incumbent
    h = inc.height(comp.ids)
    if budget.remaining() <= ctx.params.min_minimise or (h is not None and h <= ctx.target()):
        return
    ceiling = _ceiling(ctx, comp)
    hmax = ceiling if h is None else min(h, ceiling)
    hint = None if inc.offsets is None else (np.zeros(len(comp), np.int64),
                                             inc.offsets[comp.ids])

    def report(objective: float, bound: float) -> None:
        inc.emit("minimise", f"component of {len(comp)}: height {int(objective)}, "
                 f"bound {int(bound)}")

    out = minimise(b, comp.ids, budget, height_max={0: hmax},
                   height_min={0: inc.lower_height()}, hint=hint, report=report)
    if out.offsets is not None:
        _offer(ctx, comp, out.offsets, "cp-sat")
    comp.proven = out.status == "optimal"
    if out.bound is not None:
        # The component's height bounds the pool's; its traffic is the pool's, a constant.
        inc.prove(Proof("cp-sat", f"a component of {len(comp)} blocks",
                        out.bound + b.settled_traffic_cost))
    if out.status == "infeasible" and inc.offsets is None:
        inc.prove(Proof("cp-sat", f"{len(comp)} blocks do not fit within "
                        f"{hmax * b.scale} bytes, the capacity"))


def _probe_again(ctx: Context, todo: list[Component]) -> None:
    """Goal ``fit``: the time left goes to the components still without a packing within the
    capacity, until each is answered (a packing, or a proof that none exists)."""
    budget = ctx.budget
    while budget.remaining() > ctx.params.min_probe and not ctx.settled():
        rest = [c for c in todo if ctx.above_target(c)]
        if not rest:
            return
        spent = budget.elapsed()
        for k, comp in enumerate(rest):
            share = budget.within(budget.remaining() / (len(rest) - k))
            if len(comp) > ctx.params.lns_above:
                _large(ctx, comp, share)
            else:
                _probe_and_bisect(ctx, comp, share)
            if ctx.incumbent.infeasible is not None:
                return
        if budget.elapsed() <= spent:  # (cannot happen; never spin)
            return


def _lns_the_rest(ctx: Context, todo: list[Component]) -> None:
    """Goal ``minimise``: the time the components left unspent (a bisection that ended early,
    a share too short for CP-SAT's minimisation) goes to LNS on those still above the bound,
    at least ``min_minimise`` seconds each, the largest first."""
    budget, inc = ctx.budget, ctx.incumbent
    while budget.remaining() > ctx.params.min_minimise and inc.offsets is not None:
        # (todo is the smallest first)
        rest = [c for c in reversed(todo) if not c.proven and ctx.above_target(c)]
        rest = rest[:max(1, int(budget.remaining() / ctx.params.min_minimise))]
        if not rest:
            return
        spent = budget.elapsed()
        for k, comp in enumerate(rest):
            _lns(ctx, comp, budget.within(budget.remaining() / (len(rest) - k)))
        if budget.elapsed() <= spent:  # (cannot happen; never spin)
            return


def _lns(ctx: Context, comp: Component, budget: Budget, *, workers: int = 1) -> None:
    """Improve the component's packing in the best plan by large neighbourhood search until
    ``budget`` runs out or it reaches the target, ``workers`` CP-SAT threads a window."""
    b, inc = ctx.blocks, ctx.incumbent
    assert inc.offsets is not None
    if budget.expired():  # (stopped: not even the packing it started from is offered)
        return

    def report(height: int, offsets: np.ndarray) -> None:
        _offer(ctx, comp, offsets.copy(), "lns")
        inc.emit("lns", f"component of {len(comp)}: height {height * b.scale}")

    out = improve(b, comp.ids, inc.offsets[comp.ids], budget, lower=ctx.target(),
                  workers=workers, report=report)
    if out.offsets is not None:
        _offer(ctx, comp, out.offsets, "lns")


def _refuted(ctx: Context, comp: Component, target: int, by: str, detail: str) -> None:
    """The component cannot fit at ``target`` (scaled): the bound rises above it; at or above
    the capacity, no plan exists."""
    b, inc = ctx.blocks, ctx.incumbent
    cap = ctx.capacity
    what = f"{len(comp)} blocks do not fit at {target * b.scale} bytes ({detail})"
    if cap is not None and target >= cap:
        inc.prove(Proof(by, what + ", the capacity"))
    else:
        inc.prove(Proof(by, what, inc.as_objective(target + 1)))


def _offer(ctx: Context, comp: Component, offsets: np.ndarray, planner: str) -> None:
    if (ctx.incumbent.offer_packing(comp.ids, offsets, planner)
            and planner not in ("lns", "peak", "gap-fill")):
        ctx.incumbent.emit(planner)  # (LNS, peak-first and gap fill say more in their own lines)


def _packing(ctx: Context, comp: Component) -> np.ndarray | None:
    """The component's packing in the best plan, or in the partial packings, if any."""
    inc = ctx.incumbent
    if inc.offsets is not None:
        return inc.offsets[comp.ids]
    if inc.partial is not None and (inc.partial[comp.ids] >= 0).all():
        return inc.partial[comp.ids]
    return None


def _ceiling(ctx: Context, comp: Component) -> int:
    """A proven cap on the component's optimal height (scaled): the capacity, or the height
    within which its blocks always fit (:func:`cpplan.bounds.stacking_height`)."""
    cap = ctx.capacity
    stacked = stacking_height(ctx.blocks, comp.ids, 0)
    return stacked if cap is None else min(cap, stacked)
