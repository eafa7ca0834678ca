"""Replica of Arm's Vela, the compiler of the Ethos-U NPUs: which feature maps it keeps in
the fast memory (SRAM) and where it puts every tensor (a hill climb).

Reproduces ARM-software/ethos-u-vela 5.2.0 (PyPI ``ethos-u-vela``), its Python compilation core
(``--debug-force-legacy-core``; the default core of 5.x, Regor, is C++):

* ``ethosu/vela/scheduler.py``: ``Scheduler.use_fast_storage_for_feature_maps`` and
  ``FastStorageComponentAllocator`` (``allocate_component``, ``allocate_exhaustive``,
  ``evict``, ``keep``; ``MAX_EXHAUSTIVE_ITEMS = MAX_EXHAUSTIVE_LIFE_RANGE = 20``): in the
  ``Dedicated_Sram`` memory modes the feature maps live in DRAM and the SRAM
  (``arena_cache_size`` bytes) is a cache they compete for;
* ``ethosu/vela/hillclimb_allocation.py``: ``HillClimbAllocator`` (``allocate_lr``,
  ``allocate_indices``, ``attempt_bottleneck_fix``, ``add_predecessor_turns``, ``search``,
  ``allocate``; ``LiveRangeInfo.__lt__``), what ``tensor_allocation.allocate_tensors`` runs
  for every memory (``TensorAllocator.HillClimb``, the default), with the memory's size as
  its limit (``hillclimb_allocate_live_ranges``);
* ``ethosu/vela/live_range.py`` and ``tensor.py``: inclusive lifetimes on a clock that
  advances 2 per operator (a tensor used by operator ``k`` is live at ``2k`` and ``2k + 1``),
  sizes from ``Tensor.storage_size`` (rounded up to 16 bytes, an empty tensor takes 16), live
  ranges aligned to 16 bytes (``Tensor.AllocationQuantum``, ``--cpu-tensor-alignment``).

The pools of a problem are Vela's memories, fastest first (SRAM, then DRAM). A buffer that may
go to a pool and to a later one *competes* for it; one whose last candidate is the pool stays
there (Vela's tensors already in SRAM: weight buffers, rolling buffers, scratch). The rule,
pool by pool (Vela has two tiers; further pools repeat it down the list):

1. every candidate is put in the pool; if the bytes live at each moment stay within its
   capacity, all stay;
2. candidates that would not fit even if no other candidate stayed leave (``evict``); those
   that fit even if all stayed stay (``keep``); the others compete;
3. competitors are sorted by (start, end, size); when more than 20 compete, one whose life is
   20 ticks or longer and ends more than 20 ticks after that of the competitor 20 places after
   it leaves (that index runs past the shrinking list's end: Vela's quirk, kept);
4. competitors are cut into groups of at most 20 whose lives chain together, and each group
   is searched exhaustively, include-first: the set of most accesses (``Buffer.traffic``,
   the estimate Vela computes from the operators' element accesses; of a block, its root's,
   as Vela scores a live range by its first tensor) whose live bytes fit wins, the first
   found among equals. *The fit test sums live bytes and ignores fragmentation.*

Then each pool's buffers get their offsets from the hill climb: a heuristic order (urgency:
the most bytes live during a range; then longer, earlier, larger), each range at the lowest
address past the neighbours it overlaps; then swaps of the ranges that decided the highest
one ("bottleneck"), kept when no worse, with Python's ``random`` seeded with 1, until the
max-load is reached, or 500 swaps bring nothing while the pool's capacity is met, or
``max_iterations`` (99999) pass. Stale state is kept as Vela keeps it: an allocation that is cut
short once it passes the best leaves the other ranges' ends from earlier rounds, which the next
bottleneck search reads. When the packing passes the capacity (fragmentation), Vela emits an
SRAM arena larger than the memory; the replica raises :class:`CapacityError`.

Options: ``alignment`` (bytes, 16: addresses), ``quantum`` (bytes, 16: sizes are rounded up to
it, an empty buffer takes one quantum), ``clock`` (Vela ticks per step of the problem, 2 when
steps are operators, 1 for a problem on Vela's own clock), ``max_iterations`` (99999).

Extensions: a block (aliases) is one live range over its span and size, as Vela fuses the
ranges of tensors that share memory; fixed offsets stay where they are and the hill climb goes
around them; a buffer whose candidates skip a pool does not compete for it. Where exact
agreement with a compiled model is impossible (Vela fuses operators and rewrites tensors), see
``benchmarks/vela.py``; ``tests/replicas/test_vela.py`` checks this replica against Vela's own
live ranges, decisions and addresses.
"""

