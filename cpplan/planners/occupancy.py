"""The ``tree`` index of :class:`cpplan.planners.placer.Placer`: which bytes of a pool are taken
at some moment of a time range, for tens of thousands of placed blocks.

Time (compressed to ranks) is cut into buckets (:class:`Buckets`) and a segment tree over the
buckets keeps, per pool, the merged byte runs of the placed pieces: at each node, two unions of
byte intervals as sorted disjoint runs, ``cover`` (the pieces that cover the node's whole time
range: a piece is in the cover of the O(log) nodes of its canonical decomposition) and ``agg``
(the pieces with an end inside the node's range, added along the paths from their end buckets to
the root; once a run already holds the bytes, every agg above does too); the pieces partial in a
bucket are listed with the bucket. A query for ``[s, e)`` reads ``cover`` and ``agg`` of its
canonical nodes, ``cover`` along the paths to the root from its two ends, and the partial pieces
of its partial end buckets: every piece sharing a moment with the query is found (a piece that
meets a canonical node without covering it has an end inside it), perhaps twice, and nothing
found misses the query. ``agg`` and ``cover`` are only kept at nodes that some query reads
(``need``). Pieces can be added, not removed (the placer rebuilds the trees after a removal).

Merged runs are what makes this fast: a well packed pool over a long time window is a handful of
runs, however many buffers made it. The tree, and the placement loop over it (the query, the union
of the runs it returns, the first-fit or best-fit choice, the commit), run in C
(``_occupancy.c``, :func:`tree_index`); this module cuts time into buckets for it.

XLA's heap simulator answers the same question with an interval tree
(xla/service/heap_simulator, ``BufferIntervalTree``).
"""

from __future__ import annotations

import numpy as np

from ..blocks import Blocks
from ._occupancy import Occupancy

__all__ = ["Buckets", "tree_index"]


class Buckets:
    """Compressed time cut into consecutive buckets, and for each piece the buckets where it is
    *partial* (live in it without covering it whole): at most two per piece.

    Buckets are grown until about ``per_bucket`` piece starts and ends fall inside; a moment
    where more pieces start or end than that (the step where hundreds of weights come alive)
    gets a bucket of its own, which no piece can cover partially. Also holds the tree's shape
    (``size`` leaves) and the nodes into which some piece's range of whole buckets decomposes
    (``need``: the only ones that ever hold a cover or an agg).
    """

    def __init__(self, blocks: Blocks, per_bucket: int) -> None:
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
        #: bucket c spans moments [bstart[c], bstart[c + 1])
        self.bstart = bstart = np.asarray(starts + [t], np.int64)
        #: the bucket of each moment
        self.of = of = np.repeat(np.arange(self.count, dtype=np.int64), np.diff(bstart))
        cs = of[ps]
        ce = of[np.maximum(pe - 1, 0)]
        full_s = (bstart[cs] == ps) & (pe >= bstart[cs + 1])
        full_e = (bstart[ce + 1] == pe) & (ps <= bstart[ce])
        #: the buckets where each piece is partial (-1: none)
        self.part_s = np.where(live & ~full_s, cs, -1)
        self.part_e = np.where(live & ~full_e & (ce != cs), ce, -1)
        size = 1
        while size < self.count:
            size *= 2
        self.size = size
        self.need = self._needed(ps, pe, cs, ce)

    def _needed(self, ps: np.ndarray, pe: np.ndarray, cs: np.ndarray, ce: np.ndarray
                ) -> np.ndarray:
        """The nodes whose ``agg`` some piece's query reads: the canonical nodes of every
        piece's range of whole buckets (the walk of :func:`cpplan.segtree.canonical_nodes`, one
        level at a time for all pieces)."""
        bstart = self.bstart
        f0 = np.where(bstart[cs] == ps, cs, cs + 1)
        f1 = np.where(bstart[ce + 1] == pe, ce + 1, ce)
        keep = f0 < f1
        lo, hi = f0[keep] + self.size, f1[keep] + self.size
        need = np.zeros(2 * self.size, np.uint8)
        while len(lo):
            odd = (lo & 1) == 1
            need[lo[odd]] = 1
            lo = lo + odd
            odd = (hi & 1) == 1
            hi = hi - odd
            need[hi[odd]] = 1
            lo >>= 1
            hi >>= 1
            going = lo < hi
            lo, hi = lo[going], hi[going]
        return need


def tree_index(blocks: Blocks, per_bucket: int, capacity: np.ndarray, pool_of: np.ndarray,
               offset: np.ndarray, piece_pool: np.ndarray, piece_lo: np.ndarray,
               piece_hi: np.ndarray) -> Occupancy:
    """The tree index of ``blocks`` (one tree per pool, built on first use), writing placements
    into the given state arrays (int64, kept and written in place: never rebind them):
    ``pool_of`` and ``offset`` per block, ``piece_pool``, ``piece_lo`` and ``piece_hi`` (the
    absolute bytes) per piece. ``capacity`` gives each pool's capacity in scaled bytes (a huge
    value for none).

    The object places blocks (``place``: a stretch of an order, first-fit or best-fit; the rule
    of :func:`cpplan.planners.placer.choose`, each block in its first candidate pool where it
    fits, a fixed block at its offset), answers ``find_offset``, ``fixed_fits`` and
    ``occupied`` (the runs taken in a pool during a time range, as int64 ``lo, hi`` pairs), and
    records a block where a caller chose (``put``); after the state arrays were changed behind
    its back, ``invalidate`` makes it rebuild its trees from them before its next use.
    """
    buckets = Buckets(blocks, per_bucket)
    pools = blocks.pools
    pool_ptr = np.zeros(len(pools) + 1, np.int64)
    np.cumsum([len(c) for c in pools], out=pool_ptr[1:])
    pool_idx = np.fromiter((p for c in pools for p in c), np.int64, int(pool_ptr[-1]))

    def ints(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a, np.int64)

    return Occupancy(
        buckets.of, buckets.bstart, ints(buckets.part_s), ints(buckets.part_e), buckets.need,
        buckets.size, ints(blocks.piece_start), ints(blocks.piece_end), ints(blocks.piece_lo),
        ints(blocks.piece_hi), ints(blocks.piece_ptr), pool_ptr, pool_idx,
        ints(blocks.alignment), ints(blocks.pool_alignment), ints(blocks.size),
        ints(blocks.fixed), ints(capacity), pool_of, offset, piece_pool, piece_lo, piece_hi)
