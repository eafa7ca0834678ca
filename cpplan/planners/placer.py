"""The placement engine under cpplan's own heuristics: put blocks one at a time into the gaps left
by the blocks already placed (first-fit or best-fit), fast enough for 60 000 buffers.

What it guarantees
------------------
* A block is placed at an offset where none of its pieces shares a byte with a piece of another
  placed block of the same pool at a shared moment; the offset is a multiple of the block's
  alignment in that pool (:meth:`Blocks.align_in`) and the block's top stays within the pool's
  capacity. Zero-size pieces collide with nothing.
* Candidate pools are tried in order; the block goes to the first one where it fits.
* Fixed blocks go at their fixed offset, in the first candidate pool where that offset is free
  and within capacity.
* Deterministic: the same blocks, order and mode always give the same offsets.

How a position is chosen
------------------------
For a block with pieces ``(s, e, lo, hi)``, a placed piece ``(s', e', lo', hi')`` at absolute
bytes ``[a', b')`` that shares a moment with a piece forbids the block offsets
``o in [a' - hi + 1, b' - lo)``. The union of forbidden intervals leaves *free regions* of
offsets ``[r_lo, r_hi]``; for a plain buffer of size ``z`` a free region of length ``r`` is a gap
of ``r + z`` bytes between two placed buffers, so the words of the field carry over:

* **first-fit**: the lowest aligned offset in any free region (the lowest offset that fits);
* **best-fit**: the free region with the smallest length (the smallest sufficient gap) among the
  regions bounded above by a placed block, ties to the lowest offset; only when no such gap fits
  does the block go into the open region above everything (at its lowest aligned offset).

The region lengths are measured before alignment and after clipping at the capacity.

Speed
-----
The naive loop over all placed blocks is O(n^2). Here the placed pieces are kept, per pool, as
merged byte runs in a segment tree over buckets of time (:mod:`cpplan.planners.occupancy`): a
query returns a few hundred runs however many blocks are placed (a well packed pool over a long
time window is a handful of runs), joined into the union of the bytes the block meets, and the
free regions lie between those runs. The tree and the placement loop run in C, a stretch of
the order at a time between two looks at the clock. The tree only grows: after a removal
(:meth:`Placer.unplace`, :meth:`Placer.restore`) it is rebuilt from the placed blocks on next
use.

XLA's heap simulator solves the same sub-problem with an interval tree
(xla/service/heap_simulator, ``BufferIntervalTree``) and MiniMalloc (google/minimalloc,
``src/solver.cc``) with per-section offset bookkeeping. :class:`PieceIndex` (below) is the other
classic answer, interval stabbing by bucketing intervals by length; the replica planners' arena
keeps it (:mod:`cpplan.replicas._greedy`).
"""

from __future__ import annotations

import numpy as np

from ..blocks import Blocks
from ..deadline import tick
from ..errors import CapacityError
from .occupancy import tree_index

__all__ = ["Placer", "PieceIndex", "MODES", "capacity_error", "choose", "choose_shifted",
           "choose_small"]

Ints = list[int] | np.ndarray

MODES = ("best", "first")
_INF = np.iinfo(np.int64).max // 4
# Piece ends per time bucket of the tree index: fewer levels to walk against more partial
# pieces to scan; 48 to 128 are alike and 16 is 5-10 % slower (Y_1, S_1, pangu_2.6B).
PER_BUCKET = 64
# Blocks placed in C between two looks at the clock: about a millisecond on Y_1.
STRETCH = 128


