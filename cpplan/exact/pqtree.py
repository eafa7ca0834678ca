"""PQ-trees: every order of a set of items in which given subsets are contiguous, in one tree.

A PQ-tree (Booth and Lueker, 1976) stands for a set of orders of its leaves, its *frontiers*:
the children of a P-node may come in any order, those of a Q-node in theirs or its reverse.
:func:`contiguous` keeps the frontiers in which a subset's leaves are contiguous, and
:func:`replace` swaps a contiguous subset's block for another node: together they follow the
order of the blocks alive at each moment of a tiling, whose holes are contiguous runs that new
blocks fill in any order (:mod:`.refill`).

The reduction is the templates' case analysis, written as a recursion over the nodes the subset
touches (the trees here have tens of leaves, where this is fast enough, and far shorter than
Booth and Lueker's linear-time bookkeeping). Nodes are immutable: a reduction builds new nodes
along the paths it changes and shares the rest, so a search keeps every tree it made for free.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

__all__ = ["Node", "leaf", "node", "contiguous", "replace", "locate", "forced", "frontier",
           "digest", "without", "LEAF", "P", "Q"]

LEAF, P, Q = 0, 1, 2
_EMPTY, _PARTIAL, _FULL = 0, 1, 2


class Node:
    """A leaf, P-node or Q-node, its children (in order, for a Q-node) and its leaves."""

    __slots__ = ("kind", "children", "leaves", "_digest")

    def __init__(self, kind: int, children: tuple[Node, ...], leaves: frozenset[int]) -> None:
        self.kind, self.children, self.leaves = kind, children, leaves
        self._digest: bytes | None = None


def leaf(item: int) -> Node:
    return Node(LEAF, (), frozenset((item,)))


def node(kind: int, children: Iterable[Node]) -> Node:
    """A P- or Q-node of ``children``; a lone child stands for itself."""
    kids = tuple(children)
    if len(kids) == 1:
        return kids[0]
    return Node(kind, kids, frozenset().union(*(c.leaves for c in kids)))


def _group(nodes: list[Node]) -> list[Node]:
    """``nodes`` in any order, as a list of at most one node."""
    return [node(P, nodes)] if nodes else []


def _status(t: Node, s: frozenset[int]) -> int:
    k = len(t.leaves & s)
    return _EMPTY if k == 0 else (_FULL if k == len(t.leaves) else _PARTIAL)


def _with_s_first(t: Node, s: frozenset[int]) -> list[Node] | None:
    """Nodes in a fixed order whose frontiers, one after the other, are ``t``'s frontiers that
    begin with ``s``'s leaves in ``t`` (None: there are none)."""
    if _status(t, s) != _PARTIAL:
        return [t]
    kinds = [_status(c, s) for c in t.children]
    if t.kind == P:
        part = [c for c, k in zip(t.children, kinds, strict=True) if k == _PARTIAL]
        if len(part) > 1:
            return None
        inner = _with_s_first(part[0], s) if part else []
        if inner is None:
            return None
        return _group([c for c, k in zip(t.children, kinds, strict=True) if k == _FULL]) + \
            inner + _group([c for c, k in zip(t.children, kinds, strict=True) if k == _EMPTY])
    for kids, ks in ((t.children, kinds), (t.children[::-1], kinds[::-1])):
        i = 0
        while i < len(kids) and ks[i] == _FULL:
            i += 1
        j = i + 1 if i < len(kids) and ks[i] == _PARTIAL else i
        if all(k == _EMPTY for k in ks[j:]):
            inner = _with_s_first(kids[i], s) if j > i else []
            if inner is not None:
                return list(kids[:i]) + inner + list(kids[j:])
    return None


def _with_s_last(t: Node, s: frozenset[int]) -> list[Node] | None:
    out = _with_s_first(t, s)  # (every node's frontiers are closed under reversal)
    return None if out is None else out[::-1]


