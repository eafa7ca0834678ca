"""The exhaustive reference: the best objective of a small problem, by trying every placement.

It shares no code with cpplan's planners, blocks or bounds; only :class:`cpplan.Problem` (the
input) is read; a buffer's gaps are read step by step (one unit rectangle per step of life).
Every block (a root buffer and the buffers aliased into it) tries every candidate pool and every
offset that meets its members' alignments, its root's pool alignment and its
fixed offset, from 0 up to a stacking height ``S_p``; branch and bound on the objective prunes.

Why ``S_p`` loses nothing: take any valid plan and restack pool ``p``'s free blocks above its
highest fixed block, each at the next offset its alignments allow (at most ``period - 1`` bytes
of padding each). The result is valid, no higher than ``S_p`` = highest fixed top + the sum of
``size + period - 1``, and its objective is no larger whenever the original's height in ``p``
was above ``S_p``. So an optimal plan (and, for feasibility, some plan) lies within ``S_p``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cpplan.problem import Problem

__all__ = ["brute_force", "BruteResult", "fits", "occupied"]


@dataclass(frozen=True)
class BruteResult:
    objective: int | None  # None: no plan exists
    placements: dict[str, tuple[str, int]] | None


def _blocks(problem: Problem) -> list[dict]:
    roots: dict[str, dict] = {}
    for b in problem.buffers:
        root, disp = problem.root_of.get(b.id, (b.id, 0))
        roots.setdefault(root, {"members": []})["members"].append((b, disp))
    pools = {p.name: p for p in problem.pools}
    out = []
    for root, blk in roots.items():
        members = blk["members"]
        rb = problem.buffer(root)
        cands = [p.name for p in problem.pools
                 if all(not m.pools or p.name in m.pools for m, _ in members)]
        fixed = None
        for m, d in members:
            if m.offset is not None:
                fixed = m.offset - d
        blk.update(root=rb, cands=cands, fixed=fixed)
        # Offsets that meet every alignment repeat with this period; the valid residues per pool.
        blk["period"] = {}
        blk["residues"] = {}
        for p in cands:
            period = math.lcm(rb.alignment, pools[p].alignment, *(m.alignment for m, _ in members))
            res = [r for r in range(period)
                   if r % math.lcm(rb.alignment, pools[p].alignment) == 0
                   and all((r + d) % m.alignment == 0 for m, d in members)]
            blk["period"][p], blk["residues"][p] = period, res
        blk["rects"] = [r for m, d in members for r in occupied(m, d)]
        blk["top"] = max(d + m.size for m, d in members)
        blk["traffic"] = sum(m.traffic for m, _ in members)
        out.append(blk)
    return out


def occupied(buffer, disp: int) -> list[tuple[int, int, int, int]]:
    """The non-empty rectangles (steps x bytes from the block's offset) a buffer occupies: step
    by step, nothing or its gap's window inside a gap, all its bytes elsewhere in its life."""
    out = []
    for t in range(buffer.start, buffer.end):
        lo, hi = 0, buffer.size
        for g in buffer.gaps:
            if g.start <= t < g.end:
                lo, hi = (0, 0) if g.window is None else g.window
        if hi > lo:
            out.append((t, t + 1, disp + lo, disp + hi))
    return out


def _clash(a: dict, oa: int, b: dict, ob: int) -> bool:
    for s1, e1, lo1, hi1 in a["rects"]:
        for s2, e2, lo2, hi2 in b["rects"]:
            if s1 < e2 and s2 < e1 and oa + lo1 < ob + hi2 and ob + lo2 < oa + hi1:
                return True
    return False


def brute_force(problem: Problem) -> BruteResult:
    """The optimal ``sum(cost * height) + sum(traffic * traffic_cost)`` and one plan reaching
    it, or ``None`` if no plan exists. Exponential: meant for a handful of buffers."""
    pools = {p.name: p for p in problem.pools}
    blocks = _blocks(problem)
    fixed_top = {p: 0 for p in pools}
    for blk in blocks:
        if blk["fixed"] is not None:
            for p in blk["cands"]:
                fixed_top[p] = max(fixed_top[p], blk["fixed"] + blk["top"])
    stack = {p: fixed_top[p] + sum(blk["top"] + blk["period"][p] - 1
                                   for blk in blocks if p in blk["cands"] and blk["fixed"] is None)
             for p in pools}
    limit = {p: stack[p] if pools[p].capacity is None else min(stack[p], pools[p].capacity)
             for p in pools}
    # Fixed blocks first (no choice of offset), then the largest.
    blocks.sort(key=lambda b: (b["fixed"] is None, -b["top"]))
    best: list = [None, None]
    chosen: list[tuple[str, int]] = []

    def objective(heights: dict[str, int], moved: int) -> int:
        return sum(pools[p].cost * h for p, h in heights.items()) + moved

    def go(k: int, heights: dict[str, int], moved: int) -> None:
        if best[0] is not None and objective(heights, moved) >= best[0]:
            return
        if k == len(blocks):
            best[0] = objective(heights, moved)
            best[1] = list(chosen)
            return
        blk = blocks[k]
        for p in blk["cands"]:
            if blk["fixed"] is not None:
                offsets = [blk["fixed"]] if blk["fixed"] % blk["period"][p] in \
                    blk["residues"][p] else []
            else:
                period = blk["period"][p]
                offsets = sorted(base + r for base in range(0, limit[p] + 1, period)
                                 for r in blk["residues"][p])
            for o in offsets:
                if o + blk["top"] > limit[p]:
                    break
                if any(q == p and _clash(blk, o, blocks[j], oj)
                       for j, (q, oj) in enumerate(chosen)):
                    continue
                h = dict(heights)
                h[p] = max(h[p], o + blk["top"])
                chosen.append((p, o))
                go(k + 1, h, moved + blk["traffic"] * (pools[p].traffic_cost - cheapest[k]))
                chosen.pop()

    # What traffic costs at least, block by block, counted from the start (so that a partial
    # objective bounds the whole one and prunes as well as heights alone do); each choice adds
    # what its pool costs beyond that.
    cheapest = [min((pools[p].traffic_cost for p in blk["cands"]), default=0) for blk in blocks]
    go(0, {p: 0 for p in pools}, sum(blk["traffic"] * c for blk, c in zip(blocks, cheapest,
                                                                          strict=True)))
    if best[0] is None:
        return BruteResult(None, None)
    placements: dict[str, tuple[str, int]] = {}
    for blk, (p, o) in zip(blocks, best[1], strict=True):
        for m, d in blk["members"]:
            placements[m.id] = (p, o + d)
    return BruteResult(best[0], placements)


def fits(problem: Problem, roots: set[str] | None = None) -> bool:
    """Whether a plan exists for the buffers ``roots`` (default: all), each with the buffers
    aliased into it: the reference for sets of buffers that cannot fit together."""
    if roots is not None:
        keep = {b.id for b in problem.buffers if problem.root_of.get(b.id, (b.id, 0))[0] in roots}
        problem = problem.replace(
            buffers=tuple(b for b in problem.buffers if b.id in keep),
            aliases=tuple(a for a in problem.aliases if a.buffer in keep))
    return brute_force(problem).objective is not None
