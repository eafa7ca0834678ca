"""Plans, the plan checker, and plan metrics.

A :class:`Plan` gives every buffer a pool and a byte offset, and records how it was made:
planner, seconds, the lower bound proven for it, a status and the gap. :func:`check` trusts
nobody: it recomputes everything from the problem and the placements and lists every violation.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field, replace
from numbers import Integral
from operator import itemgetter
from typing import Any, NamedTuple, cast

import numpy as np

from .errors import PlanError
from .problem import MAX_VALUE, Problem
from .sweep import disjoint, find_overlaps, overlaps_of

__all__ = ["Placement", "Plan", "Conflict", "Violation", "check", "ensure_valid", "STATUSES",
           "objective_of", "finish_seconds_per_buffer"]

STATUSES = ("optimal", "feasible", "infeasible", "unknown")
"""What a plan may say of itself: ``optimal`` (its objective reaches a proven lower bound),
``feasible``, ``infeasible`` (proven to have no plan) or ``unknown`` (neither a plan nor a
proof)."""


class Placement(NamedTuple):
    """Where a plan puts one buffer: the ``pool``'s name and the byte ``offset`` in it."""

    pool: str
    offset: int


@dataclass(frozen=True)
class Conflict:
    """Buffers that cannot be placed together (root ids, in problem order): why a problem is
    infeasible (see :mod:`cpplan.exact.conflict`).

    ``irreducible``: removing any one of them was shown to let the rest fit. ``how`` is
    ``max-load`` (the load at one moment proves it) or ``exact`` (decision probes).

    Args:
        buffers: The root ids of the buffers that cannot fit together.
        irreducible: Whether removing any one of them was shown to let the rest fit.
        how: What proved it: ``max-load`` or ``exact``.
    """

    buffers: tuple[str, ...]
    irreducible: bool
    how: str

    def describe(self, show: int = 8) -> str:
        """``these 3 buffers cannot fit together (irreducible): a, b, c``, at most ``show`` ids
        and then ``+N more``; or ``this buffer cannot fit on its own: a``."""
        names = ", ".join(self.buffers[:show])
        more = f" +{len(self.buffers) - show} more" if len(self.buffers) > show else ""
        if len(self.buffers) == 1:
            return f"this buffer cannot fit on its own: {names}"
        what = "irreducible" if self.irreducible else "not shown irreducible"
        return f"these {len(self.buffers)} buffers cannot fit together ({what}): {names}{more}"

    def __str__(self) -> str:
        return self.describe()


