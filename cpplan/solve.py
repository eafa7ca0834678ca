"""What users call: the best plan cpplan can find in the time given, with its certificate.

``solve`` runs, in order (DESIGN.md, "The exact engine"):

1. **bounds**: the max-load lower bound per pool; capacities below it end here (``infeasible``,
   with the pool, the moment and the bytes live then);
2. **heuristics**: the portfolio of cpplan's planners gives a quick plan (0.2 to 1 s when
   probes follow), the upper bound, the hint and the fallback; if it reaches the lower bound
   the plan is optimal and solve stops. (In one pool of more than :data:`LNS_ABOVE` blocks,
   the components tight at the bound go to the tiling search first, :func:`_tiled_first`: a
   greedy plan of that many blocks takes seconds, their packing often less.)
3. **probes** (one pool): for every component whose plan is above the lower bound, a lone
   branch-and-bound dive, then CP-SAT's raced lowest-offset-first strategies beside the
   branch-and-bound search, ask "does it fit at the lower bound?". A yes
   proves optimality; a proven no raises the lower bound by one unit;
4. **minimise**: CP-SAT improves the best plan (hint, upper bound) anytime, and its proven bound
   may raise the lower bound further. With several pools, the whole problem is one model that
   minimises ``sum(cost * height)``; beyond :data:`MAX_EXACT_BLOCKS` blocks, the heuristics'
   choice of pools stays and each pool is solved on its own (``_pool_by_pool``);
5. **peak first, then large neighbourhood search**: one-pool components above
   :data:`LNS_ABOVE` blocks are packed exact at the peak of their load and greedy elsewhere
   (:mod:`cpplan.exact.peak`), which on real networks' graphs reaches the max-load; then they,
   and the time any component has left, go to CP-SAT re-packing windows of the best plan while
   the rest stays fixed (:mod:`cpplan.exact.lns`), until the time limit.

Every time decision goes through one :class:`cpplan.deadline.Budget` (wall or deterministic
time, with the stop flag), and the time to build and check the final plan is reserved inside the
limit. The result is always a checked plan (or an ``infeasible`` verdict naming buffers that
cannot fit together), never worse than the heuristics' best, ``optimal`` only with a proof,
otherwise ``feasible`` with the gap. Ctrl-C stops the search and returns the best plan found so
far.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from .blocks import Blocks, make_blocks
from .bounds import capacity_conflict, max_load, objective_lower_bound, stacking_height
from .deadline import Budget, OutOfTime, check_time_limit
from .errors import CapacityError, CpplanError, PlanError
from .exact.control import Control, Outcome
from .exact.lazy import improve, minimise, peak_first, probe  # OR-Tools loads on first use
from .exact.tiling import TILE_NODES_PER_SECOND, is_tight, tile
from .plan import Plan
from .planners import registry
from .planners.portfolio import REPLICAS_UP_TO
from .problem import Buffer, Problem
from .replicas.naive import stack

__all__ = ["solve", "Progress"]

# Blocks beyond which a whole-problem model (several pools) is not built: CP-SAT models of tens
# of thousands of rectangles take longer to build than the time users give them.
MAX_EXACT_BLOCKS = 6000
# Blocks beyond which a component (one pool) is improved by peak-first packing and large
# neighbourhood search (cpplan.exact.peak, cpplan.exact.lns) rather than probes and one model.
LNS_ABOVE = 3000
# Share of the time that the tiling search takes first on tight components
# (cpplan.exact.tiling.TIGHT_FROM) of a pool of more than LNS_ABOVE blocks (in all, before the
# heuristics) or of one component above LNS_ABOVE blocks: perfect packings of 10000 buffers,
# packed at the max-load in under a second (the blocks merged into rectangles,
# cpplan.exact.dissection), or not at all.
LARGE_TILE_SHARE = 0.25
# Share of such a component's time that peak-first packing may take before LNS (it ends at once
# when it reaches the bound; on idealloc's sets LNS never improved on its plans).
PEAK_SHARE = 0.8
# The share of a tight component's time (cpplan.exact.tiling.TIGHT_FROM) that its first probe,
# at the lower bound, may take.
FIRST_PROBE_TIGHT = 0.75
# What building and checking the final plan costs per buffer (about a second for 62185 buffers
# on this kind of machine), kept out of the search so that the time limit holds.
FINISH_SECONDS_PER_BUFFER = 15e-6


@dataclass(frozen=True)
class Progress:
    """One step of a solve, for progress displays: bound and best objective in bytes."""

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


class _State:
    """The best plan and the proven lower bound, as they move (scaled block arrays)."""

    def __init__(self, problem: Problem, blocks: Blocks, lower: int, started: float,
                 progress: Callable[[Progress], None] | None) -> None:
        self.problem, self.blocks, self.started = problem, blocks, started
        self.lower = lower  # objective bound, bytes
        self.pools: np.ndarray | None = None
        self.offsets: np.ndarray | None = None
        self.objective: int | None = None
        self.planner = ""
        self.partial: np.ndarray | None = None  # per-component packings before any full plan
        self.progress = progress
        self.notes: list[str] = []
        self.tiled: set[int] = set()  # id() of the components the tiling search had first

    def emit(self, phase: str, message: str = "") -> None:
        if self.progress is not None:
            self.progress(Progress(time.perf_counter() - self.started, phase, self.lower,
                                   self.objective, message))

    def objective_of(self, pools: np.ndarray, offsets: np.ndarray) -> int:
        return self.blocks.objective(pools, offsets)

    def offer(self, pools: np.ndarray, offsets: np.ndarray, planner: str, *,
              ties: bool = False) -> bool:
        """Keep the plan when its objective is lower (or, with ``ties``, not higher: a
        component's packing that got lower while another component sets the height). True when
        the objective went down."""
        obj = self.objective_of(pools, offsets)
        if self.objective is None or obj < self.objective or (ties and obj == self.objective):
            lower = self.objective is None or obj < self.objective
            self.pools, self.offsets, self.objective, self.planner = pools, offsets, obj, planner
            return lower
        return False

    def lower_height(self) -> int:
        """One pool: the lower bound as a height, in scaled units (rounded up)."""
        b = self.blocks
        lower = self.lower - b.settled_traffic_cost  # (one pool: all of the traffic cost)
        return -(-lower // (b.scale * (int(b.pool_cost[0]) or 1)))

    def raise_lower(self, value: int, why: str) -> None:
        if value > self.lower:
            self.lower = value
            self.notes.append(why)


def _block_arrays(blocks: Blocks, plan: Plan | dict) -> tuple[np.ndarray, np.ndarray]:
    """Pool and scaled offset per block, from a plan (or its placements by buffer id)."""
    placements = plan.placements if isinstance(plan, Plan) else plan
    names = {p.name: i for i, p in enumerate(blocks.problem.pools)}
    ids = [blocks.problem.buffers[r].id for r in blocks.root.tolist()]
    pools = np.fromiter((names[placements[i].pool] for i in ids), np.int64, len(ids))
    offs = np.fromiter((placements[i].offset // blocks.scale for i in ids), np.int64, len(ids))
    return pools, offs


def _heuristics(problem: Problem, state: _State, budget: Budget, seed: int,
                planners: list[str] | None) -> None:
    """The heuristic planners, each under ``budget`` (interrupted when it expires). Should none
    give a plan in time, the ``naive`` stacking (one pass, no search) is the fallback, so that a
    solve always has a plan to return when one is easy to have."""
    hinted = _hinted(state)
    if hinted is not None and state.offer(*hinted, "hints"):
        state.emit("heuristic", "the problem's hints")
    failures = []
    out_of_time = False
    for name in planners or ["portfolio"]:
        options: dict = {}
        if name in ("portfolio", "local-search"):
            options = {"time_limit": budget.remaining(), "seed": seed,
                       "deterministic": budget.deterministic}
        try:
            with budget.active():
                plan = registry.get(name)(problem, **options)
        except OutOfTime:
            out_of_time = True
            break
        except CapacityError as e:
            failures.append(f"{name}: {e}")
            continue
        pools, offs = _block_arrays(state.blocks, plan)
        if state.offer(pools, offs, plan.planner or name):
            state.emit("heuristic", f"{plan.planner or name}")
    if state.objective is None and out_of_time:
        try:
            state.offer(*stack(state.blocks), "naive")  # checked with the final plan
        except CapacityError as e:
            failures.append(f"naive: {e}")
        else:
            state.emit("heuristic", "naive (the heuristics were cut short)")
    if state.objective is None and failures:
        state.notes.append("heuristics could not meet the capacities (" + "; ".join(failures[:2])
                           + ")")


def _hinted(state: _State) -> tuple[np.ndarray, np.ndarray] | None:
    """The plan the buffers' hints describe (each block at its root's hint, in its first
    candidate pool), when every block has a hint and that plan is valid; a warm start only."""
    b = state.blocks
    if len(b) == 0 or (b.hint[b.fixed < 0] < 0).any():
        return None
    pools = np.fromiter((c[0] for c in b.pools), np.int64, len(b))
    offs = np.where(b.fixed >= 0, b.fixed, b.hint)
    try:
        b.to_plan(pools, offs, planner="hints", lower_bound=state.lower)
    except PlanError:
        return None
    return pools, offs


def solve(
    problem: Problem,
    *,
    time_limit: float = 60.0,
    workers: int = 2,
    seed: int = 0,
    progress: Callable[[Progress], None] | None = None,
    deterministic: bool = False,
    planners: list[str] | None = None,
    goal: str = "minimise",
    exact: bool = True,
    explain: bool = True,
) -> Plan:
    """The best checked plan found within ``time_limit`` seconds, with its certificate.

    ``goal="minimise"`` minimises ``sum(cost * height)``; ``goal="fit"`` stops at the first plan
    within the pools' capacities (MiniMalloc's question). ``planners`` overrides the heuristic
    portfolio; ``exact=False`` skips CP-SAT. ``deterministic=True`` gives the same plan on every
    run (one thread, deterministic time). ``progress`` receives a :class:`Progress` whenever the
    bound or the best plan moves. With ``explain``, a proven ``infeasible`` verdict comes with
    ``plan.conflict``: buffers that cannot fit together, irreducible when the time left (and at
    most half a second more) allows (:mod:`cpplan.exact.conflict`).
    """
    if goal not in ("minimise", "fit"):
        raise CpplanError(f"unknown goal {goal!r}; expected 'minimise' or 'fit'")
    time_limit = check_time_limit(time_limit, "time_limit")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise CpplanError(f"workers: must be a whole number >= 1, got {workers!r}")
    started = time.perf_counter()
    # The checked plan is built after the search: keep the time it takes out of the search's.
    reserve = min(time_limit / 2, FINISH_SECONDS_PER_BUFFER * len(problem.buffers))
    control = Control.of(time_limit - reserve, workers=workers, seed=seed,
                         deterministic=deterministic)
    blocks = make_blocks(problem)
    conflict = capacity_conflict(blocks)
    if conflict is not None:
        plan = Plan.infeasible(problem, conflict, planner="cpplan.solve")
        return _explained(plan, blocks, control, time_limit, started) if explain else plan
    state = _State(problem, blocks, objective_lower_bound(blocks), started, progress)

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, lambda *_: control.stop())
    try:
        state.emit("bounds")  # from here on, Ctrl-C stops the search and keeps the best plan
        comps = blocks.components()
        # Tight components too large for probes: the tiling search first, before the
        # heuristics (a greedy plan of 10000 blocks takes seconds; this packing, one).
        tiled = _tiled_first(state, control, comps) if exact and goal == "minimise" else []
        if state.objective is None or state.objective > state.lower:
            share = _heuristic_share(blocks, comps, time_limit, exact)
            _heuristics(problem, state, control.budget.within(share), seed, planners)
            for c, out in tiled:  # (into the heuristics' plan)
                _merge(state, c, out, "tiling")
        # Done already: a plan at the bound, or (goal fit) any plan within the capacities.
        settled = state.objective is not None and (goal == "fit"
                                                   or state.objective <= state.lower)
        if exact and not settled:
            if blocks.n_pools == 1:
                _exact_one_pool(state, control, goal, comps)
            else:
                _exact_pools(state, control)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)

    # In deterministic mode the time reported is deterministic too, so that the whole output is
    # the same on every machine.
    seconds = control.budget.elapsed() if deterministic else time.perf_counter() - started
    stats = {"notes": state.notes, "interrupted": control.stopped.is_set(),
             "best_planner": state.planner}
    if state.objective is None:
        why = "; ".join(state.notes) or "no plan found"
        plan = Plan.infeasible(problem, why, planner="cpplan.solve", seconds=seconds)
        # Infeasible only with a proof; otherwise nothing was found in the time given.
        proved = any(n.startswith("proved") for n in state.notes)
        if not proved:
            return plan.with_record(status="unknown")
        return _explained(plan, blocks, control, time_limit, started) if explain else plan
    plan = blocks.to_plan(state.pools, state.offsets, planner=f"cpplan.solve:{state.planner}",
                          seconds=seconds, lower_bound=state.lower, stats=stats)
    if not deterministic:  # the time to build and check the plan counts too
        plan = plan.with_record(seconds=time.perf_counter() - started)
    state.emit("done", plan.status)
    return plan


def _heuristic_share(blocks: Blocks, comps: list[np.ndarray], time_limit: float,
                     exact: bool) -> float:
    """The time the heuristics may take before the exact engine starts (an upper bound: the
    portfolio without its local search ends when its greedy planners do).

    A quick plan is all the exact engine needs (an upper bound and a hint); on the instance
    families measured (benchmarks/versus.py) probes and LNS improve on it faster than more
    heuristic search does. Exceptions: no exact engine at all (everything to the heuristics),
    and problems where the exact engine only improves a plan (LNS, several pools beyond
    MAX_EXACT_BLOCKS), where the greedy plan must be there first.
    """
    if not exact:
        return time_limit
    if blocks.n_pools > 1 and len(blocks) > MAX_EXACT_BLOCKS:
        # The heuristics choose the pools; the rest of the time goes to the pools one by one.
        return time_limit * 0.5
    if any(len(c) > LNS_ABOVE for c in comps):
        # The portfolio runs its local search only up to REPLICAS_UP_TO blocks; beyond, the
        # greedy planners are all it runs, and they must finish.
        return time_limit * 0.8 if len(blocks) > REPLICAS_UP_TO else min(time_limit * 0.1, 5.0)
    # A quick plan: the greedy planners and a little local search. The probes that follow start
    # with a lone DFS dive, which on real networks' graphs reaches the max-load at once.
    return min(max(time_limit * 0.003, 0.2), 1.0)


def _explained(plan: Plan, blocks: Blocks, control: Control, time_limit: float,
                started: float) -> Plan:
    """The infeasible ``plan`` with the buffers that cannot fit together, when found."""
    from .exact.conflict import irreducible_conflict

    # What is left of the time limit, and at most half a second past it (time limits hold to
    # within a second): a max-load conflict needs no search, a refuted probe may run short.
    found = irreducible_conflict(blocks, budget=max(control.remaining(), min(time_limit, 0.5)),
                                 workers=control.workers, seed=control.seed,
                                 deterministic=control.deterministic)
    if control.deterministic:
        return plan.with_record(conflict=found)
    return plan.with_record(conflict=found, seconds=time.perf_counter() - started)


def _exact_one_pool(state: _State, control: Control, goal: str,
                    components: list[np.ndarray]) -> None:
    """One pool: work component by component, largest first, on those above the bound.

    ``fit``: one raced probe at the capacity per component. ``minimise``: descending probes, a
    bisection between the proven bound and the best height: a yes lowers the best height, a
    proven no raises the bound, a probe that runs out of time moves the next target up towards
    the best height (probes with slack are much easier). Time left at the end goes to CP-SAT's
    own minimisation from the best plan.
    """
    b = state.blocks
    unit = b.scale * (int(b.pool_cost[0]) or 1)
    cap = int(b.pool_capacity[0]) if b.pool_capacity[0] >= 0 else None
    comps = [c for c in components if len(c)]

    def comp_height(c: np.ndarray) -> int | None:
        if state.offsets is None:
            return None
        return int((state.offsets[c] + b.size[c]).max())

    lower_h = state.lower_height

    target_of = (lambda: cap) if goal == "fit" and cap is not None else lower_h
    todo = sorted((c for c in comps if comp_height(c) is None or comp_height(c) > target_of()),
                  key=len, reverse=True)
    if goal == "fit":
        for k, c in enumerate(todo):
            if control.remaining() <= 0:
                break
            if len(c) > LNS_ABOVE:
                share = control.budget.within(control.remaining() / (len(todo) - k))
                if is_tight(b, c, target_of()) and _tiled(
                        state, c, control, LARGE_TILE_SHARE * share.remaining(), target_of(),
                        share) is not None:
                    continue
                if _large(state, c, control, share, target_of()):
                    state.notes.append(f"proved: {len(c)} blocks do not fit in capacity "
                                       f"{target_of() * b.scale} (a window of them does not, "
                                       "exact probe)")
                    return
                continue
            out = probe(b, c, {0: target_of()}, control,
                        budget=control.remaining() / (len(todo) - k))
            if out.status == "feasible":
                _merge(state, c, out, "probe")
            elif out.status == "infeasible":
                state.notes.append(f"proved: {len(c)} blocks do not fit in capacity "
                                   f"{target_of() * b.scale} (exact probe, {out.detail})")
                return
        if state.objective is None:
            state.notes.append("no plan within the capacity found in the time limit")
        return

    proven: set[int] = set()  # id() of the components whose own optimum CP-SAT proved
    for k, c in enumerate(todo):
        share = control.budget.within(control.remaining() / (len(todo) - k))
        if len(c) > LNS_ABOVE:
            target = lower_h()
            if id(c) not in state.tiled and is_tight(b, c, target) and _tiled(
                    state, c, control, LARGE_TILE_SHARE * share.remaining(), target,
                    share) is not None:
                continue
            if _large(state, c, control, share, target):
                state.raise_lower((target + 1) * unit + b.settled_traffic_cost,
                                  f"a window of the component at "
                                  f"{target * b.scale} infeasible")
                state.emit("peak", f"no plan at {target * b.scale}: lower bound raised")
                if state.offsets is not None:
                    _lns(state, c, control, share, lower_h())
            continue
        gave_up = lower_h() - 1  # highest target a probe ran out of time on
        first = True
        while control.remaining() > 0.05:
            lo = lower_h()
            h = comp_height(c)
            hi = h if h is not None else (cap + 1 if cap is not None
                                          else stacking_height(b, c, 0) + 1)
            if hi <= lo:
                break
            target = lo if first else (max(gave_up, lo - 1) + hi) // 2
            if target >= hi or target <= gave_up:
                break
            left = share.remaining()
            if left <= 0.05:
                break
            # The first probe, at the bound, takes most of the time on tight components: the
            # tiling search it runs there is what rebuilds perfect packings (the bisection's
            # later probes only shave a greedy plan's excess).
            portion = (FIRST_PROBE_TIGHT if is_tight(b, c, target) else 0.4) if first else 0.34
            out = probe(b, c, {0: target}, control, budget=left * portion, within=share)
            first = False
            if out.status == "feasible":
                _merge(state, c, out, "probe")
            elif out.status == "infeasible":
                state.raise_lower((target + 1) * unit + b.settled_traffic_cost,
                                  f"probe at {target * b.scale} infeasible")
                state.emit("probe", f"no plan at {target * b.scale}: lower bound raised")
                if state.offsets is None and cap is not None and target >= cap:
                    state.notes.append(f"proved: {len(c)} blocks do not fit in capacity "
                                       f"{cap * b.scale} (exact probe)")
                    return
            else:
                gave_up = target
        # Whatever time this component has left: CP-SAT's minimisation from the best plan.
        left = share.remaining()
        h = comp_height(c)
        if left > 0.5 and (h is None or h > lower_h()):
            hmax = cap if h is None else (h if cap is None else min(h, cap))
            if hmax is None:
                hmax = stacking_height(b, c, 0)
            hint = None if state.offsets is None else (np.zeros(len(c), np.int64),
                                                        state.offsets[c])

            def report(obj: float, bound: float, _c=c) -> None:
                state.emit("minimise", f"component of {len(_c)}: height {int(obj)},"
                           f" bound {int(bound)}")

            out = minimise(b, c, control, height_max={0: hmax}, height_min={0: lower_h()},
                           hint=hint, budget=left, report=report, within=share)
            if out.offsets is not None:
                _merge(state, c, out, "cp-sat")
            if out.status == "optimal":
                proven.add(id(c))
            if out.bound is not None:
                state.raise_lower(out.bound + b.settled_traffic_cost, "cp-sat bound")
            if out.status == "infeasible" and state.offsets is None:
                state.notes.append(f"proved: no plan of {len(c)} blocks fits within capacity "
                                   f"{hmax * b.scale} (CP-SAT)")
                return
    # Anytime to the end: time the components left unspent (a bisection that ended early, a
    # share too short for CP-SAT's minimisation) goes to LNS on those still above the bound.
    while control.remaining() > 0.5 and state.offsets is not None:
        rest = [c for c in todo if id(c) not in proven and comp_height(c) > lower_h()]
        # At least half a second each (the largest first), so that every pass does work.
        rest = rest[:max(1, int(control.remaining() / 0.5))]
        if not rest:
            break
        spent = control.budget.elapsed()
        for k, c in enumerate(rest):
            _lns(state, c, control, control.budget.within(control.remaining() / (len(rest) - k)),
                 lower_h())
        if control.budget.elapsed() <= spent:  # (cannot happen; never spin)
            break


def _tiled_first(state: _State, control: Control,
                 comps: list[np.ndarray]) -> list[tuple[np.ndarray, Outcome]]:
    """One pool of more than :data:`LNS_ABOVE` blocks: its components that are tight at the
    lower bound, packed there by the tiling search before anything else (in
    :data:`LARGE_TILE_SHARE` of the time in all, shared by size), with their packings. The
    components tried are not tried again later (``state.tiled``)."""
    b = state.blocks
    if b.n_pools != 1 or len(b) <= LNS_ABOVE:
        return []
    target = state.lower_height()
    tight = [c for c in comps if len(c) > 1 and is_tight(b, c, target)]
    total = LARGE_TILE_SHARE * control.remaining()
    done = []
    for c in tight:
        out = _tiled(state, c, control, total * len(c) / sum(map(len, tight)), target)
        state.tiled.add(id(c))
        if out is not None:
            done.append((c, out))
    return done


def _tiled(state: _State, c: np.ndarray, control: Control, seconds: float, target: int,
           charge: Budget | None = None) -> Outcome | None:
    """Pack tight component ``c`` (one pool) at height ``target`` (scaled) with the tiling
    search (:mod:`cpplan.exact.tiling`) in at most ``seconds`` (charged to ``charge``); its
    packing, put into the best plan, or None."""
    nodes = int(seconds * TILE_NODES_PER_SECOND) if control.deterministic else None
    out = tile(state.blocks, c, target, control, budget=seconds, node_budget=nodes,
               charge=charge)
    if out.status != "feasible":
        return None
    _merge(state, c, out, "tiling")
    return out


def _large(state: _State, c: np.ndarray, control: Control, budget: Budget, target: int) -> bool:
    """Improve component ``c`` of the best plan (one pool), too large for one model, towards
    height ``target`` (scaled): exact at the peak and greedy elsewhere
    (:mod:`cpplan.exact.peak`), with at most :data:`PEAK_SHARE` of ``budget``, then large
    neighbourhood search until ``budget`` runs out (when there is a packing of ``c`` to
    improve). True when a window of ``c`` was proven not to fit at ``target`` (then nothing
    else ran)."""
    b = state.blocks

    def packing() -> np.ndarray | None:
        if state.offsets is not None:
            return state.offsets[c]
        if state.partial is not None and (state.partial[c] >= 0).all():
            return state.partial[c]
        return None

    def report(height: int, offsets: np.ndarray) -> None:
        _merge(state, c, Outcome("feasible", offsets=offsets.copy()), "peak")
        state.emit("peak", f"component of {len(c)}: height {height * b.scale}")

    out = peak_first(b, c, packing(), control, target=target, report=report,
                     budget=budget.within(PEAK_SHARE * budget.remaining()))
    if out.bound is not None:
        return True
    if state.offsets is not None and int((state.offsets[c] + b.size[c]).max()) > target:
        _lns(state, c, control, budget, target)
    return False


def _lns(state: _State, c: np.ndarray, control: Control, budget: Budget, lower: int) -> None:
    """Improve component ``c`` of the best plan (one pool) by large neighbourhood search
    until ``budget`` runs out or its height reaches ``lower`` (scaled)."""
    b = state.blocks

    def report(height: int, offsets: np.ndarray) -> None:
        _merge(state, c, Outcome("feasible", offsets=offsets.copy()), "lns")
        state.emit("lns", f"component of {len(c)}: height {height * b.scale}")

    out = improve(b, c, state.offsets[c], control, budget=budget, lower=lower, report=report)
    _merge(state, c, out, "lns")


def _merge(state: _State, c: np.ndarray, out: Outcome, planner: str) -> None:
    """Put a component's new packing into the best plan when it helps (one pool).

    Without any plan yet (no heuristic met the capacity), packings are collected per component
    until every block has one.
    """
    b = state.blocks
    if state.offsets is None:
        if state.partial is None:
            state.partial = np.full(len(b), -1, np.int64)
        state.partial[c] = out.offsets
        if (state.partial < 0).any():
            return
        offs = state.partial
    else:
        if (out.offsets + b.size[c]).max() > (state.offsets[c] + b.size[c]).max():
            return  # (never raise a component: a later one may bring the height down)
        offs = state.offsets.copy()
        offs[c] = out.offsets
    if (state.offer(np.zeros(len(b), np.int64), offs, planner, ties=True)
            and planner not in ("lns", "peak")):
        state.emit(planner)  # (LNS and peak-first say more in their own progress lines)


def _exact_pools(state: _State, control: Control) -> None:
    """Several pools: one model over all blocks minimising ``sum(cost * height)``."""
    b = state.blocks
    if len(b) > MAX_EXACT_BLOCKS:
        _pool_by_pool(state, control)
        return
    ids = np.arange(len(b))
    own = max_load(b)
    height_min = {p: own[pool.name].bytes // b.scale for p, pool in enumerate(b.problem.pools)}
    # Proven caps only (a cap that loses the optimum is a false proof): the stacking height,
    # the capacity, and what the best plan's objective allows a pool of non-zero cost.
    height_max = {}
    for p in range(b.n_pools):
        cap = stacking_height(b, ids, p)
        if b.pool_capacity[p] >= 0:
            cap = min(cap, int(b.pool_capacity[p]))
        if state.objective is not None and b.pool_cost[p] > 0:
            cap = min(cap, state.objective // (b.scale * int(b.pool_cost[p])))
        height_max[p] = max(cap, height_min[p])
    hint = None if state.offsets is None else (state.pools, state.offsets)

    def report(obj: float, bound: float) -> None:
        state.emit("minimise", f"objective {int(obj) + b.settled_traffic_cost}, "
                   f"bound {int(bound) + b.settled_traffic_cost}")

    out = minimise(b, ids, control, height_max=height_max, height_min=height_min, hint=hint,
                   budget=control.remaining(), report=report)
    if out.offsets is not None:
        state.offer(out.pools, out.offsets, "cp-sat")
    if out.bound is not None:
        state.raise_lower(out.bound + b.settled_traffic_cost, "cp-sat bound")
    if out.status == "infeasible" and state.objective is None:
        state.notes.append("proved: no plan meets the pools' capacities (CP-SAT)")


def _pool_by_pool(state: _State, control: Control) -> None:
    """Several pools, too many blocks for one model: the best plan's choice of pools stays, and
    each pool's buffers are solved as a one-pool problem (probes, CP-SAT, large neighbourhood
    search) from their current offsets as hints, the costliest pools first, until the time
    limit. With the pools fixed, the objective ``sum(cost * height)`` falls with every pool's
    height, so each pool's best plan is kept; nothing here is a proof for the whole problem
    (the lower bound stays the problem's own)."""
    if state.offsets is None:
        return
    b, problem = state.blocks, state.problem
    plan = b.to_plan(state.pools, state.offsets, planner="pools", lower_bound=state.lower)
    placements = dict(plan.placements)
    members: dict[str, list[Buffer]] = {}
    for buf in problem.buffers:
        at = placements[buf.id]
        members.setdefault(at.pool, []).append(
            replace(buf, pools=(at.pool,), hint=None if buf.offset is not None else at.offset))
    own = max_load(b)
    heights = plan.heights

    def excess(name: str) -> int:
        return problem.pool(name).cost * (heights[name] - own[name].bytes)

    todo = sorted((n for n in members if excess(n) > 0), key=excess, reverse=True)
    weight = {n: len(members[n]) for n in todo}
    for k, name in enumerate(todo):
        left = control.remaining()
        if left <= 0.5 or control.stopped.is_set():
            break
        share = left * weight[name] / sum(weight[m] for m in todo[k:])
        keep = {buf.id for buf in members[name]}
        sub = Problem(tuple(members[name]), (problem.pool(name),),
                      tuple(a for a in problem.aliases if a.buffer in keep),
                      name=f"{problem.name}:{name}")
        got = solve(sub, time_limit=share, workers=control.workers, seed=control.seed,
                    deterministic=control.deterministic, explain=False)
        if control.deterministic:
            control.budget.report(got.seconds or 0.0)
        if (got.stats or {}).get("interrupted"):
            control.stop()
        if got.status in ("optimal", "feasible") and got.heights[name] < heights[name]:
            placements.update(got.placements)
            if state.offer(*_block_arrays(b, placements), "pools"):
                heights = {**heights, name: got.heights[name]}
                state.emit("pools", f"pool {name}: height {got.heights[name]}")


@registry.register("cpplan", family="exact", reproduces="")
def plan(problem: Problem, **options: object) -> Plan:
    """cpplan's solver: bounds, heuristic portfolio, raced CP-SAT probes, anytime minimisation."""
    return solve(problem, **options)  # type: ignore[arg-type]
