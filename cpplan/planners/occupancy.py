"""The ``tree`` index of :class:`cpplan.planners.placer.Placer`: which bytes of a pool are taken
at some moment of a time range, for tens of thousands of placed blocks.

Time (compressed to ranks) is cut into buckets (:class:`Buckets`) and a segment tree over the
buckets keeps, per pool, the merged byte runs of the placed pieces (:class:`OccupancyTree`): at
each node the pieces that cover its time range whole (``cover``) and those with an end inside it
(``agg``); the pieces partial in a bucket are listed with the bucket. A query joins a few dozen
run lists, stored as machine integers (``array('q')``), so joining them copies memory and numpy
reads the result as it is. What a query returns is exact as a union (a run may come twice).

XLA's heap simulator answers the same question with an interval tree
(xla/service/heap_simulator, ``BufferIntervalTree``).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right

import numpy as np

from ..blocks import Blocks

__all__ = ["Buckets", "OccupancyTree", "add_run", "path_union"]


class Buckets:
    """Compressed time cut into consecutive buckets, and for each piece the buckets where it is
    *partial* (live in it without covering it whole): at most two per piece.

    Buckets are grown until about ``per_bucket`` piece starts and ends fall inside; a moment
    where more pieces start or end than that (the step where hundreds of weights come alive)
    gets a bucket of its own, which no piece can cover partially. Also holds what every
    :class:`OccupancyTree` over these buckets shares: the tree's shape, the nodes into which some
    piece's range of whole buckets decomposes (``need``: the only ones that ever hold a cover
    or an agg), and each node's path to the root through those.
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
        bstart = np.asarray(starts + [t], np.int64)
        self.bstart = bstart.tolist()  # bucket c spans [bstart[c], bstart[c + 1])
        of = np.repeat(np.arange(self.count, dtype=np.int64), np.diff(bstart))
        self.of = of.tolist()  # bucket of each moment
        cs = of[ps]
        ce = of[np.maximum(pe - 1, 0)]
        full_s = (bstart[cs] == ps) & (pe >= bstart[cs + 1])
        full_e = (bstart[ce + 1] == pe) & (ps <= bstart[ce])
        # The buckets where each piece is partial (-1: none).
        self.part_s = np.where(live & ~full_s, cs, -1).tolist()
        self.part_e = np.where(live & ~full_e & (ce != cs), ce, -1).tolist()
        size = 1
        while size < self.count:
            size *= 2
        self.size = size
        self.need = self._needed(ps, pe, cs, ce)
        # npath[v]: node v and its ancestors up to the root, those in need only (the only nodes
        # that ever hold a cover or an agg), bottom up.
        npath: list[tuple[int, ...]] = [(), (1,) if self.need[1] else ()]
        need = self.need
        for v in range(2, 2 * size):
            npath.append((v, *npath[v >> 1]) if need[v] else npath[v >> 1])
        self.npath = npath

    def _needed(self, ps: np.ndarray, pe: np.ndarray, cs: np.ndarray, ce: np.ndarray
                ) -> bytearray:
        """The nodes whose ``agg`` some piece's query reads: the canonical nodes of every
        piece's range of whole buckets (the walk of :func:`cpplan.segtree.canonical_nodes`, one
        level at a time for all pieces)."""
        bstart = np.asarray(self.bstart, np.int64)
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
        return bytearray(need.tobytes())

    def span(self, s: int, e: int) -> tuple[int, int, int, int]:
        """Buckets of ``[s, e)``: first and last touched ``c0, c1`` and the range ``[f0, f1)``
        of buckets it covers whole."""
        of, bstart = self.of, self.bstart
        c0, c1 = of[s], of[e - 1]
        f0 = c0 if bstart[c0] == s else c0 + 1
        f1 = c1 + 1 if bstart[c1 + 1] == e else c1
        return c0, c1, f0, f1


def path_union(paths: list[tuple[int, ...]], a: int, b: int) -> tuple[int, ...]:
    """The nodes of ``paths[a]`` and ``paths[b]`` (paths to the root, bottom up, filtered the
    same way for every node), each once: ``a``'s own part below the common ancestor, then
    ``b``'s whole path."""
    da, db = a.bit_length(), b.bit_length()
    if da < db:
        a, b, da, db = b, a, db, da
    d = da - db
    lca = (a >> d) >> ((a >> d) ^ b).bit_length()
    own = paths[a]
    return own[:len(own) - len(paths[lca])] + paths[b]