@dataclass(frozen=True)
class Plan:
    """Pool and offset for every buffer, heights per pool, and the record of how it was made.

    ``objective`` is ``sum(cost[p] * heights[p]) + sum(traffic[b] * traffic_cost[pool of b])``;
    with one pool of cost 1 and no traffic cost it is the height. Where buffers move bytes
    (:attr:`cpplan.Buffer.traffic`), ``traffic`` holds the bytes moved per pool,
    ``traffic_cost`` what they cost per pool (the objective's traffic term, pool by pool) and
    ``fast_share`` the share of the bytes that the fastest pools (lowest ``traffic_cost``)
    serve, when the pools' traffic costs differ.
    ``lower_bound`` bounds the objective from below (``None`` when nothing was proven);
    ``gap = (objective - lower_bound) / objective``. ``status`` is ``optimal`` only when the
    objective equals a proven lower bound. An ``infeasible`` plan has no placements and says why
    in ``explanation``, and in ``conflict`` (when found) the buffers that cannot fit together.

    Plans are made by planners and by :meth:`Plan.build`, which computes the heights and the
    objective from the placements; nothing checks a plan when it is built (:func:`check` does).

    Args:
        placements: Buffer id -> its :class:`Placement` (pool and offset). Empty for an
            ``infeasible`` plan.
        heights: Pool name -> the height the plan needs there (max of offset + size).
        planner: The name of the planner that made it.
        seconds: How long it took.
        lower_bound: A proven lower bound on the objective, or ``None``.
        status: ``optimal``, ``feasible``, ``infeasible`` or ``unknown``.
        objective: ``sum(cost * height)`` over the pools plus the traffic's cost.
        explanation: Why, for an ``infeasible`` or ``unknown`` plan.
        stats: The planner's own figures (free-form).
        conflict: For an ``infeasible`` plan, the buffers that cannot fit together, if found.
        traffic: Pool name -> bytes moved there per run (where buffers move bytes).
        traffic_cost: Pool name -> what those bytes cost.
        fast_share: The share of the bytes moved that the fastest pools serve, or ``None``.
    """

    placements: dict[str, Placement]
    heights: dict[str, int]
    planner: str = ""
    seconds: float = 0.0
    lower_bound: int | None = None
    status: str = "feasible"
    objective: int = 0
    explanation: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    conflict: Conflict | None = None
    traffic: dict[str, int] = field(default_factory=dict)
    traffic_cost: dict[str, int] = field(default_factory=dict)
    fast_share: float | None = None

    @property
    def gap(self) -> float | None:
        """``(objective - lower_bound) / objective`` (0 for an objective of 0); ``None`` with no
        bound or for an ``infeasible`` plan."""
        if self.lower_bound is None or self.status == "infeasible":
            return None
        if self.objective == 0:
            return 0.0
        return max(0.0, (self.objective - self.lower_bound) / self.objective)

    @property
    def height(self) -> int:
        """Total height over all pools (the arena size when there is one pool)."""
        return sum(self.heights.values())

    def offset(self, buffer_id: str) -> int:
        """The byte offset of buffer ``buffer_id`` (``KeyError`` if it is not placed)."""
        return self.placements[buffer_id].offset

    def pool(self, buffer_id: str) -> str:
        """The pool of buffer ``buffer_id`` (``KeyError`` if it is not placed)."""
        return self.placements[buffer_id].pool

    @classmethod
    def build(
        cls,
        problem: Problem,
        placements: dict[str, Placement] | dict[str, tuple[str, int]],
        *,
        planner: str = "",
        seconds: float = 0.0,
        lower_bound: int | None = None,
        status: str | None = None,
        explanation: str = "",
        stats: dict[str, Any] | None = None,
    ) -> Plan:
        """A plan with heights and objective computed from the placements.

        With ``status=None`` the status is ``optimal`` when the objective reaches
        ``lower_bound`` (reaching a proven bound is the proof) and ``feasible`` otherwise.
        It does not check the plan: :func:`ensure_valid` does.

        Args:
            problem: The problem the placements are for.
            placements: Buffer id -> :class:`Placement` or ``(pool, offset)``.
            planner: The planner's name, for the record.
            seconds: How long it took.
            lower_bound: A proven lower bound on the objective, or ``None``.
            status: The status; ``None`` to derive it from ``lower_bound``.
            explanation: Why, where the status needs one.
            stats: The planner's own figures.

        Returns:
            The plan, with heights per pool and the objective (traffic included).

        Raises:
            ValueError: ``status`` is not one of :data:`STATUSES`.
        """
        # numpy integers from planners become ints (JSON can write them; check accepts them);
        # anything else is kept for check to report.
        # A Placement with an int offset is kept as it is (no second tuple per buffer: 62185
        # of them for Y_1).
        pl = {k: v if type(v) is Placement and type(v[1]) is int else _placement(*v)
              for k, v in placements.items()}
        heights = {p.name: 0 for p in problem.pools}
        for b in problem.buffers:
            got = pl.get(b.id)
            if got is None or got.pool not in heights:
                continue
            top = got.offset + b.size
            if top > heights[got.pool]:
                heights[got.pool] = top
        traffic, costs, share = _traffic(problem, pl)
        objective = sum(p.cost * heights[p.name] for p in problem.pools) + sum(costs.values())
        if status is None:
            reached = lower_bound is not None and objective <= lower_bound
            status = "optimal" if reached else "feasible"
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}")
        return cls(pl, heights, planner, seconds, lower_bound, status, objective, explanation,
                   dict(stats or {}), None, traffic, costs, share)

    @classmethod
    def infeasible(cls, problem: Problem, explanation: str, *, planner: str = "",
                   seconds: float = 0.0, conflict: Conflict | None = None) -> Plan:
        """The verdict that ``problem`` has no plan: no placements, status ``infeasible``.

        Args:
            problem: The problem.
            explanation: What proves it (a pool's capacity below the max-load, a refuted
                probe).
            planner: Who proved it.
            seconds: How long it took.
            conflict: The buffers that cannot fit together, if known.

        Returns:
            The plan, with no placements, heights 0 and status ``infeasible``.
        """
        return cls({}, {p.name: 0 for p in problem.pools}, planner, seconds, None, "infeasible",
                   0, explanation, conflict=conflict)

    def with_record(self, **changes: Any) -> Plan:
        """A copy with some fields of the record replaced (``status=``, ``seconds=``,
        ``stats=``...); the placements are not checked again."""
        return replace(self, **changes)

    def summary(self) -> str:
        """One line: status, height, lower bound, gap, seconds; the traffic's cost and the share
        served fast where the traffic costs something or the pools' traffic costs differ.

        Returns:
            One line of text, in the form
            ``STATUS: height H, lower bound L, gap G%, S s [planner]`` (``objective`` and the
            height per pool with several pools); for an ``infeasible`` plan, its explanation
            and conflict.
        """
        if self.status == "infeasible":
            why = "" if self.conflict is None else f"; {self.conflict}"
            return f"infeasible: {self.explanation}{why}"
        if not self.placements and self.status == "unknown":  # no plan, and no proof
            return (f"unknown: {self.explanation or 'no plan found'}, {self.seconds:.2f}s "
                    f"[{self.planner}]")
        lb = "?" if self.lower_bound is None else str(self.lower_bound)
        gap = "?" if self.gap is None else f"{100 * self.gap:.3f}%"
        what = "height" if len(self.heights) == 1 else "objective"
        pools = ""
        if len(self.heights) > 1:
            pools = " (" + ", ".join(f"{k}={v}" for k, v in self.heights.items()) + ")"
        note = " (interrupted: the best plan so far)" if self.stats.get("interrupted") else ""
        traffic = ""
        cost = sum(self.traffic_cost.values())
        # (traffic that costs nothing and is served alike everywhere is not news: the front
        # ends give every buffer its traffic, one-pool problems included)
        if self.traffic and (cost or self.fast_share is not None):
            share = "" if self.fast_share is None else f", {100 * self.fast_share:.1f}% served fast"
            traffic = f"; traffic cost {cost}{share}"
        return (f"{self.status}: {what} {self.objective}{pools}{traffic}, lower bound {lb}, "
                f"gap {gap}, {self.seconds:.2f}s [{self.planner}]{note}")


