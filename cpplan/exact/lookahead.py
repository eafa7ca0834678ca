"""What the holes of events to come ask of the order of the blocks alive now.

The hole search (:mod:`.refill`) keeps every order of the blocks alive that its choices allow,
in a PQ-tree, and learns that a choice was wrong only at the event whose holes no order allows,
often dozens of events later. Some holes to come are partly certain now: at an event whose
candidates are every pair of equal sums there (:meth:`.events.Holes.whole_at`), the enders that
every candidate holding an ender ``x`` holds too are in ``x``'s hole in every tiling. A hole's
enders are one run of bytes just before it, and the blocks alive now keep their bytes until they
end. So among the blocks alive now, those of such a set ``X`` are contiguous once the blocks
that end before that event, or at it, are taken out (they may lie between; a block that lives
past it may not). :class:`Lookahead` checks this for the events of the next
:data:`WINDOW`, after each split the search tries: a tree that fails it leads to no tiling.

The check is sound for every tiling whose holes are candidates (the only ones the search
builds), so the search stays exhaustive where it was. The inference is cpplan's own.
"""

from __future__ import annotations

from .events import Holes
from .pqtree import Node, contiguous, without

__all__ = ["Lookahead", "WINDOW"]

# Events ahead that a split is checked against: on a perfect packing of 500 buffers of every
# scale (multiscale-500-0, forwards) 4 events ahead took 359000 nodes, 8 took 238000, 20 took
# 199000 (12.8, 8.9 and 6.3 s); each one more costs a reduction per certain set, and on easy
# strips that is most of the search (a perfect packing of 1000: 0.27 s at 8, 0.51 s at 20
# before the check in the whole tree came first, 0.26 s now).
WINDOW = 20


class Lookahead:
    """The certain sets of enders of each event of ``holes`` (in the search's direction of
    time), and when each block ends."""

    def __init__(self, holes: Holes, window: int = WINDOW) -> None:
        self.window = window
        self.ends: dict[int, int] = {}  # block -> the event it ends at (none: the strip's end)
        self.certain: dict[int, list[frozenset[int]]] = {}
        for k, cands in enumerate(holes.events):
            for h in cands:
                for j in h.enders:
                    self.ends[j] = k
            if not holes.whole_at(k):
                continue
            common: dict[int, frozenset[int]] = {}
            for h in cands:
                ends = frozenset(h.enders)
                for j in h.enders:
                    common[j] = common[j] & ends if j in common else ends
            sets = {s for s in common.values() if len(s) >= 2}
            if sets:
                self.certain[k] = sorted(sets, key=len)

    def allows(self, tree: Node, k: int) -> bool:
        """Whether some order of ``tree`` (the blocks alive just after event ``k``) keeps
        every certain set of the next :attr:`window` events contiguous, as above."""
        alive = tree.leaves
        for later in range(k + 1, k + 1 + self.window):
            gone: frozenset[int] | None = None  # (the blocks alive that end by ``later``)
            for s in self.certain.get(later, ()):
                now = s & alive
                # (contiguous in the whole tree, they are once blocks are taken out: the
                # common case, and cheaper than taking them out)
                if len(now) < 2 or contiguous(tree, now) is not None:
                    continue
                if gone is None:
                    gone = frozenset(j for j in alive if self.ends.get(j, later + 1) <= later)
                rest = without(tree, gone - now)
                if rest is None or contiguous(rest, now) is None:
                    return False
        return True
