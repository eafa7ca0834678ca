"""The search around the CP-SAT model: raced probes, anytime minimisation, interruption.

* :func:`probe` asks "do these blocks fit under these heights?". CP-SAT with a fixed
  lowest-offset-first strategy finds packings of hard instances in well under a second with one
  block order and not in minutes with another (heavy-tailed search), so the probe *races* several
  orders (:data:`cpplan.exact.model.ORDERS`), and CP-SAT's own search with no strategy, in time
  slices that double every round, one solver thread per worker, and stops at the first answer.
  A "yes" comes with a packing; a "no" is a proof (every order runs a complete search). Beside
  them races :func:`cpplan.exact.dfs.fit`, a MiniMalloc-style branch-and-bound search that is
  much faster on many instance families (it holds the GIL, so it takes one worker's place; the
  CP-SAT threads release it).
* :func:`minimise` runs CP-SAT's own portfolio on the objective, from a hint and under an upper
  bound, and reports the best packing and the proven bound as they move.
* The :class:`cpplan.deadline.Budget` given carries the time limit, the stop flag and the
  options: Ctrl-C (or a caller) stops the running solvers, which return their best packing so
  far.

In deterministic mode everything runs in one thread and time slices are CP-SAT's deterministic
time, so the same input gives the same packing on every machine load.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from ..blocks import Blocks
from ..deadline import Budget
from .cpsat import new_solver, run
from .dfs import DFS_NODES_PER_SECOND, fit, single_pool
from .events import CANDIDATES_MAX, PAIRS_ENUMERATED, Holes, add_holes, holes_of, zero_slack
from .heap import ceiling, resident_mb
from .model import PackingModel, build_model, pair_count, variant
from .outcome import Outcome
from .realign import aligned_apart, realigned, unaligned
from .refill import REFILL_NODES_PER_SECOND, refill
from .tiling import MERGED_SHARE, TILE_NODES_PER_SECOND, is_tight, tile

__all__ = ["Outcome", "probe", "minimise"]

# The block orders of CP-SAT's lowest-offset strategy in a probe's race, and None: CP-SAT's own
# search, no strategy, which finds the packings of some instances (aligned buffers on random
# schedules) where every order thrashes, and races in the third place for them.
RACE_ORDERS: tuple[str | None, ...] = ("start", "size", None, "life", "area", "start-life",
                                       "end")
DFS_SHARE = 0.5  # deterministic mode: the share of a probe's budget the DFS gets, in nodes
DIVE_SHARE = 0.15  # the most of a probe's budget the lone dive may take
DIVE_NODES_PER_BLOCK = 3
#: Tight probes: the most order literals for which CP-SAT's pairs formulation runs alongside
#: (:class:`_Alongside`): beyond it, it would take a core from the tiling search for little
#: chance of an answer (``benchmarks/versus.py`` on the tilings of ``cpplan.perfect``).
PAIRS_MAX = 12_000
#: Of what a tight probe has left, the share each of the alongside core's probes above its
#: height takes (:meth:`_Alongside._bisect_above`), as the bisection's own probes do.
ABOVE_SHARE = 0.34
#: Below this many seconds no probe above the height is started on the alongside core.
ABOVE_MIN = 0.2
#: The time slice of each strategy in such a probe (one round of them a height), and at
#: least SLICE_PER_BLOCK a block: on thousands of blocks CP-SAT's presolve takes much of a
#: short slice, and a strategy that would answer is cut off just before.
FIRST_SLICE = 0.25
SLICE_PER_BLOCK = 2.5e-4
#: The probes above the height are done when the height left between the two is below this
#: share of the best one: LNS from the best packing gains that much in seconds.
ABOVE_DONE = 0.002
#: With probes above the height to make, the share of the time left that the alongside
#: core's own model at the height has first (on thousands of blocks it answers nothing).
OWN_SHARE = 0.5
#: What building the holes' model (:func:`.events.add_holes`) costs per candidate's block
#: (measured on the generated families of 2000 blocks): it is built on the probe's time, so
#: only where that comes to at most MODEL_SHARE of the time left.
HOLES_MODEL_SECONDS_PER_MEMBER = 1e-5
MODEL_SHARE = 0.25

# Tight blocks: the tiling search's first share of a probe's budget, then the race's share of
# what is left (the tiling search has the rest). Blocks whose alignments differ give the race
# more: on aligned perfect packings of 120 blocks the tiling search answers 29 of 30 in 2.1 s,
# the race the last one in 3.4 s, where the tiling search needs 6 to 10 s.
TILE_SHARE = 0.4
RACE_SHARE = 0.6
TILE_SHARE_ALIGNED = 0.25
RACE_SHARE_ALIGNED = 0.7
# The share of a probe at zero slack that the hole search (:mod:`.refill`) may take first: it
# answers in a second or thrashes (but for a few tilings, which need 10**5 nodes, 2 to 4 s).
REFILL_SHARE = 0.5
# ... where alignments differ: less, as the tiling search that follows answers more of them.
REFILL_SHARE_ALIGNED = 0.3
# ... and before it, where alignments differ, the share it may take on the blocks without
# them, for a plan above the height to go on from (found in a tenth of a second, or not at all).
RELAXED_SHARE = 0.15
# ... after the tiling search for this share (going on later from where it stopped): packings
# made by straight and pinwheel cuts it rebuilds in a second, where the hole search may thrash.
TILE_FIRST_SHARE = 0.05
# ... where alignments differ, which slow the hole search down (:mod:`.residues`) and where the
# tiling search's merged blocks answer packings of cuts in a second or two.
TILE_FIRST_SHARE_ALIGNED = 0.2
# ... and at most so many seconds a block: with long limits the shares grew past what the
# packings it rebuilds take (aligned perfect packings of 2000 blocks, up to 6 s), and the hole
# search waited for a glance that would not answer (aligned stack packings of 250: 9.7 s to
# the optimum at --time-limit 60, 2.1 s at 10).
TILE_FIRST_SECONDS_PER_BLOCK = 0.004


def _by(order: str | None) -> str:
    """What found a race's answer: an order of the lowest-offset strategy, or CP-SAT's own."""
    return "CP-SAT's own search" if order is None else f"order {order}"


def _over(ceiling_mb: float | None) -> bool:
    """Whether the process's resident memory is past ``ceiling_mb`` (None: no ceiling)."""
    if ceiling_mb is None:
        return False
    now = resident_mb()
    return now is not None and now > ceiling_mb


