"""Where the hole search (:mod:`cpplan.exact.refill`) stops on perfect packings, and how far
back the choice lies that stops it.

For each instance it prints, per direction of time, the deepest event the search reached in
``--seconds`` (of how many events). Then, forwards, it starts the search from the generator's
own holes (read from ``meta["offsets"]``, the packing it was made from) for the first ``k``
events and asks whether it reaches ``--past`` events beyond the wall within ``--seconds``: the
largest ``k`` at which it still does not is where the choice that stops it was made, at the
latest (the search is chronological, so a wrong choice that many events back is not undone in
time). A row per ``k``, from the wall down in steps of ``--step``.

    python benchmarks/hole_walls.py                                  # repeated 2000, seed 1
    python benchmarks/hole_walls.py --family realloc --seeds 0 1 --seconds 5

It also prints how many events have holes of the generator's that the candidates
(:func:`cpplan.exact.events.holes_of`) do not list, and how many miss two or more: the search
reserves enders to one hole not listed, never two, so there the generator's tiling is out of
its reach (the searches here are one a way; :func:`cpplan.exact.refill.refill` searches a way
that ran out of choices again with two holes not listed or more).

Measured on 2026-11-27 (repeated-2000-1, 5 s each): forwards it stops at event 91 of 748,
backwards 480 events from the end; from the generator's holes for 79 events it passes event
131 at once, from 77 it stops at event 104. Takes about 20 s with the defaults. On
2026-11-29, ``--family multiscale --seeds 0 1``: 15 and 13 events with holes not listed, 1
and 5 of them missing two (``mosaic``: 72 of 76; ``regroup``, ``realloc``, ``serving``,
``repeated``, ``stack``, ``ring``: none, seed 0); multiscale-2000-1 stops at event 127 even
from the generator's holes for the 127 before it, out of choices: two of that event's holes
(10 and 11 blocks, 6 and 7) are not listed. After the search kept the trees it had searched to
the end and looked ahead at certain holes (:mod:`cpplan.exact.lookahead`), same day,
``--family multiscale --size 500 --seeds 0 2 --seconds 10``: multiscale-500-0 found forwards
in 6.6 s (it stopped at event 52 of 89 before), multiscale-500-2 stops at event 36 (two of its
holes not listed); the defaults: repeated-2000-1 forwards to event 87 of 748 in 5 s (91
before: fewer, dearer nodes).

``--listed`` adds the generator's holes that the candidates miss to each event's, so that its
tiling is within reach: whether the search then gets through tells a wall of candidates from
one of choices. 2026-12-07, ``--family multiscale --seeds 0 1 2 --seconds 20 --step 12 --rows
4 --listed``: multiscale-2000-2 is rebuilt forwards in 19.8 s (without: out of choices at
event 36 of 376); multiscale-2000-0 forwards to event 165 of 408 (135 without), and from the
generator's holes for 129 events it passes event 205 (from 117, the day's other run: stops at
198); multiscale-2000-1 to event 246 of 401 (127 without), and from the generator's holes for
210 to 246 events it stops at event 276 (a second wall, of choices).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cpplan import make_blocks
from cpplan.exact.events import PAIRS_ENUMERATED, Hole, Holes, holes_of, tiling_holes
from cpplan.exact.pqtree import Node, P, contiguous, leaf, node, replace
from cpplan.exact.refill import _Search, _splits
from cpplan.perfect import FAMILIES


def deepest(search: _Search, seconds: float, stop_at: int | None = None) -> tuple[int, str]:
    """The deepest event ``search`` reaches in ``seconds`` (looked at every 50 nodes), and
    how it ended: ``found``, ``exhausted`` (below ``stop_at`` frames too) or ``paused``."""
    t0, best, status = time.perf_counter(), len(search.path), "paused"
    while time.perf_counter() - t0 < seconds:
        status = search.run(50, lambda: False)
        best = max(best, len(search.path))
        if status != "paused" or (stop_at is not None and len(search.frames) <= stop_at):
            status = "exhausted" if status != "found" else status
            break
    return best, status


def generator_trees(blocks, holes: Holes, offsets: np.ndarray, events: int) -> list[Node]:
    """The PQ-tree before each of the first ``events`` events when every event's holes are the
    generator's own (:func:`cpplan.exact.events.tiling_holes`)."""
    live = np.flatnonzero(blocks.size > 0)
    first = blocks.start[live].min()
    tree = node(P, [leaf(int(j)) for j in live if blocks.start[j] == first])
    trees = [tree]
    truth = tiling_holes(blocks, offsets)
    for cands in holes.events[:events]:
        for enders, made in truth[int(blocks.end[cands[0].enders[0]])]:
            reduced = contiguous(tree, enders)
            assert reduced is not None, "the generator's holes are not a tiling"
            kids = [leaf(j) for j in sorted(made)]
            tree = replace(reduced, enders, kids[0] if len(kids) == 1 else node(P, kids))
        trees.append(tree)
    return trees


