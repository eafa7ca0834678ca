"""The holes each event refills, searched in time order, every order they allow in a PQ-tree.

At zero slack (:func:`.events.zero_slack`: the load is the height at every moment) a packing is
a tiling, and a tiling is nothing but the order of the blocks alive at each moment: their
offsets are the sums of the sizes below them. At each event the blocks that end there leave
holes, contiguous runs that the blocks starting there fill, each hole one of the event's
candidate pairs of equal sums (:mod:`.events`). So a tiling is a choice of holes at every event
such that each hole's enders are contiguous in the order of that moment, the starters taking
their place in any order of their own.

The search goes through the events in time order and, at each, through the ways to split it
into candidate holes (exact covers of its enders and starters, the candidates with the fewest
blocks first). It keeps *every* order of the blocks alive that the choices so far allow, in
one PQ-tree (:mod:`.pqtree`): the first moment's blocks in any order, each hole's enders made
contiguous (:func:`.pqtree.contiguous`, which fails exactly when no allowed order has them so)
and swapped for its starters in any order (:func:`.pqtree.replace`). So it never branches on
orders, only on holes, and a choice that no order allows fails at once. A search that has
chosen every event's holes reads one order back from the last tree and back through the
events to the first, and the offsets follow.

An event of more blocks than :data:`.events.SIDE_MAX` a side gets only some of its candidates
(:mod:`.events`); there a split may also leave out one hole not listed: enders are reserved for
it, one by one, and the starters that no listed hole took fill them (their sums are equal, as
the event's and every other hole's are), so a long run re-cut beside short ones is found. A
search that runs out of choices so (no proof: candidates were cut) goes again from the start
once with two holes not listed or more allowed: the enders reserved split into a run holding
the first of them that some order allows (:func:`_runs`) and the rest, the starters left over
by their sums (``multiscale-500-2``: two runs of eight blocks freed at one event of 17, out of
reach of one hole). Only on that second search: at every event, the splits it adds led the
first search astray for longer than it had (``multiscale-500-0``, found in 200000 nodes with
one, not in 690000 with more).

Where alignments differ, an order may break them (an offset is the sum of the sizes below):
each tree must then keep them in some frontier, checked on residue sets modulo the alignments
(:mod:`.residues`, the enders' bound carried to the starters through each hole), and the order
read back is one that keeps them. The check is sound but may pass a tree with no aligned
frontier; a tiling whose aligned order is not read back is passed over, and the search goes on.

Where every event's candidates are complete (:attr:`.events.Holes.complete`, none skipped), the
search is exhaustive: running out of choices proves that the blocks do not fit at the height.
Its nodes are one event's split each. Backtracking is chronological, and a wrong split may fail
only dozens of events later (where sizes of every scale make sums alike by chance, the first
events of a strip split hundreds of ways), so two things keep it from searching the same
ground again:

* the search from an event on depends on nothing but the tree it starts from, and many ways to
  split the events before give the same tree: each (event, tree) searched to the end without a
  tiling is kept (by :func:`.pqtree.digest`, which names a tree's orders however they are
  stored) and never searched again;
* each split is checked against the certain holes of the events ahead
  (:class:`.lookahead.Lookahead`), which a wrong split often breaks at once.

Both keep the search exhaustive (a tree skipped leads to no tiling). On a perfect packing of
500 buffers of every scale (``multiscale``, seed 0) the search forwards thrashed at the 52nd of
89 events for as long as it ran; with them it rebuilds the strip in about 200000 nodes
(``tests/exact/test_refill.py``). The PQ-tree's use for orders constrained to keep subsets
contiguous is Booth and Lueker's (1976); its use here, for the holes of a tiling, the failed
trees kept and the lookahead are cpplan's own.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ..blocks import Blocks
from ..deadline import Budget
from .events import (
    BIG_MEMBERS,
    PAIRS_ENUMERATED,
    SIDE_MAX,
    Hole,
    Holes,
    holes_of,
    subsets,
    zero_slack,
)
from .lookahead import Lookahead
from .outcome import Outcome
from .pqtree import Node, P, contiguous, digest, forced, frontier, leaf, locate, node, replace
from .residues import Residues

__all__ = ["refill", "REFILL_NODES_PER_SECOND"]

# A conservative rate of the search (splits tried, with their reductions) on this kind of
# machine, to charge its nodes as seconds (and, in deterministic mode, to turn seconds into
# nodes).
REFILL_NODES_PER_SECOND = 10_000
_CHECK_EVERY = 64  # nodes between looks at the clock and the stop flags
# One direction's turn before the other's: nodes in deterministic mode and in each way's first
# turn on the clock (most answers come within it), seconds in its later turns (a way's nodes
# may cost ten times the other's: a perfect packing of 500 buffers of every scale, 32000 nodes
# a second forwards and 3000 backwards, so that turns of equal nodes left the way that finds
# the tiling a tenth of the time).
SLICE = 2_000
SLICE_SECONDS = 0.25
# Steps (nodes visited) to read the aligned offsets of one tiling back before passing it over:
# ORDER_WORK for the search among orders, and ORDER_WORK_PER_BLOCK a block for the read
# itself, which visits every node of the last tree and of each hole's enders at least once (a
# fixed budget passed over every tiling of thousands of blocks, unread, however aligned).
ORDER_WORK = 2_000
ORDER_WORK_PER_BLOCK = 4
# Reads of one tiling's aligned offsets, each in other orders of its trees drawn at random
# (seeded), after the first fails: where a bound on the starters of a hole was lost, the first
# order read may put them where their enders cannot be aligned, and another order not.
READ_TRIES = 4

# Two holes not listed at one event: the starters left over are split by their sums among at
# most so many of them (2 ** 16 subsets), and the runs of the enders reserved that hold the
# first of them, which some order allows, are looked for among at most RUNS_MAX sets.
TWO_STARTERS_MAX = 16
RUNS_MAX = 1_000

# The (event, tree) states searched to the end that a search keeps, at most (about 150 bytes
# each): past it they are forgotten, and may be searched again.
FAILED_KEPT = 1_000_000

# One hole as the search applied it: its enders, its starters, and the tree in which the
# enders had just been made contiguous (to read an order of the enders back from).
_Applied = tuple[frozenset[int], tuple[int, ...], Node]


def refill(blocks: Blocks, ids: np.ndarray, height: int, budget: Budget, *,
           holes: Holes | None = None, node_budget: int | None = None,
           cancel: threading.Event | None = None, stats: dict | None = None,
           keep: dict | None = None) -> Outcome:
    """Do blocks ``ids`` fit at most ``height`` high (scaled), where they are at zero slack?
    Answered by the hole search (module docstring), run forwards and backwards in time in turn
    (:data:`SLICE` nodes, then :data:`SLICE_SECONDS` each on the clock): which way thrashes
    depends on the strip.

    ``holes``: the candidates (:func:`.events.holes_of` with :data:`.events.PAIRS_ENUMERATED`)
    of blocks the caller found at zero slack at ``height``, else found here and, with ``keep``
    (a dict the caller keeps across its calls on the same blocks and height, with their
    alignments or without: the holes do not depend on them), kept in it for the next call.
    ``keep`` also keeps the searches where they stopped (by height, and with or without the
    alignments): a later call goes on from there, so that a probe given more time after a
    first look does not search again what the look searched.

    ``feasible`` comes with ``pools`` and ``offsets`` per id (a tiling of the strip: no two
    blocks that share a moment overlap, every alignment kept); ``infeasible`` only when a
    search ran out of choices with every event's candidates complete and no tiling passed over
    (a proof); otherwise ``unknown``: the blocks are not at zero slack at ``height``, their
    alignments' least common multiple is beyond :data:`.residues.MODULUS_MAX`, an event has no
    candidates, or ``budget``, ``node_budget``, the stop flags or ``cancel`` ended it. The
    nodes searched are charged to ``budget`` at :data:`REFILL_NODES_PER_SECOND`; ``stats``
    receives ``nodes``.
    """
    ids = np.asarray(ids, np.int64)
    if holes is None and keep is not None:
        holes = keep.get("holes")
    if holes is None and zero_slack(blocks, ids, height) is None:
        return Outcome("unknown", detail="refill: not at zero slack")
    pool = blocks.pools[int(ids[0])][0]
    size = blocks.size[ids].astype(np.int64)
    align = np.array([blocks.align_in(i, pool) for i in ids.tolist()], np.int64)
    residues = Residues.of(size, align)
    if (align > 1).any() and residues is None:
        return Outcome("unknown", detail="refill: alignments too many to check")
    if holes is None:
        # (every candidate enumerated: a split costs the search one node, not a model literal)
        holes = holes_of(blocks, ids, PAIRS_ENUMERATED)
        if keep is not None:
            keep["holes"] = holes
    if holes.skipped:
        return Outcome("unknown", detail=f"refill: {holes.skipped} events without candidates")
    listed = holes  # (the closure below sees ``holes`` as possibly None)

    def new_search(reverse: bool, two: bool = False) -> _Search:
        # (residues of its own for each search: a search binds those of the holes it fills)
        return _Search(listed.reversed() if reverse else listed,
                       blocks.end[ids] if reverse else blocks.start[ids], size, reverse,
                       Residues.of(size, align), two=two)

    key = ("searches", height, residues is not None, ids.tobytes())
    searches = None if keep is None else keep.get(key)
    if searches is None:
        searches = [new_search(False), new_search(True)]
        if keep is not None:
            keep[key] = searches  # (the list itself: the calls after go on from its state)

    deadline = budget.deadline()
    nodes = 0

    def stopped() -> bool:
        return budget.stopped or (cancel is not None and cancel.is_set()) or \
            time.perf_counter() > deadline or \
            (node_budget is not None and nodes >= node_budget)

    try:
        while searches and not stopped():
            search = searches[0]
            if node_budget is None and search.turns:
                turn_ends = time.perf_counter() + search.time_left
                status = search.run(
                    1 << 62, lambda: stopped() or time.perf_counter() > turn_ends)  # noqa: B023
                search.time_left = turn_ends - time.perf_counter()
                turn_over = search.time_left <= 0
            else:
                status = search.run(search.slice_left if node_budget is None else
                                    min(search.slice_left, node_budget - nodes), stopped)
                search.slice_left -= search.nodes_since
                turn_over = not search.slice_left
            nodes += search.nodes_since
            if status == "found":
                assert search.found is not None
                if keep is not None:
                    del keep[key]  # (a search that found its tiling has nothing to go on with)
                offsets = np.zeros(len(ids), np.int64)
                offsets[size > 0] = search.found[size > 0]
                way = "backwards" if search.reverse else "forwards"
                return Outcome("feasible", np.full(len(ids), pool, np.int64), offsets,
                               detail=f"refill {way}, {nodes} nodes")
            if status == "exhausted":
                if search.holes.complete and not search.unread:
                    return Outcome("infeasible", detail=f"refill, {nodes} nodes, every split tried")
                searches.pop(0)  # (its candidates were cut: the other way may still find one)
                # (and this way again, with two holes not listed at an event)
                if not search.two and any(_reserves(cands) for cands in listed.events):
                    searches.append(new_search(search.reverse, two=True))
            elif turn_over:  # (else stopped: it goes on first in the next call)
                search.slice_left, search.time_left = SLICE, SLICE_SECONDS
                search.turns += 1
                searches.append(searches.pop(0))
        return Outcome("unknown", detail=f"refill, {nodes} nodes")
    except RecursionError:  # (trees nested deeper than Python's stack: thousands of blocks)
        if keep is not None:
            keep.pop(key, None)  # (a search broken off mid-split: never gone on with)
        return Outcome("unknown", detail=f"refill, {nodes} nodes, trees too deep")
    finally:
        budget.report(nodes / REFILL_NODES_PER_SECOND)
        if stats is not None:
            stats.update(nodes=nodes)


class _Search:
    """The hole search in one direction of time, resumable: :meth:`run` goes on for some nodes
    from where the last call stopped. With ``residues`` (blocks whose alignments differ), each
    tree must keep them (:mod:`.residues`), and a tiling whose aligned offsets are not read
    back is passed over (``unread``: the search's end then proves nothing)."""

    def __init__(self, holes: Holes, start: np.ndarray, size: np.ndarray,
                 reverse: bool, residues: Residues | None = None, *, two: bool = False) -> None:
        self.holes, self.size, self.reverse = holes, size, reverse
        self.residues, self.two = residues, two
        live = np.flatnonzero(size > 0)
        key = -start[live] if reverse else start[live]  # (the first moment, this way)
        self.first = live[key == key.min()].tolist()
        self.frames: list[Iterator[tuple[Node, list[_Applied]] | None]] = []
        self.path: list[list[_Applied]] = []  # per event chosen so far: its holes as applied
        self.found: np.ndarray | None = None  # the offsets of the tiling found
        self.unread = 0  # tilings passed over, their aligned offsets not read back
        self.events: dict[int, _Event] = {}
        tree = node(P, [leaf(j) for j in self.first])
        if residues is None or residues.fits(tree):
            self.frames.append(_splits(tree, self.event(0), residues, two) if holes.events
                               else iter([(tree, [])]))
        self.nodes_since = 0
        # (what is left of its turn, in nodes or seconds: :func:`refill` takes turns)
        self.slice_left, self.time_left = SLICE, SLICE_SECONDS
        self.turns = 0
        # The states searched to the end with no tiling: (event, the tree's digest). The
        # search from an event on depends on nothing but the tree of orders it starts from
        # (with residues, on their bounds too: none kept then), and many ways to split the
        # events before lead to the same tree.
        self.failed: set[tuple[int, bytes]] = set()
        self.keys: list[tuple[int, bytes] | None] = [None] * len(self.frames)
        self.lookahead = Lookahead(holes)

    def event(self, k: int) -> _Event:
        """Event ``k``'s candidates, looked up as :func:`_splits` does (made once)."""
        if k not in self.events:
            self.events[k] = _Event.of(self.holes.events[k], self.size)
        return self.events[k]

    def run(self, nodes: int, stopped: Callable[[], bool]) -> str:
        """At most ``nodes`` more nodes (a split tried, or a step of looking for one):
        ``found`` (the offsets in :attr:`found`), ``exhausted`` or ``paused``."""
        events = self.holes.events
        self.nodes_since = 0
        while self.frames:
            splits = self.frames[-1]
            for split in splits:
                if self.nodes_since >= nodes or \
                        (self.nodes_since % _CHECK_EVERY == 0 and stopped()):
                    if split is not None:  # (not lost: tried first when the search goes on)
                        self.frames[-1] = itertools.chain([split], splits)
                    return "paused"
                self.nodes_since += 1
                if split is None:
                    continue
                tree, applied = split
                if len(self.path) + 1 < len(events):
                    # (a tree searched to the end once passed the lookahead then: looked up
                    # first, it is not checked again)
                    key = None if self.residues is not None else \
                        (len(self.path) + 1, digest(tree))
                    if key in self.failed or not self.lookahead.allows(tree, len(self.path)):
                        continue
                    self.path.append(applied)
                    self.frames.append(_splits(tree, self.event(len(self.path)),
                                               self.residues, self.two))
                    self.keys.append(key)
                    break
                # (the last event's split: a tiling, if its offsets are read back)
                self.path.append(applied)
                self.found = _offsets(tree, self.path, self.size, self.residues)
                if self.found is not None:
                    self.frames.clear()
                    self.keys.clear()
                    return "found"
                self.unread += 1
                self.path.pop()
            else:  # (no split of this event left: back to the last choice)
                self.frames.pop()
                key = self.keys.pop()
                if key is not None:
                    if len(self.failed) >= FAILED_KEPT:  # (a bound on its memory: it only saves)
                        self.failed.clear()
                    self.failed.add(key)
                if self.frames:
                    self.path.pop()
        return "exhausted"


@dataclass(frozen=True)
class _Event:
    """One event's candidates as the split search looks them up: its starters and enders
    (sorted), the candidates holding each ender (the fewest blocks first), and whether they
    were cut (:func:`_splits`). Made once an event and kept by the search, since thousands of
    candidates take longer to index than a split to try."""

    starters: frozenset[int]
    enders: tuple[int, ...]
    holding: dict[int, list[tuple[tuple[int, ...], frozenset[int], frozenset[int]]]]
    cut: bool
    # Each ender's and starter's bit, and per ender the bits of the enders and of the starters
    # of each candidate holding it (sides of at most SIDE_HARD blocks): the candidates
    # disjoint from a split's blocks so far are picked out at once, not one by one.
    ender_bit: dict[int, int]
    starter_bit: dict[int, int]
    size: np.ndarray = field(compare=False)  # (the blocks' sizes, by position)
    bits: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, cands: tuple[Hole, ...], size: np.ndarray) -> _Event:
        starters = frozenset(j for h in cands for j in h.starters)
        enders = tuple(sorted({j for h in cands for j in h.enders}))
        # (each hole has an ender: the first free one is in one of those holding it)
        holding: dict[int, list[tuple[tuple[int, ...], frozenset[int], frozenset[int]]]] = {}
        for h in cands:
            ends, starts = frozenset(h.enders), frozenset(h.starters)
            for j in h.enders:
                holding.setdefault(j, []).append((h.starters, ends, starts))
        # Where the candidates were cut (too many blocks to pair every subset), one hole may be
        # missing: the enders left to it are reserved, and the starters left over fill them.
        return cls(starters, enders, holding, _reserves(cands),
                   {j: 1 << i for i, j in enumerate(enders)},
                   {j: 1 << i for i, j in enumerate(sorted(starters))}, size)

    def masks(self, ender: int) -> tuple[np.ndarray, np.ndarray]:
        """The bits of the enders and of the starters of each candidate holding ``ender``
        (made on first use: the split search looks up only the enders it comes to first)."""
        got = self.bits.get(ender)
        if got is None:
            hs = self.holding[ender]
            got = self.bits[ender] = (
                np.array([sum(self.ender_bit[x] for x in e) for _m, e, _s in hs], np.int64),
                np.array([sum(self.starter_bit[x] for x in m) for m, _e, _s in hs], np.int64))
        return got