def probe(blocks: Blocks, ids: np.ndarray, heights: dict[int, int], budget: Budget, *,
          orders: tuple[str | None, ...] = RACE_ORDERS, first_slice: float = 0.25, dfs: bool = True,
          dive: bool = True, tiling: bool = True, growth_mb: float | None = None,
          cancel: threading.Event | None = None,
          near: Callable[[Outcome, str], None] | None = None,
          above: int | None = None, above_ends: bool = False, keep: dict | None = None,
          merge_until: float | None = None) -> Outcome:
    """Do blocks ``ids`` fit with pool ``p`` at most ``heights[p]`` high? Race the orders.

    With ``tiling``, blocks at zero slack (one pool, the load at the height at every moment:
    every packing is a tiling) go first to the tiling search for :data:`TILE_FIRST_SHARE` of
    ``budget`` (:data:`TILE_FIRST_SHARE_ALIGNED` where alignments differ; merging blocks for
    as long as its later share would give it), then to the hole search (:mod:`.refill`) for
    :data:`REFILL_SHARE` (:data:`REFILL_SHARE_ALIGNED` where alignments differ; it keeps
    them, and before that it runs for :data:`RELAXED_SHARE` on the blocks without them, a
    relaxation whose "no" is a proof; its tiling, placed again aligned, is the answer when
    within the heights, else given to ``near`` as an ``unknown`` outcome with that packing, a
    plan above the heights, and what made it, ``"realigned"``: :mod:`.realign`); tight
    blocks (one pool, the load at the height over :data:`cpplan.exact.tiling.TIGHT_FROM` of
    their moments) go to the tiling search
    (:mod:`.tiling`) for :data:`TILE_SHARE` of ``budget``, then to the race for
    :data:`RACE_SHARE` of what is left (:data:`TILE_SHARE_ALIGNED`, :data:`RACE_SHARE_ALIGNED`
    where alignments differ), then to the tiling search again; all the while, with two workers
    or more, CP-SAT on the pairs formulation races them in a thread of its own
    (:class:`_Alongside`), and the first answer ends the others.

    With ``dfs`` (and blocks that all have one and the same candidate pool), the branch-and-bound
    search of :mod:`cpplan.exact.dfs` races too: in its own thread in place of one CP-SAT worker,
    or in deterministic mode first, for a node budget worth ``DFS_SHARE`` of ``budget``. With
    ``above`` (the height of the best packing so far, one pool), the tight branch's core of
    CP-SAT, once its own model is done without an answer (or where it has none), bisects the
    heights between the probe's and ``above`` instead; the lowest packing it finds goes to
    ``near`` (with ``"probe-above"``) when the probe ends; with ``above_ends`` too, the probe
    ends (unknown) once those probes are done (their heights met, :data:`ABOVE_DONE`), for a
    caller that goes on from the lowest packing rather than waiting for the probe's answer.
    ``keep``, a dict the caller keeps across its probes of the same blocks, holds what they
    would otherwise make again: the candidate holes at zero slack (seconds to list on
    thousands of blocks with many equal sums), the holes' model, and the tiling searches
    (by height, each going on from where the last probe left it) with the blocks merged into
    rectangles (once, for every height); ``merge_until`` (``time.perf_counter()``), where
    the caller gives it, is how long that merging may take at least, for all its probes.
    With ``dive`` (wall-clock mode), a short DFS dive runs alone before the race (a few nodes
    per block, at most ``DIVE_SHARE`` of the budget). With ``growth_mb``, a CP-SAT slice
    stops as if out of time once the process is that many MB above where it was when the race
    began (:func:`cpplan.exact.cpsat.run`), no new slice starts past that and the race ends
    (the DFS included), and CP-SAT skips its probing, whose memory a stop does not reach in time.
    ``cancel``, set by a search racing beside this probe (the tight branch's pairs
    formulation), ends the race as an answer would; it does not reach the tiling search, whose
    own canceller is that racer's.
    Spends at most ``budget``.
    """
    mine = budget
    pool = single_pool(blocks, ids)
    apart = pool is not None and aligned_apart(blocks, ids, pool)  # (alignments that differ)
    # (the tiling search's, to go on from where it stopped, in this probe and the caller's next)
    memo: dict = {} if keep is None else keep.setdefault("tiling", {})

    tile_share = TILE_SHARE_ALIGNED if apart else TILE_SHARE
    # (merging blocks into rectangles, once for every call: for as long as the tiling search's
    # later share would give it, not the first glance's; or until the caller's moment, for
    # all its probes)
    merge_until = max(mine.deadline(MERGED_SHARE * tile_share * mine.remaining()),
                      -math.inf if merge_until is None else merge_until)

    def tiling_search(share: float, cancel: threading.Event | None,
                      most: float | None = None) -> Outcome:
        assert pool is not None
        # (``share`` of the probe's time left, at most ``most`` seconds)
        part = mine.share(share) if most is None else \
            mine.within(min(share * mine.remaining(), most))
        return tile(blocks, ids, heights[pool], part,
                    node_budget=part.nodes(TILE_NODES_PER_SECOND), resume=memo,
                    cancel=cancel, merge_until=merge_until)

    # (at zero slack: its height and the candidate holes, listed once for both searches)
    tiled: tuple[int, Holes] | None = None
    height = None if pool is None or not tiling else zero_slack(blocks, ids, heights[pool])
    # (the probes above the height on the other core, for all of a tight probe: a plan to go
    # on from where the searches at the height get nowhere)
    ladder = None if above is None or pool is None or not tiling or above <= heights[pool] \
        else _Ladder(heights[pool], above, ends=above_ends)
    try:
        if height is not None and pool is not None:
            stop = cancel
            if ladder is not None and ladder.ends:
                stop = ladder.done if cancel is None else _AnyOf(cancel, ladder.done)
            with _Alongside(blocks, ids, pool, heights, mine, growth_mb, None, ladder,
                            own=False):
                out, holes = _at_zero_slack(blocks, ids, pool, heights[pool], mine, apart,
                                            tiling_search, stop, near, keep)
            if out is not None:
                return out
            assert holes is not None
            tiled = height, holes
        if mine.remaining() <= 0:  # (a glance and a hole search that took all of it)
            return Outcome("unknown", detail="out of time")
        if ladder is not None and ladder.over:
            return Outcome("unknown", detail="the probes above the height are done")
        if tiling and pool is not None and is_tight(blocks, ids, heights[pool]):
            # No byte may stay unused at (nearly) any moment (perfect packings at their optimum):
            # the tiling search, then the race on part of what is left (it rebuilds tight packings
            # of a hundred aligned blocks, where the tiling search may not), then the tiling search
            # again, going on from where it stopped.
            race_share = RACE_SHARE_ALIGNED if apart else RACE_SHARE
            with _Alongside(blocks, ids, pool, heights, mine, growth_mb, tiled, ladder,
                            keep=keep) as pairs:
                out = tiling_search(tile_share, pairs.answered)
                if out.status not in ("feasible", "infeasible") and not pairs.answered.is_set():
                    out = probe(blocks, ids, heights, mine.share(race_share), orders=orders,
                                first_slice=first_slice, dfs=dfs, dive=dive, tiling=False,
                                growth_mb=growth_mb, cancel=pairs.answered)
                if out.status not in ("feasible", "infeasible") and not pairs.answered.is_set() \
                        and mine.remaining() > 0:
                    out = tiling_search(1.0, pairs.answered)
            return pairs.outcome or out
    finally:
        if ladder is not None and ladder.found is not None and near is not None:
            near(ladder.found, "probe-above")
    dfs_pool = pool if dfs else None
    # (the whole race's, set once; none in deterministic mode, whose runs must repeat)
    memory_ceiling = None if mine.deterministic else ceiling(growth_mb)
    lock = threading.Lock()
    result: list[Outcome] = []
    local = threading.Event()
    running: set[cp_model.CpSolver] = set()
    if dfs_pool is not None and mine.deterministic:
        out = fit(blocks, ids, heights[dfs_pool], mine,
                  node_budget=mine.nodes(DFS_NODES_PER_SECOND, DFS_SHARE))
        if out.status in ("feasible", "infeasible"):
            return out
        dfs_pool = None
    if dfs_pool is not None and dive:
        # A dive first, alone: on graphs of real networks the search rarely backtracks and
        # answers in about as many nodes as blocks, twice as fast as when it shares the
        # machine with CP-SAT's threads. A few nodes per block, and a small share of the
        # budget, are all it gets before the race (the first preorder's first round: WAT, or
        # LWA when alignments differ).
        out = fit(blocks, ids, heights[dfs_pool], mine.share(DIVE_SHARE),
                  node_budget=DIVE_NODES_PER_BLOCK * len(ids))
        if out.status in ("feasible", "infeasible"):
            return out
    tasks: list[tuple[str | None, float]] = []
    slice_ = first_slice
    while slice_ < 3600:
        tasks.extend((o, slice_) for o in orders)
        slice_ *= 2
    tasks.reverse()

    base: PackingModel | None = None
    models: dict[str | None, PackingModel] = {}

    # built on first use, so that a fast answer skips the rest; each order's a copy of one
    # model with its own strategy (:func:`.model.variant`), not a model built again
    def model_of(order: str | None) -> PackingModel:
        nonlocal base
        if order not in models:
            if base is None:
                base = build_model(blocks, ids, height_max=heights, minimise=False,
                                   strategy=None)
            models.setdefault(order, variant(base, blocks, order_by=order))
        return models[order]

    def halt() -> None:  # under the lock: an answer is in (or a stop), end the other racers
        local.set()
        for s in running:
            s.stop_search()

    def worker() -> None:
        while True:
            with lock:
                if local.is_set() or not tasks or mine.stopped:
                    return
                order, seconds = tasks.pop()
            left = mine.remaining()
            if left <= 0.01 or _over(memory_ceiling):
                return  # (past the memory ceiling a new model and solver would only add more)
            pm = model_of(order)
            if local.is_set():
                return
            solver = new_solver(mine, min(seconds, left))
            if memory_ceiling is not None:
                # CP-SAT's probing (in its presolve, before any search, and deaf to a stop)
                # can take hundreds of MB on windows of thousands of blocks: with a ceiling,
                # none (benchmarks/solve_memory.py).
                solver.parameters.cp_model_probing_level = 0
            with lock:
                running.add(solver)
            status = run(mine, solver, pm.model, ceiling_mb=memory_ceiling)
            with lock:
                running.discard(solver)
                if local.is_set():
                    return
                if status in (cp_model.FEASIBLE, cp_model.OPTIMAL):
                    pools, offs = pm.read(solver)
                    result.append(Outcome("feasible", pools, offs, detail=_by(order)))
                elif status == cp_model.INFEASIBLE:
                    result.append(Outcome("infeasible", detail=_by(order)))
                else:
                    continue
                halt()

    def dfs_worker(pool: int) -> None:
        out = fit(blocks, ids, heights[pool], mine, cancel=local)
        with lock:
            if local.is_set():
                return
            if out.status in ("feasible", "infeasible"):
                result.append(out)
                halt()
                return
        worker()  # declined or out of nodes: this thread becomes a CP-SAT worker

    threads = []
    if dfs_pool is not None:
        threads.append(threading.Thread(target=dfs_worker, args=(dfs_pool,), daemon=True))
        threads[0].start()
    n_threads = max(1, min(mine.workers, len(orders)))
    if dfs_pool is not None:
        n_threads = max(1, n_threads - 1)
    more = [threading.Thread(target=worker, daemon=True) for _ in range(n_threads)]
    for t in more:
        t.start()
    threads += more
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(timeout=0.05)
        # (past the memory ceiling the whole race ends: the DFS too, whose memory no solver's
        # watch sees)
        if mine.stopped or (cancel is not None and cancel.is_set()) or _over(memory_ceiling):
            with lock:
                halt()
    return result[0] if result else Outcome("unknown")


