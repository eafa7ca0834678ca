"""The time-overlap index (:class:`cpplan.sweep.OverlapIndex`) against a brute-force pair loop,
and its users against the index."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cpplan.blocks import make_blocks
from cpplan.planners.registry import get
from cpplan.problem import Alias, Buffer, Problem
from cpplan.replicas import tflite_gpu
from cpplan.sweep import OverlapIndex, disjoint, overlaps_of, split_lists

# Intervals (start, end, keep, group), empty and reversed ones included.
intervals = st.lists(st.tuples(st.integers(0, 12), st.integers(-2, 6), st.booleans(),
                               st.integers(0, 3)), max_size=30)


def brute(rows, *, keep: bool, group: bool) -> list[tuple[int, int]]:
    """Every pair ``(i, j)``, ``i < j``, sharing a moment, by comparing all pairs."""
    out = []
    for i, (si, di, ki, gi) in enumerate(rows):
        for j, (sj, dj, kj, gj) in enumerate(rows):
            if j <= i or di <= 0 or dj <= 0 or (keep and not (ki and kj)):
                continue
            if group and gi == gj:
                continue
            if si < sj + dj and sj < si + di:
                out.append((i, j))
    return out


def build(rows, *, keep: bool, group: bool) -> OverlapIndex:
    a = np.asarray(rows, np.int64).reshape(-1, 4)
    return OverlapIndex(a[:, 0], a[:, 0] + a[:, 1], keep=a[:, 2].astype(bool) if keep else None,
                        group=a[:, 3] if group else None)


@given(intervals, st.booleans(), st.booleans())
def test_index_finds_exactly_the_overlapping_pairs(rows, keep, group):
    want = brute(rows, keep=keep, group=group)
    index = build(rows, keep=keep, group=group)
    i, j = index.pairs()
    got = [tuple(sorted(p)) for p in zip(i.tolist(), j.tolist(), strict=True)]
    assert len(got) == len(set(got)) == len(want)  # each pair once
    assert set(got) == set(want)
    # ``i`` comes first in start order (ties: lower id), and pairs are sorted by position.
    pos = index.position
    assert all(pos[a] < pos[b] for a, b in zip(i.tolist(), j.tolist(), strict=True))
    keys = list(zip(pos[i].tolist(), pos[j].tolist(), strict=True))
    assert keys == sorted(keys)


@given(intervals, st.booleans(), st.booleans())
def test_neighbour_lists_and_degrees_agree_with_all_pairs(rows, keep, group):
    n = len(rows)
    want: list[set[int]] = [set() for _ in range(n)]
    for a, b in brute(rows, keep=keep, group=group):
        want[a].add(b)
        want[b].add(a)
    index = build(rows, keep=keep, group=group)
    by_index = split_lists(*index.neighbours(by="index"))
    by_start = split_lists(*index.neighbours(by="start"))
    assert [set(x) for x in by_index] == want
    assert all(x == sorted(x) for x in by_index)
    start = [r[0] for r in rows]
    assert all(x == sorted(x, key=lambda j: (start[j], j)) for x in by_start)
    assert [sorted(x) for x in by_start] == by_index
    if not group:  # degrees ignore groups
        assert index.degrees().tolist() == [len(x) for x in want]
    # Directed pairs grouped by a label (as the decoder groups pieces by block), then by the
    # start order of each side.
    label = [r[3] for r in rows]
    i, j = index.directed(rows=np.asarray(label, np.int64).reshape(-1))
    got = list(zip(i.tolist(), j.tolist(), strict=True))
    assert sorted(got) == sorted((a, b) for a in range(n) for b in want[a])
    pos = index.position.tolist()
    keys = [(label[a], pos[a], pos[b]) for a, b in got]
    assert keys == sorted(keys)


def test_limit_refuses_before_expanding():
    index = OverlapIndex(np.zeros(100, np.int64), np.ones(100, np.int64))
    assert index.count() == 100 * 99 // 2
    with pytest.raises(ValueError, match="4950 overlapping pairs"):
        index.pairs(limit=4949)
    with pytest.raises(ValueError, match="unknown order"):
        index.neighbours(by="end")
    with pytest.raises(ValueError, match="rows= goes with"):
        index.directed(by="index", rows=np.zeros(100, np.int64))


def test_pieces_of_one_block_never_conflict():
    # ``b`` lives inside ``a``: one block with two pieces; ``c`` meets only the second piece.
    p = Problem((Buffer("a", 8, 0, 4), Buffer("b", 4, 3, 8), Buffer("c", 4, 6, 9)),
                aliases=(Alias("b", "a", 4),))
    blocks = make_blocks(p)
    pblock = np.repeat(np.arange(len(blocks)), np.diff(blocks.piece_ptr))
    index = OverlapIndex(blocks.piece_start, blocks.piece_end, group=pblock)
    i, j = index.pairs()
    assert {frozenset(pblock[[a, b]].tolist()) for a, b in zip(i, j, strict=True)} == {
        frozenset((0, 1))}


@given(st.lists(st.tuples(st.integers(1, 9), st.integers(0, 10), st.integers(1, 5)),
                min_size=1, max_size=25))
def test_tflite_breadth_same_with_lists_and_scan(recs):
    # The replica finds busy objects through the index's lists, or by a scan when the lists
    # would be too big: both give the same plan.
    problem = Problem([Buffer(f"t{k}", s, f, f + d) for k, (s, f, d) in enumerate(recs)])
    planner = get("tflite-gpu-objects-greedy-by-breadth")
    with_lists = planner(problem)
    with patch.object(tflite_gpu, "_PAIRS_UP_TO", -1):
        scanned = planner(problem)
    assert with_lists.placements == scanned.placements


# Rectangles (start, duration, low byte, height), empty ones included.
rectangles = st.lists(st.tuples(st.integers(0, 8), st.integers(0, 4), st.integers(0, 12),
                                st.integers(0, 5)), max_size=25)


@given(rectangles)
def test_disjoint_says_what_the_overlap_sweep_finds(rows):
    # The check's fast answer for valid plans against the sweep that names every overlap.
    a = np.asarray(rows, np.int64).reshape(-1, 4)
    starts, ends, los, his = a[:, 0], a[:, 0] + a[:, 1], a[:, 2], a[:, 2] + a[:, 3]
    found = overlaps_of(starts, ends, los, his, np.arange(len(a), dtype=np.int64))
    assert disjoint(starts, ends, los, his) == (not found)


def test_rectangles_that_touch_are_disjoint_and_one_byte_more_is_not():
    starts, ends = np.array([0, 0, 1]), np.array([2, 2, 3])
    assert disjoint(starts, ends, np.array([0, 4, 8]), np.array([4, 8, 12]))
    assert not disjoint(starts, ends, np.array([0, 4, 7]), np.array([4, 8, 12]))
    # b (bytes 4-8, touching a) ends first; c takes its bytes while a lives on.
    starts, ends = np.array([0, 0, 2]), np.array([4, 2, 4])
    assert disjoint(starts, ends, np.array([0, 4, 4]), np.array([4, 8, 8]))


@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 4), st.integers(0, 12),
                          st.integers(0, 5), st.integers(0, 3)), max_size=25))
def test_overlap_sweep_finds_every_pair_of_two_groups_once(rows):
    # Rectangles of one group (an alias block's members) may overlap; others never.
    a = np.asarray(rows, np.int64).reshape(-1, 5)
    starts, ends, los, his, groups = a[:, 0], a[:, 0] + a[:, 1], a[:, 2], a[:, 2] + a[:, 3], a[:, 4]
    found = overlaps_of(starts, ends, los, his, groups)
    expected = {(i, j) for i in range(len(a)) for j in range(i + 1, len(a))
                if groups[i] != groups[j] and starts[i] < ends[j] and starts[j] < ends[i]
                and los[i] < his[j] and los[j] < his[i] and los[i] < his[i] and los[j] < his[j]}
    assert len(found) == len(set(found))
    assert {tuple(sorted(p)) for p in found} == expected


def test_members_overlap_their_root_legally_and_one_reaching_out_is_caught():
    # 2000 blocks of a root and a member inside it: every member overlaps its root, legally.
    # (They were once compared with every later rectangle: 15547 such pairs took 3 s.)
    n = 2000
    starts = np.repeat(np.arange(n, dtype=np.int64), 2)
    los = np.repeat(np.arange(n, dtype=np.int64) * 8 % 4096, 2)
    his = los + np.tile([8, 4], n)
    groups = np.repeat(np.arange(n, dtype=np.int64), 2)
    ends = starts + 3
    assert overlaps_of(starts, ends, los, his, groups) == []
    his[5] += 8  # block 2's member now reaches into the bytes of block 3 (root 6, member 7)
    assert overlaps_of(starts, ends, los, his, groups) == [(5, 6), (5, 7)]