def contiguous(t: Node, s: frozenset[int]) -> Node | None:
    """The tree of ``t``'s frontiers in which the leaves of ``s`` are contiguous (None: in
    none of them)."""
    if _status(t, s) != _PARTIAL:
        return t
    kinds = [_status(c, s) for c in t.children]
    if t.kind == P:
        full = [c for c, k in zip(t.children, kinds, strict=True) if k == _FULL]
        empty = [c for c, k in zip(t.children, kinds, strict=True) if k == _EMPTY]
        part = [c for c, k in zip(t.children, kinds, strict=True) if k == _PARTIAL]
        if not full and len(part) == 1:  # (all of s inside one child)
            inner = contiguous(part[0], s)
            return None if inner is None else node(P, empty + [inner])
        if len(part) > 2:
            return None
        ends = [_with_s_last(part[0], s) if part else [],
                _with_s_first(part[1], s) if len(part) == 2 else []]
        if ends[0] is None or ends[1] is None:
            return None
        return node(P, empty + [node(Q, ends[0] + _group(full) + ends[1])])
    touched = [k for k, kind in enumerate(kinds) if kind != _EMPTY]
    i, j = touched[0], touched[-1]
    if i == j:
        inner = contiguous(t.children[i], s)
        return None if inner is None else \
            node(Q, t.children[:i] + (inner,) + t.children[i + 1:])
    if any(k != _FULL for k in kinds[i + 1:j]):
        return None
    last, first = _with_s_last(t.children[i], s), _with_s_first(t.children[j], s)
    if last is None or first is None:
        return None
    return node(Q, list(t.children[:i]) + last + list(t.children[i + 1:j]) + first +
                list(t.children[j + 1:]))


def replace(t: Node, s: frozenset[int], new: Node) -> Node:
    """``t`` with the block of ``s`` (contiguous in every frontier: :func:`contiguous` made it
    so) swapped for ``new``."""
    if t.leaves == s:
        return new
    for k, c in enumerate(t.children):
        if s <= c.leaves:
            return node(t.kind, t.children[:k] + (replace(c, s, new),) + t.children[k + 1:])
    touched = [k for k, c in enumerate(t.children) if c.leaves & s]
    if t.kind != Q or touched != list(range(touched[0], touched[-1] + 1)):
        raise ValueError("replace: the leaves are not a block of the tree")
    return node(Q, t.children[:touched[0]] + (new,) + t.children[touched[-1] + 1:])


def locate(t: Node, s: frozenset[int]) -> tuple[Node, range | None]:
    """Where the block of ``s`` (contiguous in every frontier of ``t``) lies: its node and
    None, or, where it is a range of a Q-node's children, that Q-node and the range."""
    while t.leaves != s:
        inner = next((c for c in t.children if s <= c.leaves), None)
        if inner is None:
            touched = [k for k, c in enumerate(t.children) if c.leaves & s]
            return t, range(touched[0], touched[-1] + 1)
        t = inner
    return t, None


def forced(t: Node, s: frozenset[int]) -> bool:
    """Whether the leaves of ``s`` (some of ``t``'s) are contiguous in every frontier of
    ``t``: exactly where they are the leaves of one node, or of a run of a Q-node's children
    (a P-node's children, or a run of them short of all, may be parted by the others)."""
    at, span = locate(t, s)
    return span is None or (at.kind == Q and
                            sum(len(at.children[k].leaves) for k in span) == len(s))


def without(t: Node, drop: frozenset[int]) -> Node | None:
    """The tree of ``t``'s frontiers with the leaves of ``drop`` taken out (None: nothing
    left): a Q-node keeps its other children in their order, a node left with one child is that
    child. Its frontiers are exactly the orders ``t``'s frontiers induce on the rest."""
    if t.leaves.isdisjoint(drop):
        return t
    if t.kind == LEAF or t.leaves <= drop:
        return None
    return node(t.kind, [k for k in (without(c, drop) for c in t.children) if k is not None])


def digest(t: Node) -> bytes:
    """16 bytes that name the set of orders ``t`` stands for, whatever its children's stored
    order: equal for two trees with the same frontiers (a P-node's children in any order, a
    Q-node's either way), and, as a 128-bit hash, unequal otherwise but by a chance of about
    2 ** -128 a pair. Kept in the node (nodes are immutable and shared between trees), so a tree
    that a reduction rebuilt along one path costs only that path."""
    if t._digest is None:
        if t.kind == LEAF:
            data = b"L" + next(iter(t.leaves)).to_bytes(8, "little", signed=True)
        elif t.kind == P or len(t.children) == 2:  # (a Q-node of two children is a P-node)
            data = b"P" + b"".join(sorted(digest(c) for c in t.children))
        else:
            kids = [digest(c) for c in t.children]
            data = b"Q" + min(b"".join(kids), b"".join(kids[::-1]))
        t._digest = hashlib.blake2b(data, digest_size=16).digest()
    return t._digest


def frontier(t: Node) -> list[int]:
    """One frontier of ``t``: its children in their stored order."""
    if t.kind == LEAF:
        return list(t.leaves)
    return [x for c in t.children for x in frontier(c)]