def _at_zero_slack(blocks: Blocks, ids: np.ndarray, pool: int, height: int, budget: Budget,
                   apart: bool, tiling_search: Callable[..., Outcome],
                   cancel: threading.Event | None,
                   near: Callable[[Outcome, str], None] | None, keep: dict | None = None
                   ) -> tuple[Outcome | None, Holes | None]:
    """Blocks at zero slack at ``height`` (:func:`probe`): a glance of the tiling search, then
    the holes each event refills, searched in time order (it answers in a second where its
    candidates are complete, or thrashes). The answer, if one came; else the candidate holes
    (cut at :data:`CANDIDATES_MAX`) for the tight branch that follows. The holes, once
    listed in full, are kept in ``keep`` (:func:`probe`)."""
    out = tiling_search(TILE_FIRST_SHARE_ALIGNED if apart else TILE_FIRST_SHARE, cancel,
                        TILE_FIRST_SECONDS_PER_BLOCK * len(ids))
    if out.status in ("feasible", "infeasible"):
        return out, None
    holes = None if keep is None else keep.get("holes")
    if holes is None:
        # (within the probe's time: thousands of equal sums an event take seconds to list,
        # and the events left then get no candidates: such holes are not kept)
        until = budget.deadline()
        holes = holes_of(blocks, ids, PAIRS_ENUMERATED, until=until)
        if keep is not None and time.perf_counter() < until:
            keep["holes"] = holes
    if apart:
        # (a plan above the height first, where it comes fast: the blocks tiled without their
        # alignments, a relaxation, and placed again aligned: :mod:`.realign`)
        out = refill(unaligned(blocks), ids, height, budget.share(RELAXED_SHARE), holes=holes,
                     node_budget=budget.nodes(REFILL_NODES_PER_SECOND, RELAXED_SHARE),
                     cancel=cancel, keep=keep)
        if out.status == "infeasible":
            return out, None
        if out.status == "feasible":
            out = realigned(blocks, ids, pool, out.packing, height)
            if out.status == "feasible":
                return out, None
            if out.offsets is not None and near is not None:
                near(out, "realigned")
    share = REFILL_SHARE_ALIGNED if apart else REFILL_SHARE
    out = refill(blocks, ids, height, budget.share(share), holes=holes,
                 node_budget=budget.nodes(REFILL_NODES_PER_SECOND, share), cancel=cancel,
                 keep=keep)
    if out.status in ("feasible", "infeasible"):
        return out, None
    return None, holes.cut(CANDIDATES_MAX)


