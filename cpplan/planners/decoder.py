"""A fast order decoder for the local search: best-fit or first-fit over an order of the blocks,
re-placing after a change of the order only the blocks whose placement can change.

What it guarantees
------------------
* The offsets it gives for an order are exactly those of
  :class:`cpplan.planners.placer.Placer` placing the fixed blocks first (in block order) and
  then the order with the same mode: same fit rules, same tie-breaks (gaps measured before
  alignment, after clipping at the capacity), same pools, alignment and capacities; aliases
  are handled through their pieces.
* After :meth:`Decoder.move` or :meth:`Decoder.swap` the state equals a full decode of the new
  order (unless ``limit`` is set and the change was ``aborted``); :meth:`Decoder.undo` goes
  back to the state before the last change.

How it is fast
--------------
A block's placement depends only on where its *earlier conflicts* sit (the blocks sharing a
moment with it that come before it in the order). So the decoder precomputes, per block, its
conflicts with the forbidden shift each one implies (``o_i`` is forbidden in
``[o_j + dlo, o_j + dhi)`` for each pair of time-overlapping pieces), and after a change of the
order it re-places a block only if its set of earlier conflicts changed or one of them moved:
the cascade stops where the placement stops changing, instead of re-placing the whole tail of
the order. Everything is plain Python over short lists (no numpy call per block), which beats
the vectorised index below a few thousand blocks. This incremental re-evaluation of a greedy
decoder is the usual trick of order-based local search for packing (see e.g. Imahori, Yagiura
and Ibaraki, "Improved local search algorithms for the rectangle packing problem with general
spatial costs", EJOR 2005, where a move is evaluated by re-decoding only what it affects).
"""

from __future__ import annotations

import numpy as np

from ..blocks import Blocks
from ..deadline import tick
from ..errors import CapacityError
from ..sweep import OverlapIndex, split_lists
from .placer import capacity_error, choose, choose_small

__all__ = ["Decoder", "DECODER_UP_TO", "conflict_lists"]

# Blocks; above this the Placer's suffix search is the better engine. Measured with the lists
# from the overlap index (0.1 s for 4000 blocks): the 12 full decodes of the starts alone
# overrun a 5 s limit (random blocks: 6.8 s at 6000, 10.3 s at 12000, no move made).
DECODER_UP_TO = 4000
_MAX_ENTRIES = 3_000_000  # conflict entries; above this the lists cost too much memory
_INF = 1 << 62
NUMPY_DEGREE = 100  # conflict entries; from here one block's offset is cheaper in numpy


#: ``(nbr, dlo, dhi)``: per block, its conflicting blocks and the shifts (:func:`conflict_lists`)
ConflictLists = tuple[list[list[int]], list[list[int]], list[list[int]]]


def conflict_lists(blocks: Blocks) -> ConflictLists:
    """For each block ``i``: the blocks ``j`` with a piece sharing a moment with a piece of
    ``i`` (both of nonzero size), and the shifts ``dlo, dhi`` such that ``i`` at offset ``o``
    collides with ``j`` at ``o_j`` iff ``o_j + dlo <= o < o_j + dhi`` (one entry per pair of
    overlapping pieces, ordered by the start order of ``i``'s piece, then of ``j``'s).
    Returns ``(nbr, dlo, dhi)`` as lists of lists, or raises ValueError when there would be
    more than :data:`_MAX_ENTRIES` entries (checked on the piece pairs before any list is
    built, from :class:`cpplan.sweep.OverlapIndex`, so a refusal costs O(n log n))."""
    n = len(blocks)
    plo, phi = blocks.piece_lo, blocks.piece_hi
    pblock = np.repeat(np.arange(n, dtype=np.int64), np.diff(blocks.piece_ptr))
    index = OverlapIndex(blocks.piece_start, blocks.piece_end, keep=phi > plo, group=pblock)
    # The limit counts pairs before pieces of one block are dropped: a block would need
    # millions of overlapping pieces of its own for that to refuse a problem that fits.
    # Entries by block, then by the start order of the block's piece, then of the other one.
    pi, qj = index.directed(rows=pblock, limit=_MAX_ENTRIES)
    if len(pi) > _MAX_ENTRIES:
        raise ValueError("too many conflicts for the decoder")
    bi = pblock[pi]
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(bi, minlength=n), out=ptr[1:])
    return (split_lists(ptr, pblock[qj]), split_lists(ptr, plo[qj] - phi[pi] + 1),
            split_lists(ptr, phi[qj] - plo[pi]))


