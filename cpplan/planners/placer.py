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
The naive loop over all placed blocks is O(n^2) Python. Here the candidates are found through a
static index (Python never loops over candidates): pieces are bucketed into tiers by lifetime
length (powers of two) and sorted by start inside each tier. A piece of tier ``k`` is at most
``maxlen_k`` long, so every piece of that tier that overlaps ``[s, e)`` starts in
``(s - maxlen_k, e)``: one slice per tier, found for all tiers by one ``searchsorted``. The
slices are gathered in one vectorised step, filtered by "placed in this pool and still alive at
``s``", and the free regions come from one sort of the forbidden intervals and a running maximum.
Every piece's slice holds at most about twice the tier's concurrent pieces beyond the true
overlaps, so the work per block is proportional to what it overlaps, all of it in numpy.
Because the index is static and placement is a state array, *removing* blocks is free, which is
what the local search needs (re-place a suffix of the order).

This is the classic interval-stabbing idea (bucketing intervals by length to turn stabbing into
range queries, as in the "length-class" filters of interval joins); XLA's heap simulator solves
the same sub-problem with an interval tree (xla/service/heap_simulator, ``BufferIntervalTree``)
and MiniMalloc (google/minimalloc, ``src/solver.cc``) with per-section offset bookkeeping.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

from ..blocks import Blocks
from ..deadline import tick
from ..errors import CapacityError

__all__ = ["Placer", "PieceIndex", "MODES", "capacity_error", "choose", "choose_small"]

Ints = list[int] | np.ndarray

MODES = ("best", "first")
_INF = np.iinfo(np.int64).max // 4
TREE_FROM = 3000  # blocks; below this the static index is faster
_NUMPY_FROM = 160  # intervals; below this the plain Python chooser is faster