class _Alongside:
    """Context: CP-SAT on the ``pairs`` formulation (an order literal per pair of blocks that
    share a moment, :func:`cpplan.exact.model.build_model`) in a thread of its own, one worker,
    for all of ``budget``, beside a tight probe's tiling search and race. ``answered`` is set
    when it answers (``outcome``: a packing, or a proof that none exists); leaving the context
    stops and joins it.

    The two searches fail on different packings: the tiling search builds a skyline block by
    block, while CP-SAT learns clauses over the pairs' orders, and rebuilds interlocking tight
    packings (rectangles grown on a grid, an allocator's reuse of freed bytes) on which the
    skyline thrashes. Where the blocks leave no byte free at any moment (:func:`.events.zero_slack`:
    a perfect packing at its optimum), the formulation is the cliques' with the holes refilled
    at each event (:mod:`.events`) instead, which rebuilds those packings by the hundreds of
    blocks where the pairs' search does not; its "none" is a proof only where no event's
    candidates were cut. It runs only where it has a core of its own (two workers or more, wall
    clock) and the pairs (or, at zero slack, the blocks) are at most :data:`PAIRS_MAX`.

    With a ``ladder`` (:class:`_Ladder`: the probe's height and the best packing's), the core
    does not idle once that model is done without an answer (on thousands of blocks at zero
    slack, a model of cut candidates says "none" in seconds, no proof; it then has only
    :data:`OWN_SHARE` of the time left), where the blocks are too many for it, or where it has
    none (``own=False``: beside the hole search, which runs before the tight branch): it
    bisects the heights between the two with CP-SAT's probes (:meth:`_bisect_above`) and
    keeps the lowest packing found in the ladder (a plan above the heights). Those probes
    rebuild an allocator's reuse of freed bytes a few percent above its optimum in seconds,
    where the searches at the optimum spend the whole probe.
    """

    def __init__(self, blocks: Blocks, ids: np.ndarray, pool: int, heights: dict[int, int],
                 budget: Budget, growth_mb: float | None,
                 tiled: tuple[int, Holes] | None, ladder: _Ladder | None = None, *,
                 own: bool = True, keep: dict | None = None) -> None:
        self.answered = threading.Event()
        self._tiled = tiled  # (at zero slack: its height and the candidate holes)
        self.outcome: Outcome | None = None
        self._blocks, self._ids, self._heights, self._budget = blocks, ids, heights, budget
        self._pool, self._ladder, self._own = pool, ladder, own
        self._keep = {} if keep is None else keep  # (the holes' model, by height)
        self._ceiling = ceiling(growth_mb)
        self._solver: cp_model.CpSolver | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._thread: threading.Thread | None = None

    def __enter__(self) -> _Alongside:
        b, budget, tiled = self._blocks, self._budget, self._tiled
        if budget.workers < 2 or budget.deterministic:
            return self
        own = self._own and (len(self._ids) if tiled is not None
                             else pair_count(b.start[self._ids], b.end[self._ids])) <= PAIRS_MAX
        if own and tiled is not None and ("holes model", tiled[0]) not in self._keep:
            # (built here, on the probe's time: see below)
            own = HOLES_MODEL_SECONDS_PER_MEMBER * tiled[1].members() \
                <= MODEL_SHARE * budget.remaining()
        if own or self._ladder is not None:
            # The holes' model is built here, before the tiling search starts: built in the
            # thread, it waits for the interpreter's lock that the search holds (3.7 s instead
            # of 0.4 s for a grid-grown tiling of 250 blocks).
            model = None if tiled is None or not own else self._holes_model(*tiled)
            self._thread = threading.Thread(target=self._run, args=(own, model), daemon=True)
            self._thread.start()
        return self

    def _holes_model(self, height: int, holes: Holes) -> tuple[PackingModel, str, bool]:
        """The cliques model with the holes refilled at each event, its name, and whether its
        "none" is a proof. Made once a height (:func:`probe`'s ``keep``)."""
        key = ("holes model", height)
        if key not in self._keep:
            pm = build_model(self._blocks, self._ids, height_max=self._heights, minimise=False,
                             strategy=None)
            add_holes(pm, holes, height)
            self._keep[key] = pm, "holes refilled at each event", holes.complete
        return self._keep[key]

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._closed = True
        # A model being built is left to finish and see the context closed (never waited
        # for); a solve is stopped until it ends (a stop asked for just before the solve
        # began is lost, hence the loop).
        while self._thread is not None and self._thread.is_alive():
            with self._lock:
                solver = self._solver
            if solver is None:
                break
            solver.stop_search()
            self._thread.join(timeout=0.02)

    def _solve(self, model: cp_model.CpModel, seconds: float
               ) -> tuple[cp_model.CpSolverStatus, cp_model.CpSolver] | None:
        """``model`` solved on this core for at most ``seconds``: the status and the solver
        (None: the context closed or the time ran out before it began)."""
        budget = self._budget
        with self._lock:
            if self._closed or budget.remaining() <= 0.01:
                return None
            self._solver = solver = new_solver(budget, min(seconds, budget.remaining()))
        try:
            return run(budget, solver, model, ceiling_mb=self._ceiling), solver
        finally:
            with self._lock:
                self._solver = None

    def _run(self, own: bool, model: tuple[PackingModel, str, bool] | None) -> None:
        if own:
            if model is None:
                model = (build_model(self._blocks, self._ids, height_max=self._heights,
                                     minimise=False, overlap="pairs", strategy=None),
                         "pairs", True)
            pm, name, proof = model
            left = self._budget.remaining()
            solved = self._solve(pm.model, left if self._ladder is None else OWN_SHARE * left)
            if solved is None:
                return
            status, solver = solved
            if status in (cp_model.FEASIBLE, cp_model.OPTIMAL):
                pools, offs = pm.read(solver)
                self.outcome = Outcome("feasible", pools, offs, detail=name)
                self.answered.set()
                return
            if status == cp_model.INFEASIBLE and proof:
                self.outcome = Outcome("infeasible", detail=name)
                self.answered.set()
                return
        if self._ladder is not None:
            self._bisect_above(self._ladder)
            if self._ladder.over:
                self.answered.set()  # (with no outcome: the probe ends, unknown)

    def _bisect_above(self, ladder: _Ladder) -> None:
        """CP-SAT's probes between the ladder's heights: at each, the strategies of
        :data:`RACE_ORDERS` in turn (the one that found the last packing first: a strategy
        that suits the blocks at one height suits them at the next), one slice each, within
        :data:`ABOVE_SHARE` of the time left; a packing lowers the best height, none raises
        the lowest. One round only: above the height, a strategy finds its packing in a
        fraction of its first slice or not in many times it, and a height a little higher
        is the better use of the time. Sets ``ladder.done`` when the heights have met."""
        b, ids, budget, pool = self._blocks, self._ids, self._budget, self._pool
        size = b.size[ids]
        first = max(FIRST_SLICE, SLICE_PER_BLOCK * len(ids))
        base: PackingModel | None = None
        while budget.remaining() >= ABOVE_MIN:
            target = (ladder.low + ladder.high) // 2
            if target <= ladder.low or ladder.high - target < ABOVE_DONE * ladder.high:
                ladder.done.set()
                return
            mine = budget.share(ABOVE_SHARE)  # (this height's)
            if base is None:  # (built once, at the best height: each probe is a copy of it)
                base = build_model(b, ids, height_max={pool: ladder.high}, minimise=False,
                                   strategy=None)
            found = None
            for order in ladder.orders:
                left = mine.remaining()
                if left <= 0.01:
                    break
                pm = variant(base, b, order_by=order, height_max={pool: target})
                solved = self._solve(pm.model, min(left, first))
                if solved is None:
                    return
                status, solver = solved
                if status in (cp_model.FEASIBLE, cp_model.OPTIMAL):
                    found = Outcome("unknown", *pm.read(solver), detail=_by(order))
                    break
                if status == cp_model.INFEASIBLE:
                    break
            if found is not None and found.offsets is not None:
                ladder.found = found
                ladder.high = int((found.offsets + size).max())
                ladder.orders = (order, *(o for o in ladder.orders if o != order))
            else:  # (none in its time, or none at all: either way, look higher)
                ladder.low = target