@dataclass(frozen=True)
class Violation:
    """One way a plan breaks its problem. ``buffers`` names the buffers involved.

    Args:
        kind: ``missing``, ``unknown``, ``pool``, ``alignment``, ``capacity``, ``fixed``,
            ``alias``, ``overlap``, ``height`` or ``objective``.
        message: What is wrong, naming the buffers, pools and bytes.
        buffers: The ids of the buffers involved.
    """

    kind: str  # missing, unknown, pool, alignment, capacity, fixed, alias, overlap, height,
    # objective
    message: str
    buffers: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.message


def check(problem: Problem, plan: Plan, *, max_overlaps: int | None = None) -> list[Violation]:
    """Every violation of ``plan`` against ``problem``; an empty list means the plan is valid.

    ``max_overlaps`` caps the overlapping pairs listed per pool (a plan that puts everything at
    offset 0 has millions); the plan is invalid all the same.

    Checks: every buffer placed exactly once and nothing unknown; pools are candidates (an alias
    shares its root's pool); offsets aligned to the buffer and the pool; fixed offsets kept;
    aliases at their root's offset plus displacement; pools within capacity; recorded heights
    right; and no two buffers from different alias blocks share a byte at a shared moment (a
    buffer in one of its gaps occupies only the gap's window, if any). The
    overlap test is one sweep over time (:mod:`cpplan.sweep`), not a loop over pairs.

    Args:
        problem: The problem the plan claims to solve.
        plan: The plan. An ``infeasible`` plan is valid when it places nothing (the checker
            does not judge the verdict, only the placements).
        max_overlaps: The most overlapping pairs listed per pool; ``None`` for all.

    Returns:
        Every :class:`Violation` found, each with its kind, a message and the buffers
        involved; ``[]`` when the plan is valid.
    """
    out: list[Violation] = []
    if plan.status == "infeasible":
        return out if not plan.placements else [
            Violation("unknown", "an infeasible plan places no buffers")]
    if _passes(problem, plan):
        return out
    pools = {p.name: p for p in problem.pools}
    placed = plan.placements
    for bid in placed:
        if bid not in problem.index:
            out.append(Violation("unknown", f"buffer {bid!r} is not in the problem", (bid,)))
    heights = dict.fromkeys(pools, 0)
    for b in problem.buffers:
        got = placed.get(b.id)
        if got is None:
            out.append(Violation("missing", f"buffer {b.id!r} has no placement", (b.id,)))
            continue
        pool, off = got
        if pool not in pools:
            out.append(Violation("pool", f"buffer {b.id!r} is in unknown pool {pool!r}", (b.id,)))
            continue
        if b.pools and pool not in b.pools:
            out.append(Violation("pool", f"buffer {b.id!r} is in pool {pool!r}, not one of its "
                                 f"candidates {list(b.pools)}", (b.id,)))
        if not _is_int(off) or off < 0:
            out.append(Violation("alignment", f"buffer {b.id!r} has offset {off!r}, not a "
                                 "non-negative integer", (b.id,)))
            continue
        if off >= MAX_VALUE:
            out.append(Violation("capacity", f"buffer {b.id!r} has offset {off}, beyond what "
                                 "any arena holds (cpplan needs offsets < 2**62)", (b.id,)))
            continue
        # The pool's base alignment binds allocations (block roots); an aliased buffer is a view
        # at its root's offset plus a displacement and only needs its own alignment.
        pa = 1 if b.id in problem.root_of else pools[pool].alignment
        align = math.lcm(b.alignment, pa)
        if off % align:
            out.append(Violation("alignment", f"buffer {b.id!r} at offset {off} is not a multiple "
                                 f"of its alignment {align} (off by {off % align})", (b.id,)))
        if b.offset is not None and off != b.offset:
            out.append(Violation("fixed", f"buffer {b.id!r} is fixed at {b.offset} but placed at "
                                 f"{off}", (b.id,)))
        heights[pool] = max(heights[pool], off + b.size)
    for bid, (root, disp) in problem.root_of.items():
        g, r = placed.get(bid), placed.get(root)
        if g is None or r is None:
            continue
        if g.pool != r.pool or g.offset != r.offset + disp:
            out.append(Violation(
                "alias", f"buffer {bid!r} must sit in root {root!r} at {r.pool}:{r.offset + disp}"
                f" (displacement {disp}), but is at {g.pool}:{g.offset}", (bid, root)))
    for name, h in heights.items():
        cap = pools[name].capacity
        if cap is not None and h > cap:
            top = max((b for b in problem.buffers
                       if b.id in placed and placed[b.id].pool == name),
                      key=lambda b: placed[b.id].offset + b.size)
            out.append(Violation("capacity", f"pool {name!r} needs {h} bytes, over its capacity "
                                 f"{cap} (buffer {top.id!r} ends at {h})", (top.id,)))
        if plan.heights.get(name, 0) != h:
            out.append(Violation("height", f"pool {name!r} height is {h}, the plan says "
                                 f"{plan.heights.get(name, 0)}"))
    objective = objective_of(problem, heights, placed)
    wrong_height = any(plan.heights.get(name, 0) != h for name, h in heights.items())
    if plan.objective != objective and not wrong_height:  # (a wrong height says it already)
        out.append(Violation("objective", f"the objective is {objective}, the plan says "
                             f"{plan.objective}"))
    out.extend(_overlaps(problem, plan, max_overlaps))
    return out