def missed(blocks, holes: Holes, offsets: np.ndarray
           ) -> list[list[tuple[frozenset[int], frozenset[int]]]]:
    """Per event, the generator's holes (enders, starters) that its candidates do not list."""
    truth = tiling_holes(blocks, offsets)
    out = []
    for cands in holes.events:
        listed = {(frozenset(h.enders), frozenset(h.starters)) for h in cands}
        out.append([(e, s) for e, s in truth[int(blocks.end[cands[0].enders[0]])]
                    if (e, s) not in listed])
    return out


def unlisted(blocks, holes: Holes, offsets: np.ndarray) -> tuple[int, int]:
    """Events at which the generator's holes are not all among the candidates: how many, and
    how many miss two or more (out of a first search's reach: where an event's candidates were
    cut, it reserves enders to one hole not listed, never two)."""
    per_event = missed(blocks, holes, offsets)
    return sum(len(m) > 0 for m in per_event), sum(len(m) > 1 for m in per_event)


def with_generators(blocks, holes: Holes, offsets: np.ndarray) -> Holes:
    """``holes`` with the generator's holes that the candidates do not list added to each
    event's (so that the generator's tiling is within the search's reach): whether the search
    then gets through tells a wall of candidates from a wall of choices."""
    events = [cands + tuple(Hole(tuple(sorted(e)), tuple(sorted(s)),
                                 int(blocks.size[sorted(e)].sum())) for e, s in more)
              for cands, more in zip(holes.events, missed(blocks, holes, offsets), strict=True)]
    return Holes(tuple(events), False, holes.size, holes.skipped, holes.whole)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", default="repeated", choices=sorted(FAMILIES))
    ap.add_argument("--size", type=int, default=2000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--seconds", type=float, default=5.0, help="per search")
    ap.add_argument("--past", type=int, default=40, help="events beyond the wall to reach")
    ap.add_argument("--step", type=int, default=2)
    ap.add_argument("--rows", type=int, default=8, help="starts from the generator's holes")
    ap.add_argument("--listed", action="store_true",
                    help="search with the generator's holes added to the candidates")
    args = ap.parse_args()
    for seed in args.seeds:
        problem = FAMILIES[args.family](args.size, seed=seed)
        blocks = make_blocks(problem)
        ids = np.arange(len(blocks))
        size = blocks.size.astype(np.int64)
        holes = holes_of(blocks, ids, PAIRS_ENUMERATED)
        offsets = np.asarray(problem.meta["offsets"])[blocks.root] // blocks.scale
        some, two = unlisted(blocks, holes, offsets)
        if args.listed:
            holes = with_generators(blocks, holes, offsets)
        name = problem.name + (" (the generator's holes listed)" if args.listed else "")
        t0 = time.perf_counter()
        fwd, how = deepest(_Search(holes, blocks.start, size, False), args.seconds)
        took = time.perf_counter() - t0
        bwd, _ = deepest(_Search(holes.reversed(), blocks.end, size, True), args.seconds)
        print(f"{name}: {len(holes.events)} events; forwards to event {fwd}"
              f"{f' (found in {took:.1f} s)' if how == 'found' else ''}, "
              f"backwards to event {len(holes.events) - bwd} ({bwd} from the end)", flush=True)
        goal = min(len(holes.events), fwd + args.past)
        print(f"  events whose generator's holes are not all candidates: {some}, "
              f"{two} of them missing two or more", flush=True)
        if how == "found":
            continue  # (no wall to look behind)
        trees = generator_trees(blocks, holes, offsets, fwd)
        short = Holes(holes.events[:goal], holes.complete, holes.size, holes.skipped,
                      holes.whole[:goal])
        for k in range(fwd, max(-1, fwd - args.step * args.rows), -args.step):
            search = _Search(short, blocks.start, size, False)
            # (the first k events' frames are spent: the search never goes back past them)
            search.frames = [iter(()) for _ in range(k)] + [_splits(trees[k], search.event(k))]
            search.keys = [None] * len(search.frames)
            search.path = [[] for _ in range(k)]
            reached, status = deepest(search, args.seconds, stop_at=k)
            print(f"  from the generator's holes for {k} events: "
                  f"{'passes' if status == 'found' else 'stops at'} event {reached} "
                  f"(goal {goal}; {status})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
