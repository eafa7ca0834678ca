"""Rewrites that let tensors share bytes, written as aliases so every planner honours them.

Three rewrites, applied in this order over the schedule:

1. **Views** (on by default): a reshape, squeeze, flatten or identity makes no copy; its output
   is an alias of its input at displacement 0.
2. **Concat without copies** (``concat=True``): each input of a concatenation is written straight
   into its slice of the output, an alias at the slice's byte displacement (the sum of the sizes
   of the inputs before it). Only where the slices are contiguous in memory: the concatenation
   runs along the outermost non-unit axis (every dimension before the axis is 1, e.g. channels
   of an NCHW tensor with batch 1). Elsewhere the copy stays. The output's block then holds
   memory from when its first input is made (each slice from its own input's birth).
3. **In place** (``in_place=True``): an operator marked in-place writes output 0 over one of its
   marked inputs when that input dies at this step (this operator is its last reader, it is not
   a graph output nor an input outside the arena) and the output is not larger. It becomes an
   alias of the input at displacement 0 (or, when the output already sits in a concat slice, the
   input moves into the output's slice: the same bytes shared the other way round).

A tensor lives in at most one place, so a rewrite that would need to move an already aliased
tensor is skipped (the copy stays), and the reason is counted in the report.

**Safety.** Every proposed alias is checked before it is accepted: within a block, two tensors
that share a byte at the same moment must hold the same value (linked by views and concat
slices only), or be the input and output of an in-place step: the input dies at that step, the
output is born at it, they start at the same byte, and the operator marks that input in-place.
This is what makes the rewrites compose (a view of a tensor that lives on blocks an in-place
write over the view, a concat input that dies keeps its slice because the concat output lives
on, and so on) without a special case for each.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .ir import Graph
from .liveness import Liveness

__all__ = ["Aliasing", "Link", "RewriteReport", "find_aliases", "concat_is_contiguous"]

VIEW, CONCAT, INPLACE = "view", "concat", "in-place"


@dataclass(frozen=True, slots=True)
class Link:
    """``buffer`` lives inside ``parent`` at byte ``displacement``, made by rewrite ``kind``."""

    buffer: str
    parent: str
    displacement: int
    kind: str


@dataclass
class RewriteReport:
    """What the rewrites did: aliases and bytes that need no copy, per rewrite, and why the
    remaining candidates kept their copies (reason -> count)."""

    aliases: Counter = field(default_factory=Counter)  # kind -> aliases made
    bytes: Counter = field(default_factory=Counter)  # kind -> bytes needing no buffer of their own
    kept: dict[str, Counter] = field(default_factory=dict)  # kind -> reason -> count
    concats: int = 0
    contiguous_concats: int = 0

    def keep(self, kind: str, reason: str) -> None:
        self.kept.setdefault(kind, Counter())[reason] += 1

    @property
    def bytes_saved(self) -> int:
        """Bytes of tensors that no longer need memory of their own (copies avoided)."""
        return sum(self.bytes.values())

    def as_dict(self) -> dict:
        out: dict = {}
        for kind in (VIEW, CONCAT, INPLACE):
            d: dict[str, Any] = {"aliases": self.aliases[kind], "bytes_saved": self.bytes[kind]}
            if kind == CONCAT:
                d["concats"] = self.concats
                d["contiguous"] = self.contiguous_concats
            if self.kept.get(kind):
                d["kept_copies"] = dict(sorted(self.kept[kind].items()))
            out[kind] = d
        out["bytes_saved"] = self.bytes_saved
        return out


@dataclass(frozen=True)
class Aliasing:
    """The result of :func:`find_aliases`: the links, the report, and each planned tensor's
    pool (its block root's pool)."""

    links: list[Link]
    report: RewriteReport
    pool: dict[str, str]


def concat_is_contiguous(shape: tuple[int, ...], axis: int) -> bool:
    """Whether the inputs of a concatenation along ``axis`` land in contiguous byte ranges of
    a row-major output of ``shape``: true iff every dimension before ``axis`` is 1."""
    return math.prod(shape[:axis]) == 1


class _Blocks:
    """Alias forest under construction, with the safety check of the module docstring."""

    def __init__(self, graph: Graph, live: Liveness, pool_of: dict[str, str], alignment: int):
        self.g = graph
        self.start, self.end = live.start, live.end
        self.size = {t: graph.tensors[t].size for t in live.start}
        self.alignment = alignment
        self.parent: dict[str, tuple[str, int]] = {}
        self.kind: dict[str, str] = {}
        self.root: dict[str, tuple[str, int]] = {t: (t, 0) for t in live.start}
        self.members: dict[str, list[str]] = {t: [t] for t in live.start}
        self.active: dict[str, list[str]] = {t: [t] for t in live.start}
        self.pruned: dict[str, int] = {t: -1 for t in live.start}
        self.pool = dict(pool_of)  # by block root
        self.cls: dict[str, str] = {}  # union-find over value-preserving links
        self.outputs = set(graph.outputs)

    def find(self, t: str) -> str:
        path = []
        while t in self.cls:
            path.append(t)
            t = self.cls[t]
        for p in path[:-1]:
            self.cls[p] = t
        return t

    def attach(self, t: str, target: str, disp: int, kind: str) -> str | None:
        """Put ``t`` (with everything aliased to it) at ``disp`` inside ``target``; ``None`` on
        success, else the reason it was refused."""
        u, value = t, kind != INPLACE
        while u in self.parent:
            p, d = self.parent[u]
            if d or self.size[p] != self.size[u]:
                return f"input already aliased by a {self.kind[u]}"
            value = value and self.kind[u] != INPLACE
            u = p
        r, d_target = self.root[target]
        if r == u:
            return "would alias a tensor into itself"
        if self.pool[u] != self.pool[r] and kind != VIEW:
            return "tensors in different pools"
        base = d_target + disp
        if base % self.alignment:
            return "slice not aligned"
        moved = [(m, base + self.root[m][1]) for m in self.members[u]]
        cu, cr = self.find(u), self.find(target)
        lo = min(self.start[m] for m, _ in moved)
        hi = max(self.end[m] for m, _ in moved)
        for e in self._alive_after(r, lo):
            se, ee = self.start[e], self.end[e]
            if se >= hi or self.size[e] == 0:
                continue
            de = self.root[e][1]
            ce = self.find(e)
            for m, dm in moved:
                if (self.start[m] < ee and se < self.end[m] and dm < de + self.size[e]
                        and de < dm + self.size[m] and self.size[m]):
                    cm = self.find(m)
                    if cm == ce or (value and {cm, ce} == {cu, cr}):
                        continue  # the same value in the same bytes
                    if not (self._in_place_pair(m, dm, e, de) or self._in_place_pair(e, de, m, dm)):
                        return f"bytes still needed by {e!r}"
        # commit
        self.parent[u] = (target, disp)
        self.kind[u] = kind
        for m, dm in moved:
            self.root[m] = (r, dm)
        self.members[r].extend(m for m, _ in moved)
        self.active[r].extend(m for m, _ in moved)
        del self.members[u], self.active[u], self.pruned[u]
        if value and cu != cr:
            self.cls[cu] = cr
        return None

    def _alive_after(self, r: str, t: int) -> list[str]:
        """Members of block ``r`` that may be alive at or after step ``t``."""
        if t >= self.pruned[r]:
            # members that end by ``t`` never overlap anything that starts at or after ``t``
            self.active[r] = [e for e in self.active[r] if self.end[e] > t]
            self.pruned[r] = t
            return self.active[r]
        return self.members[r]

    def _in_place_pair(self, early: str, d_early: int, late: str, d_late: int) -> bool:
        """``late`` is written in place over ``early`` at one step, both at the same byte."""
        s = self.start[late]
        if (d_early != d_late or self.end[early] != s + 1 or self.g.producer.get(late) != s
                or early in self.outputs):  # an output ending at the last step is not dead
            return False
        op = self.g.operators[s]
        return op.outputs[0] == late and any(op.inputs[i] == early for i in op.inplace)


def find_aliases(
    graph: Graph,
    live: Liveness,
    pool_of: dict[str, str],
    *,
    views: bool = True,
    concat: bool = False,
    in_place: bool = False,
    alignment: int = 1,
) -> Aliasing:
    """The aliases the chosen rewrites make over the planned tensors of ``graph``.

    ``pool_of`` gives each planned tensor's pool; aliases stay within a pool (a view joins its
    input's pool). ``alignment`` is every buffer's alignment: a concat slice at a displacement
    that is not a multiple of it keeps its copy.
    """
    blocks = _Blocks(graph, live, pool_of, alignment)
    report = RewriteReport()
    planned = live.start
    ops = graph.operators
    tensors = graph.tensors
    if views:
        for op in ops:
            if not op.view:
                continue
            x, y = op.inputs[0], op.outputs[0]
            if x not in planned:
                report.keep(VIEW, "view of a constant")
            elif tensors[x].size != tensors[y].size:
                report.keep(VIEW, "sizes differ")
            elif (why := blocks.attach(y, x, 0, VIEW)) is None:
                report.aliases[VIEW] += 1
                report.bytes[VIEW] += tensors[y].size
            else:
                report.keep(VIEW, why)
    if concat:
        for op in ops:
            if op.concat_axis is None:
                continue
            report.concats += 1
            out = tensors[op.outputs[0]]
            if not concat_is_contiguous(out.shape, op.concat_axis):
                report.keep(CONCAT, "slices not contiguous (axis is not the outermost non-unit)")
                continue
            if sum(tensors[t].size for t in op.inputs) != out.size:
                report.keep(CONCAT, "input sizes do not add up to the output")
                continue
            report.contiguous_concats += 1
            disp, seen = 0, set()
            for t in op.inputs:
                size = tensors[t].size
                if t not in planned:
                    report.keep(CONCAT, "input is a constant")
                elif t in seen:
                    report.keep(CONCAT, "input repeated")
                elif size:
                    why = blocks.attach(t, out.name, disp, CONCAT)
                    if why is None:
                        report.aliases[CONCAT] += 1
                        report.bytes[CONCAT] += size
                    else:
                        report.keep(CONCAT, why)
                seen.add(t)
                disp += size
    if in_place:
        outputs = set(graph.outputs)
        for s, op in enumerate(ops):
            if not op.inplace:
                continue
            o = op.outputs[0]
            why = "no input qualifies"
            for i in op.inplace:
                x = op.inputs[i]
                if x not in planned:
                    continue
                if x in outputs:
                    why = "input is a graph output"
                elif live.end[x] != s + 1:
                    why = "input lives on after this step"
                elif tensors[o].size > tensors[x].size:
                    why = "output larger than input"
                elif o in blocks.parent:  # output already in a concat slice: move the input in
                    why = blocks.attach(x, o, 0, INPLACE)
                else:
                    why = blocks.attach(o, x, 0, INPLACE)
                if why is None:
                    report.aliases[INPLACE] += 1
                    report.bytes[INPLACE] += tensors[o].size
                    break
            else:
                report.keep(INPLACE, why)
    links = [Link(b, p, d, blocks.kind[b]) for b, (p, d) in blocks.parent.items()]
    pool = {t: blocks.pool[r] for t, (r, _) in blocks.root.items()}
    return Aliasing(links, report, pool)