class OccupancyTree:
    """Occupancy of one pool as a segment tree over buckets of time.

    Every node keeps two unions of byte intervals, each as sorted disjoint runs (one
    ``array('q')`` of ``lo, hi`` pairs, :func:`add_run`): ``cover`` holds the pieces that
    cover the node's whole time range (a piece is in the cover of the O(log) nodes of its
    canonical decomposition), ``agg`` the pieces that have an end inside the node's range (they
    are added along the paths from their end buckets to the root). ``part[c]`` lists the pieces
    partial in bucket ``c``. A query for ``[s, e)`` reads ``cover`` and ``agg`` of its canonical
    nodes, ``cover`` along the paths to the root from its two ends (its partial end buckets, or
    its outermost canonical nodes where an end bucket is whole: every ancestor of a canonical
    node lies on one of those paths), and the partial pieces of its partial end buckets. Every
    piece sharing a moment with the query is found (a piece that meets a canonical node without
    covering it has an end inside it), perhaps twice, and nothing found misses the query.
    ``agg`` and ``cover`` are only kept at nodes that some query will read (``need``).

    Merged runs are what makes this fast: a well packed pool over a long time window is a
    handful of runs, however many buffers made it. Runs are machine integers, so a query joins
    them by copying memory (one copy per node) and numpy reads the result without converting
    it. Pieces can be added, not removed (the placer rebuilds the trees after a removal).
    """

    def __init__(self, buckets: Buckets) -> None:
        self.buckets = buckets
        self.size = buckets.size
        self.cover: list[array | None] = [None] * (2 * self.size)
        self.agg: list[array | None] = [None] * (2 * self.size)
        self.part: list[list[tuple[int, int, int, int]]] = [[] for _ in range(buckets.count)]

    def add(self, q: int, s: int, e: int, x: int, y: int) -> None:
        """Record bytes ``[x, y)`` taken during ``[s, e)`` by piece ``q``."""
        b = self.buckets
        size = self.size
        c0, c1, f0, f1 = b.span(s, e)
        cover, agg = self.cover, self.agg
        # The walk of :func:`cpplan.segtree.canonical_nodes`, inlined (hot path).
        lo, hi = f0 + size, f1 + size
        while lo < hi:
            if lo & 1:
                add_run(cover, lo, x, y)
                lo += 1
            if hi & 1:
                hi -= 1
                add_run(cover, hi, x, y)
            lo >>= 1
            hi >>= 1
        # agg along the paths from both end buckets (shared ancestors once), bottom up. An
        # agg holds the aggs below it, so once [x, y) lies inside one of its runs, it does all
        # the way up: the rest of that path is left as it is (on Y_1 half the adds stop so).
        npath = b.npath
        a, c = c0 + size, c1 + size
        if a != c:
            own = npath[a]
            for node in own[:len(own) - len(npath[a >> (a ^ c).bit_length()])]:
                if add_run(agg, node, x, y):
                    break
        for node in npath[c]:
            if add_run(agg, node, x, y):
                break
        piece = (s, e, x, y)
        c = b.part_s[q]
        if c >= 0:
            self.part[c].append(piece)
        c = b.part_e[q]
        if c >= 0:
            self.part[c].append(piece)

    def query(self, s: int, e: int, out: array) -> None:
        """Append to ``out``, as ``lo, hi`` pairs, the runs of every piece that shares a moment
        with ``[s, e)`` (a run may come more than once; their union is exact)."""
        b = self.buckets
        size = self.size
        c0, c1, f0, f1 = b.span(s, e)
        cover, agg = self.cover, self.agg
        if f0 < f1:
            # Canonical nodes, left ones left to right, right ones right to left: the walk of
            # :func:`cpplan.segtree.canonical_nodes`, inlined as in :meth:`add` (calling it, in
            # both, makes best-fit on Y_1 2.6 % slower: benchmarks/segtree.py, median of 7).
            lefts: list[int] = []
            rights: list[int] = []
            lo, hi = f0 + size, f1 + size
            while lo < hi:
                if lo & 1:
                    lefts.append(lo)
                    lo += 1
                if hi & 1:
                    hi -= 1
                    rights.append(hi)
                lo >>= 1
                hi >>= 1
            # The covers to read lie on the paths from the partial end buckets, or from the
            # outermost canonical nodes where an end bucket is whole.
            left = c0 + size if c0 < f0 else (lefts[0] if lefts else rights[-1])
            right = c1 + size if c1 >= f1 else (rights[0] if rights else lefts[-1])
            for node in lefts + rights:
                got = agg[node]
                if got is not None:
                    out += got
                if node != left and node != right:
                    got = cover[node]
                    if got is not None:
                        out += got
        else:
            left, right = c0 + size, c1 + size
        # (Only nodes that some piece's range decomposes into ever hold a cover: ``npath``.)
        for node in path_union(b.npath, left, right):
            got = cover[node]
            if got is not None:
                out += got
        # Partial pieces of the end buckets that are not covered whole.
        part = self.part
        if c0 < f0 or f0 >= f1:
            for ps, pe, x, y in part[c0]:
                if ps < e and pe > s:
                    out.append(x)
                    out.append(y)
        if c1 != c0 and c1 >= f1:
            for ps, pe, x, y in part[c1]:
                if ps < e and pe > s:
                    out.append(x)
                    out.append(y)


def add_run(lists: list, node: int, x: int, y: int) -> bool:
    """Union ``[x, y)`` into the runs of ``lists[node]``: one array ``lo0, hi0, lo1, hi1, ...``,
    strictly increasing (runs are disjoint and do not touch: one that touches ``[x, y)``
    merges with it). True when ``[x, y)`` already lay inside a run (nothing changed)."""
    flat = lists[node]
    if flat is None:
        lists[node] = array("q", (x, y))
        return False
    # Even positions hold lows, odd ones highs: an odd i means lo_k < x <= hi_k.
    i = bisect_left(flat, x)
    if i & 1:
        if y <= flat[i]:
            return True
        i -= 1
        x = flat[i]
    elif i < len(flat) and flat[i] == x and y <= flat[i + 1]:
        return True
    # An odd j means lo_k <= y < hi_k.
    j = bisect_right(flat, y, i)
    if j & 1:
        y = flat[j]
        j += 1
    if i == j:  # between two runs, touching neither
        flat.insert(i, y)
        flat.insert(i, x)
        return False
    flat[i] = x  # runs i/2 .. j/2 - 1 become one
    flat[j - 1] = y
    if j - i > 2:
        del flat[i + 1:j - 1]
    return False