@dataclass
class _Ladder:
    """The probes above a tight probe's height, on the alongside core
    (:meth:`_Alongside._bisect_above`): the highest height where none found a packing
    (``low``, at first the probe's own), the best height (``high``), the lowest packing found
    (``found``), and the order its strategies are tried in; ``done`` is set once no height is
    left between the two to probe, and with ``ends`` that ends the probe. Mutable: the two
    contexts of one probe (beside the hole search, then the tight branch) go on from where the
    other stopped, one after the other."""

    low: int
    high: int
    found: Outcome | None = None
    orders: tuple[str | None, ...] = RACE_ORDERS
    ends: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def over(self) -> bool:
        """Whether the probe ends here: the ladder ends it, and is done."""
        return self.ends and self.done.is_set()


class _AnyOf(threading.Event):
    """A canceller set when it is, or when any of ``events`` is (the searches poll
    ``is_set``)."""

    def __init__(self, *events: threading.Event) -> None:
        super().__init__()
        self._events = events

    def is_set(self) -> bool:
        return super().is_set() or any(e.is_set() for e in self._events)


class _Progress(cp_model.CpSolverSolutionCallback):
    def __init__(self, report: Callable[[float, float], None] | None) -> None:
        super().__init__()
        self.report = report

    def on_solution_callback(self) -> None:
        if self.report is not None:
            self.report(self.objective_value, self.best_objective_bound)


