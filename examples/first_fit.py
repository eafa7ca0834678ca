"""An example of a user's own allocator, for ``cpplan grade --planner examples/first_fit.py:plan``.

The grader calls ``plan(problem)`` and accepts a dict ``buffer id -> offset`` (or ``id -> (pool,
offset)``, or a :class:`cpplan.Plan`); it checks the result and ranks it against the optimum.
This one is a textbook first-fit by decreasing size, as a quick allocator in a runtime might
be: each root buffer (with everything aliased into it, as one rectangle spanning all their
lifetimes) goes to its first candidate pool, at the lowest offset aligned for it there that is
free for its whole lifetime. It ignores capacities. Aliased buffers are left out of the dict:
the grader puts them inside their root.
"""

from __future__ import annotations

import math

from cpplan import Problem


def plan(problem: Problem) -> dict[str, tuple[str, int]]:
    """Largest block first; each at the lowest aligned offset free for its whole lifetime."""
    by_id = {b.id: b for b in problem.buffers}
    blocks: dict[str, list[str]] = {b.id: [b.id] for b in problem.buffers
                                    if b.id not in problem.root_of}
    for bid, (root, _disp) in problem.root_of.items():
        blocks[root].append(bid)
    placed: dict[str, list[tuple[int, int, int, int]]] = {}  # pool -> (start, end, lo, hi)
    out: dict[str, tuple[str, int]] = {}

    def key(root: str) -> tuple:
        return (-by_id[root].size, by_id[root].start, root)

    for root in sorted(blocks, key=key):
        members = [by_id[m] for m in blocks[root]]
        start, end = min(m.start for m in members), max(m.end for m in members)
        size = by_id[root].size
        pool = problem.candidates(root)[0]
        align = math.lcm(problem.pool(pool).alignment, *(m.alignment for m in members))
        busy = sorted((lo, hi) for s, e, lo, hi in placed.get(pool, ())
                      if s < end and start < e)
        off = 0
        for lo, hi in busy:
            if -(-off // align) * align + size <= lo:
                break
            off = max(off, hi)
        off = -(-off // align) * align
        out[root] = (pool, off)
        placed.setdefault(pool, []).append((start, end, off, off + size))
    return out


def overlapping(problem: Problem) -> dict[str, int]:
    """A broken allocator: everything at offset 0 (the grader must report it invalid)."""
    return {b.id: 0 for b in problem.buffers}