def _splits(tree: Node, event: _Event, residues: Residues | None = None, two: bool = False
            ) -> Iterator[tuple[Node, list[_Applied]] | None]:
    """Every way to split an event into candidate holes (each ender and starter in exactly
    one) that some order of ``tree`` allows, with the tree after it and its holes as applied
    (each hole's enders made contiguous, then swapped for its starters in any order): the
    candidates with the fewest blocks first, a hole that no order allows cut off at once, and
    only the rest of the event as one hole where every order has its enders contiguous. With
    ``residues``, also a hole after which no order keeps the alignments. Where the candidates
    were cut, the enders reserved are one hole not listed, and with ``two`` also two or more
    (holes of more than :data:`.events.BIG_MEMBERS` blocks a side, the listed ones' size). None
    now and then while looking (so that a search can stop in a long look)."""
    starters, enders, holding, cut = event.starters, event.enders, event.holding, event.cut
    ender_bit, starter_bit = event.ender_bit, event.starter_bit

    def covers(used: frozenset[int], reserved: frozenset[int], tree: Node,
               applied: list[_Applied], taken_e: int, taken_s: int
               ) -> Iterator[tuple[Node, list[_Applied]] | None]:
        # (taken_e: the bits of the enders used or reserved; taken_s: of the starters used)
        free = next((j for j in enders if not taken_e & ender_bit[j]), None)
        if free is None:
            rest = tuple(sorted(starters - used))
            if not reserved and not rest:
                yield tree, list(applied)
            elif reserved and rest:
                yield from hole(used, reserved, rest, reserved, tree, applied, taken_e, taken_s)
                if two and len(reserved) + len(rest) > 2 * (BIG_MEMBERS + 1) and \
                        1 < len(rest) <= TWO_STARTERS_MAX:
                    yield from apart(used, reserved, rest, tree, applied, taken_e, taken_s)
            return
        yield None
        # (the rest of the event, the enders reserved too, as one hole alone where its enders
        # are contiguous in every order: it allows every order that a split of it allows,
        # and its sums are equal as the event's and every hole's are; listed or not, its
        # starters in the candidates' order, ascending)
        rest_enders = frozenset(enders) - used
        if forced(tree, rest_enders):
            yield from hole(used, reserved, tuple(sorted(starters - used)), rest_enders, tree,
                            applied, taken_e, taken_s)
            return
        if free in holding:
            hs, (me, ms) = holding[free], event.masks(free)
            for k in np.flatnonzero(((me & taken_e) | (ms & taken_s)) == 0).tolist():
                made, ends, _starts = hs[k]
                yield from hole(used, reserved, made, ends, tree, applied, taken_e, taken_s)
        if cut:
            yield from covers(used, reserved | {free}, tree, applied,
                              taken_e | ender_bit[free], taken_s)

    def apart(used: frozenset[int], reserved: frozenset[int], rest: tuple[int, ...], tree: Node,
              applied: list[_Applied], taken_e: int, taken_s: int
              ) -> Iterator[tuple[Node, list[_Applied]] | None]:
        # (the enders reserved as two holes or more: a run of them holding the first, which
        # some order allows, with starters left over of its sum; the rest reserved again)
        masks, sums, _count = subsets(event.size[list(rest)], len(rest))
        order = np.argsort(sums, kind="stable")
        ordered = sums[order]
        for run in _runs(tree, reserved):
            if run is None:
                yield None
                continue
            target = int(event.size[list(run)].sum())
            lo, hi = np.searchsorted(ordered, [target, target + 1])
            for m in masks[order[lo:hi]].tolist():
                made = tuple(j for i, j in enumerate(rest) if m >> i & 1)
                # (holes of at most BIG_MEMBERS blocks a side are listed: both are more)
                if len(made) < len(rest) and \
                        max(len(run), len(made)) > BIG_MEMBERS and \
                        max(len(reserved) - len(run), len(rest) - len(made)) > BIG_MEMBERS:
                    yield from hole(used, reserved, made, run, tree, applied, taken_e, taken_s)
                    yield None

    def hole(used: frozenset[int], reserved: frozenset[int], made: tuple[int, ...],
             ends: frozenset[int], tree: Node, applied: list[_Applied], taken_e: int,
             taken_s: int) -> Iterator[tuple[Node, list[_Applied]] | None]:
        reduced = contiguous(tree, ends)
        if reduced is None:
            return
        new = leaf(made[0]) if len(made) == 1 else node(P, [leaf(j) for j in made])
        if residues is None:
            after = replace(reduced, ends, new)
        else:
            # (the starters start where the enders did: bound to the enders' residues)
            mask = residues.run_start(reduced, ends)
            if not mask:
                return
            before = residues.hold(new.leaves, mask)
            after = replace(reduced, ends, new)
            if not residues.fits(after):
                residues.release(new.leaves, before)
                return
        applied.append((ends, made, reduced))
        yield from covers(used | ends | frozenset(made), reserved - ends, after, applied,
                          taken_e | sum(ender_bit[j] for j in ends),
                          taken_s | sum(starter_bit[j] for j in made))
        applied.pop()
        if residues is not None:
            residues.release(new.leaves, before)

    return covers(frozenset(), frozenset(), tree, [], 0, 0)


