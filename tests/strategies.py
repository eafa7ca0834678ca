"""Hypothesis strategies for cpplan tests: random valid problems, valid plans, broken plans.

Import them as ``from tests.strategies import problems, valid_plans`` (``tests`` is a package
and ``tests/conftest.py`` puts the repository root on ``sys.path``).

``problems()`` draws problems that are valid by construction (it builds them through
:class:`cpplan.Problem`, so a generator bug shows up as a ``ProblemError``): several pools
(capacity, base alignment, cost, traffic cost), buffers with alignments that are powers of two
and others, candidate pools, zero-size buffers, fixed offsets (aligned, never overlapping,
within capacity), traffic, and aliases (chains, displacements that keep the buffer aligned and
inside its root, lifetimes that may outlive the root).

``valid_plans(problem)`` draws a random valid plan by a randomised first-fit over blocks (tight
packings with many near misses, unlike the stacking ``naive`` planner, which
:func:`naive_plan` wraps). ``BREAKS`` / :func:`break_plan` turn a valid plan into a broken one
in one named way. :func:`brute_overlaps` is the all-pairs reference for the sweep.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from hypothesis import assume
from hypothesis import strategies as st

from cpplan.blocks import make_blocks
from cpplan.plan import Placement, Plan
from cpplan.problem import Alias, Buffer, Pool, Problem

__all__ = ["problems", "csv_problems", "buffer_ids", "valid_plans", "naive_plan", "break_plan",
           "BREAKS", "brute_overlaps", "brute_max_load", "lcm", "round_up"]

ALIGNMENTS = (1, 1, 1, 1, 2, 4, 8, 16, 3, 6, 12)
POOL_ALIGNMENTS = (1, 1, 1, 2, 4, 8, 3)


def lcm(*values: int) -> int:
    out = 1
    for v in values:
        out = out * v // math.gcd(out, v)
    return out


def round_up(x: int, a: int) -> int:
    return -(-x // a) * a


# Ids JSON holds (any non-empty string) and ids CSV holds (no commas, no surrounding blanks).
# Explicit alphabets (no unicode tables to build): tricky characters for JSON, plain for CSV.
json_ids = st.text("abz09_-., \"\\/\n\t\x85\u2028é中🙂", min_size=1, max_size=6)
csv_ids = st.text("abcxyzABZ0129_-.:/", min_size=1, max_size=6)


def buffer_ids(n: int, *, text: st.SearchStrategy[str] | None = None) -> st.SearchStrategy:
    """``n`` distinct ids: ``b0, b1, ...`` or, with ``text``, drawn from it."""
    if text is None:
        return st.just([f"b{i}" for i in range(n)])
    return st.lists(text, min_size=n, max_size=n, unique=True)


@st.composite
def problems(
    draw: st.DrawFn,
    *,
    max_buffers: int = 8,
    min_buffers: int = 0,
    max_pools: int = 3,
    aliases: bool = True,
    fixed: bool = True,
    capacities: bool = True,
    alignments: bool = True,
    hints: bool = True,
    ids: st.SearchStrategy[str] | None = None,
    max_size: int = 64,
    max_time: int = 12,
    gaps: bool = False,
    traffic: bool = True,
) -> Problem:
    """A random valid problem (see the module docstring). With ``traffic``, some buffers move
    bytes and some pools charge for them."""
    n_pools = draw(st.integers(1, max_pools))
    if n_pools == 1 and draw(st.booleans()):
        pool_names = ["default"]
    else:
        pool_names = [f"p{k}" for k in range(n_pools)]
    pool_align = [draw(st.sampled_from(POOL_ALIGNMENTS)) if alignments else 1
                  for _ in range(n_pools)]
    pool_cost = [draw(st.integers(0, 4)) for _ in range(n_pools)]

    n = draw(st.integers(min_buffers, max_buffers))
    names = draw(buffer_ids(n, text=ids))
    size = [draw(st.one_of(st.just(0), st.integers(1, max_size)) if draw(st.integers(0, 9)) == 0
                 else st.integers(1, max_size)) for _ in range(n)]
    start = [draw(st.integers(0, max_time)) for _ in range(n)]
    end = [s + draw(st.integers(1, 6)) for s in start]
    align = [draw(st.sampled_from(ALIGNMENTS)) if alignments else 1 for _ in range(n)]
    cands: list[tuple[str, ...]] = []
    for _ in range(n):
        if n_pools > 1 and draw(st.booleans()):
            cands.append(tuple(draw(st.permutations(pool_names))[:draw(st.integers(1, n_pools))]))
        else:
            cands.append(())
    hint = [draw(st.one_of(st.none(), st.integers(0, 200))) if hints else None for _ in range(n)]

    # Aliases: buffer i inside an earlier buffer j (so no cycles), chains allowed.
    parent: dict[int, tuple[int, int]] = {}
    total: dict[int, int] = {}  # displacement from the ultimate root
    root: list[int] = list(range(n))
    if aliases:
        for i in range(1, n):
            if draw(st.integers(0, 2)) != 0:
                continue
            j = draw(st.integers(0, i - 1))
            if size[j] < size[i]:
                continue
            base = total.get(j, 0)
            room = [d for d in range(size[j] - size[i] + 1) if (base + d) % align[i] == 0]
            if not room:
                continue
            d = draw(st.sampled_from(room))
            parent[i] = (j, d)
            total[i] = base + d
            root[i] = root[j]
            # Share the root's candidates (or any pool) so the block keeps a candidate pool.
            cands[i] = draw(st.sampled_from([(), cands[root[j]]]))
    # A block's candidates: the root's, filtered by its members' (here they are all the same).
    members: dict[int, list[int]] = {}
    for i in range(n):
        members.setdefault(root[i], []).append(i)

    # Fixed offsets: some roots, stacked with random gaps so they never share a byte.
    offset: list[int | None] = [None] * n
    fixed_end: dict[str, int] = {}
    if fixed:
        cur = 0
        for r in sorted(members):
            if draw(st.integers(0, 3)) != 0:
                continue
            pools_r = cands[r] or tuple(pool_names)
            a = lcm(*(align[m] for m in members[r]),
                    *(pool_align[pool_names.index(p)] for p in pools_r))
            off = round_up(cur + draw(st.integers(0, 20)), a)
            offset[r] = off
            cur = off + size[r]
            for p in pools_r:
                fixed_end[p] = max(fixed_end.get(p, 0), cur)

    pools = []
    for k, name in enumerate(pool_names):
        cap = None
        if capacities and draw(st.booleans()):
            cap = max(fixed_end.get(name, 0), draw(st.integers(0, 8 * max_size)))
        rate = draw(st.integers(0, 3)) if traffic and draw(st.booleans()) else 0
        pools.append(Pool(name, cap, pool_align[k], pool_cost[k], rate))
    holes: list[tuple] = [() for _ in range(n)]
    if gaps:  # up to two disjoint gaps inside the lifetime, some with a window of the bytes
        for i in range(n):
            if draw(st.integers(0, 2)) == 0:
                continue
            cuts = sorted(draw(st.sets(st.integers(start[i], end[i]), min_size=2, max_size=4)))
            chosen = []
            for k in range(0, len(cuts) - 1, 2):
                window = ()
                if size[i] and draw(st.booleans()):
                    lo = draw(st.integers(0, size[i]))
                    window = (lo, draw(st.integers(lo, size[i])))
                chosen.append((cuts[k], cuts[k + 1], *window))
            holes[i] = tuple(chosen)
    moved = [draw(st.integers(0, 4 * max_size)) if traffic and draw(st.booleans()) else 0
             for _ in range(n)]
    buffers = [Buffer(names[i], size[i], start[i], end[i], align[i], cands[i], offset[i], hint[i],
                      holes[i], moved[i]) for i in range(n)]
    alias_list = [Alias(names[i], names[j], d) for i, (j, d) in parent.items()]
    alias_list = draw(st.permutations(alias_list)) if alias_list else []
    name = draw(st.sampled_from(["", "net", "p-1"]))
    meta = draw(st.sampled_from([{}, {"source": "hypothesis"}, {"seed": 3, "tags": ["a", "b"]}]))
    return Problem(tuple(buffers), tuple(pools), tuple(alias_list), name, meta)


def csv_problems(**kw) -> st.SearchStrategy[Problem]:
    """Problems that MiniMalloc's CSV can hold: one plain pool, no fixed offsets or aliases."""
    kw.setdefault("ids", csv_ids)
    return problems(max_pools=1, aliases=False, fixed=False, capacities=False, **kw).filter(
        lambda p: p.pools[0].alignment == 1)