class Decoder:
    """Order-based placement state over one :class:`Blocks` (see the module docstring).

    ``order`` holds the blocks the search may reorder (every block that is not fixed); fixed
    blocks sit before all of them, at their fixed offsets. ``mode`` is ``"best"`` or
    ``"first"``. Raises :class:`CapacityError` from the constructor if a fixed block does not
    fit, and ValueError if the problem is too big for the conflict lists.
    """

    def __init__(self, blocks: Blocks, order: list[int] | np.ndarray, mode: str = "best",
                 planner: str = "local-search",
                 lists: ConflictLists | None = None) -> None:
        self.blocks = blocks
        n = self.n = len(blocks)
        self.mode = mode
        self.planner = planner
        self.nbr, self.dlo, self.dhi = lists if lists is not None else conflict_lists(blocks)
        self.size = blocks.size.tolist()
        self.cost = blocks.pool_cost.tolist()
        cap = blocks.pool_capacity.tolist()
        self.cap = [_INF if c < 0 else int(c) for c in cap]
        self.pools = blocks.pools
        self.align = [[blocks.align_in(i, p) for p in blocks.pools[i]] for i in range(n)]
        self.pool_of = [-1] * n
        self.off = [0] * n
        self.pos = [-1] * n  # fixed blocks: -1 (before everything)
        self.fixed = [i for i in range(n) if blocks.fixed[i] >= 0]
        fixed_off = blocks.fixed.tolist()
        for i in self.fixed:  # in block order, like Placer.place_fixed
            self.pos[i] = -2  # not placed yet: invisible
        for i in self.fixed:
            self.pos[i] = -1
            for p in self.pools[i]:
                if self._fixed_fits(i, p, fixed_off[i]):
                    self.pool_of[i], self.off[i] = p, fixed_off[i]
                    break
            else:
                self.pos[i] = -2
                raise self._failure(i)
        self.order = [int(i) for i in order if fixed_off[int(i)] < 0]
        for k, i in enumerate(self.order):
            self.pos[i] = k
        # numpy mirrors of pos, pool_of and off for the blocks with many conflicts.
        self._big = [len(x) >= NUMPY_DEGREE for x in self.nbr]
        self._np = any(self._big)
        if self._np:
            none = np.zeros(0, np.int64)  # (blocks with few conflicts use the lists)
            self._nbr_np = [np.asarray(x, np.int64) if big else none
                            for x, big in zip(self.nbr, self._big, strict=True)]
            self._dlo_np = [np.asarray(x, np.int64) if big else none
                            for x, big in zip(self.dlo, self._big, strict=True)]
            self._dhi_np = [np.asarray(x, np.int64) if big else none
                            for x, big in zip(self.dhi, self._big, strict=True)]
            self._pos_np = np.asarray(self.pos, np.int64)
            self._pool_np = np.asarray(self.pool_of, np.int64)
            self._off_np = np.asarray(self.off, np.int64)
        self._log: list[tuple[int, int, int]] = []
        self._undo_order: tuple[int, list[int]] | None = None
        self._counting = False
        # With a limit (scaled), a change stops as soon as a re-placed block's cost x top
        # exceeds it (``aborted``): the objective can only be worse, so the caller undoes it.
        self.limit: int | None = None
        self.aborted = False
        self.placements = 0  # blocks placed so far (the deterministic measure of work)
        for i in self.order:
            self._place(i)
        # Blocks of the order that fit in none of their pools (the order is then infeasible).
        self.unfit = sum(1 for i in self.order if self.pool_of[i] < 0)
        self._counting = True
        self._log = []

    # -- placing one block ----------------------------------------------------------------------
    def _fixed_fits(self, i: int, pool: int, o: int) -> bool:
        if o + self.size[i] > self.cap[pool]:
            return False
        pos, pool_of, off = self.pos, self.pool_of, self.off
        for j, x, y in zip(self.nbr[i], self.dlo[i], self.dhi[i], strict=True):
            if pos[j] == -1 and pool_of[j] == pool and off[j] + x <= o < off[j] + y:
                return False
        return True

    def _offset(self, i: int, pool: int, k: int, align: int) -> int:
        """Offset for block ``i`` in ``pool`` among the blocks before position ``k``, or -1."""
        top = self.cap[pool] - self.size[i]
        if top < 0:
            return -1
        if self._big[i]:
            nb = self._nbr_np[i]
            p = self._pos_np[nb]
            keep = (p > -2) & (p < k) & (self._pool_np[nb] == pool)
            o = self._off_np[nb[keep]]
            return choose(o + self._dlo_np[i][keep], o + self._dhi_np[i][keep], top, align,
                          self.mode)
        pos, pool_of, off = self.pos, self.pool_of, self.off
        flo: list[int] = []
        fhi: list[int] = []
        for j, x, y in zip(self.nbr[i], self.dlo[i], self.dhi[i], strict=True):
            if -2 < pos[j] < k and pool_of[j] == pool:
                flo.append(off[j] + x)
                fhi.append(off[j] + y)
        if not flo:
            return 0
        return choose_small(flo, fhi, top, align, self.mode)

    def _place(self, i: int) -> bool:
        """(Re-)place block ``i`` at its position; returns True if its pool or offset changed."""
        k = self.pos[i]
        self.placements += 1
        tick()
        old = (self.pool_of[i], self.off[i])
        for p, a in zip(self.pools[i], self.align[i], strict=True):
            o = self._offset(i, p, k, a)
            if o >= 0:
                new = (p, o)
                break
        else:
            new = (-1, 0)
        if new == old:
            return False
        if self._counting:
            self.unfit += (new[0] < 0) - (old[0] < 0)
        self._log.append((i, old[0], old[1]))
        self.pool_of[i], self.off[i] = new
        if self._np:
            self._pool_np[i], self._off_np[i] = new
        return True

    # -- changing the order ---------------------------------------------------------------------
    def _cascade(self, lo: int, dirty: set[int]) -> None:
        """Re-place, in order from position ``lo``, the blocks in ``dirty`` and every later
        conflict of a block whose placement changed."""
        order, pos, nbr = self.order, self.pos, self.nbr
        self.aborted = False
        limit = self.limit
        hi_pos = len(order)
        k = lo
        while dirty and k < hi_pos:
            i = order[k]
            if i in dirty:
                dirty.discard(i)
                if self._place(i):
                    p = self.pool_of[i]
                    if limit is not None and p >= 0 and (
                            self.cost[p] * (self.off[i] + self.size[i]) > limit):
                        self.aborted = True  # this block alone makes the objective worse
                        return
                    for j in nbr[i]:
                        if pos[j] > k:
                            dirty.add(j)
            k += 1

    def move(self, i: int, q: int) -> None:
        """Move block ``i`` to position ``q`` of the order (the others keep their order)."""
        order, pos = self.order, self.pos
        p = pos[i]
        if p == q:
            self._begin(p, p)
            return
        lo, hi = (q, p) if q < p else (p, q)
        self._begin(lo, hi + 1)
        del order[p]
        order.insert(q, i)
        self._set_pos(lo, hi + 1)
        dirty = {i}
        for j in self.nbr[i]:
            if lo <= pos[j] <= hi:
                dirty.add(j)
        self._cascade(lo, dirty)

    def swap(self, p: int, q: int) -> None:
        """Swap the blocks at positions ``p`` and ``q``."""
        if p > q:
            p, q = q, p
        order, pos = self.order, self.pos
        self._begin(p, q + 1)
        a, c = order[p], order[q]
        order[p], order[q] = c, a
        pos[a], pos[c] = q, p
        if self._np:
            self._pos_np[a], self._pos_np[c] = q, p
        dirty = {a, c}
        for j in self.nbr[a]:
            if p < pos[j] < q:
                dirty.add(j)
        for j in self.nbr[c]:
            if p < pos[j] < q:
                dirty.add(j)
        self._cascade(p, dirty)

    def reorder(self, lo: int, segment: list[int]) -> None:
        """Replace the blocks at positions ``lo .. lo + len(segment) - 1`` by ``segment`` (a
        permutation of them); every block of the segment is re-placed."""
        order = self.order
        hi = lo + len(segment)
        self._begin(lo, hi)
        order[lo:hi] = segment
        self._set_pos(lo, hi)
        self._cascade(lo, set(segment))

    def _set_pos(self, lo: int, hi: int) -> None:
        order, pos = self.order, self.pos
        for k in range(lo, hi):
            pos[order[k]] = k
        if self._np:
            self._pos_np[order[lo:hi]] = np.arange(lo, hi)

    def _begin(self, lo: int, hi: int) -> None:
        self._log = []
        self._undo_order = (lo, self.order[lo:hi])

    def undo(self) -> None:
        """Go back to the state before the last :meth:`move`, :meth:`swap` or
        :meth:`reorder`."""
        assert self._undo_order is not None
        lo, seg = self._undo_order
        self.order[lo:lo + len(seg)] = seg
        self._set_pos(lo, lo + len(seg))
        for i, p, o in reversed(self._log):
            self.unfit += (p < 0) - (self.pool_of[i] < 0)
            self.pool_of[i], self.off[i] = p, o
            if self._np:
                self._pool_np[i], self._off_np[i] = p, o
        self._log = []
        self._undo_order = None

    # -- reading the result ---------------------------------------------------------------------
    def heights(self) -> list[int]:
        """Scaled height of each pool."""
        h = [0] * len(self.cap)
        size = self.size
        for i, (p, o) in enumerate(zip(self.pool_of, self.off, strict=True)):
            if p >= 0:
                t = o + size[i]
                if t > h[p]:
                    h[p] = t
        return h

    def objective(self) -> int:
        """``sum(cost * height)`` in scaled bytes."""
        return sum(c * h for c, h in zip(self.cost, self.heights(), strict=True))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(pool_of, offset)`` as numpy arrays, for :meth:`Blocks.to_plan`."""
        return np.asarray(self.pool_of, np.int64), np.asarray(self.off, np.int64)

    def first_unfit(self) -> int:
        """The first block of the order that fits nowhere, or -1."""
        for i in self.order:
            if self.pool_of[i] < 0:
                return i
        return -1

    def _failure(self, i: int) -> CapacityError:
        return capacity_error(self.blocks, i, self.planner)