from __future__ import annotations

import contextlib
import math
import random
import time

import numpy as np

from ..blocks import Blocks
from ..deadline import OutOfTime, PlanOptions, tick
from ..errors import CapacityError, CpplanError
from ..plan import Plan
from ..planners.placer import capacity_error
from ..planners.registry import register
from ..problem import Problem
from ._greedy import check_alignment, finish, prepare

NAME = "vela"
MAX_EXHAUSTIVE_ITEMS = 20
MAX_EXHAUSTIVE_LIFE_RANGE = 20
MAX_ITERATIONS = 99999
MAX_ITERATIONS_STUCK = 50
MIN_ITERATIONS_IMPROVE = 500
NOT_ALLOCATED = -1
NO_PREDECESSOR = -1


@register(NAME, family="replica", reproduces="ARM-software/ethos-u-vela, ethosu/vela/"
          "scheduler.py (use_fast_storage_for_feature_maps), hillclimb_allocation.py")
def plan(problem: Problem, options: PlanOptions, *, alignment: int = 16, quantum: int = 16,
         clock: int = 2, max_iterations: int = MAX_ITERATIONS) -> Plan:
    """Arm Vela (Ethos-U): feature maps stay in the fast memory by estimated accesses, chosen
    exhaustively in groups of at most 20 with a fit test that sums live bytes; offsets by
    hill climbing.

    See the module docstring for the rule, the quirks kept and the options.
    """
    started = time.perf_counter()
    blocks, extra = prepare(problem, check_alignment(alignment))
    quantum = check_alignment(quantum, "quantum")
    if isinstance(clock, bool) or not isinstance(clock, int) or clock < 1:
        raise ValueError(f"clock must be a positive integer, got {clock!r}")
    g = blocks.scale
    n = len(blocks)
    nbytes = blocks.size * g
    size = -(-np.maximum(nbytes, 1) // quantum) * quantum  # Tensor.storage_size
    size = -(-size // g) * g  # (whole scale units: only an empty buffer's quantum can differ)
    times = blocks.times
    vstart = clock * times[blocks.start]
    vend = clock * times[blocks.end] - 1  # inclusive
    traffic = problem.columns.traffic[blocks.root]
    pools = [tuple(sorted(c)) for c in blocks.pools]  # fastest first
    caps = [p.capacity for p in problem.pools]

    pool_of = np.full(n, -1, np.int64)
    fixed = blocks.fixed >= 0
    for i in np.nonzero(fixed)[0].tolist():
        top = int(blocks.fixed[i]) * g + int(size[i])
        p = next((q for q in pools[i] if (c := caps[q]) is None or top <= c), None)
        if p is None:
            raise capacity_error(blocks, i, NAME)
        pool_of[i] = p
    for p in range(blocks.n_pools):
        members = np.asarray([i for i in range(n) if pool_of[i] == p or (
            pool_of[i] < 0 and p in pools[i])], np.int64)
        cap = caps[p]
        if cap is None:
            pool_of[members] = p
            continue
        compete = np.asarray([pool_of[i] < 0 and pools[i][-1] != p for i in members.tolist()],
                             bool)
        kept, over = fast_storage(blocks.start[members], blocks.end[members], vstart[members],
                                  vend[members], size[members], traffic[members], compete, cap)
        if over is not None:
            raise _fit_error(blocks, int(members[over]), p, "its live bytes alone pass it")
        pool_of[members[kept]] = p
    if (pool_of < 0).any():
        raise capacity_error(blocks, int(np.nonzero(pool_of < 0)[0][0]), NAME)

    offset = np.zeros(n, np.int64)
    align = np.lcm(np.lcm(blocks.alignment * g, blocks.pool_alignment[pool_of] * g),
                   math.lcm(extra * g, alignment))
    for p in range(blocks.n_pools):
        mine = np.nonzero(pool_of == p)[0]
        if not len(mine):
            continue
        pinned = np.where(fixed[mine], blocks.fixed[mine] * g, -1)
        cap = caps[p]
        limit = cap if cap is not None else 1 << 62
        addresses = hill_climb(vstart[mine], vend[mine], size[mine], align[mine], limit,
                               max_iterations, fixed=pinned)
        top = addresses + size[mine]
        if cap is not None and int(top.max()) > cap:
            live = np.zeros(len(blocks.times) + 1, np.int64)
            np.add.at(live, blocks.start[mine], size[mine])
            np.add.at(live, blocks.end[mine], -size[mine])
            why = ("the live bytes alone pass it" if int(np.cumsum(live).max()) > cap
                   else "the fit test counts live bytes, not holes")
            raise _fit_error(blocks, int(mine[int(np.argmax(top))]), p,
                             f"its hill climb needs {int(top.max())} bytes ({why})")
        offset[mine] = addresses // g
    return finish(blocks, problem, pool_of, offset, planner=NAME, started=started)


def _fit_error(blocks: Blocks, i: int, p: int, why: str) -> CapacityError:
    pool = blocks.problem.pools[p]
    return CapacityError(f"{capacity_error(blocks, i, NAME)}; Vela keeps it in {pool.name!r} "
                         f"(capacity {pool.capacity}), where {why}")


# -- which buffers stay in the fast memory ------------------------------------------------------
def fast_storage(rstart: np.ndarray, rend: np.ndarray, vstart: np.ndarray, vend: np.ndarray,
                 size: np.ndarray, access: np.ndarray, compete: np.ndarray, limit: int
                 ) -> tuple[np.ndarray, int | None]:
    """``Scheduler.use_fast_storage_for_feature_maps`` for the live ranges of one memory, in
    Vela's order: which stay (a bool per range) and, when those that cannot leave (``compete``
    False) pass ``limit`` on their own, one of them at the moment they do (else None).

    ``rstart``/``rend``: each range as ``[start, end)`` on any clock that keeps the order of
    events (the usage arrays); ``vstart``/``vend``: inclusive, on Vela's clock (sorting,
    grouping and the 20-tick rule); ``access``: the score of each competitor."""
    n = len(size)
    rstart = np.asarray(rstart, np.int64)
    rend = np.asarray(rend, np.int64)
    ticks = np.unique(np.concatenate([rstart, rend])) if n else np.zeros(0, np.int64)
    rs = np.searchsorted(ticks, rstart).tolist()
    re_ = np.searchsorted(ticks, rend).tolist()
    sz = [int(v) for v in size]
    vs = [int(v) for v in vstart]
    ve = [int(v) for v in vend]
    stay = np.ones(n, bool)
    if n == 0:
        return stay, None
    compete = np.asarray(compete, bool)

    def usage(which: np.ndarray) -> np.ndarray:
        diff = np.zeros(len(ticks) + 1, np.int64)
        np.add.at(diff, np.asarray(rs)[which], np.asarray(size, np.int64)[which])
        np.add.at(diff, np.asarray(re_)[which], -np.asarray(size, np.int64)[which])
        return np.cumsum(diff)[:-1]

    max_mem = usage(np.ones(n, bool))
    if int(max_mem.max()) <= limit:
        return stay, None
    base = usage(~compete)
    curr = np.nonzero(compete)[0].tolist()

    def evict(i: int) -> None:
        stay[i] = False
        max_mem[rs[i]:re_[i]] -= sz[i]

    def keep(i: int) -> None:
        base[rs[i]:re_[i]] += sz[i]

    for i in list(curr):  # evict the live ranges that will never fit
        if int(base[rs[i]:re_[i]].max()) + sz[i] > limit:
            evict(i)
            curr.remove(i)
    competing = []
    for i in curr:  # keep those that always fit, let the others compete
        if int(max_mem[rs[i]:re_[i]].max()) <= limit:
            keep(i)
        else:
            competing.append(i)
    if not competing:  # (Vela returns here, without its final check of the limit)
        return stay, None
    competing.sort(key=lambda i: (vs[i], ve[i] + 1, sz[i]))
    if len(competing) > MAX_EXHAUSTIVE_ITEMS:  # remove the ranges that live too long
        copy = list(competing)
        for k, i in enumerate(copy):
            if ve[i] - vs[i] >= MAX_EXHAUSTIVE_LIFE_RANGE:
                cmp = copy[min(k + MAX_EXHAUSTIVE_ITEMS, len(competing) - 1)]
                if ve[i] > ve[cmp] + MAX_EXHAUSTIVE_LIFE_RANGE:
                    evict(i)
                    competing.remove(i)
    groups = []
    first, end_time = 0, ve[competing[0]] if competing else 0
    for k, i in enumerate(competing):
        if vs[i] <= end_time and k - first < MAX_EXHAUSTIVE_ITEMS:
            end_time = max(end_time, ve[i])
        else:
            groups.append(competing[first:k])
            first, end_time = k, ve[i]
    groups.append(competing[first:])
    for group in groups:
        for i, out in zip(group, _exhaustive(group, rs, re_, sz, access, base, max_mem,
                                             limit), strict=True):
            if out:
                evict(i)
            else:
                keep(i)
    over = None
    if int(max_mem.max()) > limit:  # (Vela asserts "Allocation exceeds staging limit")
        t = int(np.argmax(max_mem))
        live = [i for i in range(n) if stay[i] and rs[i] <= t < re_[i]]
        over = max(live, key=lambda i: (sz[i], -i))
    return stay, over


def _exhaustive(group: list[int], rs: list[int], re_: list[int], sz: list[int],
                access: np.ndarray, base: np.ndarray, max_mem: np.ndarray,
                limit: int) -> list[bool]:
    """``FastStorageComponentAllocator.allocate_exhaustive``: every choice of the group that
    fits by live bytes, include-first; the first of the highest score wins. Returns which
    leave. ``base`` and ``max_mem`` are restored."""
    n = len(group)
    best_score = [-1]  # (lists: the search below sets them)
    best: list[list[bool]] = [[False] * n]
    curr = [False] * n
    score_of = [int(access[i]) for i in group]

    def search(ix: int, score: int) -> None:
        if ix >= n:
            if score > best_score[0]:
                best_score[0] = score
                best[0] = list(curr)
            return
        i = group[ix]
        a, b = rs[i], re_[i]
        if int(base[a:b].max()) + sz[i] <= limit:
            curr[ix] = False
            base[a:b] += sz[i]
            search(ix + 1, score + score_of[ix])
            base[a:b] -= sz[i]
        if int(max_mem[a:b].max()) > limit:
            curr[ix] = True
            max_mem[a:b] -= sz[i]
            search(ix + 1, score)
            max_mem[a:b] += sz[i]

    search(0, 0)
    return best[0]


# -- the hill climb -------------------------------------------------------------------------------
def hill_climb(start: np.ndarray, end: np.ndarray, size: np.ndarray, alignment: np.ndarray,
               memory_limit: int, max_iterations: int | None = MAX_ITERATIONS, *,
               fixed: np.ndarray | None = None) -> np.ndarray:
    """``HillClimbAllocator(...).allocate()``: an address per live range (inclusive
    ``[start, end]``, ``size`` bytes, aligned to ``alignment``), in input order.

    ``fixed`` (an extension): an address per range, or -1; fixed ranges keep theirs and the
    others go around them. Honours the active time budget (:func:`cpplan.deadline.tick` once
    per range placed): when it runs out during the search, the best allocation so far is
    returned.
    """
    return _HillClimb(start, end, size, alignment, memory_limit, max_iterations, fixed).run()


def _neighbours(rs: np.ndarray, re_: np.ndarray) -> list[list[int]]:
    """Per range (inclusive ``[rs, re_]``), the others it shares a slot with, in Vela's order:
    by the first slot of the range where they are live, then by index. Ranges are bucketed by
    length (powers of two), so the work follows the answer, not the square of the count."""
    n = len(rs)
    tier = np.floor(np.log2(np.maximum(re_ - rs, 1))).astype(np.int64)
    buckets = []
    for t in np.unique(tier).tolist():
        idx = np.nonzero(tier == t)[0]
        idx = idx[np.argsort(rs[idx], kind="stable")]
        buckets.append((idx, rs[idx], int((re_ - rs)[idx].max())))
    out: list[list[int]] = []
    for i in range(n):
        tick()  # (work comparable to placing a range)
        parts = []
        lo, hi = int(rs[i]), int(re_[i])
        for idx, starts, span in buckets:
            a = np.searchsorted(starts, lo - span)
            b = np.searchsorted(starts, hi, side="right")
            cand = idx[a:b]
            parts.append(cand[re_[cand] >= lo])
        meet = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        meet = meet[meet != i]
        out.append(meet[np.lexsort((meet, np.maximum(rs[meet], lo)))].tolist())
    return out


class _HillClimb:
    """The state of ``HillClimbAllocator``: per live range its address, end address,
    predecessor and turn, kept across rounds as Vela keeps them."""

    def __init__(self, start: np.ndarray, end: np.ndarray, size: np.ndarray,
                 alignment: np.ndarray, memory_limit: int, max_iterations: int | None,
                 fixed: np.ndarray | None) -> None:
        n = len(size)
        self.start = [int(v) for v in start]
        self.end = [int(v) for v in end]
        self.size = [int(v) for v in size]
        self.align = [int(v) for v in alignment]
        self.fixed = [-1] * n if fixed is None else [int(v) for v in fixed]
        self.n = n
        self.memory_limit = int(memory_limit)
        self.max_iterations = MAX_ITERATIONS if max_iterations is None else int(max_iterations)
        self.address = [NOT_ALLOCATED] * n
        self.end_address = [0] * n
        self.predecessor = [0] * n
        self.turn = [0] * n
        self.best_size = 1 << 63
        self.rng = random.Random()
        # Ranks of the ticks (the clock itself may be sparse): the same neighbours, in the same
        # order, and the same bytes live at each moment as Vela's slot arrays.
        ticks = (np.unique(np.concatenate([np.asarray(start), np.asarray(end)])) if n
                 else np.zeros(0, np.int64))
        rs = np.searchsorted(ticks, np.asarray(start, np.int64))
        re_ = np.searchsorted(ticks, np.asarray(end, np.int64))
        at_time = np.zeros(len(ticks) + 1, np.int64)
        np.add.at(at_time, rs, np.asarray(size, np.int64))
        np.add.at(at_time, re_ + 1, -np.asarray(size, np.int64))
        size_at_time = np.cumsum(at_time)[:-1] if n else at_time
        self.min_required_size = int(size_at_time.max()) if n else 0
        self.urgency = [int(size_at_time[a:b + 1].max()) for a, b in zip(rs, re_, strict=True)]
        self.neighbours = _neighbours(rs, re_)
        self.free = [i for i in range(n) if self.fixed[i] < 0]
        for i in range(n):
            if self.fixed[i] >= 0:
                self.address[i] = self.fixed[i]
                self.end_address[i] = self.fixed[i] + self.size[i]
                self.predecessor[i] = NO_PREDECESSOR

    def order(self) -> list[int]:
        """``sorted(self.lrs)`` by ``LiveRangeInfo.__lt__``."""
        return sorted(self.free, key=lambda i: (-self.urgency[i], -(self.end[i] - self.start[i]),
                                                self.start[i], -self.size[i], i))

    def allocate_lr(self, i: int) -> None:
        tick()
        address = 0
        predecessor = NO_PREDECESSOR
        size = self.size[i]
        fits = False
        addr, end_addr = self.address, self.end_address
        while not fits:
            fits = True
            for j in self.neighbours[i]:
                if addr[j] == NOT_ALLOCATED or end_addr[j] <= address:
                    continue
                if addr[j] < address + size and address < end_addr[j]:
                    fits = False
                    address = -(-end_addr[j] // self.align[i]) * self.align[i]
                    predecessor = j
        addr[i] = address
        end_addr[i] = address + size
        self.predecessor[i] = predecessor

    def allocate_indices(self, indices: list[int]) -> int:
        for i in self.free:
            self.address[i] = NOT_ALLOCATED
        size = 0
        for turn, i in enumerate(indices):
            self.allocate_lr(i)
            self.turn[i] = turn
            size = max(size, self.end_address[i])
            if size > self.best_size:
                break
        return size

    def add_predecessor_turns(self, turn_set: set, turn_list: list, i: int) -> None:
        if self.turn[i] not in turn_set:
            turn_set.add(self.turn[i])
            turn_list.append(self.turn[i])
        steps = 0
        while self.predecessor[i] != NO_PREDECESSOR and steps <= self.n:
            i = self.predecessor[i]
            steps += 1  # (stale predecessors could cycle, where Vela would loop for ever)
            if self.fixed[i] >= 0:
                break
            if self.turn[i] not in turn_set:
                turn_set.add(self.turn[i])
                turn_list.append(self.turn[i])

    def attempt_bottleneck_fix(self, indices: list[int], iterations_stuck: int) -> None:
        rnd = self.rng.randint
        max_lr = self.free[0]
        for i in self.free[1:]:
            if self.end_address[i] > self.end_address[max_lr]:
                max_lr = i
        turn_set: set[int] = set()
        turn_list: list[int] = []
        self.add_predecessor_turns(turn_set, turn_list, max_lr)
        for j in self.neighbours[max_lr]:
            if self.fixed[j] < 0:
                self.add_predecessor_turns(turn_set, turn_list, j)
        s, e = self.start[max_lr], self.end[max_lr]
        non_nb = [t for t in turn_list
                  if not (s <= self.end[indices[t]] and self.start[indices[t]] <= e)]
        try:
            if rnd(0, 100) < 30 and non_nb:
                ix1 = non_nb[rnd(0, len(non_nb) - 1)]
            else:
                ix1 = turn_list[rnd(0, len(turn_list) - 1)]
            ix2 = turn_list[rnd(0, len(turn_list) - 2)]
        except ValueError:  # randint(0, -1): Vela stops with the same error
            raise CpplanError("vela: Vela's hill climb fails here (its bottleneck has a single "
                              "live range to swap: random.randint(0, -1))") from None
        if ix1 == ix2:
            ix2 = turn_list[-1]
        indices[ix1], indices[ix2] = indices[ix2], indices[ix1]
        if iterations_stuck > MAX_ITERATIONS_STUCK:
            for t in non_nb:
                for j in self.neighbours[indices[t]]:
                    if self.fixed[j] < 0 and self.turn[j] not in turn_set:
                        turn_set.add(self.turn[j])
                        turn_list.append(self.turn[j])
            ix1 = turn_list[rnd(0, len(turn_list) - 1)]
            ix2 = turn_list[rnd(0, len(turn_list) - 1)]
            indices[ix1], indices[ix2] = indices[ix2], indices[ix1]

    def search(self, indices: list[int]) -> None:
        best_indices = indices[:]
        last_improvement = 0
        i = 0
        while (self.best_size > self.memory_limit and i < self.max_iterations) or (
                i - last_improvement < MIN_ITERATIONS_IMPROVE):
            self.attempt_bottleneck_fix(indices, i - last_improvement)
            new_size = self.allocate_indices(indices)
            if new_size <= self.best_size:
                if new_size < self.best_size:
                    last_improvement = i
                self.best_size = new_size
                best_indices = indices[:]
                self.allocated = list(self.address)
                if self.best_size <= self.min_required_size:
                    return
            else:
                indices = best_indices[:]
            i += 1

    def run(self) -> np.ndarray:
        if not self.free:
            return np.asarray(self.address, np.int64)
        self.rng.seed(1)
        indices = self.order()
        self.best_size = self.allocate_indices(indices)
        self.allocated = list(self.address)
        if self.best_size > self.min_required_size:
            with contextlib.suppress(OutOfTime):  # the best allocation so far stands
                self.search(indices)
        return np.asarray(self.allocated, np.int64)