# -- plans ----------------------------------------------------------------------------------------

def naive_plan(problem: Problem) -> Plan:
    """The ``naive`` planner's (valid, checked) plan."""
    from cpplan.planners import get

    return get("naive")(problem)


@st.composite
def valid_plans(draw: st.DrawFn, problem: Problem, *, respect_capacity: bool = True) -> Plan:
    """A random valid plan: fixed blocks first, then the others in random order, each in a
    random candidate pool at the lowest aligned offset at or above a random floor where its
    pieces touch no placed piece. Rejects the example (``assume``) when a capacity is hit."""
    blocks = make_blocks(problem)
    n = len(blocks)
    g = blocks.scale
    placed: dict[int, list[tuple[int, int, int, int]]] = {}  # pool -> absolute pieces
    pool_of = [0] * n
    off_of = [0] * n

    def pieces(i: int) -> list[tuple[int, int, int, int]]:
        return [tuple(int(x) for x in row) for row in blocks.pieces(i)]

    def fits(i: int, p: int, off: int) -> bool:
        for s, e, lo, hi in pieces(i):
            if hi <= lo:
                continue
            for s2, e2, lo2, hi2 in placed.get(p, ()):
                if s < e2 and s2 < e and off + lo < hi2 and lo2 < off + hi:
                    return False
        return True

    def put(i: int, p: int, off: int) -> None:
        pool_of[i], off_of[i] = p, off
        placed.setdefault(p, []).extend(
            (s, e, off + lo, off + hi) for s, e, lo, hi in pieces(i) if hi > lo)

    fixed = [i for i in range(n) if blocks.fixed[i] >= 0]
    free = [i for i in range(n) if blocks.fixed[i] < 0]
    for i in fixed:
        cands = list(blocks.pools[i])
        p = draw(st.sampled_from(cands))
        cap = int(blocks.pool_capacity[p])
        if cap >= 0 and int(blocks.fixed[i] + blocks.size[i]) > cap:
            ok = [q for q in cands if blocks.pool_capacity[q] < 0
                  or blocks.fixed[i] + blocks.size[i] <= blocks.pool_capacity[q]]
            p = ok[0]
        assume(fits(i, p, int(blocks.fixed[i])))  # fixed blocks in the same pool may collide
        put(i, p, int(blocks.fixed[i]))
    for i in draw(st.permutations(free)):
        p = draw(st.sampled_from(list(blocks.pools[i])))
        a = blocks.align_in(i, p)
        off = round_up(draw(st.integers(0, 6)), a)
        while not fits(i, p, off):
            off += a
        cap = int(blocks.pool_capacity[p])
        if respect_capacity:
            assume(cap < 0 or off + int(blocks.size[i]) <= cap)
        put(i, p, off)
    del g
    plan = blocks.to_plan(pool_of, off_of, planner="test:random-first-fit",
                          lower_bound=None) if respect_capacity else _unchecked(
        blocks, pool_of, off_of)
    return plan


