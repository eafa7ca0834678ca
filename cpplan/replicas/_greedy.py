"""Machinery shared by the replica planners: an arena of placed blocks, the gaps a block sees,
and the loops that put blocks in pools or lay shared objects end to end.

What every replica gets from here (so each replica module only says *its* order and *its* rule):

* **Blocks, not buffers.** Replicas place the blocks of :func:`cpplan.blocks.make_blocks`; a
  block with several pieces (aliases) collides with a placed block as soon as one of its pieces
  does. The originals know no aliases; this is how the replicas extend them.
* **Obstacles.** For block ``i`` (padded size ``S``) and a placed piece at absolute bytes
  ``[a, b)`` that shares a moment with its piece ``(lo, hi)``, the block offset ``x`` is free iff
  ``x + S <= a - hi + S`` or ``x >= b - lo``: the placed piece acts like a plain buffer at
  ``[a - hi + S, b - lo)`` in the block's own offset space. For a plain buffer that is just
  ``[a, b)``, so every original's gap scan (offset order, running maximum of ends) carries over
  unchanged, and for blocks with pieces it stays valid (it may only miss some holes).
* **Alignment.** ``align(i, pool)`` is the lcm of the block's alignment, the pool's and the
  original's default alignment (an option of each replica, in bytes). Replicas whose original
  rounds *sizes* (TFLM, ONNX Runtime, Glow) also pad the block's size: the padded top is what
  they place and what the capacity check sees.
* **Pools.** A block tries its candidate pools in order and goes to the first where the
  replica's rule gives an offset within capacity; otherwise :class:`CapacityError` names the
  buffer and its pools.
* **Fixed offsets** (TFLM's offline-planned buffers) are placed first, in the first candidate
  pool where the offset is free and within capacity. **Zero-size** blocks get offset 0 in their
  first pool (TFLite and ONNX Runtime do the same) and collide with nothing.

Time-overlap queries go through :class:`cpplan.planners.placer.PieceIndex`, the static index of
cpplan's own placer (pieces bucketed by lifetime length, sorted by start in each bucket): work per
query is proportional to what the block overlaps, in numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, overload

import numpy as np

from ..blocks import Blocks
from ..deadline import tick
from ..errors import CapacityError
from ..planners.placer import PieceIndex, Placer, capacity_error

if TYPE_CHECKING:
    from ..plan import Plan
    from ..problem import Problem

INF = np.iinfo(np.int64).max // 4
EMPTY = np.zeros(0, np.int64)


def byte_alignment(blocks: Blocks, nbytes: int) -> int:
    """The scaled alignment that makes scaled offsets land on multiples of ``nbytes`` bytes."""
    nbytes = max(int(nbytes), 1)
    return nbytes // math.gcd(nbytes, blocks.scale)


def prepare(problem: Problem, alignment: int = 1) -> tuple[Blocks, int]:
    """Blocks of ``problem`` in which offsets can be multiples of ``alignment`` bytes, and the
    scaled alignment to join every block's.

    Where the problem's own blocks express ``alignment`` bytes (their scale divides it), they
    are used as they are, with the alignment to join. Else gcd scaling makes it impossible to
    express (sizes of 2047 bytes scale by 2047, and 32 | 2047k only every 32 units): the blocks
    are made from the problem with every pool's base alignment raised to the lcm with
    ``alignment``, which makes :func:`cpplan.blocks.make_blocks` pick a fitting scale; only if
    that problem is invalid (a fixed offset off the alignment) the original one is used with a
    coarser alignment. Pair with :func:`finish`.
    """
    from ..blocks import make_blocks
    from ..errors import ProblemError

    own = make_blocks(problem)  # (made once per problem: every planner shares them)
    if alignment > 1 and alignment % own.scale:
        pools = tuple(replace(p, alignment=math.lcm(p.alignment, alignment))
                      for p in problem.pools)
        try:
            strict = problem.replace(pools=pools)
        except ProblemError:
            strict = None
        if strict is not None:
            return make_blocks(strict), 1
    return own, byte_alignment(own, alignment)


def finish(blocks: Blocks, problem: Problem, pool_of: np.ndarray, offset: np.ndarray, *,
           planner: str, started: float, stats: dict | None = None) -> Plan:
    """The checked plan of ``problem`` from a placement of ``blocks`` (see :func:`prepare`)."""
    from ..plan import Plan, ensure_valid

    plan = blocks.to_plan(pool_of, offset, planner=planner, started=started, stats=stats)
    if blocks.problem is problem:
        return plan
    plan = Plan.build(problem, plan.placements, planner=planner, seconds=plan.seconds,
                      lower_bound=plan.lower_bound, stats=plan.stats)
    return ensure_valid(problem, plan)


def padded_sizes(blocks: Blocks, round_to: int) -> np.ndarray:
    """Scaled block sizes after rounding the byte size up to a multiple of ``round_to``."""
    if round_to <= 1:
        return blocks.size.copy()
    g = blocks.scale
    nbytes = blocks.size * g
    nbytes = -(-nbytes // round_to) * round_to
    return -(-nbytes // g)


@overload
def align_up(x: int, a: int) -> int: ...
@overload
def align_up(x: np.ndarray, a: int | np.ndarray) -> np.ndarray: ...
def align_up(x: int | np.ndarray, a: int | np.ndarray) -> int | np.ndarray:
    """Round ``x`` (int or array) up to a multiple of ``a``."""
    return -(-x // a) * a


class Arena:
    """Placed blocks per pool, with time-overlap queries.

    ``top[i]`` is the (padded) scaled size a block occupies; ``extra`` the scaled default
    alignment of the original. ``pool_of[i] == -1`` while block ``i`` is not placed.

    With ``merged`` the obstacles of a block come from a :class:`cpplan.planners.placer.Placer`
    over the padded blocks: the bytes taken around it as merged runs (far fewer than the placed
    pieces on large problems), without the alignment of each (``obstacles`` gives ``None`` for
    it). Every gap scan here depends only on the union of the obstacles, so the offsets are the
    same either way; planners that round each obstacle's end to its own alignment (TVM USMP)
    keep the plain index.
    """

    def __init__(self, blocks: Blocks, *, top: np.ndarray | None = None, extra: int = 1,
                 merged: bool = False) -> None:
        self.blocks = blocks
        n = len(blocks)
        self.top = blocks.size.copy() if top is None else np.asarray(top, np.int64)
        self.extra = max(int(extra), 1)
        ps, pe = blocks.piece_start, blocks.piece_end
        pb = np.repeat(np.arange(n, dtype=np.int64), np.diff(blocks.piece_ptr))
        plo = blocks.piece_lo
        # The top piece of a block carries its padding.
        phi = np.where(blocks.piece_hi >= blocks.size[pb], self.top[pb], blocks.piece_hi)
        self.piece_hi = phi
        self._index = PieceIndex(blocks, phi)
        # merged: obstacles come from a Placer over the padded blocks, as merged runs of bytes.
        self._placer: Placer | None = None
        if merged:
            padded = replace(blocks, size=self.top, piece_hi=phi,
                             alignment=np.lcm(blocks.alignment, self.extra))
            self._placer = Placer(padded)
        self._piece_block = pb
        # Placement state per piece (read through the index's answers).
        npieces = len(ps)
        self._piece_pool = np.full(npieces, -1, np.int64)
        self._piece_alo = np.zeros(npieces, np.int64)
        self._piece_ahi = np.zeros(npieces, np.int64)
        self._piece_align = np.ones(npieces, np.int64)
        self.pool_of = np.full(n, -1, np.int64)
        self.offset = np.zeros(n, np.int64)
        self.height = np.zeros(blocks.n_pools, np.int64)  # padded tops, grows only
        self.cap = [INF if c < 0 else int(c) for c in blocks.pool_capacity.tolist()]
        self._pptr = blocks.piece_ptr.tolist()
        self._ps = ps.tolist()
        self._pe = pe.tolist()
        self._plo = plo.tolist()
        self._phi = phi.tolist()
        self._top = self.top.tolist()
        self._balign = blocks.alignment.tolist()
        self._palign = blocks.pool_alignment.tolist()
        self._align: dict[tuple[int, int], int] = {}

    # -- queries -------------------------------------------------------------------------------
    def align(self, i: int, pool: int) -> int:
        key = (self._balign[i], pool)
        got = self._align.get(key)
        if got is None:
            got = math.lcm(self._balign[i], self._palign[pool], self.extra)
            self._align[key] = got
        return got

    def obstacles(self, i: int, pool: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Placed pieces of ``pool`` that share a moment with block ``i``, as plain-buffer
        intervals ``[lo, hi)`` in the block's offset space (see the module docstring), with the
        alignment of the block each belongs to. Unsorted."""
        a, b = self._pptr[i], self._pptr[i + 1]
        S = self._top[i]
        if self._placer is not None:
            return self._merged_obstacles(self._placer, i, pool)
        if b - a == 1:
            hi, lo = self._phi[a], self._plo[a]
            if hi <= lo:
                return EMPTY, EMPTY, EMPTY
            idx = self._index.overlapping(self._ps[a], self._pe[a])
            idx = idx[self._piece_pool[idx] == pool]
            return (self._piece_alo[idx] - (hi - S), self._piece_ahi[idx] - lo,
                    self._piece_align[idx])
        los, his, als = [], [], []
        for q in range(a, b):
            hi, lo = self._phi[q], self._plo[q]
            if hi <= lo:
                continue
            idx = self._index.overlapping(self._ps[q], self._pe[q])
            idx = idx[self._piece_pool[idx] == pool]
            los.append(self._piece_alo[idx] - (hi - S))
            his.append(self._piece_ahi[idx] - lo)
            als.append(self._piece_align[idx])
        if not los:
            return EMPTY, EMPTY, EMPTY
        if len(los) == 1:
            return los[0], his[0], als[0]
        return np.concatenate(los), np.concatenate(his), np.concatenate(als)

    def _merged_obstacles(self, placer: Placer, i: int, pool: int
                          ) -> tuple[np.ndarray, np.ndarray, None]:
        a, b = self._pptr[i], self._pptr[i + 1]
        S = self._top[i]
        los, his = [], []
        for q in range(a, b):
            hi, lo = self._phi[q], self._plo[q]
            if hi <= lo:
                continue
            olo, ohi = placer.occupied(pool, self._ps[q], self._pe[q])
            los.append(np.asarray(olo, np.int64) - (hi - S))
            his.append(np.asarray(ohi, np.int64) - lo)
        if not los:
            return EMPTY, EMPTY, None
        if len(los) == 1:
            return los[0], his[0], None
        return np.concatenate(los), np.concatenate(his), None

    def obstacle_blocks(self, i: int, pool: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`obstacles` (from the plain index) with the block each obstacle belongs to in
        place of its alignment, for rules that depend on which block an obstacle is. Empty
        pieces of block ``i`` take part too: they see the placed pieces they share a moment
        with (placed pieces without bytes are never obstacles)."""
        a, b = self._pptr[i], self._pptr[i + 1]
        S = self._top[i]
        los, his, owners = [], [], []
        for q in range(a, b):
            hi, lo = self._phi[q], self._plo[q]
            idx = self._index.overlapping(self._ps[q], self._pe[q])
            idx = idx[self._piece_pool[idx] == pool]
            los.append(self._piece_alo[idx] - (hi - S))
            his.append(self._piece_ahi[idx] - lo)
            owners.append(self._piece_block[idx])
        if len(los) == 1:
            return los[0], his[0], owners[0]
        return np.concatenate(los), np.concatenate(his), np.concatenate(owners)

    def overlapping_blocks(self, i: int) -> np.ndarray:
        """Blocks (placed or not, any pool) with a piece sharing a moment with block ``i``."""
        a, b = self._pptr[i], self._pptr[i + 1]
        out = [self._piece_block[self._index.overlapping(self._ps[q], self._pe[q])]
               for q in range(a, b) if self._phi[q] > self._plo[q]]
        if not out:
            return EMPTY
        got = np.unique(np.concatenate(out))
        return got[got != i]

    def fits(self, i: int, pool: int, off: int) -> bool:
        return off + self._top[i] <= self.cap[pool]

    def is_free(self, i: int, pool: int, off: int) -> bool:
        lo, hi, _ = self.obstacles(i, pool)
        return not bool(np.any((lo - self._top[i] < off) & (off < hi)))

    # -- state ---------------------------------------------------------------------------------
    def commit(self, i: int, pool: int, off: int) -> None:
        tick()  # one placement: every replica honours the active time budget here
        self.pool_of[i] = pool
        self.offset[i] = off
        a, b = self._pptr[i], self._pptr[i + 1]
        self._piece_pool[a:b] = pool
        self._piece_alo[a:b] = off + self.blocks.piece_lo[a:b]
        self._piece_ahi[a:b] = off + self.piece_hi[a:b]
        self._piece_align[a:b] = self.align(i, pool)
        if self._placer is not None:
            self._placer.put(i, pool, off)
        h = off + self._top[i]
        if h > self.height[pool]:
            self.height[pool] = h

    def unplace(self, which: np.ndarray) -> None:
        """Take blocks out again (heights are recomputed from what stays)."""
        which = np.asarray(which, np.int64)
        self.pool_of[which] = -1
        if self._placer is not None:
            self._placer.unplace(which)
        mask = np.zeros(len(self.pool_of), bool)
        mask[which] = True
        self._piece_pool[mask[self._piece_block]] = -1
        self.height[:] = 0
        placed = self.pool_of >= 0
        if placed.any():
            np.maximum.at(self.height, self.pool_of[placed],
                          self.offset[placed] + self.top[placed])

    def failure(self, i: int, planner: str) -> CapacityError:
        return capacity_error(self.blocks, i, planner)

    def place_fixed_and_empty(self, planner: str) -> np.ndarray:
        """Place fixed blocks (at their offsets) and zero-size blocks (at 0); return the indices
        of the blocks still to place, in block order."""
        bl = self.blocks
        for i in np.nonzero(bl.fixed >= 0)[0].tolist():
            off = int(bl.fixed[i])
            for p in bl.pools[i]:
                if self.fits(i, p, off) and self.is_free(i, p, off):
                    self.commit(i, p, off)
                    break
            else:
                raise self.failure(i, planner)
        for i in np.nonzero((bl.fixed < 0) & (self.top == 0))[0].tolist():
            self.commit(i, bl.pools[i][0], 0)
        return np.nonzero(self.pool_of < 0)[0]

    def place_in_order(self, order: Sequence[int] | np.ndarray, choose: Choose,
                       planner: str) -> None:
        """Place the unplaced blocks of ``order``: for each candidate pool in turn,
        ``choose(self, i, pool)`` gives an offset; the first within capacity wins."""
        pool_of = self.pool_of
        pools = self.blocks.pools
        for i in np.asarray(order, np.int64).tolist():
            if pool_of[i] >= 0:
                continue
            for p in pools[i]:
                off = choose(self, i, p)
                if off is not None and self.fits(i, p, off):
                    self.commit(i, p, off)
                    break
            else:
                raise self.failure(i, planner)


#: ``choose(arena, i, pool)``: the offset of block ``i`` in ``pool`` by a replica's rule, or
#: ``None`` when the rule finds none there
Choose = Callable[[Arena, int, int], "int | None"]
#: ``order(blocks, arena, todo)``: the blocks still to place (``todo``) in a replica's order
Order = Callable[[Blocks, Arena, np.ndarray], "Sequence[int] | np.ndarray"]
#: ``assign(blocks, group)``: a shared-object replica's objects, each a list of blocks
Assign = Callable[[Blocks, np.ndarray], list[list[int]]]


# -- gap scans over obstacles sorted by offset ---------------------------------------------------
def scan(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Obstacles in offset order: their offsets ``L``, the running maximum end *before* each
    (``cur``, at least 0: where a gap below it starts) and the maximum end of all (>= 0)."""
    # Order among equal offsets does not matter to any scan here: the gap below the first of
    # them starts at the running maximum of the strictly lower ones either way.
    order = np.argsort(lo)
    L = lo[order]
    cm = np.maximum.accumulate(hi[order])
    cur = np.empty(len(L), np.int64)
    cur[0] = 0
    np.maximum(cm[:-1], 0, out=cur[1:])
    return L, cur, max(int(cm[-1]), 0)


def first_fit(lo: np.ndarray, hi: np.ndarray, S: int, A: int) -> int:
    """Lowest aligned offset: the first gap (from the running maximum end to the next obstacle
    in offset order) that holds ``S``; else above the highest overlapping end."""
    if len(lo) == 0:
        return 0
    L, cur, top = scan(lo, hi)
    cand = align_up(cur, A) if A > 1 else cur
    ok = L - cand >= S
    k = int(np.argmax(ok))
    if ok[k]:
        return int(cand[k])
    return int(align_up(top, A))


def best_fit(lo: np.ndarray, hi: np.ndarray, S: int, A: int) -> tuple[int, int]:
    """Smallest gap that holds ``S`` (ties: lowest offset) as ``(offset, gap)``; ``gap`` is -1
    when no gap holds it and the offset is above the highest overlapping end."""
    if len(lo) == 0:
        return 0, -1
    L, cur, top = scan(lo, hi)
    cand = align_up(cur, A) if A > 1 else cur
    diff = L - cand
    diff = np.where(diff >= S, diff, INF)
    k = int(np.argmin(diff))
    if diff[k] < INF:
        return int(cand[k]), int(diff[k])
    return int(align_up(top, A)), -1


def choose_first_fit(arena: Arena, i: int, pool: int) -> int:
    """The ``choose`` of the lowest-first-fit replicas (TFLM, Glow): :func:`first_fit` over
    the block's obstacles."""
    lo, hi, _ = arena.obstacles(i, pool)
    return first_fit(lo, hi, int(arena.top[i]), arena.align(i, pool))


def choose_best_fit(arena: Arena, i: int, pool: int) -> int:
    """The ``choose`` of the plain best-fit replicas (XLA, TFLite GPU greedy by size):
    :func:`best_fit` over the block's obstacles."""
    lo, hi, _ = arena.obstacles(i, pool)
    return best_fit(lo, hi, int(arena.top[i]), arena.align(i, pool))[0]


def replay(blocks: Blocks, group: np.ndarray) -> Iterator[tuple[int, list[int]]]:
    """The blocks of ``group`` in schedule order (start, then index), each with the blocks of
    the group that ended by its start since the previous one (by end, then index): the loop of
    the online shared-object replicas, which free before they allocate at a step."""
    recs = group[np.lexsort((group, blocks.start[group]))]
    ends = group[np.lexsort((group, blocks.end[group]))]
    end_at = blocks.end[ends].tolist()
    ends = ends.tolist()
    e = 0
    for i in recs.tolist():
        start = int(blocks.start[i])
        k = e
        while k < len(ends) and end_at[k] <= start:
            k += 1
        yield i, ends[e:k]
        e = k


# -- shared objects -----------------------------------------------------------------------------
def object_groups(blocks: Blocks, todo: np.ndarray) -> list[np.ndarray]:
    """Blocks to share objects among, grouped by candidate pools (an object never mixes pool
    preferences), groups in order of their first block."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for i in np.asarray(todo, np.int64).tolist():
        groups.setdefault(blocks.pools[i], []).append(i)
    return [np.asarray(g, np.int64) for g in groups.values()]


def lay_out_objects(arena: Arena, objects: list[list[int]], planner: str) -> None:
    """Lay shared objects end to end in the given order (TFLite GPU's ``ObjectsToOffsets``; the
    graph executor's storage ids): each object goes to the first candidate pool (of its
    members) where it fits above the fixed blocks and the objects already laid there, at the
    lcm of its members' alignments; every member sits at the object's offset."""
    bl = arena.blocks
    top = arena.top
    fixed_top = arena.height.copy()  # fixed and zero-size blocks placed so far
    level = fixed_top.copy()
    for members in objects:
        if not members:
            continue
        size = int(max(top[m] for m in members))
        for p in bl.pools[members[0]]:
            a = math.lcm(*(arena.align(m, p) for m in members))
            off = int(align_up(int(level[p]), a))
            if off + size <= arena.cap[p]:
                for m in members:
                    arena.commit(m, p, off)
                level[p] = off + size
                break
        else:
            big = max(members, key=lambda m: (int(top[m]), -m))
            raise capacity_error(bl, big, planner)


def rand_r(state: int) -> tuple[int, int]:
    """glibc's ``rand_r``: ``(value, new_state)`` (TVM USMP's hill climbing seeds it with 0)."""
    nxt = state
    nxt = (nxt * 1103515245 + 12345) & 0xFFFFFFFF
    result = (nxt // 65536) % 2048
    nxt = (nxt * 1103515245 + 12345) & 0xFFFFFFFF
    result = (result << 10) ^ ((nxt // 65536) % 1024)
    nxt = (nxt * 1103515245 + 12345) & 0xFFFFFFFF
    result = (result << 10) ^ ((nxt // 65536) % 1024)
    return result, nxt


def offset_plan(problem: Problem, name: str, *, order: Order, choose: Choose,
                alignment: int = 1, round_to: int = 1, merged: bool = True) -> Plan:
    """The common shape of an offset replica: blocks, fixed and empty ones first, then
    ``order(blocks, arena, todo)`` placed one by one with ``choose(arena, i, pool)``.

    ``alignment`` (bytes) joins every block's alignment; ``round_to`` (bytes) pads sizes;
    ``merged`` picks the arena's obstacle source (the same offsets either way, see
    :class:`Arena`; only the speed differs).
    """
    import time

    started = time.perf_counter()
    blocks, extra = prepare(problem, alignment)
    arena = Arena(blocks, top=padded_sizes(blocks, round_to), extra=extra, merged=merged)
    todo = arena.place_fixed_and_empty(name)
    arena.place_in_order(order(blocks, arena, todo), choose, name)
    return finish(blocks, problem, arena.pool_of, arena.offset, planner=name, started=started)


def check_alignment(value: object, option: str = "alignment") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{option} must be a positive integer (bytes), got {value!r}")
    return value


def objects_plan(problem: Problem, name: str, assign: Assign, *, alignment: int = 1) -> Plan:
    """The common shape of a shared-object replica: fixed and empty blocks first, then
    ``assign(blocks, group)`` (a list of objects, each a list of blocks) per group of blocks
    with the same candidate pools, then the objects laid end to end (:func:`lay_out_objects`).
    """
    import time

    started = time.perf_counter()
    blocks, extra = prepare(problem, alignment)
    arena = Arena(blocks, extra=extra)
    todo = arena.place_fixed_and_empty(name)
    objects: list[list[int]] = []
    for group in object_groups(blocks, todo):
        objects.extend(assign(blocks, group))
    lay_out_objects(arena, objects, name)
    return finish(blocks, problem, arena.pool_of, arena.offset, planner=name, started=started,
                  stats={"objects": len(objects)})
