"""A byte-level simulation that checks aliases are *semantically* safe (test helper).

Independent of cpplan.graph.rewrites: it runs the schedule over the blocks of the problem,
tracking which tensor's bytes each byte range holds. At every step, bytes that no live member of
their block reserves are clobbered (any valid plan may put another block there); each operator
then checks that every planned input still holds its content, and writes its outputs' content.
A view's output has its input's content, a concat's output the concatenation of its inputs'.
"""

from __future__ import annotations

from cpplan.graph import Graph
from cpplan.problem import Problem

Seg = tuple[int, int, str, int]  # [lo, hi) holds bytes [off, off + hi - lo) of tensor's content


def _content(graph: Graph, t: str, memo: dict[str, list[Seg]]) -> list[Seg]:
    """Content of tensor t as segments over [0, size): canonical (tensor, offset) sources."""
    if t in memo:
        return memo[t]
    size = graph.tensors[t].size
    p = graph.producer.get(t)
    segs: list[Seg] = [(0, size, t, 0)]
    if p is not None:
        op = graph.operators[p]
        if op.view and op.outputs[0] == t:
            segs = _content(graph, op.inputs[0], memo)
        elif op.concat_axis is not None and op.outputs[0] == t and \
                sum(graph.tensors[i].size for i in op.inputs) == size and \
                all(d == 1 for d in graph.tensors[t].shape[:op.concat_axis]):
            segs, base = [], 0
            for i in op.inputs:
                segs += [(lo + base, hi + base, s, o) for lo, hi, s, o in _content(graph, i, memo)]
                base += graph.tensors[i].size
    memo[t] = _merge(segs)
    return memo[t]


def _merge(segs: list[Seg]) -> list[Seg]:
    out: list[Seg] = []
    for lo, hi, s, o in sorted(segs):
        if hi <= lo:
            continue
        if out and out[-1][1] == lo and out[-1][2] == s and out[-1][3] + (lo - out[-1][0]) == o:
            out[-1] = (out[-1][0], hi, s, out[-1][3])
        else:
            out.append((lo, hi, s, o))
    return out


def _shift(segs: list[Seg], d: int) -> list[Seg]:
    return [(lo + d, hi + d, s, o) for lo, hi, s, o in segs]


def _clip(mem: list[Seg], keep: list[tuple[int, int]]) -> list[Seg]:
    union: list[tuple[int, int]] = []
    for a, b in sorted(keep):
        if union and a <= union[-1][1]:
            union[-1] = (union[-1][0], max(union[-1][1], b))
        else:
            union.append((a, b))
    out = []
    for lo, hi, s, o in mem:
        for a, b in union:
            x, y = max(lo, a), min(hi, b)
            if x < y:
                out.append((x, y, s, o + (x - lo)))
    return _merge(out)


def _write(mem: list[Seg], segs: list[Seg], lo: int, hi: int) -> list[Seg]:
    rest = _clip(mem, [(-1 << 62, lo), (hi, 1 << 62)])
    return _merge(rest + segs)


def _read_ok(mem: list[Seg], want: list[Seg], lo: int, hi: int) -> bool:
    return _clip(mem, [(lo, hi)]) == _merge(want)


def simulate(graph: Graph, problem: Problem) -> list[str]:
    """Problems found (empty: every read sees the right bytes)."""
    sizes = {b.id: b.size for b in problem.buffers}
    life = {b.id: (b.start, b.end) for b in problem.buffers}
    root = {b.id: (b.id, 0) for b in problem.buffers}
    root.update(problem.root_of)
    members: dict[str, list[str]] = {}
    for b in problem.buffers:
        members.setdefault(root[b.id][0], []).append(b.id)
    memo: dict[str, list[Seg]] = {}
    mem: dict[str, list[Seg]] = {r: [] for r in members}
    errors: list[str] = []
    steps = max(len(graph.operators), 1)

    def place(t: str) -> tuple[str, int, int]:
        r, d = root[t]
        return r, d, d + sizes[t]

    def clobber(s: int) -> None:
        for r, ms in members.items():
            keep = [(root[m][1], root[m][1] + sizes[m]) for m in ms
                    if life[m][0] <= s < life[m][1] and sizes[m]]
            mem[r] = _clip(mem[r], keep)

    def check(t: str, when: str) -> None:
        if t not in root or not sizes[t]:
            return
        r, lo, hi = place(t)
        if not _read_ok(mem[r], _shift(_content(graph, t, memo), lo), lo, hi):
            errors.append(f"{when}: {t!r} does not hold its bytes")

    for t in graph.tensors.values():
        if t.role == "input" and t.name in root:
            r, lo, hi = place(t.name)
            mem[r] = _write(mem[r], _shift(_content(graph, t.name, memo), lo), lo, hi)
    for s, op in enumerate(graph.operators):
        clobber(s)
        for t in op.inputs:
            check(t, f"step {s} ({op.name}) reads")
        for k, o in enumerate(op.outputs):
            if o in root and sizes[o]:
                r, lo, hi = place(o)
                for j, x in enumerate(op.inputs):  # writing over an input it is still reading
                    if x not in root or not sizes[x] or root[x][0] != r:
                        continue
                    _, xl, xh = place(x)
                    if xl >= hi or lo >= xh:
                        continue
                    same = _clip(_shift(_content(graph, o, memo), lo), [(xl, xh)]) == \
                        _clip(_shift(_content(graph, x, memo), xl), [(lo, hi)])
                    if not same and not (k == 0 and j in op.inplace and xl == lo):
                        errors.append(f"step {s} ({op.name}) writes {o!r} over input {x!r}")
                mem[r] = _write(mem[r], _shift(_content(graph, o, memo), lo), lo, hi)
    clobber(steps - 1)
    for o in graph.outputs:
        check(o, "end of run")
    return errors