def _unchecked(blocks, pool_of, off_of) -> Plan:
    problem = blocks.problem
    names = [p.name for p in problem.pools]
    placements = {}
    for i in range(len(blocks)):
        for k in range(int(blocks.member_ptr[i]), int(blocks.member_ptr[i + 1])):
            b = problem.buffers[int(blocks.member[k])]
            placements[b.id] = Placement(names[pool_of[i]],
                                         off_of[i] * blocks.scale + int(blocks.member_disp[k]))
    return Plan.build(problem, placements, planner="test:unchecked")


# -- breaking plans -------------------------------------------------------------------------------

def _moved(plan: Plan, problem: Problem, placements: dict[str, Placement]) -> Plan:
    return Plan.build(problem, placements, planner=plan.planner)


def break_plan(problem: Problem, plan: Plan, how: str, draw: Callable | None = None) -> Plan | None:
    """``plan`` broken in one way (a key of :data:`BREAKS`), or ``None`` when this problem
    offers no way to break it like that. ``draw`` (hypothesis ``data.draw``) picks which buffer;
    without it the first suitable one is used."""
    def pick(options: list):
        if not options:
            return None
        return options[0] if draw is None else draw(st.sampled_from(options))

    pl = dict(plan.placements)
    pools = {p.name: p for p in problem.pools}
    aliased = problem.root_of
    free_roots = [b for b in problem.buffers if b.id not in aliased and b.offset is None]
    if how == "overlap":
        # Two live buffers in one pool (different blocks): put one over the other's last byte.
        roots = {r for r, _ in aliased.values()}
        pairs = [(a, c) for a in problem.buffers for c in problem.buffers
                 if a.id != c.id and a.size > 0 and c.size > 0 and a.start < c.end
                 and c.start < a.end and c.id not in aliased and c.offset is None
                 and aliased.get(a.id, (a.id,))[0] != c.id
                 and aliased.get(c.id, (c.id,))[0] != a.id
                 and pl[a.id].pool in problem.candidates(c) and c.id not in roots]
        got = pick(pairs)
        if got is None:
            return None
        a, c = got
        pl[c.id] = Placement(pl[a.id].pool, pl[a.id].offset + a.size - 1)
    elif how == "misaligned":
        b = pick(free_roots)
        if b is None:
            return None
        pl[b.id] = Placement(pl[b.id].pool, pl[b.id].offset + 1)
        a = lcm(b.alignment, pools[pl[b.id].pool].alignment)
        if a == 1:
            return None
    elif how == "pool":
        options = [(b, p) for b in free_roots for p in pools
                   if p not in problem.candidates(b) and b.id not in
                   {r for r, _ in aliased.values()}]
        got = pick(options)
        if got is None:
            return None
        b, p = got
        pl[b.id] = Placement(p, pl[b.id].offset)
    elif how == "unknown-pool":
        b = pick(list(problem.buffers))
        if b is None:
            return None
        pl[b.id] = Placement("no-such-pool", pl[b.id].offset)
    elif how == "capacity":
        options = [b for b in free_roots if pools[pl[b.id].pool].capacity is not None
                   and b.size > 0]
        b = pick(options)
        if b is None:
            return None
        cap = pools[pl[b.id].pool].capacity
        a = lcm(b.alignment, pools[pl[b.id].pool].alignment)
        pl[b.id] = Placement(pl[b.id].pool, round_up(cap - b.size + 1, a))
    elif how == "fixed":
        b = pick([b for b in problem.buffers if b.offset is not None])
        if b is None:
            return None
        a = lcm(b.alignment, pools[pl[b.id].pool].alignment)
        pl[b.id] = Placement(pl[b.id].pool, b.offset + a)
    elif how == "alias":
        bid = pick(sorted(aliased))
        if bid is None:
            return None
        pl[bid] = Placement(pl[bid].pool, pl[bid].offset + problem.buffer(bid).alignment)
    elif how == "missing":
        b = pick(list(problem.buffers))
        if b is None:
            return None
        del pl[b.id]
    elif how == "unknown":
        pl["no such buffer"] = Placement(problem.pools[0].name, 0)
    else:
        raise ValueError(how)
    return _moved(plan, problem, pl)


