"""Replicas of TVM's Unified Static Memory Planner (USMP) algorithms.

Reproduces apache/tvm, ``src/tir/usmp/algo/greedy.cc`` (``GreedyBase``, ``GreedySize``,
``GreedyConflicts``: ``PostSortAllocation``, ``round_up_to_byte_alignment``,
``IsValidPlacement``) and ``src/tir/usmp/algo/hill_climb.cc`` (``HillClimbAllocator``).

USMP knows no time: each buffer carries a list of *conflicts* (from TVM's liveness analysis).
Here the conflicts of a block are the blocks whose lifetimes overlap it; the ``conflicts``
option (buffer id -> ordered list of buffer ids, possibly asymmetric, as in TVM's unit tests)
replaces them for the ordering and the hill climb's moves, and *adds* to them for placement, so
a plan never breaks a time overlap.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np

from ..blocks import Blocks
from ..bounds import load_profile
from ..deadline import OutOfTime, PlanOptions
from ..errors import PlanError
from ..plan import Plan
from ..planners.fit import conflicts
from ..planners.placer import capacity_error
from ..planners.registry import register
from ..problem import Problem
from ._greedy import EMPTY, Arena, align_up, check_alignment, finish, prepare, rand_r

_DOC = """

    Kept from the original:

    * placement (``PostSortAllocation``): a candidate pool is kept when the buffer fits in it
      at all (``size_hint_bytes``), at offset 0; then the buffer's already-placed conflicts are
      walked in list order, each raising its pool's offset to its end rounded up to the
      *conflict's* alignment (``round_up_to_byte_alignment``), so the buffer goes *above the
      highest end* there and gaps are never reused. A conflict whose end leaves no room for
      the buffer drops its pool, but a later conflict in that pool takes the pool back
      (``std::unordered_map::operator[]`` re-inserts it at 0) and raises it from 0 again,
      forgetting the conflicts before: the buffer may land on one of them, and TVM's plan is
      then invalid; the replica raises :class:`PlanError` naming both. The first candidate
      pool left wins; none left: :class:`CapacityError` (TVM: "the space available in the
      provided pools exceeded").
    * the conflict list: the ``conflicts`` option's list for the buffer, in its order, then
      the buffers met in time that it leaves out, by start (TVM's liveness analysis lists the
      buffers live when a buffer starts, in hash order, then those that start while it lives;
      the order matters only where a pool is dropped).
    * ``alignment`` (bytes, default 1 = ``kDefaultWorkspaceAlignment``) joins each block's and
      pool's alignment. TVM never aligns a buffer's own offset; here the offset is also rounded
      up to the block's own alignment so that the plan stays valid.

    Extensions: fixed offsets, aliases (blocks) and zero-size blocks as in
    :mod:`cpplan.replicas._greedy`; conflicts counted over block spans.
    """

_HILL_DOC = """

    Kept from the original (``HillClimbAllocator::PlanMemory``):

    * initial order: greedy_by_size's comparator; each attempt re-runs the inner greedy on the
      current order (here only from the first position that changed: the prefix is
      deterministic, so the result is the same).
    * inner greedy: first fit: the already-placed conflicts sorted by offset, and the candidate
      moves above a conflict (to its end, rounded to the conflict's alignment) whenever it
      would overlap it; a pool is dropped as soon as one of its conflicts ends too high for
      the buffer to fit *above* it, even when a gap below would hold it; no room in any
      pool: "could not fit" (the attempt is never accepted).
    * acceptance: always when better (strictly smaller sum of pool sizes) or the first time;
      otherwise with probability ``rnd() % 100 < 50 * (total - best) / total / attempts``; a
      rejection swaps back the *last recorded* swap (even if that swap was already undone:
      TVM's quirk) and restores the previous allocation. Stops when the accepted total reaches
      ``memory_pressure`` (default: the max-load of all blocks together), or after
      ``max_attempts`` (500).
    * moves: pick a random buffer among those that end at their pool's height (sorted by
      position); swap one of its conflicts placed before it with a conflict-of-a-conflict
      placed before that one (75%) or with another of its own earlier conflicts.
    * randomness: glibc ``rand_r`` seeded with the options' ``seed`` (TVM: 0 on Linux), so it
      is deterministic; the options' ``time_limit`` (none: all ``max_attempts``) stops early
      with the best accepted plan (then the result depends on the machine's speed).
    """


#: Explicit conflict lists by block index (:func:`_conflict_lists`), or None
Explicit = dict[int, list[int]] | None


def _conflict_lists(problem: Problem, blocks: Blocks,
                    conflicts: Mapping[str, Sequence[str]] | None) -> Explicit:
    """Explicit conflict lists as block indices (aliases map to their block), or None."""
    if conflicts is None:
        return None
    bidx = np.empty(len(problem.buffers), np.int64)
    for k in range(len(blocks)):
        bidx[blocks.member[blocks.member_ptr[k]:blocks.member_ptr[k + 1]]] = k
    index = problem.index
    out: dict[int, list[int]] = {}
    for bid, lst in conflicts.items():
        if bid not in index:
            raise ValueError(f"conflicts: unknown buffer {bid!r}")
        got = []
        for c in lst:
            if c not in index:
                raise ValueError(f"conflicts of {bid!r}: unknown buffer {c!r}")
            got.append(int(bidx[index[c]]))
        out.setdefault(int(bidx[index[bid]]), []).extend(got)
    return out


def _counts(blocks: Blocks, arena: Arena, explicit: Explicit) -> np.ndarray:
    """Number of conflicts per block: blocks overlapping its span (zero-size blocks conflict
    with nothing), or the length of its explicit list (TVM counts duplicates and itself)."""
    cnt = conflicts(blocks, np.nonzero(arena.top > 0)[0])
    cnt[arena.top == 0] = 0
    if explicit is not None:
        for k, lst in explicit.items():
            cnt[k] = len(lst)
    return cnt


def _explicit_obstacles(arena: Arena, i: int, pool: int, explicit: Explicit
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Placed blocks of ``pool`` in ``i``'s explicit list, as whole rectangles."""
    lst = explicit.get(i) if explicit else None
    if not lst:
        return EMPTY, EMPTY, EMPTY
    js = np.asarray([j for j in lst if j != i and arena.pool_of[j] == pool], np.int64)
    if len(js) == 0:
        return EMPTY, EMPTY, EMPTY
    lo = arena.offset[js]
    hi = lo + arena.top[js]
    al = np.asarray([arena.align(int(j), pool) for j in js], np.int64)
    return lo, hi, al


def _obstacles(arena: Arena, i: int, pool: int, explicit: Explicit
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo, hi, al = arena.obstacles(i, pool)
    assert al is not None  # (a plain arena, not merged: each obstacle keeps its alignment)
    if explicit:
        elo, ehi, eal = _explicit_obstacles(arena, i, pool, explicit)
        if len(elo):
            lo, hi, al = (np.concatenate([lo, elo]), np.concatenate([hi, ehi]),
                          np.concatenate([al, eal]))
    return lo, hi, al


def _order(blocks: Blocks, todo: np.ndarray, cnt: np.ndarray, by_conflicts: bool = False
           ) -> list[int]:
    """greedy_by_size's order (size, conflicts, name; all descending) or greedy_by_conflicts'
    (conflicts, size, name)."""
    names = [blocks.problem.buffers[int(r)].id for r in blocks.root]
    size = blocks.size.tolist()
    c = cnt.tolist()
    first, second = (c, size) if by_conflicts else (size, c)
    return sorted(todo.tolist(), key=lambda i: (first[i], second[i], names[i]), reverse=True)


def _start(problem: Problem, name: str, alignment: int,
           conflicts: Mapping[str, Sequence[str]] | None
           ) -> tuple[Blocks, Arena, Explicit, np.ndarray, np.ndarray]:
    """What every USMP algorithm starts from: the blocks and their arena with the fixed and
    empty blocks placed, the explicit conflict lists (or None), the blocks still to place and
    the conflict counts."""
    blocks, extra = prepare(problem, check_alignment(alignment))
    arena = Arena(blocks, extra=extra)
    explicit = _conflict_lists(problem, blocks, conflicts)
    todo = arena.place_fixed_and_empty(name)
    return blocks, arena, explicit, todo, _counts(blocks, arena, explicit)


def _greedy(problem: Problem, name: str, alignment: int,
            conflicts: Mapping[str, Sequence[str]] | None, by_conflicts: bool) -> Plan:
    started = time.perf_counter()
    blocks, arena, explicit, todo, cnt = _start(problem, name, alignment, conflicts)
    size = arena.top.tolist()
    cap = arena.cap
    start = blocks.start
    for i in _order(blocks, todo, cnt, by_conflicts):
        # The conflicts in TVM's order: the explicit list, then the blocks met in time that it
        # leaves out, by start (TVM lists the buffers live when one starts, then those that
        # start while it lives).
        listed = explicit.get(i, []) if explicit else []
        met = arena.overlapping_blocks(i)
        met = met[np.lexsort((met, start[met]))]
        if listed:
            met = np.asarray([*listed, *(c for c in met.tolist() if c not in set(listed))],
                             np.int64)
        met = met[arena.pool_of[met] >= 0]
        # PostSortAllocation: per pool the highest end of a placed conflict there, rounded up
        # to the conflict's alignment; a conflict that leaves no room drops the pool, and a
        # later one takes it back from 0 (std::unordered_map::operator[]).
        pc = arena.pool_of[met]
        al = np.asarray([arena.align(int(c), int(q)) for c, q in zip(met, pc, strict=True)],
                        np.int64)
        nxt = align_up(arena.offset[met] + arena.top[met], al) if len(met) else met
        room = nxt + size[i] <= np.asarray([cap[q] for q in pc.tolist()], np.int64)
        cands = {q: 0 for q in blocks.pools[i] if size[i] <= cap[q]}
        dropped_by: dict[int, int] = {}
        for q in set(pc.tolist()):
            mine = np.nonzero(pc == q)[0]
            bad = mine[~room[mine]]
            if len(bad):  # dropped at its last bad conflict; what follows takes it back
                dropped_by[q] = int(met[bad[-1]])
                mine = mine[mine > bad[-1]]
                if not len(mine):
                    cands.pop(q, None)
                    continue
                cands[q] = 0
            cands[q] = max(cands.get(q, 0), int(nxt[mine].max()))
        for p in blocks.pools[i]:
            if p not in cands:
                continue
            off = int(align_up(cands[p], arena.align(i, p)))
            if off + size[i] > cap[p]:
                continue  # (own alignment, an extension, passes the capacity)
            if p in dropped_by:  # taken back: TVM forgot the conflicts before
                hit = _landed_on(arena, i, p, off, listed)
                if hit is not None:
                    raise _overlap(arena, i, p, off, hit, dropped_by[p], name)
            arena.commit(i, p, off)
            break
        else:
            raise capacity_error(blocks, i, name)
    return finish(blocks, problem, arena.pool_of, arena.offset, planner=name, started=started)


def _landed_on(arena: Arena, i: int, p: int, off: int, listed: list[int]) -> int | None:
    """A placed block of pool ``p`` that block ``i`` at ``off`` would share bytes with, among
    those it meets in time and those it conflicts with (``listed``); None if there is none."""
    S = int(arena.top[i])
    lo, hi, owner = arena.obstacle_blocks(i, p)
    hit = owner[(lo - S < off) & (off < hi)]
    if len(hit):
        return int(hit[0])
    for c in listed:
        if c != i and arena.pool_of[c] == p and arena.top[c] > 0 and S > 0 \
                and arena.offset[c] < off + S and off < arena.offset[c] + arena.top[c]:
            return c
    return None


def _overlap(arena: Arena, i: int, p: int, off: int, other: int, dropped: int | None,
             name: str) -> PlanError:
    """The error for TVM's placement of block ``i`` at ``off`` in pool ``p``, over block
    ``other``, a conflict it forgot when the pool was dropped and taken back."""
    blocks = arena.blocks
    ids = blocks.problem.buffers
    pool = blocks.problem.pools[p].name
    why = ""
    if dropped is not None:
        why = (f" (conflict {ids[int(blocks.root[dropped])].id!r} dropped pool {pool!r}, a "
               "later one took it back from offset 0 and forgot the conflicts before it)")
    return PlanError(f"{name}: TVM would put buffer {ids[int(blocks.root[i])].id!r} at "
                     f"{pool}:{off * blocks.scale}, over buffer "
                     f"{ids[int(blocks.root[other])].id!r} that it conflicts with{why}: TVM's "
                     "plan is invalid here")


@register("usmp-greedy-by-size", family="replica", reproduces="apache/tvm, "
          "src/tir/usmp/algo/greedy.cc (GreedySize)")
def greedy_by_size(problem: Problem, options: PlanOptions, *, alignment: int = 1,
                   conflicts: Mapping[str, Sequence[str]] | None = None) -> Plan:
    """TVM USMP greedy_by_size: size desc (then conflicts desc, name desc), above conflicts."""
    return _greedy(problem, "usmp-greedy-by-size", alignment, conflicts, by_conflicts=False)


@register("usmp-greedy-by-conflicts", family="replica", reproduces="apache/tvm, "
          "src/tir/usmp/algo/greedy.cc (GreedyConflicts)")
def greedy_by_conflicts(problem: Problem, options: PlanOptions, *, alignment: int = 1,
                        conflicts: Mapping[str, Sequence[str]] | None = None) -> Plan:
    """TVM USMP greedy_by_conflicts: conflicts desc (then size desc, name desc), above
    conflicts."""
    return _greedy(problem, "usmp-greedy-by-conflicts", alignment, conflicts, by_conflicts=True)


greedy_by_size.function.__doc__ = (greedy_by_size.function.__doc__ or "") + _DOC
greedy_by_conflicts.function.__doc__ = (greedy_by_conflicts.function.__doc__ or "") + _DOC


@register("usmp-hill-climb", family="replica", reproduces="apache/tvm, "
          "src/tir/usmp/algo/hill_climb.cc (HillClimbAllocator)")
def hill_climb(problem: Problem, options: PlanOptions, *, alignment: int = 1,
               conflicts: Mapping[str, Sequence[str]] | None = None,
               max_attempts: int = 500, memory_pressure: int | None = None) -> Plan:
    """TVM USMP hill_climb: random swaps of conflicting buffers around a first-fit greedy."""
    name = "usmp-hill-climb"
    seed, time_limit = options.seed, options.time_limit
    started = time.perf_counter()
    blocks, arena, explicit, todo, cnt = _start(problem, name, alignment, conflicts)
    order = _order(blocks, todo, cnt)
    m = len(order)
    pos = np.full(len(blocks), -1, np.int64)
    pos[order] = np.arange(m)
    size = arena.top
    if memory_pressure is None:
        desired = int(load_profile(blocks)[0].max()) if len(blocks) else 0
    else:
        desired = -(-int(memory_pressure) // blocks.scale)

    def choose(arena: Arena, i: int, pool: int) -> int | None:
        lo, hi, al = _obstacles(arena, i, pool, explicit)
        A = arena.align(i, pool)
        if len(lo) == 0:
            return 0
        ends = align_up(hi, al)
        if int(ends.max()) + int(size[i]) > arena.cap[pool]:
            return None  # a conflict ends too high: the pool is dropped, gaps or not
        o = np.argsort(lo)
        L = lo[o]
        cm = np.maximum.accumulate(ends[o])
        cur = np.empty(len(L), np.int64)
        cur[0] = 0
        np.maximum(cm[:-1], 0, out=cur[1:])
        cand = align_up(cur, A)
        ok = cand + int(size[i]) <= L
        k = int(np.argmax(ok))
        return int(cand[k]) if ok[k] else int(align_up(max(int(cm[-1]), 0), A))

    placed_order: list[int] = []  # the order the arena currently reflects
    unfit = np.zeros(m, bool)

    def greedy() -> tuple[np.ndarray, np.ndarray, bool]:
        d = 0
        while d < len(placed_order) and placed_order[d] == order[d]:
            d += 1
        if placed_order:
            arena.unplace(np.asarray(placed_order[d:], np.int64))
        pools = blocks.pools
        for k in range(d, m):
            i = order[k]
            unfit[k] = True
            for p in pools[i]:
                off = choose(arena, i, p)
                if off is not None and arena.fits(i, p, off):
                    arena.commit(i, p, off)
                    unfit[k] = False
                    break
        placed_order[:] = order
        return arena.pool_of.copy(), arena.offset.copy(), bool(unfit.any())

    def heights(pool_of: np.ndarray, off: np.ndarray) -> np.ndarray:
        h = np.zeros(blocks.n_pools, np.int64)
        ok = pool_of >= 0
        np.maximum.at(h, pool_of[ok], off[ok] + size[ok])
        return h

    neighbours: dict[int, np.ndarray] = {}

    def conflicts_of(i: int) -> np.ndarray:
        got = neighbours.get(i)
        if got is None:
            if explicit is not None and i in explicit:
                got = np.asarray(explicit[i], np.int64)
            else:
                got = arena.overlapping_blocks(i)
            got = got[pos[got] >= 0] if len(got) else got
            neighbours[i] = got
        return got

    state = seed & 0xFFFFFFFF

    def rnd() -> int:
        nonlocal state
        v, state = rand_r(state)
        return v

    def swap(i1: int, i2: int) -> None:
        if i1 == i2:
            return
        b1, b2 = order[i1], order[i2]
        order[i1], order[i2] = b2, b1
        pos[b1], pos[b2] = i2, i1

    total_size = 0
    result: tuple[np.ndarray, np.ndarray] | None = None
    alloc: tuple[np.ndarray, np.ndarray] | None = None
    swap_i1 = swap_i2 = -1
    attempts = 0
    for attempts in range(max_attempts):
        if m == 0:
            result = (arena.pool_of.copy(), arena.offset.copy())
            break
        rollback = alloc
        try:
            pool_of, off, cnf = greedy()
        except OutOfTime:
            # The caller's budget ran out mid-attempt: the best complete attempt so far stands.
            if result is None:
                raise
            break
        alloc = (pool_of, off)
        sizes = heights(pool_of, off)
        total = int(sizes.sum())
        if not total_size or (not cnf and (total_size > total or (
                rnd() % 100 < (50 * (total - total_size)) // max(total, 1) // attempts))):
            result = alloc
            if not cnf:
                total_size = total
                if total_size <= desired:
                    break
        else:
            swap(swap_i2, swap_i1)
            assert rollback is not None  # (the first attempt is always kept)
            alloc = rollback
            pool_of, off = alloc
            sizes = heights(pool_of, off)
        if time_limit is not None and time.perf_counter() - started > time_limit:
            break
        ords = np.asarray(order, np.int64)
        top_hit = (pool_of[ords] >= 0) & (
            off[ords] + size[ords] == sizes[np.maximum(pool_of[ords], 0)])
        max_pool_buf = ords[top_hit]  # already sorted by position
        if len(max_pool_buf) == 0:
            break
        node = int(max_pool_buf[rnd() % len(max_pool_buf)])
        c1s = conflicts_of(node)
        first = np.sort(pos[c1s][pos[c1s] < pos[node]])
        seconds = []
        for c1 in c1s.tolist():
            c2s = conflicts_of(c1)
            if len(c2s):
                p2 = pos[c2s]
                seconds.append(p2[p2 < pos[c1]])
        second = np.sort(np.concatenate(seconds)) if seconds else EMPTY
        if len(first) == 0:
            continue
        n1, n2 = len(first), len(second)
        s1 = int(first[rnd() % n1])
        s2 = s1
        for _ in range(10000):  # TVM loops until they differ; bounded here
            s2 = int(second[rnd() % n2]) if n2 and rnd() % 100 > 25 else int(first[rnd() % n1])
            if s2 != s1 or (n2 < 2 and n1 < 2):
                break
        if s1 == s2:
            continue
        swap_i1, swap_i2 = s1, s2  # positions
        swap(swap_i1, swap_i2)

    if result is None:
        raise ValueError("usmp-hill-climb: max_attempts must be at least 1")
    pool_of, off = result
    if (pool_of < 0).any():
        raise capacity_error(blocks, int(np.nonzero(pool_of < 0)[0][0]), name)
    return finish(blocks, problem, pool_of, off, planner=name, started=started,
                  stats={"attempts": attempts + 1})


hill_climb.function.__doc__ = (hill_climb.function.__doc__ or "") + _HILL_DOC