class Placer:
    """Placement state over one :class:`Blocks`: which blocks are placed, where.

    ``pool_of[i]`` is ``-1`` while block ``i`` is not placed. Use :meth:`place_order` to place a
    sequence of blocks, :meth:`unplace` to take some out again, :meth:`heights` to read the
    result. ``per_bucket`` tunes the tree's time buckets (piece ends per bucket; the plans do
    not depend on it).
    """

    def __init__(self, blocks: Blocks, per_bucket: int = PER_BUCKET) -> None:
        self.blocks = blocks
        n = len(blocks)
        self.n = n
        npieces = len(blocks.piece_start)
        self._piece_block = np.repeat(np.arange(n, dtype=np.int64), np.diff(blocks.piece_ptr))
        # Placement state: pool and offset per block, pool and absolute bytes per piece (the
        # tree index writes these arrays in place: they are never rebound).
        self.pool_of = np.full(n, -1, np.int64)
        self.offset = np.zeros(n, np.int64)
        self._ppool = np.full(npieces, -1, np.int64)
        self._palo = np.zeros(npieces, np.int64)
        self._pahi = np.zeros(npieces, np.int64)
        capacity = np.where(blocks.pool_capacity < 0, _INF, blocks.pool_capacity)
        self._occ = tree_index(blocks, per_bucket, capacity.astype(np.int64), self.pool_of,
                               self.offset, self._ppool, self._palo, self._pahi)

    # -- state ---------------------------------------------------------------------------------
    def snapshot(self) -> tuple:
        """The placement state, to :meth:`restore` later."""
        return (self.pool_of.copy(), self.offset.copy(), self._ppool.copy(), self._palo.copy(),
                self._pahi.copy())

    def restore(self, state: tuple) -> None:
        """Go back to a :meth:`snapshot` of this placer."""
        for mine, saved in zip((self.pool_of, self.offset, self._ppool, self._palo, self._pahi),
                               state, strict=True):
            mine[:] = saved
        self._occ.invalidate()

    def clear(self) -> None:
        """Take every block out."""
        self.unplace(np.nonzero(self.pool_of >= 0)[0])

    def unplace(self, which: np.ndarray | list[int]) -> None:
        """Take blocks ``which`` out (their bytes become free)."""
        which = np.asarray(which, np.int64)
        if not len(which):
            return
        self.pool_of[which] = -1
        self._ppool[np.isin(self._piece_block, which)] = -1
        self._occ.invalidate()  # the occupancy tree only grows: rebuilt on next use

    def put(self, i: int, pool: int, offset: int) -> None:
        """Record block ``i`` at ``offset`` in ``pool``, unchecked: for callers that choose
        offsets by their own rule and keep the placer as their index of placed blocks (the
        replica planners' arena, :mod:`cpplan.replicas._greedy`)."""
        self._occ.put(i, pool, offset)

    def heights(self) -> np.ndarray:
        """Scaled height of each pool over the placed blocks."""
        h = np.zeros(self.blocks.n_pools, np.int64)
        placed = self.pool_of >= 0
        if placed.any():
            np.maximum.at(h, self.pool_of[placed], self.offset[placed] + self.blocks.size[placed])
        return h

    def objective(self) -> int:
        """``sum(cost * height) + sum(traffic * traffic_cost)`` of the placed blocks, in bytes
        (:meth:`cpplan.blocks.Blocks.objective`)."""
        b = self.blocks
        moved = 0
        if b.traffic.any():
            placed = self.pool_of >= 0
            moved = int((b.traffic[placed] * b.pool_traffic_cost[self.pool_of[placed]]).sum())
        return int((self.heights() * b.pool_cost).sum()) * b.scale + moved

    # -- queries -------------------------------------------------------------------------------
    def occupied(self, pool: int, s: int, e: int) -> tuple[np.ndarray, np.ndarray]:
        """Absolute byte intervals ``[lo, hi)`` taken in ``pool`` at some moment of ``[s, e)``
        (possibly overlapping one another; their union is what counts)."""
        pairs = np.frombuffer(self._occ.occupied(pool, s, e), np.int64).reshape(-1, 2)
        return pairs[:, 0], pairs[:, 1]

    def find_offset(self, i: int, pool: int, mode: str) -> int:
        """Offset for block ``i`` in ``pool`` by ``mode`` (``best`` or ``first``), or -1."""
        return self._occ.find_offset(i, pool, mode == "first")

    def fixed_fits(self, i: int, pool: int, off: int) -> bool:
        """Whether block ``i`` can sit at ``off`` in ``pool`` (capacity and collisions)."""
        return self._occ.fixed_fits(i, pool, off)

    # -- placing -------------------------------------------------------------------------------
    def place(self, i: int, mode: str = "best") -> bool:
        """Place block ``i`` in its first candidate pool where it fits; False if none.

        Reports one placement to the active time budget (:func:`cpplan.deadline.tick`), which
        raises :class:`cpplan.deadline.OutOfTime` once it has expired."""
        tick()
        return self._occ.place_one(i, mode == "first")

    def place_fixed(self, planner: str = "") -> None:
        """Place every fixed block not placed yet (in block order); raises
        :class:`CapacityError` if one cannot sit at its offset in any candidate pool."""
        self.place_order(np.nonzero(self.blocks.fixed >= 0)[0], "best", planner)

    def place_order(self, order: np.ndarray | list[int], mode: str = "best",
                    planner: str = "") -> None:
        """Place the blocks of ``order`` that are not placed yet, in that order.

        Reports the placements to the active time budget (:func:`cpplan.deadline.tick`) a
        stretch at a time, before placing them. Raises :class:`CapacityError` naming the first
        block that fits in none of its pools.
        """
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
        todo = np.ascontiguousarray(order, np.int64)
        for k in range(0, len(todo), STRETCH):
            stop = min(k + STRETCH, len(todo))
            tick(int((self.pool_of[todo[k:stop]] < 0).sum()))
            got = self._occ.place(todo, k, stop, mode == "first")
            if got < stop:
                raise self.failure(int(todo[got]), planner)

    def failure(self, i: int, planner: str = "") -> CapacityError:
        """The error for block ``i`` that fits in none of its pools."""
        return capacity_error(self.blocks, i, planner)


