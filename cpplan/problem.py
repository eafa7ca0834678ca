"""The planning problem: buffers, pools and aliases, validated when built.

Conventions (they hold everywhere in cpplan):

* Lifetimes are half-open ``[start, end)`` in integer schedule steps: a buffer made at step 3 and
  last read at step 5 has ``start=3, end=6``. Two buffers *conflict* when their lifetimes share a
  step and they may land in the same pool.
* A **zero-size buffer** is valid. It occupies no bytes, so it conflicts with nothing; it still
  receives a pool and an aligned offset (planners put it at the lowest aligned offset, usually 0).
* An **alias** says "buffer B lives inside buffer A at byte displacement d". Chains resolve to one
  root; the root and everything aliased into it form a *block* that planners place as one piece
  of memory. B must lie inside A (``0 <= d`` and ``d + size(B) <= size(A)``, else it is an error:
  an alias never overhangs its root). B *may outlive* A, or start before it (a concat input that
  is written into its slice of the output before the output is complete): the bytes of B stay
  reserved exactly while B lives, and the rest of A's bytes only while A lives. Members of one
  block may share bytes at the same moment; that is what in-place means.
* **Alignment** is per buffer (``offset % alignment == 0``) and per pool (every allocation in the
  pool starts at a multiple of the pool's base alignment): a buffer in pool p is aligned to
  ``lcm(buffer.alignment, p.alignment)``. Inside a block, each member's displacement from the root
  must be a multiple of its own alignment, and the block is aligned to the lcm of its members'.
  The pool's base alignment binds the block's root only: an aliased buffer is a view into its
  root (a concat slice need not start on the arena's alignment) and needs its own alignment only.
* A **fixed offset** pins a buffer to that byte offset in whichever candidate pool it lands in. It
  must be a multiple of the buffer's alignment and of the base alignment of every candidate pool.
  Fixed buffers that overlap (a moment and a byte) must not share a candidate pool.
* A **gap** is a stretch ``[start, end)`` inside a buffer's lifetime during which the buffer
  occupies none of its bytes, or only a *window* ``[lo, hi)`` of them (MiniMalloc's ``gaps``,
  google/minimalloc ``src/minimalloc.h``, ``Gap`` with its lifespan and optional window):
  other buffers may use the rest meanwhile. The buffer keeps its offset, and its height in the
  pool is still ``offset + size``. Gaps of a buffer never overlap each other and stay inside its
  lifetime. A buffer with gaps is placed as a block of several pieces, like an alias block.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from numbers import Integral
from typing import Any, NamedTuple

import numpy as np

from .errors import ProblemError

__all__ = ["Alias", "Buffer", "Columns", "Gap", "Pool", "Problem", "DEFAULT_POOL"]

DEFAULT_POOL = "default"


#: Every number in a problem, and the sum of all sizes, stay below this: planners compute in
#: numpy int64, and offsets reach the sum of the sizes.
MAX_VALUE = 2**62


def _integer(value: object, what: str, *, buffer: str | None = None,
             pool: str | None = None) -> int:
    if type(value) is int and -MAX_VALUE < value < MAX_VALUE:  # the common case, fast
        return value
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ProblemError(f"must be an integer, got {value!r}", buffer=buffer, pool=pool,
                           field=what)
    number = int(value)
    if not -MAX_VALUE < number < MAX_VALUE:
        raise ProblemError(f"too large: {value} (cpplan needs |value| < 2**62)", buffer=buffer,
                           pool=pool, field=what)
    return number


@dataclass(frozen=True, slots=True)
class Pool:
    """A memory the planner places buffers in.

    ``capacity`` bounds the pool's height in bytes (``None``: unbounded). ``alignment`` is the
    pool's base alignment. ``cost`` weighs a byte of this pool's height in the objective, and
    ``traffic_cost`` a byte a buffer in this pool moves (its :attr:`Buffer.traffic`: cycles or
    energy per byte, fast SRAM cheap, slow DRAM dear). The objective is
    ``sum(cost * height) + sum(traffic * traffic_cost)``; both are non-negative integers.

    Args:
        name: The pool's name, unique in its problem (``default`` unless given).
        capacity: The most bytes its height may reach; ``None`` for no bound.
        alignment: The base alignment: every allocation in the pool starts at a multiple of
            it (a block's root; an aliased buffer needs only its own alignment).
        cost: What one byte of the pool's height costs in the objective (>= 0).
        traffic_cost: What one byte moved by a buffer in this pool costs (>= 0).

    Raises:
        ProblemError: A field of the wrong type or out of range, naming the pool and the field.
    """

    name: str = DEFAULT_POOL
    capacity: int | None = None
    alignment: int = 1
    cost: int = 1
    traffic_cost: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ProblemError("must be a non-empty string", pool=str(self.name), field="name")
        if self.capacity is not None:
            cap = _integer(self.capacity, "capacity", pool=self.name)
            if cap < 0:
                raise ProblemError(f"must be >= 0, got {cap}", pool=self.name, field="capacity")
            object.__setattr__(self, "capacity", cap)
        align = _integer(self.alignment, "alignment", pool=self.name)
        if align < 1:
            raise ProblemError(f"must be a positive integer, got {align}", pool=self.name,
                               field="alignment")
        object.__setattr__(self, "alignment", align)
        cost = _integer(self.cost, "cost", pool=self.name)
        if cost < 0:
            raise ProblemError(f"must be >= 0, got {cost}", pool=self.name, field="cost")
        object.__setattr__(self, "cost", cost)
        traffic_cost = _integer(self.traffic_cost, "traffic_cost", pool=self.name)
        if traffic_cost < 0:
            raise ProblemError(f"must be >= 0, got {traffic_cost}", pool=self.name,
                               field="traffic_cost")
        object.__setattr__(self, "traffic_cost", traffic_cost)


@dataclass(frozen=True, slots=True)
class Gap:
    """During steps ``[start, end)`` its buffer occupies only bytes ``window = (lo, hi)`` of
    itself (relative to its offset), or nothing when ``window`` is ``None``.

    Built from a :class:`Gap`, a pair ``(start, end)`` or a quadruple ``(start, end, lo, hi)``;
    checked against its buffer by :class:`Buffer` (inside the lifetime, window inside the size).

    Args:
        start: The first step of the gap.
        end: The step after its last (half-open, like lifetimes).
        window: The bytes ``(lo, hi)`` still in use during the gap, relative to the buffer's
            offset; ``None`` when it uses none.
    """

    start: int
    end: int
    window: tuple[int, int] | None = None

    @property
    def lo(self) -> int:
        """The first byte in use during the gap (0 when none is)."""
        return 0 if self.window is None else self.window[0]

    @property
    def hi(self) -> int:
        """The byte after the last in use during the gap (0 when none is)."""
        return 0 if self.window is None else self.window[1]


def _gap(value: object, bid: str, k: int) -> Gap:
    """``value`` as a checked :class:`Gap` of buffer ``bid`` (its ``k``-th gap)."""
    what = f"gaps[{k}]"
    if isinstance(value, Gap):
        start, end, window = value.start, value.end, value.window
    elif isinstance(value, (tuple, list)) and len(value) in (2, 4):
        start, end = value[0], value[1]
        window = None if len(value) == 2 else (value[2], value[3])
    else:
        raise ProblemError(f"must be (start, end) or (start, end, lo, hi), got {value!r}",
                           buffer=bid, field=what)
    start = _integer(start, what, buffer=bid)
    end = _integer(end, what, buffer=bid)
    if end <= start:
        raise ProblemError(f"[{start}, {end}) is empty: a gap needs end > start", buffer=bid,
                           field=what)
    if window is not None:
        if not isinstance(window, (tuple, list)) or len(window) != 2:
            raise ProblemError(f"window must be (lo, hi), got {window!r}", buffer=bid, field=what)
        window = (_integer(window[0], what, buffer=bid), _integer(window[1], what, buffer=bid))
    return Gap(start, end, window)


@dataclass(frozen=True, slots=True)
class Buffer:
    """A named block of bytes alive during ``[start, end)``.

    ``pools`` lists candidate pools, first preferred; empty means any pool of the problem.
    ``offset`` fixes the byte offset (a pre-placed buffer); ``hint`` suggests one (planners may use
    it as a warm start; it is never a constraint). ``gaps`` (see the module docstring) are
    stretches of the lifetime where it occupies only a window of its bytes, or none.
    ``traffic`` is the bytes it moves per run (written and read); what they cost depends on
    the pool it lands in (:attr:`Pool.traffic_cost`).

    Args:
        id: The buffer's name, unique in its problem (an integer is taken as its decimal
            string).
        size: Bytes (>= 0; a zero-size buffer occupies nothing).
        start: The step it is made at.
        end: The step after its last use: the lifetime is ``[start, end)``, ``end > start``.
        alignment: Its offset must be a multiple of this (>= 1).
        pools: Candidate pool names, first preferred; empty for any pool of the problem. A
            single string is one pool.
        offset: A fixed byte offset (a multiple of ``alignment``), or ``None``.
        hint: A suggested byte offset, or ``None``.
        gaps: Its gaps, each a :class:`Gap`, ``(start, end)`` or ``(start, end, lo, hi)``.
        traffic: Bytes it moves per run (>= 0).

    Raises:
        ProblemError: A field of the wrong type or out of range (a negative size, an empty
            lifetime, a misaligned offset, a gap outside the lifetime or overlapping another),
            naming the buffer and the field.
    """

    id: str
    size: int
    start: int
    end: int
    alignment: int = 1
    pools: tuple[str, ...] = ()
    offset: int | None = None
    hint: int | None = None
    gaps: tuple[Gap, ...] = ()
    traffic: int = 0

    def __post_init__(self) -> None:
        # Checks run per buffer on inputs of 10^5 buffers: the common case (plain ints, a str id,
        # nothing optional) is one expression; anything else takes the checks that explain.
        size, start, end, align = self.size, self.start, self.end, self.alignment
        if (type(size) is int and type(start) is int and type(end) is int and type(align) is int
                and type(self.id) is str and self.id and 0 <= size < MAX_VALUE
                and -MAX_VALUE < start < end < MAX_VALUE and 0 < align < MAX_VALUE
                and self.pools == () and self.offset is None and self.hint is None
                and self.gaps == () and type(self.traffic) is int
                and 0 <= self.traffic < MAX_VALUE):
            return
        bid = self.id
        if type(bid) is not str and isinstance(bid, Integral) and not isinstance(bid, bool):
            bid = str(int(bid))
            object.__setattr__(self, "id", bid)
        if not bid or not isinstance(bid, str):
            raise ProblemError("must be a non-empty string", buffer=str(bid), field="id")
        size = _integer(self.size, "size", buffer=bid)
        if size < 0:
            raise ProblemError(f"must be >= 0, got {size}", buffer=bid, field="size")
        start = _integer(self.start, "start", buffer=bid)
        end = _integer(self.end, "end", buffer=bid)
        if end <= start:
            raise ProblemError(f"must be > start ({start}), got {end} (lifetimes are half-open "
                               "[start, end))", buffer=bid, field="end")
        align = _integer(self.alignment, "alignment", buffer=bid)
        if align < 1:
            raise ProblemError(f"must be a positive integer, got {align}", buffer=bid,
                               field="alignment")
        pools = self.pools
        if pools != ():  # (empty: any pool)
            if isinstance(pools, str):
                pools = (pools,)
            pools = tuple(pools)
            if any(not isinstance(p, str) or not p for p in pools):
                raise ProblemError(f"must be pool names, got {pools!r}", buffer=bid,
                                   field="pools")
            if len(set(pools)) != len(pools):
                raise ProblemError(f"lists a pool twice: {pools!r}", buffer=bid, field="pools")
            object.__setattr__(self, "pools", pools)
        if self.offset is not None or self.hint is not None:
            for name, value in (("offset", self.offset), ("hint", self.hint)):
                if value is not None:
                    v = _integer(value, name, buffer=bid)
                    if v < 0:
                        raise ProblemError(f"must be >= 0, got {v}", buffer=bid, field=name)
                    object.__setattr__(self, name, v)
            if self.offset is not None and self.offset % align:
                raise ProblemError(f"{self.offset} is not a multiple of the alignment {align}",
                                   buffer=bid, field="offset")
        # (_integer returns plain ints as they are; anything else was converted)
        if size is not self.size:
            object.__setattr__(self, "size", size)
        if start is not self.start:
            object.__setattr__(self, "start", start)
        if end is not self.end:
            object.__setattr__(self, "end", end)
        if align is not self.alignment:
            object.__setattr__(self, "alignment", align)
        traffic = _integer(self.traffic, "traffic", buffer=bid)
        if traffic < 0:
            raise ProblemError(f"must be >= 0, got {traffic}", buffer=bid, field="traffic")
        if traffic is not self.traffic:
            object.__setattr__(self, "traffic", traffic)
        if self.gaps:
            object.__setattr__(self, "gaps", self._checked_gaps())
        elif not isinstance(self.gaps, tuple):
            object.__setattr__(self, "gaps", ())

    def _checked_gaps(self) -> tuple[Gap, ...]:
        bid = self.id
        if isinstance(self.gaps, (str, bytes, Gap)) or not isinstance(self.gaps, (tuple, list)):
            raise ProblemError(f"must be a list of gaps, got {self.gaps!r}", buffer=bid,
                               field="gaps")
        gaps = tuple(_gap(g, bid, k) for k, g in enumerate(self.gaps))
        for k, g in enumerate(gaps):
            if g.start < self.start or g.end > self.end:
                raise ProblemError(f"[{g.start}, {g.end}) is outside the lifetime "
                                   f"[{self.start}, {self.end})", buffer=bid, field=f"gaps[{k}]")
            if g.window is not None and not 0 <= g.window[0] <= g.window[1] <= self.size:
                raise ProblemError(f"window [{g.window[0]}, {g.window[1]}) is not within the "
                                   f"buffer's {self.size} bytes", buffer=bid, field=f"gaps[{k}]")
        order = sorted(range(len(gaps)), key=lambda k: gaps[k].start)
        for a, b in zip(order, order[1:], strict=False):
            if gaps[b].start < gaps[a].end:
                raise ProblemError(
                    f"[{gaps[b].start}, {gaps[b].end}) overlaps gaps[{a}] "
                    f"[{gaps[a].start}, {gaps[a].end})", buffer=bid, field=f"gaps[{b}]")
        return gaps

    @property
    def lifetime(self) -> tuple[int, int]:
        """``(start, end)``: the steps ``[start, end)`` it is alive."""
        return self.start, self.end

    def pieces(self) -> list[tuple[int, int, int, int]]:
        """What the buffer occupies, as rectangles ``(start, end, lo, hi)`` of steps and bytes
        relative to its offset: ``[0, size)`` over its lifetime outside the gaps, and each
        gap's window during the gap. Disjoint, in time order; empty ones left out.

        Returns:
            The rectangles, ``[(start, end, lo, hi), ...]``.
        """
        out: list[tuple[int, int, int, int]] = []
        t = self.start
        for g in sorted(self.gaps, key=lambda g: g.start):
            if g.start > t:
                out.append((t, g.start, 0, self.size))
            out.append((g.start, g.end, g.lo, g.hi))
            t = g.end
        if t < self.end:
            out.append((t, self.end, 0, self.size))
        return [p for p in out if p[3] > p[2]]


@dataclass(frozen=True, slots=True)
class Alias:
    """``buffer`` lives inside ``root`` at byte ``displacement`` (``root`` may be an alias).

    Args:
        buffer: The id of the buffer that lives inside another (it has no offset of its own).
        root: The id of the buffer it lives in.
        displacement: Its first byte's distance from the root's (>= 0, a multiple of
            ``buffer``'s alignment; ``buffer`` must end within ``root``).

    Raises:
        ProblemError: An id that is not a string or a negative displacement (the problem checks
            the rest: unknown ids, cycles, overhangs).
    """

    buffer: str
    root: str
    displacement: int = 0

    def __post_init__(self) -> None:
        for name in ("buffer", "root"):
            value = getattr(self, name)
            if isinstance(value, Integral) and not isinstance(value, bool):
                object.__setattr__(self, name, str(int(value)))
            elif not isinstance(value, str) or not value:
                raise ProblemError(f"must be a buffer id, got {value!r}", buffer=str(self.buffer),
                                   field=f"alias {name}")
        d = _integer(self.displacement, "displacement", buffer=str(self.buffer))
        if d < 0:
            raise ProblemError(f"must be >= 0, got {d}", buffer=str(self.buffer),
                               field="alias displacement")
        object.__setattr__(self, "displacement", d)


class Columns(NamedTuple):
    """The buffers of a problem as columns, in buffer order, for code that works on arrays
    (:attr:`Problem.columns`). Arrays are int64 and must not be changed."""

    ids: tuple[str, ...]
    size: np.ndarray
    start: np.ndarray
    end: np.ndarray
    alignment: np.ndarray
    offset: np.ndarray  # fixed offset, -1 where none
    hint: np.ndarray  # -1 where none
    traffic: np.ndarray  # bytes moved per run
    gaps: bool  # some buffer has gaps
    candidates: tuple[tuple[int, tuple[str, ...]], ...]  # (buffer, pools) where it names pools


@dataclass(frozen=True)
class Problem:
    """Buffers, pools and aliases; validated when built (raises :class:`ProblemError`).

    With no pools given there is one unbounded pool named ``default``.

    Args:
        buffers: The buffers (any iterable; kept as a tuple).
        pools: The pools; empty or left out for one unbounded pool named ``default``.
        aliases: Which buffers live inside which (see the module docstring).
        name: A name for reports and files.
        meta: Provenance: how the problem was made (a front end's notes; not validated).

    Raises:
        ProblemError: The first thing wrong, naming the buffer or pool and the field: a
            duplicate id or pool name, an unknown candidate pool, an alias that names an
            unknown buffer, cycles or overhangs its root, a fixed offset beyond its pools'
            capacities or misaligned for one of them, two fixed buffers that share a byte at a
            shared moment in a shared pool, or numbers too large for int64 arithmetic.
    """

    buffers: tuple[Buffer, ...]
    pools: tuple[Pool, ...] = field(default=(Pool(),))
    aliases: tuple[Alias, ...] = ()
    name: str = ""
    meta: dict[str, Any] = field(default_factory=dict, hash=False)  # provenance: how it was made

    def __post_init__(self) -> None:
        object.__setattr__(self, "buffers", tuple(self.buffers))
        object.__setattr__(self, "pools", tuple(self.pools) or (Pool(),))
        object.__setattr__(self, "aliases", tuple(self.aliases))
        self._validate()

    def __getstate__(self) -> dict[str, Any]:
        # The planner's view, kept here by cpplan.blocks.make_blocks, is made again where needed
        # (a problem sent to a cluster's worker is as large as its fields, no more).
        state = dict(self.__dict__)
        state.pop("_blocks", None)
        return state

    # -- lookups -------------------------------------------------------------------------------
    @cached_property
    def index(self) -> dict[str, int]:
        """Buffer id -> position in ``buffers``."""
        return {b.id: i for i, b in enumerate(self.buffers)}

    @cached_property
    def pool_index(self) -> dict[str, int]:
        """Pool name -> position in ``pools``."""
        return {p.name: i for i, p in enumerate(self.pools)}

    def buffer(self, buffer_id: str) -> Buffer:
        """The buffer named ``buffer_id``.

        Raises:
            KeyError: No buffer has that id.
        """
        return self.buffers[self.index[buffer_id]]

    def pool(self, name: str) -> Pool:
        """The pool named ``name``.

        Raises:
            KeyError: No pool has that name.
        """
        return self.pools[self.pool_index[name]]

    def candidates(self, buffer: Buffer | str) -> tuple[str, ...]:
        """Candidate pool names of a buffer, first preferred (all pools when it names none).

        Args:
            buffer: The buffer, or its id.

        Returns:
            Pool names, first preferred.
        """
        b = self.buffer(buffer) if isinstance(buffer, str) else buffer
        return b.pools or self._pool_names

    @cached_property
    def _pool_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.pools)

    @cached_property
    def parent(self) -> dict[str, tuple[str, int]]:
        """Aliased buffer -> (its direct root, displacement)."""
        return {a.buffer: (a.root, a.displacement) for a in self.aliases}

    @cached_property
    def root_of(self) -> dict[str, tuple[str, int]]:
        """Aliased buffer -> (ultimate root, displacement from that root). Roots are absent."""
        out: dict[str, tuple[str, int]] = {}
        for a in self.aliases:
            node, disp = a.buffer, 0
            while node in self.parent:
                node, d = self.parent[node]
                disp += d
            out[a.buffer] = (node, disp)
        return out

    @cached_property
    def columns(self) -> Columns:
        """The buffers as columns (:class:`Columns`), computed once per problem."""
        buffers = self.buffers
        n = len(buffers)

        def column(values: Iterable[int]) -> np.ndarray:
            out = np.fromiter(values, np.int64, n)
            out.flags.writeable = False  # shared by every user of the problem
            return out

        return Columns(
            tuple(b.id for b in buffers),
            column(b.size for b in buffers),
            column(b.start for b in buffers),
            column(b.end for b in buffers),
            column(b.alignment for b in buffers),
            column(-1 if b.offset is None else b.offset for b in buffers),
            column(-1 if b.hint is None else b.hint for b in buffers),
            column(b.traffic for b in buffers),
            any(b.gaps for b in buffers),
            tuple((i, b.pools) for i, b in enumerate(buffers) if b.pools),
        )

    @cached_property
    def has_traffic(self) -> bool:
        """Whether some buffer moves bytes (:attr:`Buffer.traffic`): plans then report their
        traffic, and its cost joins the objective."""
        return any(b.traffic for b in self.buffers)

    @property
    def time_span(self) -> tuple[int, int]:
        """``(first start, last end)`` over the buffers; ``(0, 0)`` without buffers."""
        if not self.buffers:
            return (0, 0)
        return min(b.start for b in self.buffers), max(b.end for b in self.buffers)

    def with_capacity(self, capacities: dict[str, int | None]) -> Problem:
        """A copy with some pools' capacities replaced (validated again).

        Args:
            capacities: Pool name -> its new capacity in bytes (``None``: unbounded).

        Returns:
            The new problem; this one is unchanged.

        Raises:
            ProblemError: A pool that is not in the problem, a capacity out of range, or a
                fixed buffer that no longer fits.
        """
        unknown = set(capacities) - set(self.pool_index)
        if unknown:
            name = sorted(unknown)[0]
            raise ProblemError("no such pool in this problem", pool=name, field="capacity")
        pools = tuple(replace(p, capacity=capacities[p.name]) if p.name in capacities else p
                      for p in self.pools)
        return self.replace(pools=pools)

    def replace(self, **changes: Any) -> Problem:
        """A copy with some fields replaced (``buffers=``, ``pools=``, ``aliases=``, ``name=``,
        ``meta=``), validated again.

        Raises:
            ProblemError: The new problem is not valid.
        """
        kw: dict[str, Any] = {"buffers": self.buffers, "pools": self.pools,
                              "aliases": self.aliases, "name": self.name, "meta": self.meta}
        kw.update(changes)
        return Problem(**kw)

    # -- validation ----------------------------------------------------------------------------
    def _validate(self) -> None:
        for b in self.buffers:
            if not isinstance(b, Buffer):
                raise ProblemError(f"expected a Buffer, got {type(b).__name__}", field="buffers")
        for p in self.pools:
            if not isinstance(p, Pool):
                raise ProblemError(f"expected a Pool, got {type(p).__name__}", field="pools")
        names: set[str] = set()
        for p in self.pools:
            if p.name in names:
                raise ProblemError("duplicate pool name", pool=p.name, field="name")
            names.add(p.name)
        total = sum(b.size for b in self.buffers)
        if total >= MAX_VALUE:
            raise ProblemError(f"add up to {total} bytes, beyond 2**62", field="sizes")
        # The objective's traffic term is computed in int64 too.
        moved = sum(b.traffic for b in self.buffers) * max(p.traffic_cost for p in self.pools)
        if moved >= MAX_VALUE:
            raise ProblemError(f"traffic times traffic_cost adds up to {moved}, beyond 2**62",
                               field="traffic")
        # Stacked with their alignment padding, above every fixed buffer, the buffers must still
        # fit below 2**62: planners and the exact model compute offsets in int64.
        pool_align = math.lcm(*(p.alignment for p in self.pools)) if self.pools else 1
        worst = max(self.buffers, key=lambda b: b.alignment, default=None)
        room = max((b.offset + b.size for b in self.buffers if b.offset is not None), default=0)
        room += sum(b.size + math.lcm(b.alignment, pool_align) - 1 for b in self.buffers)
        if worst is not None and room >= MAX_VALUE:
            raise ProblemError(f"with alignment padding the buffers may need {room} bytes, "
                               "beyond 2**62", buffer=worst.id, field="alignment")
        ids: set[str] = set()
        for b in self.buffers:
            if b.id in ids:
                raise ProblemError("duplicate id", buffer=b.id, field="id")
            ids.add(b.id)
            for name in b.pools:
                if name not in names:
                    raise ProblemError(f"unknown pool {name!r}", buffer=b.id, field="pools")
        for b in self.buffers:
            if b.offset is None:
                continue
            pools = [self.pool(name) for name in self.candidates(b)]
            for pool in pools:
                if b.offset % pool.alignment:
                    raise ProblemError(
                        f"{b.offset} is not a multiple of pool {pool.name!r} base alignment "
                        f"{pool.alignment}", buffer=b.id, field="offset")
            fits = [p for p in pools if p.capacity is None or b.offset + b.size <= p.capacity]
            if not fits:
                cap = max(p.capacity for p in pools if p.capacity is not None)  # (all bounded)
                raise ProblemError(
                    f"fixed at {b.offset}, it ends at byte {b.offset + b.size}, beyond the "
                    f"capacity {cap} of its pools", buffer=b.id, field="offset")
        self._validate_aliases(ids)
        self._validate_fixed_overlaps()

    def _validate_aliases(self, ids: set[str]) -> None:
        if not self.aliases:
            return
        seen: set[str] = set()
        for a in self.aliases:
            if not isinstance(a, Alias):
                raise ProblemError(f"expected an Alias, got {type(a).__name__}", field="aliases")
            for name in ("buffer", "root"):
                if getattr(a, name) not in ids:
                    raise ProblemError(f"alias names unknown buffer {getattr(a, name)!r}",
                                       buffer=a.buffer, field=f"alias {name}")
            if a.buffer == a.root:
                raise ProblemError("a buffer cannot alias itself", buffer=a.buffer,
                                   field="alias root")
            if a.buffer in seen:
                raise ProblemError("aliased twice (a buffer lives inside one root)",
                                   buffer=a.buffer, field="alias")
            seen.add(a.buffer)
        parent = {a.buffer: a.root for a in self.aliases}
        for a in self.aliases:
            node, steps = a.buffer, 0
            while node in parent:
                node = parent[node]
                steps += 1
                if node == a.buffer or steps > len(parent):
                    raise ProblemError("alias cycle", buffer=a.buffer, field="alias root")
        for a in self.aliases:
            b, r = self.buffer(a.buffer), self.buffer(a.root)
            if a.displacement + b.size > r.size:
                raise ProblemError(
                    f"{a.displacement} + size {b.size} overhangs root {a.root!r} of size {r.size}",
                    buffer=a.buffer, field="alias displacement")
            if b.offset is not None:
                raise ProblemError("an aliased buffer has no offset of its own; fix its root",
                                   buffer=a.buffer, field="offset")
        for bid, (root, disp) in self.root_of.items():
            b = self.buffer(bid)
            if disp % b.alignment:
                raise ProblemError(
                    f"displacement {disp} from root {root!r} is not a multiple of the alignment "
                    f"{b.alignment}", buffer=bid, field="alias displacement")
            bc = set(self.candidates(b))
            if not any(p in bc for p in self.candidates(root)):
                raise ProblemError(f"shares no candidate pool with its root {root!r}",
                                   buffer=bid, field="pools")
        # The whole block lands in one pool: its members need a candidate in common, and a
        # fixed root must leave every member aligned (member offset = root offset + disp).
        allowed: dict[str, set[str]] = {}
        for b in self.buffers:
            if b.id not in self.root_of:
                continue
            root, disp = self.root_of[b.id]
            r = self.buffer(root)
            if b.pools:  # (a member with every pool as candidate restricts nothing)
                if root not in allowed:
                    allowed[root] = set(self.candidates(r))
                allowed[root] &= set(b.pools)
                if not allowed[root]:
                    raise ProblemError(f"shares no candidate pool with the other members of the "
                                       f"block of root {root!r}", buffer=b.id, field="pools")
            if r.offset is not None and (r.offset + disp) % b.alignment:
                raise ProblemError(
                    f"fixed at {r.offset}, it puts aliased buffer {b.id!r} (displacement {disp})"
                    f" at {r.offset + disp}, not a multiple of its alignment {b.alignment}",
                    buffer=root, field="offset")

    def _validate_fixed_overlaps(self) -> None:
        if sum(b.offset is not None for b in self.buffers) < 2:
            return
        # A fixed root pins every buffer aliased into it too (an alias may outlive its root).
        members: dict[str, list[Buffer]] = {}
        for b in self.buffers:
            root = self.root_of[b.id][0] if b.id in self.root_of else b.id
            members.setdefault(root, []).append(b)
        at = {b.id: b.offset for b in self.buffers if b.offset is not None}
        fixed = [b for b in self.buffers if b.id in at and any(m.size > 0 for m in members[b.id])]
        if len(fixed) < 2:
            return
        from .sweep import first_overlap

        groups: dict[str, list[tuple[Buffer, Buffer]]] = {}  # pool -> (root, member)
        for r in fixed:
            cands = set(self._pool_names)
            for m in members[r.id]:
                cands &= set(self.candidates(m))
            # Two pre-placed buffers that overlap and could land in the same pool are refused
            # even if they might be split between pools: a fixed offset is a placement already
            # made, and which pool it is in must not be left to chance.
            for pool in sorted(cands):
                groups.setdefault(pool, []).extend((r, m) for m in members[r.id])
        for pool_name, pairs in groups.items():
            disp = {m.id: self.root_of[m.id][1] if m.id in self.root_of else 0 for _, m in pairs}
            group = {r.id: k for k, r in enumerate(dict.fromkeys(r for r, _ in pairs))}
            rects = []
            owner = []  # rect -> its pair
            for k, (r, m) in enumerate(pairs):
                base = at[r.id] + disp[m.id]
                for s, e, lo, hi in m.pieces():  # (a gap frees the bytes outside its window)
                    rects.append((s, e, base + lo, base + hi, group[r.id]))
                    owner.append(k)
            hit = first_overlap(rects)
            if hit is not None:
                (ra, a), (rc, c) = pairs[owner[hit[0]]], pairs[owner[hit[1]]]
                la = at[ra.id] + disp[a.id]
                lc = at[rc.id] + disp[c.id]
                via = "" if a is ra else f" (through its alias {a.id!r})"
                via_c = "" if c is rc else f" (through its alias {c.id!r})"
                raise ProblemError(
                    f"fixed at bytes [{la}, {la + a.size}) during [{a.start}, {a.end}){via},"
                    f" it overlaps fixed buffer {rc.id!r} at [{lc}, {lc + c.size}) "
                    f"during [{c.start}, {c.end}){via_c}, and both may go to pool "
                    f"{pool_name!r}", buffer=ra.id, field="offset")