#: What building and checking a plan costs per buffer where the check runs on arrays (no gaps,
#: no aliases), with a margin (benchmarks/read_speed.py prints what it costs).
FINISH_SECONDS_PER_BUFFER = 4e-6
#: The same where buffers have gaps or aliases: the check's loops, or the sweep with groups.
FINISH_SECONDS_PER_BUFFER_LOOPS = 15e-6


def finish_seconds_per_buffer(problem: Problem) -> float:
    """What building and checking a plan of ``problem`` costs per buffer: the time a planner
    keeps out of its search (:func:`cpplan.deadline.finishing`) so that its limit holds."""
    if problem.root_of or problem.columns.gaps:
        return FINISH_SECONDS_PER_BUFFER_LOOPS
    return FINISH_SECONDS_PER_BUFFER


def _passes(problem: Problem, plan: Plan) -> bool:
    """True when :func:`check` finds nothing, told on arrays: every test of its loops, for the
    common plan (every buffer placed once, as a :class:`Placement` with an ``int`` offset, no
    gaps). False when a test fails and also when it cannot tell: then the loops run and name
    each violation, so a broken plan is reported exactly as before."""
    cols = problem.columns
    placed = plan.placements
    n = len(cols.ids)
    if n == 0 or cols.gaps or len(placed) != n:
        return False
    got = [placed.get(bid) for bid in cols.ids]  # same count, all found: the same keys
    if set(map(type, got)) != {Placement}:
        return False
    placements = cast(list[Placement], got)  # (every one a Placement: tested above)
    pools = tuple(map(itemgetter(0), placements))
    offs = tuple(map(itemgetter(1), placements))
    if set(map(type, offs)) != {int}:
        return False
    try:
        off = np.array(offs, np.int64)
        pidx = _pool_indexes(problem, pools)
    except (OverflowError, KeyError, TypeError):
        return False
    if pidx is None or int(off.min()) < 0 or int(off.max()) >= MAX_VALUE:
        return False
    if any(pools[i] not in names for i, names in cols.candidates):
        return False
    if (cols.offset >= 0).any() and (off != cols.offset)[cols.offset >= 0].any():
        return False
    if not _aligned(problem, off, pidx) or not _aliases_kept(problem, pools, offs):
        return False
    top = off + cols.size
    heights = np.zeros(len(problem.pools), np.int64)
    np.maximum.at(heights, pidx, top)
    for k, pool in enumerate(problem.pools):
        h = int(heights[k])
        if (pool.capacity is not None and h > pool.capacity) or plan.heights.get(pool.name, 0) != h:
            return False
    if plan.objective != objective_of(problem, plan.heights, placed):
        return False
    group = np.arange(n, dtype=np.int64)  # an alias block is one group: its root's index
    index = problem.index
    for bid, (root, _) in problem.root_of.items():
        group[index[bid]] = index[root]
    for k in range(len(problem.pools)):
        m = np.nonzero((pidx == k) & (cols.size > 0))[0]
        if problem.root_of:  # (members of one block may overlap: the sweep with groups)
            if overlaps_of(cols.start[m], cols.end[m], off[m], top[m], group[m], limit=1):
                return False
        elif not disjoint(cols.start[m], cols.end[m], off[m], top[m]):
            return False
    return True


