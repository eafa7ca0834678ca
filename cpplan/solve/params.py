"""The solver's tuning constants, in one place: :class:`SolverParams`.

Each field says in one line why it has its value. The figures behind them are printed by the
scripts in ``benchmarks/`` (``versus.py``, ``time_limits.py``, ``exact.py``), not kept here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SolverParams", "DEFAULT_PARAMS"]


@dataclass(frozen=True)
class SolverParams:
    """Thresholds (in blocks) and shares of the time limit (fractions) that
    :func:`cpplan.solve.solve` runs with. Pass another to ``solve(..., params=...)`` to
    experiment: ``SolverParams(lns_above=1000)``, or ``dataclasses.replace(DEFAULT_PARAMS,
    ...)``. Each field's comment in ``cpplan/solve/params.py`` says why it has its value."""

    # -- sizes ----------------------------------------------------------------------------------
    #: A whole-problem model (several pools) beyond this takes longer to build than users give.
    max_exact_blocks: int = 6000
    #: Components beyond this are improved by peak-first packing and LNS, not probes and one
    #: model (models of tens of thousands of rectangles do not build in time).
    lns_above: int = 3000

    # -- the first plan and the heuristics --------------------------------------------------------
    #: The heuristics' quick share when probes follow: enough for the greedy planners and a
    #: little local search (the probes then start with a DFS dive, which on real networks
    #: reaches the max-load at once).
    heuristics: float = 0.003
    heuristics_min: float = 0.2  # seconds
    heuristics_max: float = 1.0  # seconds
    #: With a component beyond lns_above the heuristics' plan is what LNS improves on.
    heuristics_large: float = 0.1
    heuristics_large_max: float = 5.0  # seconds
    #: Beyond the portfolio's REPLICAS_UP_TO blocks it runs only greedy planners: let them end.
    heuristics_huge: float = 0.8
    #: Several pools beyond max_exact_blocks: the heuristics choose the pools, then pool by pool.
    heuristics_pools: float = 0.5

    # -- components of one pool -------------------------------------------------------------------
    #: Tight components beyond lns_above: the tiling search packs them in a second or not at all.
    large_tile: float = 0.25
    #: Of a large tight component's time left, what each of its searches has before the next
    #: (tiling and hole search, without and with alignments): each answers in a second or two
    #: or thrashes.
    tight_turn: float = 0.5
    #: ... and at zero slack, the tiling search's first glance, before the hole search: it
    #: rebuilds packings made by cuts in a second, where the hole search takes seconds to find
    #: that it cannot (its trees too deep).
    tight_glance: float = 0.1
    #: Of a large component's time, what peak-first packing may take before LNS.
    peak: float = 0.8
    #: Tight components of this many blocks or more have a first look at the bound before the
    #: gap-fill search, probes above the height and LNS after: the probes' searches get lost
    #: among hundreds of blocks (below it, the 250 blocks of the perfect packings are rebuilt
    #: by the probes alone).
    first_look_from: int = 400
    #: A component with free bytes that take few blocks (air_blocks): what the first probe
    #: has, a glance (it answers at once where it answers at all, as on most of the
    #: challenging set), before...
    air_glance: float = 0.05
    #: ... the hole search with the free bytes as blocks (a nearly tight component: a perfect
    #: packing with a few buffers taken away is rebuilt in a second or two, or not at all).
    air: float = 0.4
    #: ... each way of cutting them at first, then twice as much in turn (most answer at once).
    air_slice: float = 0.05
    #: ... where they take at most this many blocks per block (more, and they are no tiling's
    #: small part: random schedules, real networks).
    air_blocks: float = 0.1
    #: Of a component's time after a first probe that does not answer, what the gap-fill search
    #: has (it finds most within seconds).
    gap_fill: float = 0.25
    #: A tight component of first_look_from blocks or more: its first look at the lower bound,
    #: before the gap fill (the tiling search rebuilds the packings made by cuts in it, and
    #: the hole search many).
    first_look: float = 0.15
    #: Of a component's time after a first probe that does not answer, where it is not tight,
    #: what the order local search has: on random schedules of 2000 buffers it goes lower in
    #: seconds than the bisection's probes in the whole limit.
    local_search: float = 0.8
    #: ... where it is tight, after the gap-fill search (which packs runs of neighbours freed
    #: together; on buffers of every scale, where it finds little, the order search goes lowest).
    local_search_tight: float = 0.4
    #: ... on components of this many blocks or more: below it the bisection's probes do better
    #: (MiniMalloc's challenging set, up to 455 blocks, lost up to 28 % at 1 s with it).
    local_search_from: int = 1000
    #: The first probe (at the lower bound) of a tight component: the tiling search there is
    #: what rebuilds perfect packings; later probes only shave a greedy plan's excess.
    first_probe_tight: float = 0.75
    #: ... of a tight component of first_look_from blocks or more, which LNS then improves: the
    #: other core's probes above the height reach their lowest in about half of what is left.
    first_probe_before_lns: float = 0.5
    #: A component of first_look_from blocks or more whose free bytes take few blocks
    #: (air_blocks) but that is not tight: what LNS from the best packing has at the end, after
    #: the bisection's probes (on a perfect packing with buffers taken away LNS finds percents
    #: where the probes find nothing; random schedules, which the probes bring within tenths
    #: of a percent, have no such share).
    lns_tail: float = 0.3
    #: The first probe of other components (a no raises the bound; a yes ends the bisection).
    first_probe: float = 0.4
    #: Each probe of the bisection that follows.
    bisect_probe: float = 0.34
    #: Below this many seconds a probe is not started.
    min_probe: float = 0.05
    #: Below this many seconds CP-SAT's minimisation or an LNS pass is not started.
    min_minimise: float = 0.5

    # -- several pools ---------------------------------------------------------------------------
    #: The tier relaxation (each moment's load cut anywhere): its bound is often within a few
    #: percent of the optimum, and its choice of pools the best warm start the model gets.
    tier_bound: float = 0.3
    #: Where packing the relaxation's choice lost traffic to fragmentation: the exact fit of
    #: each bounded pool's chosen blocks (a perfect packing there needs the tiling search).
    tier_fit: float = 0.5

    # -- finishing --------------------------------------------------------------------------------
    #: Where heights cost nothing (memory tiers): the time kept to pack the arenas again.
    compact: float = 0.05
    #: The time an irreducible conflict may take past an infeasible verdict's limit, at most.
    explain_extra: float = 0.5


DEFAULT_PARAMS = SolverParams()