def _reserves(cands: tuple[Hole, ...]) -> bool:
    """Whether an event (its candidates ``cands``) has more than :data:`.events.SIDE_MAX`
    enders or starters, so that its candidates were cut and a split may reserve enders to holes
    not listed."""
    return max(len({j for h in cands for j in h.enders}),
               len({j for h in cands for j in h.starters})) > SIDE_MAX


def _runs(tree: Node, pool: frozenset[int]) -> Iterator[frozenset[int] | None]:
    """The proper subsets of ``pool`` (leaves of ``tree``) that hold its least member and that
    some order of ``tree`` has contiguous, the smallest first, among at most :data:`RUNS_MAX`
    sets looked at (None now and then while looking). A run in some order grows from one of its
    members a neighbour at a time, each step a run in that order, so growing by the sets that
    stay contiguous finds every one."""
    first = frozenset((min(pool),))
    seen, queue = {first}, deque([first])
    while queue:
        run = queue.popleft()
        if len(run) < len(pool):
            yield run
        for j in sorted(pool - run):
            grown = run | {j}
            if grown in seen:
                continue
            if len(seen) >= RUNS_MAX:
                return
            seen.add(grown)
            if contiguous(tree, grown) is not None:
                queue.append(grown)
        yield None


def _offsets(last: Node, path: list[list[_Applied]], size: np.ndarray,
             residues: Residues | None = None) -> np.ndarray | None:
    """Offsets of a tiling: one order of the last tree, read back through the events (each
    hole's starters swapped for an order of its enders that the tree they were made contiguous
    in allows), each block's offset the sum of the sizes below it when it comes in. With
    ``residues``, orders that keep every alignment: the trees' own orders first, then up to
    :data:`READ_TRIES` - 1 reads in orders drawn at random (seeded: the same on every run),
    each within :data:`ORDER_WORK` steps and :data:`ORDER_WORK_PER_BLOCK` a block (None where
    none is found)."""
    if residues is None:
        return _read(last, path, size, None, [0], None)
    for k in range(READ_TRIES):
        work = [ORDER_WORK + ORDER_WORK_PER_BLOCK * len(size)]
        got = _read(last, path, size, residues, work, random.Random(k) if k else None)
        if got is not None:
            return got
    return None