def _pool_indexes(problem: Problem, pools: tuple[str, ...]) -> np.ndarray | None:
    """The index of each buffer's pool; None when one is not a pool of the problem."""
    if len(problem.pools) == 1:
        name = problem.pools[0].name
        return np.zeros(len(pools), np.int64) if pools.count(name) == len(pools) else None
    index = problem.pool_index
    return np.array([index[p] for p in pools], np.int64)  # KeyError: not a pool


def _aligned(problem: Problem, off: np.ndarray, pidx: np.ndarray) -> bool:
    """Every offset a multiple of its buffer's alignment and, for block roots, of its pool's
    base alignment (as the loop of :func:`check` has it); False also where int64 could not
    hold the lcm."""
    align = problem.columns.alignment
    pool_align = np.array([p.alignment for p in problem.pools], np.int64)
    if (pool_align > 1).any():
        if int(align.max()) * int(pool_align.max()) >= MAX_VALUE:
            return False
        base = pool_align[pidx]
        index = problem.index
        for bid in problem.root_of:  # aliased buffers are views: their own alignment only
            base[index[bid]] = 1
        align = np.lcm(align, base)
    return not (off % align).any()


def _aliases_kept(problem: Problem, pools: tuple[str, ...], offs: tuple[int, ...]) -> bool:
    """Every aliased buffer in its root's pool at the root's offset plus its displacement."""
    index = problem.index
    for bid, (root, disp) in problem.root_of.items():
        i, r = index[bid], index[root]
        if pools[i] != pools[r] or offs[i] != offs[r] + disp:
            return False
    return True


def _overlaps(problem: Problem, plan: Plan, limit: int | None) -> list[Violation]:
    root_of = problem.root_of
    index = problem.index
    by_pool: dict[str, list[int]] = {}
    for i, b in enumerate(problem.buffers):
        got = plan.placements.get(b.id)
        if got is not None and b.size > 0 and _is_int(got.offset) and got.offset < MAX_VALUE:
            by_pool.setdefault(got.pool, []).append(i)
    out: list[Violation] = []
    for pool, members in by_pool.items():
        rects = []
        owner = members  # rect -> buffer index (one rect per buffer unless it has gaps)
        if any(problem.buffers[i].gaps for i in members):
            owner = []
        for i in members:
            b = problem.buffers[i]
            off = plan.placements[b.id].offset
            group = index[root_of[b.id][0]] if b.id in root_of else i
            if not b.gaps:
                rects.append((b.start, b.end, off, off + b.size, group))
                if owner is not members:
                    owner.append(i)
                continue
            for s, e, lo, hi in b.pieces():  # during a gap only the window is occupied
                rects.append((s, e, off + lo, off + hi, group))
                owner.append(i)
        seen: set[tuple[int, int]] = set()
        for x, y in find_overlaps(rects, limit=limit):
            if owner is not members:  # pieces of the same two buffers are one violation
                if owner[x] > owner[y]:
                    x, y = y, x  # (named in problem order)
                if (owner[x], owner[y]) in seen:
                    continue
                seen.add((owner[x], owner[y]))
            a, c = problem.buffers[owner[x]], problem.buffers[owner[y]]
            t0, t1 = max(rects[x][0], rects[y][0]), min(rects[x][1], rects[y][1])
            lo, hi = max(rects[x][2], rects[y][2]), min(rects[x][3], rects[y][3])
            out.append(Violation(
                "overlap", f"buffers {a.id!r} and {c.id!r} share bytes [{lo}, {hi}) of pool "
                f"{pool!r} during steps [{t0}, {t1})", (a.id, c.id)))
    return out