def capacity_error(blocks: Blocks, i: int, planner: str = "") -> CapacityError:
    """The error for block ``i`` of ``blocks`` that fits in none of its pools: the buffer, what
    it needs and each candidate pool's capacity (every planner on blocks raises this one)."""
    problem = blocks.problem
    b = problem.buffers[int(blocks.root[i])]
    if b.offset is not None:
        what = f"fixed at offset {b.offset}, size {b.size}"
    else:
        what = f"{int(blocks.size[i]) * blocks.scale} bytes during [{b.start}, {b.end})"
    caps = ", ".join(f"{problem.pools[p].name!r} (capacity {problem.pools[p].capacity})"
                     for p in blocks.pools[i])
    head = f"{planner}: " if planner else ""
    return CapacityError(f"{head}buffer {b.id!r} ({what}) fits in none of its pools: {caps}")

def choose(flo: np.ndarray, fhi: np.ndarray, top: int, align: int, mode: str) -> int:
    """The offset picked among the free regions left by forbidden intervals ``[flo, fhi)``.

    Offsets range over ``[0, top]`` and must be multiples of ``align``. ``first``: the lowest
    such offset. ``best``: the lowest aligned offset of the shortest free region bounded above
    by a forbidden interval (ties: the lowest region); the open region above every interval only
    when no bounded one fits. Returns -1 when nothing fits.
    """
    return choose_shifted(flo, fhi, top, align, mode, 0, 0)


def choose_shifted(flo: np.ndarray, fhi: np.ndarray, top: int, align: int, mode: str,
                   dlo: int, dhi: int) -> int:
    """:func:`choose` for the intervals ``[flo - dlo, fhi - dhi)``.

    Computed from the lows and the highs sorted apart (two sorts, no argsort): with ``S`` and
    ``E`` sorted, the offsets outside every interval are exactly the ranges ``[E[k-1], S[k])``
    where ``E[k-1] < S[k]`` (then the first ``k`` intervals by low are those with the ``k``
    smallest highs), below ``S[0]`` and from ``E[-1]`` on. Bounded region ``k`` is
    ``[max(E[k-1], 0), min(S[k] - 1, top)]`` (region 0 starts at 0); where ``E[k-1] >= S[k]``
    it is empty and never fits. These are the regions of a sort by low with a running maximum
    of the highs, region for region, so the choice is the same.
    """
    if len(flo) == 0:
        return 0
    return _choose_sorted(np.sort(flo), np.sort(fhi), top, align, mode, dlo, dhi)