BREAKS = {
    "overlap": "overlap", "misaligned": "alignment", "pool": "pool", "unknown-pool": "pool",
    "capacity": "capacity", "fixed": "fixed", "alias": "alias", "missing": "missing",
    "unknown": "unknown",
}
"""How a plan can be broken -> the violation kind the checker must report."""


# -- references -----------------------------------------------------------------------------------

def brute_overlaps(problem: Problem, plan: Plan) -> set[frozenset[str]]:
    """All pairs of buffers of different blocks that share a byte at a shared moment (pairs
    compared one by one: the reference for the sweep)."""
    root = {b.id: problem.root_of.get(b.id, (b.id, 0))[0] for b in problem.buffers}
    placed = [(b, plan.placements[b.id]) for b in problem.buffers if b.id in plan.placements]
    out = set()
    for x, (a, pa) in enumerate(placed):
        for c, pc in placed[x + 1:]:
            if pa.pool != pc.pool or root[a.id] == root[c.id]:
                continue
            if a.start < c.end and c.start < a.end and pa.offset < pc.offset + c.size \
                    and pc.offset < pa.offset + a.size and a.size > 0 and c.size > 0:
                out.add(frozenset((a.id, c.id)))
    return out


def brute_max_load(problem: Problem, pool_filter: Callable[[str], bool]) -> tuple[int, int | None]:
    """(max-load, first step reaching it) over the blocks whose root passes ``pool_filter``,
    counting each block by the union of its live members' bytes, step by step."""
    root = {b.id: problem.root_of.get(b.id, (b.id, 0)) for b in problem.buffers}
    t0, t1 = problem.time_span
    best, at = 0, None
    for t in range(t0, t1):
        by_block: dict[str, list[tuple[int, int]]] = {}
        for b in problem.buffers:
            r, d = root[b.id]
            if b.start <= t < b.end and b.size > 0 and pool_filter(r):
                by_block.setdefault(r, []).append((d, d + b.size))
        load = 0
        for ivs in by_block.values():
            covered: set[int] = set()
            for lo, hi in ivs:
                covered.update(range(lo, hi))
            load += len(covered)
        if load > best:
            best, at = load, t
    return best, at