def _traffic(problem: Problem, placements: dict[str, Placement]
             ) -> tuple[dict[str, int], dict[str, int], float | None]:
    """Bytes moved per pool, their cost per pool, and the share the fastest pools serve (see
    :class:`Plan`); empty where no buffer moves bytes. Buffers without a placement in a pool of
    the problem are left out (the checker reports them)."""
    if not problem.has_traffic:
        return {}, {}, None
    moved = dict.fromkeys(problem.pool_index, 0)
    for b in problem.buffers:
        got = placements.get(b.id)
        if b.traffic and got is not None and got.pool in moved:
            moved[got.pool] += b.traffic
    rate = {p.name: p.traffic_cost for p in problem.pools}
    costs = {name: bytes_ * rate[name] for name, bytes_ in moved.items()}
    total = sum(moved.values())
    fastest = min(rate.values())
    share = None
    if total and len(set(rate.values())) > 1:
        share = sum(v for name, v in moved.items() if rate[name] == fastest) / total
    return moved, costs, share


def objective_of(problem: Problem, heights: dict[str, int],
                 placements: dict[str, Placement]) -> int:
    """``sum(cost * height) + sum(traffic * traffic_cost)`` of a plan with these heights."""
    return (sum(p.cost * heights.get(p.name, 0) for p in problem.pools)
            + sum(_traffic(problem, placements)[1].values()))


def _placement(pool: str, off: object) -> Placement:
    if type(off) is not int and isinstance(off, Integral) and not isinstance(off, bool):
        return Placement(pool, int(off))  # (a numpy integer)
    return Placement(pool, cast(int, off))  # an int, or anything else for check to report


def _is_int(value: object) -> bool:
    # type() first: isinstance against the Integral ABC is slow and this runs per buffer.
    return type(value) is int or (isinstance(value, Integral) and not isinstance(value, bool))


# The last few plans that passed, as (problem, status, placements, heights): a plan checked
# once and written next (solve, then the file) is not checked twice. Only an equal plan of the
# very same problem object is a repeat, so the answer is the checker's own.
_PASSED: list[tuple[weakref.ref[Problem], str, dict[str, Placement], dict[str, int]]] = []


def ensure_valid(problem: Problem, plan: Plan) -> Plan:
    """Return ``plan`` if it passes :func:`check`, else raise :class:`PlanError` listing why.

    Args:
        problem: The problem the plan claims to solve.
        plan: The plan.

    Returns:
        ``plan`` itself.

    Raises:
        PlanError: The plan breaks the problem; the message gives the first three violations,
            and ``violations`` all of them (at most 100 overlaps per pool).
    """
    for ref, status, placements, heights in _PASSED:
        if (ref() is problem and status == plan.status and heights == plan.heights
                and placements == plan.placements):
            return plan
    bad = check(problem, plan, max_overlaps=100)
    if bad:
        more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
        raise PlanError(f"plan from {plan.planner or 'unknown planner'} is invalid: "
                        + "; ".join(map(str, bad[:3])) + more, bad)
    _PASSED.insert(0, (weakref.ref(problem), plan.status, dict(plan.placements),
                       dict(plan.heights)))
    del _PASSED[4:]
    return plan


def fragmentation(problem: Problem, plan: Plan, lower_bound: int) -> float:
    """Share of the height that is not needed by the max-load: ``1 - lower_bound / height``."""
    return 0.0 if plan.objective == 0 else 1.0 - lower_bound / plan.objective