def minimise(blocks: Blocks, ids: np.ndarray, budget: Budget, *, height_max: dict[int, int],
             height_min: dict[int, int], hint: tuple[np.ndarray, np.ndarray] | None,
             report: Callable[[float, float], None] | None = None) -> Outcome:
    """Minimise the objective of blocks ``ids`` (:func:`cpplan.exact.model.objective_of`, in
    bytes) from ``hint``, within ``budget``.

    The outcome's bound is CP-SAT's proven bound on that objective; ``optimal`` means CP-SAT
    proved it, for this model.
    """
    pm = build_model(blocks, ids, height_max=height_max, height_min=height_min, minimise=True,
                     strategy=None, hint=hint)
    seconds = budget.remaining()
    if seconds <= 0.01:
        return Outcome("unknown")
    solver = new_solver(budget, seconds, budget.workers)
    box: list[cp_model.CpSolverStatus] = []

    def solve() -> None:
        box.append(run(budget, solver, pm.model, _Progress(report)))

    t = threading.Thread(target=solve, daemon=True)
    t.start()
    while t.is_alive():
        t.join(timeout=0.05)
    status = box[0] if box else cp_model.UNKNOWN
    bound = None
    if status not in (cp_model.INFEASIBLE, cp_model.MODEL_INVALID):
        # CP-SAT's bound on an integer objective, as a double: exact below 2**53; beyond, one
        # unit in the last place lower, so that rounding never claims more than was proven.
        x = solver.best_objective_bound
        bound = math.ceil(x - 1e-6 - math.ulp(x))
    if status in (cp_model.FEASIBLE, cp_model.OPTIMAL):
        pools, offs = pm.read(solver)
        return Outcome("optimal" if status == cp_model.OPTIMAL else "feasible", pools, offs,
                       bound)
    if status == cp_model.INFEASIBLE:
        return Outcome("infeasible")
    if status == cp_model.MODEL_INVALID:  # pragma: no cover - a bug in build_model
        raise RuntimeError(f"CP-SAT rejected the model: {pm.model.validate()}")
    return Outcome("unknown", bound=bound)