class Placer:
    """Placement state over one :class:`Blocks`: which blocks are placed, where.

    ``pool_of[i]`` is ``-1`` while block ``i`` is not placed. Use :meth:`place_order` to place a
    sequence of blocks, :meth:`unplace` to take some out again, :meth:`heights` to read the
    result. ``index`` chooses how time-overlapping placed pieces are found: ``"tiers"`` (static,
    vectorised, free removal: best for up to a few thousand blocks), ``"tree"`` (merged
    occupancy tree: best for tens of thousands) or ``"auto"``. ``per_bucket`` tunes the tree's
    time buckets (piece ends per bucket); both indexes give the same plans.
    """

    def __init__(self, blocks: Blocks, index: str = "auto", per_bucket: int = 16) -> None:
        self.blocks = blocks
        n = len(blocks)
        self.n = n
        if index == "auto":
            index = "tree" if n > TREE_FROM else "tiers"
        if index not in ("tiers", "tree"):
            raise ValueError(f"unknown index {index!r}")
        self.index = index
        npieces = len(blocks.piece_start)
        self._piece_block = np.repeat(np.arange(n, dtype=np.int64), np.diff(blocks.piece_ptr))
        # Placement state per piece (Python lists: cheap to update one by one).
        self._ppool = [-1] * npieces
        self._palo = [0] * npieces
        self._pahi = [0] * npieces
        self._ps = blocks.piece_start.tolist()
        self._pe = blocks.piece_end.tolist()
        self._plo = blocks.piece_lo.tolist()
        self._phi = blocks.piece_hi.tolist()
        self.pool_of = np.full(n, -1, np.int64)
        self.offset = np.zeros(n, np.int64)
        self._start = blocks.start.tolist()
        self._end = blocks.end.tolist()
        self._size = blocks.size.tolist()
        self._pptr = blocks.piece_ptr.tolist()
        self._cap = [(_INF if c < 0 else int(c)) for c in blocks.pool_capacity.tolist()]
        self._fixed = blocks.fixed.tolist()
        self._pools = blocks.pools
        self._align: dict[tuple[int, int], int] = {}
        self._balign = blocks.alignment.tolist()
        if index == "tiers":
            self._tiers = PieceIndex(blocks)
            self._np_pool = np.full(npieces, -1, np.int64)
            self._np_alo = np.zeros(npieces, np.int64)
            self._np_ahi = np.zeros(npieces, np.int64)
        else:
            self._buckets = _Buckets(blocks, per_bucket)
            self._trees: dict[int, _Tree] = {}
            self._stale = False

    # -- state ---------------------------------------------------------------------------------
    def snapshot(self) -> tuple:
        """The placement state, to :meth:`restore` later."""
        extra = ()
        if self.index == "tiers":
            extra = (self._np_pool.copy(), self._np_alo.copy(), self._np_ahi.copy())
        return (self.pool_of.copy(), self.offset.copy(), list(self._ppool), list(self._palo),
                list(self._pahi), extra)

    def restore(self, state: tuple) -> None:
        """Go back to a :meth:`snapshot` of this placer."""
        pool_of, offset, ppool, palo, pahi, extra = state
        self.pool_of[:] = pool_of
        self.offset[:] = offset
        self._ppool[:] = ppool
        self._palo[:] = palo
        self._pahi[:] = pahi
        if self.index == "tiers":
            self._np_pool[:], self._np_alo[:], self._np_ahi[:] = extra
        else:
            self._stale = True

    def clear(self) -> None:
        """Take every block out."""
        self.unplace(np.nonzero(self.pool_of >= 0)[0])

    def unplace(self, which: np.ndarray | list[int]) -> None:
        """Take blocks ``which`` out (their bytes become free)."""
        which = np.asarray(which, np.int64)
        if not len(which):
            return
        self.pool_of[which] = -1
        pieces = np.nonzero(np.isin(self._piece_block, which))[0].tolist()
        for q in pieces:
            self._ppool[q] = -1
        if self.index == "tiers":
            self._np_pool[pieces] = -1
        else:
            self._stale = True  # the occupancy tree only grows: rebuild it on next use

    def put(self, i: int, pool: int, offset: int) -> None:
        """Record block ``i`` at ``offset`` in ``pool``, unchecked: for callers that choose
        offsets by their own rule and keep the placer as their index of placed blocks (the
        replica planners' arena, :mod:`cpplan.replicas._greedy`)."""
        self._commit(i, pool, offset)

    def _commit(self, i: int, pool: int, off: int) -> None:
        self.pool_of[i] = pool
        self.offset[i] = off
        a, b = self._pptr[i], self._pptr[i + 1]
        tiers = self.index == "tiers"
        for q in range(a, b):
            lo, hi = self._plo[q] + off, self._phi[q] + off
            self._ppool[q], self._palo[q], self._pahi[q] = pool, lo, hi
            if tiers:
                self._np_pool[q], self._np_alo[q], self._np_ahi[q] = pool, lo, hi
            elif hi > lo and not self._stale:
                self._tree(pool).add(self._ps[q], self._pe[q], lo, hi)

    def _tree(self, pool: int) -> _Tree:
        tree = self._trees.get(pool)
        if tree is None:
            tree = self._trees[pool] = _Tree(self._buckets)
        return tree

    def _rebuild(self) -> None:
        self._trees = {}
        self._stale = False
        for q, pool in enumerate(self._ppool):
            if pool >= 0 and self._pahi[q] > self._palo[q]:
                self._tree(pool).add(self._ps[q], self._pe[q], self._palo[q], self._pahi[q])

    def heights(self) -> np.ndarray:
        """Scaled height of each pool over the placed blocks."""
        h = np.zeros(self.blocks.n_pools, np.int64)
        placed = self.pool_of >= 0
        if placed.any():
            np.maximum.at(h, self.pool_of[placed], self.offset[placed] + self.blocks.size[placed])
        return h

    def objective(self) -> int:
        """``sum(cost * height)`` in scaled bytes."""
        return int((self.heights() * self.blocks.pool_cost).sum())

    # -- queries -------------------------------------------------------------------------------
    def occupied(self, pool: int, s: int, e: int) -> tuple[Ints, Ints]:
        """Absolute byte intervals ``[lo, hi)`` taken in ``pool`` at some moment of ``[s, e)``
        (possibly overlapping one another; their union is what counts)."""
        if self.index == "tiers":
            ids = self._tiers.overlapping(s, e)
            ids = ids[self._np_pool[ids] == pool]
            if len(ids) > _NUMPY_FROM:
                return self._np_alo[ids], self._np_ahi[ids]
            return self._np_alo[ids].tolist(), self._np_ahi[ids].tolist()
        if self._stale:
            self._rebuild()
        tree = self._trees.get(pool)
        los: list[int] = []
        his: list[int] = []
        if tree is not None:
            tree.query(s, e, los, his)
        self._buckets.partial(s, e, pool, self._ppool, self._palo, self._pahi, los, his)
        return los, his

    def _forbidden(self, i: int, pool: int) -> tuple[Ints, Ints, int, int]:
        """Forbidden offset intervals for block ``i`` in ``pool``, as ``(lows, highs, dlo,
        dhi)``: the block at offset ``o`` collides iff ``lows[k] - dlo <= o < highs[k] - dhi``
        for some ``k`` (the shifts are applied by the caller, so plain buffers skip a pass)."""
        a, b = self._pptr[i], self._pptr[i + 1]
        if b - a == 1:
            hi, lo = self._phi[a], self._plo[a]
            if hi <= lo:
                return [], [], 0, 0  # a zero-size piece collides with nothing
            olo, ohi = self.occupied(pool, self._ps[a], self._pe[a])
            return olo, ohi, hi - 1, lo
        flo: list = []
        fhi: list = []
        for q in range(a, b):
            hi, lo = self._phi[q], self._plo[q]
            if hi <= lo:
                continue
            # The block's own pieces are never placed while it is being placed.
            olo, ohi = self.occupied(pool, self._ps[q], self._pe[q])
            flo.append(np.asarray(olo, np.int64) - (hi - 1))
            fhi.append(np.asarray(ohi, np.int64) - lo)
        if not flo:
            return [], [], 0, 0
        return np.concatenate(flo), np.concatenate(fhi), 0, 0

    def alignment(self, i: int, pool: int) -> int:
        """Effective alignment (scaled) of block ``i`` in ``pool``."""
        key = (self._balign[i], pool)
        got = self._align.get(key)
        if got is None:
            got = self._align[key] = self.blocks.align_in(i, pool)
        return got

    def find_offset(self, i: int, pool: int, mode: str) -> int:
        """Offset for block ``i`` in ``pool`` by ``mode`` (``best`` or ``first``), or -1."""
        top = self._cap[pool] - self._size[i]  # highest allowed offset
        if top < 0:
            return -1
        flo, fhi, dlo, dhi = self._forbidden(i, pool)
        if len(flo) > _NUMPY_FROM:
            flo = np.asarray(flo, np.int64)
            fhi = np.asarray(fhi, np.int64)
            if dlo:
                flo = flo - dlo
            if dhi:
                fhi = fhi - dhi
            return choose(flo, fhi, top, self.alignment(i, pool), mode)
        return choose_small(flo, fhi, top, self.alignment(i, pool), mode, dlo, dhi)

    def fixed_fits(self, i: int, pool: int, off: int) -> bool:
        """Whether block ``i`` can sit at ``off`` in ``pool`` (capacity and collisions)."""
        if off + self._size[i] > self._cap[pool]:
            return False
        flo, fhi, dlo, dhi = self._forbidden(i, pool)
        lo, hi = off + dlo, off + dhi
        return not any(f <= lo and hi < h for f, h in zip(flo, fhi, strict=True))

    # -- placing -------------------------------------------------------------------------------
    def place(self, i: int, mode: str = "best") -> bool:
        """Place block ``i`` in its first candidate pool where it fits; False if none.

        Reports one placement to the active time budget (:func:`cpplan.deadline.tick`), which
        raises :class:`cpplan.deadline.OutOfTime` once it has expired."""
        tick()
        fixed = self._fixed[i]
        for pool in self._pools[i]:
            if fixed >= 0:
                if self.fixed_fits(i, pool, fixed):
                    self._commit(i, pool, fixed)
                    return True
                continue
            off = self.find_offset(i, pool, mode)
            if off >= 0:
                self._commit(i, pool, off)
                return True
        return False

    def place_fixed(self, planner: str = "") -> None:
        """Place every fixed block not placed yet (in block order); raises
        :class:`CapacityError` if one cannot sit at its offset in any candidate pool."""
        for i in np.nonzero(self.blocks.fixed >= 0)[0].tolist():
            if self.pool_of[i] < 0 and not self.place(i):
                raise self.failure(i, planner)

    def place_order(self, order: np.ndarray | list[int], mode: str = "best",
                    planner: str = "") -> None:
        """Place the blocks of ``order`` that are not placed yet, in that order.

        Raises :class:`CapacityError` naming the first block that fits in none of its pools.
        """
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
        pool_of = self.pool_of
        for i in np.asarray(order, np.int64).tolist():
            if pool_of[i] < 0 and not self.place(i, mode):
                raise self.failure(i, planner)

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
    if len(flo) == 0:
        return 0
    order = np.argsort(flo)
    f = flo[order]
    cm = np.maximum.accumulate(fhi[order])
    r_lo = np.empty(len(f) + 1, np.int64)
    r_lo[0] = 0
    np.maximum(cm, 0, out=r_lo[1:])
    r_hi = np.empty(len(f) + 1, np.int64)
    r_hi[:-1] = f
    r_hi[:-1] -= 1
    r_hi[-1] = top
    np.minimum(r_hi, top, out=r_hi)
    start = -(-r_lo // align) * align if align > 1 else r_lo
    ok = start <= r_hi
    if mode == "first":
        k = int(np.argmax(ok))
        return int(start[k]) if ok[k] else -1
    bounded = ok[:-1]
    if bounded.any():
        length = np.where(bounded, r_hi[:-1] - r_lo[:-1], _INF)
        return int(start[int(np.argmin(length))])
    return int(start[-1]) if ok[-1] else -1


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


class _Buckets:
    """Compressed time cut into consecutive buckets, and for each bucket the pieces that are
    *partial* in it (live in it without covering it whole): at most two buckets per piece.

    Buckets are grown until about ``per_bucket`` piece starts and ends fall inside; a moment
    where more pieces start or end than that (the step where hundreds of weights come alive)
    gets a bucket of its own, which no piece can cover partially.
    """

    def __init__(self, blocks: Blocks, per_bucket: int = 16) -> None:
        t = max(int(len(blocks.times)), 1)
        ps, pe = blocks.piece_start, blocks.piece_end
        live = blocks.piece_hi > blocks.piece_lo
        weight = np.bincount(np.concatenate([ps[live], pe[live] - 1]), minlength=t).tolist()
        starts = []
        acc = per_bucket + 1
        for r, wgt in enumerate(weight):
            if wgt > per_bucket or acc + wgt > per_bucket:
                starts.append(r)
                acc = wgt
                if wgt > per_bucket:
                    acc = per_bucket + 1  # a heavy moment stays alone
            else:
                acc += wgt
        self.count = len(starts)
        bstart = np.asarray(starts + [t], np.int64)
        self.bstart = bstart.tolist()  # bucket c spans [bstart[c], bstart[c + 1])
        of = np.repeat(np.arange(self.count, dtype=np.int64), np.diff(bstart))
        self.of = of.tolist()  # bucket of each moment
        ids = np.arange(len(ps), dtype=np.int64)
        cs = of[ps]
        ce = of[np.maximum(pe - 1, 0)]
        full_s = (bstart[cs] == ps) & (pe >= bstart[cs + 1])
        full_e = (bstart[ce + 1] == pe) & (ps <= bstart[ce])
        m1 = live & ~full_s
        m2 = live & ~full_e & (ce != cs)
        bucket = np.concatenate([cs[m1], ce[m2]])
        piece = np.concatenate([ids[m1], ids[m2]])
        order = np.lexsort((piece, bucket))
        self.piece = piece[order].tolist()
        self.ptr = np.searchsorted(bucket[order], np.arange(self.count + 1)).tolist()
        self.ps = ps.tolist()
        self.pe = pe.tolist()
        # The tree over buckets, and the nodes whose agg some piece's query will read (the
        # canonical nodes of every piece's whole-bucket range).
        size = 1
        while size < self.count:
            size *= 2
        self.size = size
        need = bytearray(2 * size)
        for s, e in zip(self.ps, self.pe, strict=True):
            _, _, f0, f1 = self.span(s, e)
            lo, hi = f0 + size, f1 + size
            while lo < hi:
                if lo & 1:
                    need[lo] = 1
                    lo += 1
                if hi & 1:
                    hi -= 1
                    need[hi] = 1
                lo >>= 1
                hi >>= 1
        self.need = need

    def span(self, s: int, e: int) -> tuple[int, int, int, int]:
        """Buckets of ``[s, e)``: first and last touched ``c0, c1`` and the range ``[f0, f1)``
        of buckets it covers whole."""
        of, bstart = self.of, self.bstart
        c0, c1 = of[s], of[e - 1]
        f0 = c0 if bstart[c0] == s else c0 + 1
        f1 = c1 + 1 if bstart[c1 + 1] == e else c1
        return c0, c1, f0, f1

    def partial(self, s: int, e: int, pool: int, ppool: list[int], palo: list[int],
                pahi: list[int], los: list[int], his: list[int]) -> None:
        """Append the byte intervals of pieces placed in ``pool``, partial in an end bucket of
        ``[s, e)``, that share a moment with ``[s, e)``."""
        c0, c1, f0, f1 = self.span(s, e)
        ps, pe, ptr, piece = self.ps, self.pe, self.ptr, self.piece
        for c in _ends(c0, c1, f0, f1):
            for k in range(ptr[c], ptr[c + 1]):
                q = piece[k]
                if ppool[q] == pool and ps[q] < e and pe[q] > s:
                    los.append(palo[q])
                    his.append(pahi[q])


def _ends(c0: int, c1: int, f0: int, f1: int) -> tuple[int, ...]:
    """The buckets among ``c0, c1`` that a span touches without covering them whole."""
    first = c0 < f0 or f0 >= f1
    last = c1 != c0 and c1 >= f1
    if first and last:
        return (c0, c1)
    if first:
        return (c0,)
    if last:
        return (c1,)
    return ()


class _Tree:
    """Occupancy of one pool as a segment tree over buckets of time.

    Every node keeps two unions of byte intervals, each as sorted disjoint runs (Python lists):
    ``cover`` holds the pieces that cover the node's whole time range (a piece is in the cover
    of the O(log) nodes of its canonical decomposition), ``agg`` the pieces that have an end
    inside the node's range (they are added along the paths from their end buckets to the root).
    A query for ``[s, e)`` reads ``cover`` and ``agg`` of its canonical nodes and the ``cover``
    of their ancestors (which all lie on the paths to its two boundary buckets), plus, in its
    end buckets, the covers along their paths and the partial pieces (:class:`_Buckets`).
    A piece sharing a moment with the query is found exactly once in one of these places (a
    piece that meets a canonical node without covering it has an end inside it), and nothing
    found misses the query. ``agg`` is only kept at nodes that some query will read (``need``).

    Merged runs are what makes this fast: a well packed pool over a long time window is a
    handful of runs, however many buffers made it. Pieces can be added, not removed (the
    :class:`Placer` rebuilds after a removal).
    """

    def __init__(self, buckets: _Buckets) -> None:
        self.buckets = buckets
        self.size = buckets.size
        self.need = buckets.need
        self.cover: list[list | None] = [None] * (2 * self.size)
        self.agg: list[list | None] = [None] * (2 * self.size)

    def add(self, s: int, e: int, x: int, y: int) -> None:
        """Record bytes ``[x, y)`` taken during ``[s, e)``."""
        size = self.size
        c0, c1, f0, f1 = self.buckets.span(s, e)
        cover, agg, need = self.cover, self.agg, self.need
        if f0 < f1:
            lo, hi = f0 + size, f1 + size
            while lo < hi:
                if lo & 1:
                    _add(cover, lo, x, y)
                    lo += 1
                if hi & 1:
                    hi -= 1
                    _add(cover, hi, x, y)
                lo >>= 1
                hi >>= 1
        # agg along the paths from both end buckets (shared ancestors once).
        node, other = c0 + size, c1 + size
        while node != other:
            if need[node]:
                _add(agg, node, x, y)
            if need[other]:
                _add(agg, other, x, y)
            node >>= 1
            other >>= 1
        while node:
            if need[node]:
                _add(agg, node, x, y)
            node >>= 1

    def query(self, s: int, e: int, los: list[int], his: list[int]) -> None:
        """Append the runs of every piece that shares a moment with ``[s, e)``, except those
        partial in an end bucket (left to :class:`_Buckets`)."""
        size = self.size
        c0, c1, f0, f1 = self.buckets.span(s, e)
        cover, agg = self.cover, self.agg
        leaves = [c + size for c in _ends(c0, c1, f0, f1)]
        if f0 < f1:
            lo, hi = f0 + size, f1 + size
            while lo < hi:
                if lo & 1:
                    got = agg[lo]
                    if got is not None:
                        los += got[0]
                        his += got[1]
                    got = cover[lo]
                    if got is not None:
                        los += got[0]
                        his += got[1]
                    lo += 1
                if hi & 1:
                    hi -= 1
                    got = agg[hi]
                    if got is not None:
                        los += got[0]
                        his += got[1]
                    got = cover[hi]
                    if got is not None:
                        los += got[0]
                        his += got[1]
                lo >>= 1
                hi >>= 1
            leaves.append((f0 + size) >> 1)
            leaves.append((f1 - 1 + size) >> 1)
        seen = set()
        for node in leaves:
            while node and node not in seen:
                seen.add(node)
                got = cover[node]
                if got is not None:
                    los += got[0]
                    his += got[1]
                node >>= 1


def _add(lists: list, node: int, x: int, y: int) -> None:
    """Union ``[x, y)`` into the sorted disjoint runs of ``lists[node]``."""
    got = lists[node]
    if got is None:
        lists[node] = [[x], [y]]
        return
    lo, hi = got
    i = bisect_left(hi, x)
    j = bisect_right(lo, y)
    if i == j:
        lo.insert(i, x)
        hi.insert(i, y)
        return
    if lo[i] < x:
        x = lo[i]
    if hi[j - 1] > y:
        y = hi[j - 1]
    lo[i:j] = (x,)
    hi[i:j] = (y,)


_EMPTY = np.zeros(0, np.int64)
