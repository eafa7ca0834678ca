"""An example of a user's own allocator, for ``cpplan grade --planner examples/first_fit.py:plan``.

The grader calls ``plan(problem)`` and accepts a dict ``buffer id -> offset`` (or ``id -> (pool,
offset)``, or a :class:`cpplan.Plan`); it checks the result and ranks it against the optimum.
This one is a textbook first-fit by decreasing size, with no pools, aliases or alignment logic
beyond the buffer's own alignment, as a quick allocator in a runtime might be. Aliased buffers
may be left out: they follow their root.
"""

from __future__ import annotations

from cpplan import Problem


def plan(problem: Problem) -> dict[str, int]:
    """Largest buffer first; each at the lowest aligned offset free for its whole lifetime."""
    aliased = problem.root_of
    placed: list[tuple[int, int, int, int]] = []  # start, end, lo, hi
    offsets: dict[str, int] = {}
    roots = [b for b in problem.buffers if b.id not in aliased]
    for b in sorted(roots, key=lambda b: (-b.size, b.start, b.id)):
        busy = sorted((lo, hi) for s, e, lo, hi in placed if s < b.end and b.start < e)
        off = 0
        for lo, hi in busy:
            off = -(-off // b.alignment) * b.alignment
            if off + b.size <= lo:
                break
            off = max(off, hi)
        off = -(-off // b.alignment) * b.alignment
        offsets[b.id] = off
        placed.append((b.start, b.end, off, off + b.size))
    return offsets


def overlapping(problem: Problem) -> dict[str, int]:
    """A broken allocator: everything at offset 0 (the grader must report it invalid)."""
    return {b.id: 0 for b in problem.buffers}