def _choose_sorted(S: np.ndarray, E: np.ndarray, top: int, align: int, mode: str, dlo: int,
                   dhi: int) -> int:
    """:func:`choose_shifted` of intervals whose lows ``S`` and highs ``E`` come sorted apart
    (at least one interval)."""
    n = len(S)
    hi0 = int(S[0]) - dlo - 1  # region 0: [0, hi0] (0 is aligned)
    if hi0 > top:
        hi0 = top
    first = mode == "first"
    if first and hi0 >= 0:
        return 0
    cut = int(S[-1]) - dlo - 1 > top  # a bounded region reaches past top
    if n > 1 and (align == 1 and top < _INF and not cut and int(E[0]) - dhi >= 0):
        # No clipping, no rounding: region k >= 1 is [E[k-1] - dhi, S[k] - dlo - 1], its
        # length is S[k] - E[k-1] - (dlo + 1 - dhi), and it fits iff that is >= 0.
        d = S[1:] - E[:-1]
        d -= dlo + 1 - dhi
        if first:
            k = int((d >= 0).argmax())
            if d[k] >= 0:
                return int(E[k]) - dhi
        else:
            # Negative lengths read as huge unsigned ones: the argmin is the shortest region
            # that fits (lengths stay below top < _INF), ties to the lowest.
            k = int(d.view(np.uint64).argmin())
            dk = int(d[k])
            if hi0 >= 0 and (dk < 0 or hi0 <= dk):
                return 0
            if dk >= 0:
                return int(E[k]) - dhi
    elif n > 1:
        lo = E[:-1] - dhi
        np.maximum(lo, 0, out=lo)
        hi = S[1:] - (dlo + 1)
        if cut:
            np.minimum(hi, top, out=hi)
        start = -(-lo // align) * align if align > 1 else lo
        ok = start <= hi
        if first:
            k = int(ok.argmax())
            if ok[k]:
                return int(start[k])
        else:
            # One argmin over every region, _INF where a region does not fit (region 0 first).
            if hi0 >= 0 or ok.any():
                masked = np.where(ok, hi - lo, _INF)
                k = int(masked.argmin())
                return 0 if (hi0 if hi0 >= 0 else _INF) <= masked[k] else int(start[k])
    if hi0 >= 0:
        return 0
    st = max(int(E[-1]) - dhi, 0)
    st = -(-st // align) * align
    return st if st <= top else -1


def choose_small(flo: Ints, fhi: Ints, top: int, align: int, mode: str, dlo: int = 0,
                 dhi: int = 0) -> int:
    """:func:`choose` for a few intervals ``[flo - dlo, fhi - dhi)``, in plain Python (same
    result, no numpy overhead)."""
    cur = 0  # every offset below cur is forbidden (or below 0)
    best = -1
    best_len = _INF
    first = mode == "first"
    for f, h in sorted(zip(flo, fhi, strict=True)):
        f -= dlo
        h -= dhi
        if f > cur:  # free region [cur, f - 1]
            r_hi = f - 1 if f - 1 < top else top
            st = -(-cur // align) * align
            if st <= r_hi:
                if first:
                    return st
                if r_hi - cur < best_len:
                    best_len = r_hi - cur
                    best = st
        if h > cur:
            cur = h
            if cur > top:
                break
    if best >= 0:
        return best
    st = -(-cur // align) * align
    return st if st <= top else -1


class PieceIndex:
    """Static index of the pieces of ``blocks`` for time-overlap queries (the tiers of the module
    docstring). Pieces with ``hi <= lo`` are left out; ``hi`` (one per piece, default
    ``blocks.piece_hi``) lets a caller that pads blocks say which pieces take bytes. Also the
    index of the replica planners' arena (:mod:`cpplan.replicas._greedy`)."""

    def __init__(self, blocks: Blocks, hi: np.ndarray | None = None) -> None:
        ps, pe = blocks.piece_start, blocks.piece_end
        hi = blocks.piece_hi if hi is None else hi
        live = np.nonzero(hi > blocks.piece_lo)[0]
        length = (pe - ps)[live]
        tier = np.floor(np.log2(np.maximum(length, 1))).astype(np.int64)
        big = int(len(blocks.times)) + 2
        key = tier * big + ps[live]
        order = np.lexsort((live, key))
        self.key = key[order]
        self.piece = live[order]
        self.end = pe[self.piece]
        tiers = np.unique(tier)
        self.base = tiers * big
        self.span = np.zeros(len(tiers), np.int64)
        if len(tiers):
            np.maximum.at(self.span, np.searchsorted(tiers, tier), length)

    def overlapping(self, s: int, e: int) -> np.ndarray:
        """Ids of the indexed pieces sharing a moment with ``[s, e)`` (placed or not)."""
        a = np.searchsorted(self.key, self.base + np.maximum(s - self.span + 1, 0))
        b = np.searchsorted(self.key, self.base + e)
        cnt = b - a
        total = int(cnt.sum())
        if total == 0:
            return _EMPTY
        nz = cnt > 0
        a, cnt = a[nz], cnt[nz]
        if len(a) == 1:
            idx = np.arange(a[0], a[0] + total)
        else:
            idx = np.arange(total) + np.repeat(a - (np.cumsum(cnt) - cnt), cnt)
        idx = idx[self.end[idx] > s]
        return self.piece[idx]


_EMPTY = np.zeros(0, np.int64)