def _read(last: Node, path: list[list[_Applied]], size: np.ndarray,
          residues: Residues | None, work: list[int],
          rng: random.Random | None) -> np.ndarray | None:
    """One read of :func:`_offsets`: the orders ``residues`` gives (``rng``, if any, drawing
    among them), within ``work``."""
    order = frontier(last) if residues is None else residues.order(last, 0, work, rng)
    if order is None:
        return None
    offsets = np.zeros(len(size), np.int64)
    _stack(order, 0, offsets, size)
    for holes in reversed(path):
        for enders, starters, reduced in reversed(holes):
            at = {x: i for i, x in enumerate(order)}
            lo = min(at[j] for j in starters)
            y = int(min(offsets[j] for j in starters))
            run = _enders_order(reduced, enders, at, lo, residues, y, work, rng)
            if run is None:
                return None
            _stack(run, y, offsets, size)
            order = order[:lo] + run + order[lo + len(starters):]
    return offsets


def _stack(order: list[int], y: int, offsets: np.ndarray, size: np.ndarray) -> None:
    for j in order:
        offsets[j] = y
        y += int(size[j])


def _enders_order(reduced: Node, enders: frozenset[int], at: dict[int, int], lo: int,
                  residues: Residues | None, y: int, work: list[int],
                  rng: random.Random | None = None) -> list[int] | None:
    """An order of ``enders`` (contiguous in ``reduced``) that ``reduced`` allows along with
    the order ``at`` (positions) of the rest, in which the enders' block starts at position
    ``lo`` and offset ``y`` (with ``residues``, every ender aligned; None where none is
    found; ``rng`` as for :meth:`Residues.order`)."""
    t, span = locate(reduced, enders)
    if span is None:
        return frontier(t) if residues is None else residues.order(t, y, work, rng)
    # A range of a Q-node's children: its orientation, from a child outside the range.
    k = span[0] - 1 if span[0] > 0 else span[-1] + 1
    kids = t.children[span[0]:span[-1] + 1]
    if (k < span[0]) != (at[next(iter(t.children[k].leaves))] < lo):
        kids = kids[::-1]
    if residues is None:
        return [x for c in kids for x in frontier(c)]
    return residues.in_order(kids, y, work, rng)
