"""ExecuTorch (PyTorch's on-device runtime), both directions.

* **The problem ExecuTorch plans.** :func:`problem_from_specs` turns the tensor specs that
  ExecuTorch's ``MemoryPlanningPass`` hands a planning algorithm into a :class:`Problem`, exactly
  as ExecuTorch's own greedy sees them (pytorch/executorch, ``exir/memory_planning.py``): one
  pool per ``mem_id`` (``mem1`` is ExecuTorch's default arena), sizes are ``allocated_memory``
  (bytes rounded up to the alignment), lifetimes are ExecuTorch's inclusive node indices made
  half-open (``[first, last + 1)``), a spec backed by another's storage (``storage_base``, at
  ``storage_base_offset``: in-place results, views) is an alias into it, and the space
  ExecuTorch reserves at the bottom of an arena for sub-graphs (``input_mem_buffer_sizes``:
  the branches of ``torch.cond``, ``while``, ``map``) is a buffer fixed at offset 0 while the
  control-flow node runs (the whole program when the graph has no such node).
  :func:`problem_in_memories` is the same problem for a planner that chooses each tensor's
  memory among several (the Cadence backend's ``MemoryConfig``, the banked planner's
  ``TargetMemoryMap``): the memories are pools, fastest first, with their capacities. Every
  buffer carries its ``traffic`` (:func:`spec_traffic`: the bytes it moves per run).
* **The plan handed back.** :func:`memory_planning_pass` is a ``MemoryPlanningPass`` whose
  algorithm is cpplan (:class:`CpplanAlgorithm`): it solves every arena with
  :func:`cpplan.solve.solve`, checks the plan with cpplan's checker (a plan that fails raises
  :class:`PlanError` and nothing is written: ExecuTorch checks nothing at run time), gives
  every spec its ``mem_id``, ``mem_offset`` and a ``mem_obj_id`` shared by specs whose bytes
  intersect, and after the pass runs ExecuTorch's own ``Verifier.verify_storage_reuse``.
  With ``memories=`` the algorithm chooses every tensor's memory too, beside ExecuTorch's own
  planners that do (:mod:`cpplan.runtimes.executorch_tiers`).

Usage::

    from executorch.exir import ExecutorchBackendConfig, to_edge
    from cpplan.runtimes.executorch import memory_planning_pass

    mpp = memory_planning_pass(time_limit=10)
    program = to_edge(exported).to_executorch(ExecutorchBackendConfig(memory_planning_pass=mpp))
    for arena in mpp.arenas: print(arena)   # status, bytes, lower bound, gap, greedy's bytes

Everything torch-related is imported when used (``pip install "cpplan[executorch]"``).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CpplanError, PlanError, missing_extra
from ..plan import Placement, Plan, ensure_valid
from ..problem import Alias, Buffer, Pool, Problem

__all__ = ["ArenaReport", "CpplanAlgorithm", "memory_planning_pass", "problem_from_specs",
           "problem_in_memories", "pool_mem_ids", "extract_pt2", "describe", "lower_pt2",
           "greedy_plan", "compared_plans", "report_lines", "DEFAULT_ALIGNMENT"]

#: ExecuTorch's default alignment (``executorch.exir.tensor.ALIGNMENT``).
DEFAULT_ALIGNMENT = 16
RESERVED = "reserved:"  # buffer ids of the space kept for sub-graphs start with this


def pool_name(mem_id: int) -> str:
    return f"mem{mem_id}"


def pool_mem_ids(problem: Problem) -> dict[str, int]:
    """``pool name -> ExecuTorch mem_id`` of a problem made by :func:`problem_from_specs` or
    :func:`problem_in_memories` (they carry it in ``meta["mem_ids"]``; a name is never parsed).
    """
    mem_ids = problem.meta.get("mem_ids")
    if not isinstance(mem_ids, dict):
        raise CpplanError(f"problem {problem.name!r} does not say the ExecuTorch mem_id of its "
                          "pools (meta['mem_ids']): it was not made from ExecuTorch's specs")
    return {str(name): int(mem_id) for name, mem_id in mem_ids.items()}


@dataclass(frozen=True)
class ArenaReport:
    """One arena (``mem_id``) of one graph as cpplan planned it.

    ``bytes`` is the arena ExecuTorch allocates with cpplan's plan (the height, which covers the
    reserved space, plus ``extra_padding``); ``lower_bound`` bounds it from below (cpplan's proven
    bound on the height plus the padding); ``greedy_bytes`` is what ExecuTorch's default greedy
    allocates for the same specs (``None`` when not compared). ``graph`` counts the graphs in
    planning order: ExecuTorch plans sub-graphs first, the program's own graph last.
    """

    graph: int
    mem_id: int
    bytes: int
    lower_bound: int
    status: str
    seconds: float
    buffers: int
    greedy_bytes: int | None = None

    @property
    def gap(self) -> float:
        return 0.0 if self.bytes == 0 else max(0.0, (self.bytes - self.lower_bound) / self.bytes)

    @property
    def saved(self) -> int | None:
        """Bytes saved against ExecuTorch's greedy (``None`` when not compared)."""
        return None if self.greedy_bytes is None else self.greedy_bytes - self.bytes

    def __str__(self) -> str:
        greedy = "" if self.greedy_bytes is None else f", greedy {self.greedy_bytes}"
        return (f"graph {self.graph} mem_id {self.mem_id}: {self.status} {self.bytes} bytes, "
                f"lower bound {self.lower_bound}, gap {100 * self.gap:.2f}%{greedy}, "
                f"{self.buffers} tensors, {self.seconds:.2f}s")


# -- ExecuTorch's specs -> a problem ----------------------------------------------------------
def spec_names(graph_module: Any) -> dict[int, str]:
    """``id(spec) -> name``: the node that first carries the spec, in graph order (with
    ``.k`` for the k-th tensor of a node with several)."""
    from executorch.exir.memory_planning import get_node_tensor_specs

    names: dict[int, str] = {}
    for node in graph_module.graph.nodes:
        specs = get_node_tensor_specs(node)
        for k, spec in enumerate(specs):
            if spec is not None and id(spec) not in names:
                names[id(spec)] = node.name if len(specs) == 1 else f"{node.name}.{k}"
    return names


def spec_traffic(graph_module: Any) -> dict[int, int]:
    """``id(spec) -> bytes moved per run``, counted as :mod:`cpplan.graph.traffic` counts a
    graph's: the tensor's bytes (``nbytes``, not rounded up) times one write (by its operator;
    a graph input's by the caller) plus one read per operator that takes it as an input, plus
    one more for a graph output (the caller reads it after the run). A view
    (``memory.view``) is no operator and has no tensor of its own: its readers read its base;
    an ``alloc`` given as an ``out=`` argument is written, not read; ``getitem`` reads nothing
    (its readers read the tensor it picks)."""
    import operator

    from executorch.exir import memory
    from executorch.exir.memory_planning import get_node_tensor_specs

    passive = {memory.alloc, memory.view, operator.getitem}
    readers: dict[int, int] = {}
    specs: dict[int, Any] = {}
    for node in graph_module.graph.nodes:
        for spec in get_node_tensor_specs(node):
            specs.setdefault(id(spec), spec)
        if node.op == "output" or (node.op == "call_function" and node.target not in passive):
            read: set[int] = set()
            for arg in node.all_input_nodes:
                if arg.op == "call_function" and arg.target is memory.alloc:
                    continue
                read.update(id(spec) for spec in get_node_tensor_specs(arg))
            for key in read:
                readers[key] = readers.get(key, 0) + 1
    return {key: int(spec.nbytes()) * (1 + readers.get(key, 0)) for key, spec in specs.items()}


def _control_flow_steps(graph_module: Any) -> list[tuple[str, int]]:
    """(node name, node index) of the nodes that run sub-graphs planned below the arena."""
    from executorch.exir.memory_planning import (
        get_cond_nodes,
        get_map_nodes,
        get_scan_nodes,
        get_while_nodes,
    )

    nodes = set()
    for get in (get_cond_nodes, get_while_nodes, get_map_nodes, get_scan_nodes):
        nodes.update(get(graph_module))
    return [(n.name, k) for k, n in enumerate(graph_module.graph.nodes) if n in nodes]


def problem_from_specs(specs: Iterable[Any], graph_module: Any, alignment: int,
                       extra_padding: int = 0, *, name: str = "",
                       hints: dict[int, int] | None = None) -> tuple[Problem, list[Any]]:
    """The problem ExecuTorch's planner faces with ``specs``, and the spec of each buffer (in
    the order of ``problem.buffers``; ``None`` for reserved space). Realigns the specs to
    ``alignment`` as ExecuTorch's algorithms do. See the module docstring for the mapping.
    ``hints``: ``id(spec) -> offset``, the buffers' hints (a warm start). Each buffer's
    ``traffic`` is :func:`spec_traffic`'s; ``meta["mem_ids"]`` is each pool's ``mem_id``
    (:func:`pool_mem_ids`)."""
    specs = list(specs)
    for spec in specs:
        spec.realign(alignment)
    buffers, aliases, owners, mem_ids = _spec_buffers(
        specs, graph_module, alignment,
        lambda spec, mem_id: (pool_name(1 if mem_id is None else mem_id),), hints,
        traffic=spec_traffic(graph_module))
    reserved = _reserved(graph_module, alignment, pool_name)
    buffers += [b for _, b in reserved]
    owners += [None] * len(reserved)
    used = sorted({1 if m is None else m for m in mem_ids} | {m for m, _ in reserved}) or [1]
    pools = tuple(Pool(pool_name(m), alignment=alignment) for m in used)
    meta = {"source": "executorch", "alignment": alignment, "extra_padding": extra_padding,
            "mem_ids": {pool_name(m): m for m in used},
            "lifetimes": "ExecuTorch node indices [first, last], made half-open"}
    problem = Problem(tuple(buffers), pools, tuple(aliases), name=name, meta=meta)
    return problem, owners


def problem_in_memories(specs: Iterable[Any], graph_module: Any, memories: Sequence[Pool], *,
                        mem_ids: Sequence[int] | None = None,
                        alignment: int = DEFAULT_ALIGNMENT, extra_padding: int = 0,
                        name: str = "") -> tuple[Problem, list[Any]]:
    """The problem of an ExecuTorch planner that chooses each tensor's memory among several
    (the Cadence backend's ``MemoryConfig``, ``exir/banked_memory_planning.py``'s
    ``TargetMemoryMap``), and the spec of each buffer (``None`` for reserved space).

    ``memories``: the memories as pools, fastest first (``capacity``: the bytes the memory
    gives this program, ``None`` for no limit; ``alignment``: its alignment), the memory of
    ExecuTorch ``mem_id`` ``mem_ids[k]`` (default ``1, 2, ...``). A spec that already has a
    ``mem_id`` (pinned by a custom pool pass) has that memory as its only candidate; one of an
    undeclared ``mem_id`` gets an unbounded pool ``mem<id>`` of its own (the banked planner lays
    such pins out unbudgeted). The other specs may go to any memory, in the given order. The
    space reserved for sub-graphs (``input_mem_buffer_sizes``) is a buffer fixed at offset 0
    of its memory. Sizes are the specs' bytes rounded up to ``alignment``, and nothing is
    realigned, so the planner that runs next sees the specs untouched. Lifetimes, names,
    aliases (``storage_base``) and traffic are those of :func:`problem_from_specs`, and so is
    ``meta["mem_ids"]``, each pool's ``mem_id`` (:func:`pool_mem_ids`).
    """
    memories = tuple(memories)
    ids = list(range(1, len(memories) + 1)) if mem_ids is None else [int(m) for m in mem_ids]
    if len(ids) != len(memories) or len(set(ids)) != len(ids):
        raise CpplanError(f"problem_in_memories: {len(memories)} memories need as many distinct "
                          f"mem_ids, got {ids}")
    by_id = {m: p.name for m, p in zip(ids, memories, strict=True)}
    extra: dict[int, Pool] = {}

    def pool_of_id(mem_id: int) -> str:
        if mem_id not in by_id and mem_id not in extra:
            extra[mem_id] = Pool(pool_name(mem_id), alignment=alignment)
        return by_id[mem_id] if mem_id in by_id else extra[mem_id].name

    specs = list(specs)
    buffers, aliases, owners, _ = _spec_buffers(
        specs, graph_module, alignment,
        lambda spec, mem_id: () if mem_id is None else (pool_of_id(mem_id),), None,
        realign=False, traffic=spec_traffic(graph_module))
    reserved = _reserved(graph_module, alignment, pool_of_id)
    buffers += [b for _, b in reserved]
    owners += [None] * len(reserved)
    meta = {"source": "executorch", "alignment": alignment, "extra_padding": extra_padding,
            "mem_ids": {**{p.name: m for m, p in zip(ids, memories, strict=True)},
                        **{extra[m].name: m for m in sorted(extra)}},
            "lifetimes": "ExecuTorch node indices [first, last], made half-open"}
    problem = Problem(tuple(buffers), memories + tuple(extra[m] for m in sorted(extra)),
                      tuple(aliases), name=name, meta=meta)
    return problem, owners


def _spec_buffers(specs: list[Any], graph_module: Any, alignment: int,
                  pools_of: Callable[[Any, int | None], tuple[str, ...]],
                  hints: dict[int, int] | None, *, realign: bool = True,
                  traffic: dict[int, int] | None = None
                  ) -> tuple[list[Buffer], list[Alias], list[Any], list[int | None]]:
    """A buffer per spec (and the aliases of ``storage_base``), the owners (the specs) and the
    ``mem_id`` of each one's root (``None`` where not set). ``pools_of(spec, root mem_id)``
    gives the candidate pools; sizes are ``allocated_memory`` (with ``realign`` False, the
    bytes rounded up to ``alignment`` without touching the spec); ``traffic``: ``id(spec) ->
    bytes moved`` (none where absent)."""
    from executorch.exir.tensor import calculate_aligned_num_bytes

    names = spec_names(graph_module)
    ids: dict[int, str] = {}
    taken: set[str] = set()
    for k, spec in enumerate(specs):
        bid = names.get(id(spec), f"spec{k}")
        if bid in taken:
            bid = f"{bid}#{k}"
        ids[id(spec)] = bid
        taken.add(bid)

    def root_mem_id(spec: Any) -> int | None:
        while spec.storage_base is not None:
            spec = spec.storage_base
        return None if spec.mem_id is None else int(spec.mem_id)

    buffers: list[Buffer] = []
    aliases: list[Alias] = []
    mem_ids: list[int | None] = []
    for spec in specs:
        bid = ids[id(spec)]
        first, last = spec.lifetime
        if first is None or last is None:
            raise CpplanError(f"ExecuTorch tensor {bid!r} has no lifetime")
        mem_id = root_mem_id(spec)
        mem_ids.append(mem_id)
        hint = None if hints is None else hints.get(id(spec))
        size = (int(spec.allocated_memory) if realign
                else calculate_aligned_num_bytes(int(spec.nbytes()), alignment))
        moved = 0 if traffic is None else traffic.get(id(spec), 0)
        buffers.append(Buffer(bid, size, int(first), int(last) + 1,
                              alignment=int(spec.alignment) if realign else alignment,
                              pools=pools_of(spec, mem_id), hint=hint, traffic=moved))
        if spec.storage_base is not None:
            base = ids.get(id(spec.storage_base))
            if base is None:
                raise CpplanError(f"ExecuTorch tensor {bid!r} lives in the storage of a tensor "
                                  "that is not planned (a graph input or output left to the "
                                  "runtime?)")
            aliases.append(Alias(bid, base, int(spec.storage_base_offset or 0)))
    return buffers, aliases, list(specs), mem_ids


def _reserved(graph_module: Any, alignment: int,
              pool_of_id: Callable[[int], str]) -> list[tuple[int, Buffer]]:
    """``(mem_id, buffer)`` for the space ExecuTorch reserves for sub-graphs: fixed at offset 0
    of that memory while each control-flow node runs (the whole program without such a node).
    """
    n_nodes = len(graph_module.graph.nodes)
    reserved = list(getattr(graph_module, "input_mem_buffer_sizes", None) or [])
    steps = _control_flow_steps(graph_module) if any(reserved[1:]) else []
    out: list[tuple[int, Buffer]] = []
    for mem_id, size in enumerate(reserved):
        if mem_id == 0 or not size:
            continue
        pool = pool_of_id(mem_id)
        where = [(f"{RESERVED}{n}", k, k + 1) for n, k in steps] or [
            (f"{RESERVED}sub-graphs", 0, max(n_nodes, 1))]
        for bid, start, end in where:
            out.append((mem_id, Buffer(f"{bid}@{pool_name(mem_id)}", int(size), start, end,
                                       alignment=alignment, pools=(pool,), offset=0)))
    return out


def _pool_problem(problem: Problem, pool: str) -> Problem:
    """The part of ``problem`` in one pool (pools here are never a choice: one per mem_id)."""
    buffers = tuple(b for b in problem.buffers if b.pools == (pool,))
    keep = {b.id for b in buffers}
    return Problem(buffers, (problem.pool(pool),),
                   tuple(a for a in problem.aliases if a.buffer in keep),
                   name=f"{problem.name}:{pool}" if problem.name else pool, meta=problem.meta)


def storage_objects(entries: list[tuple[Any, int, int, int]]) -> dict[int, int]:
    """``id(spec) -> mem_obj_id`` for ``(spec, mem_id, offset, size)``: specs whose byte
    ranges intersect in one ``mem_id`` share an id (the runs of merged ranges), as ExecuTorch's
    ``Verifier.verify_storage_reuse`` requires; empty specs get ids of their own."""
    out: dict[int, int] = {}
    next_id = 0
    by_mem: dict[int, list[tuple[int, int, Any]]] = {}
    for spec, mem_id, off, size in entries:
        by_mem.setdefault(mem_id, []).append((off, size, spec))
    for mem_id in sorted(by_mem):
        end = None
        for off, size, spec in sorted(by_mem[mem_id], key=lambda e: (e[0], -e[1])):
            if size == 0:
                continue
            if end is None or off >= end:
                next_id += 1
                end = off + size
            else:
                end = max(end, off + size)
            out[id(spec)] = next_id - 1
    for spec, _mem, _off, size in entries:
        if size == 0:
            out[id(spec)] = next_id
            next_id += 1
    return out


# -- the algorithm ---------------------------------------------------------------------------------
def solve_with(solver: Callable[..., Plan] | None, problem: Problem, time_limit: float,
               options: dict[str, Any]) -> Plan:
    """``solver`` (a function taking the problem, ``time_limit=`` and ``options``), or
    :func:`cpplan.solve.solve` when there is none: how a planning pass plans each graph."""
    if solver is not None:
        return solver(problem, time_limit=time_limit, **options)
    from ..solve import solve

    return solve(problem, time_limit=time_limit, **options)


class CpplanAlgorithm:
    """An ExecuTorch memory-planning algorithm (``(alignment, specs, graph_module,
    graph_signature, extra_padding) -> MemoryAlgoResult``) that plans with cpplan.

    Each call solves every arena for ``time_limit`` seconds with :func:`cpplan.solve.solve`
    (``solve_options`` go there too), checks the plan (``PlanError`` otherwise: the result is
    never returned) and appends an :class:`ArenaReport` per arena to ``arenas``, the problem
    to ``problems`` and its checked plan to ``plans``. ``compare_greedy`` also runs
    ExecuTorch's greedy on the same specs (it changes nothing) so that every report says what
    the default would have allocated, and gives its offsets to the buffers as hints, from which
    solve starts.
    """

    __name__ = "cpplan"

    def __init__(self, time_limit: float = 10.0, *, compare_greedy: bool = True,
                 solver: Callable[..., Plan] | None = None, **solve_options: Any) -> None:
        self.time_limit = time_limit
        self.compare_greedy = compare_greedy
        self.solve_options = solve_options
        self._solver = solver
        self.arenas: list[ArenaReport] = []
        self.problems: list[Problem] = []
        self.plans: list[Plan] = []

    def solve(self, problem: Problem) -> Plan:
        return solve_with(self._solver, problem, self.time_limit, self.solve_options)

    def __call__(self, alignment: int, specs: Iterable[Any], graph_module: Any,
                 graph_signature: Any, extra_padding: int = 0) -> Any:
        from executorch.exir.memory_planning import MemoryAlgoResult, SpecAllocResult, greedy

        specs = list(specs)
        greedy_sizes = hints = None
        if self.compare_greedy:
            # ExecuTorch's greedy plan is also every buffer's hint: solve starts from it when it
            # is valid, so cpplan's arena is never larger than greedy's, whatever the problem's
            # size.
            theirs = greedy(alignment, specs, graph_module, graph_signature, extra_padding)
            greedy_sizes = theirs.bufsizes
            hints = {id(spec): int(r.mem_offset) for spec, r in theirs.spec_dict.items()}
        graph = len(self.problems)
        problem, owners = problem_from_specs(specs, graph_module, alignment, extra_padding,
                                             name=f"graph{graph}", hints=hints)
        mem_ids = pool_mem_ids(problem)
        placements: dict[str, Placement] = {}
        reports = []
        for pool in problem.pools:
            sub = _pool_problem(problem, pool.name)
            started = time.perf_counter()
            plan = self.solve(sub)
            if not plan.placements:
                raise CpplanError(f"cpplan found no plan for ExecuTorch arena {pool.name}: "
                                  f"{plan.status} {plan.explanation}".rstrip())
            plan = ensure_valid(sub, plan)
            placements.update(plan.placements)
            mem_id = mem_ids[pool.name]
            height = plan.heights[pool.name]
            bound = height if plan.lower_bound is None else min(height, plan.lower_bound)
            reports.append(ArenaReport(
                graph, mem_id, height + extra_padding, bound + extra_padding, plan.status,
                time.perf_counter() - started, sum(1 for o in sub.buffers
                                                   if not o.id.startswith(RESERVED)),
                None if greedy_sizes is None or mem_id >= len(greedy_sizes)
                else int(greedy_sizes[mem_id])))
        # The plan of the whole graph, checked once more as it goes to ExecuTorch.
        whole = ensure_valid(problem, Plan.build(
            problem, placements, planner="cpplan",
            lower_bound=sum(r.lower_bound - extra_padding for r in reports),
            seconds=sum(r.seconds for r in reports),
            status="optimal" if all(r.status == "optimal" for r in reports) else "feasible"))
        entries = []
        for b, spec in zip(problem.buffers, owners, strict=True):
            if spec is not None:
                pl = whole.placements[b.id]
                entries.append((spec, mem_ids[pl.pool], pl.offset, b.size))
        objects = storage_objects(entries)
        result = MemoryAlgoResult({}, [])
        for spec, mem_id, off, _size in entries:
            result.spec_dict[spec] = SpecAllocResult(mem_id, objects[id(spec)], off)
        sizes = [0] * max(2, max((r.mem_id for r in reports), default=1) + 1)
        for r in reports:
            sizes[r.mem_id] = r.bytes
        result.bufsizes = sizes
        self.problems.append(problem)
        self.plans.append(whole)
        self.arenas.extend(reports)
        return result


@functools.cache
def _pass_class() -> type:
    from executorch.exir.memory_planning import Verifier
    from executorch.exir.passes import MemoryPlanningPass

    class CpplanMemoryPlanningPass(MemoryPlanningPass):
        """ExecuTorch's ``MemoryPlanningPass`` with cpplan as its algorithm; after planning it
        runs ExecuTorch's ``Verifier.verify_storage_reuse`` (which the stock pass runs for its
        greedy only)."""

        cpplan: Any  # CpplanAlgorithm, or executorch_tiers.TierAlgorithm with memories

        @property
        def arenas(self) -> list[ArenaReport]:
            return list(getattr(self.cpplan, "arenas", []))

        @property
        def tiers(self) -> list[Any]:
            """With memories: a :class:`~cpplan.runtimes.executorch_tiers.TierReport` per
            graph."""
            return list(getattr(self.cpplan, "reports", []))

        def run(self, graph_module: Any, graph_signature: Any = None) -> Any:
            result = super().run(graph_module, graph_signature)
            Verifier(graph_module, self.alloc_graph_input, self.alloc_graph_output,
                     self.alloc_mutable_buffers and not self.share_mutable_buffers,
                     graph_signature).verify_storage_reuse()
            return result

    return CpplanMemoryPlanningPass


def memory_planning_pass(time_limit: float = 10.0, alignment: int = DEFAULT_ALIGNMENT, *,
                         alloc_graph_input: bool = True, alloc_graph_output: bool = True,
                         compare_greedy: bool = True, memories: Any = None,
                         traffic_costs: Sequence[int] | None = None,
                         **solve_options: Any) -> Any:
    """An ``executorch.exir.passes.MemoryPlanningPass`` that plans with cpplan.

    ``time_limit``: seconds per arena (with ``memories``: per graph) for
    :func:`cpplan.solve.solve` (``solve_options`` go there too: ``workers``, ``seed``,
    ``deterministic``, ...). ``alignment``: bytes, as ExecuTorch's. ``alloc_graph_input`` /
    ``alloc_graph_output``: as ExecuTorch's (False leaves those tensors to the runtime user).
    After lowering, ``pass.arenas`` lists an :class:`ArenaReport` per arena (status, bytes,
    lower bound, gap, greedy's bytes) and ``pass.cpplan.problems`` and ``pass.cpplan.plans``
    the problems solved and their plans.

    ``memories``: the device's memories, fastest first, as :class:`cpplan.memories.Memory`
    (or ExecuTorch's ``TargetMemoryMap``, whose k-th bank costs ``traffic_costs[k]`` per byte
    moved, default ``4 ** k``): they become the arenas (``mem_id`` 1..N, or the banks'), cpplan
    chooses every tensor's memory to minimise the traffic cost, and ``pass.tiers`` holds a
    :class:`~cpplan.runtimes.executorch_tiers.TierReport` per graph, with what ExecuTorch's
    banked and Cadence planners do on the same tensors (``compare_greedy=False`` skips them).
    See :mod:`cpplan.runtimes.executorch_tiers`.
    """
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite

    if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment < 1:
        raise CpplanError(f"alignment must be a positive number of bytes, got {alignment!r}")
    if memories is not None or traffic_costs is not None:
        from .executorch_tiers import TierAlgorithm, memory_map

        mems, mem_ids = memory_map(memories if memories is not None else (), traffic_costs)
        algo: Any = TierAlgorithm(mems, mem_ids, time_limit, compare=compare_greedy,
                                  alloc_graph_input=alloc_graph_input,
                                  alloc_graph_output=alloc_graph_output, **solve_options)
    else:
        algo = CpplanAlgorithm(time_limit, compare_greedy=compare_greedy, **solve_options)
    mpp = _pass_class()(MemoryPlanningAlgorithmSuite(algo_list=[algo]),
                        alloc_graph_input=alloc_graph_input,
                        alloc_graph_output=alloc_graph_output, alignment=alignment)
    mpp.cpplan = algo
    return mpp


# -- programs on disk --------------------------------------------------------------------------
def load_exported(path: str | Path) -> Any:
    """The ExportedProgram saved at ``path`` with ``torch.export.save``."""
    try:
        # (torch logs a deprecation of ExecuTorch's own code as ExecuTorch loads, on every
        # command: nothing a user can act on)
        with quiet_log("torch.utils._pytree"):
            import executorch.exir  # noqa: F401  (lowering needs it: say so before any work)
        import torch
    except ImportError as e:
        raise missing_extra("planning ExecuTorch programs (.pt2)", e.name or "executorch",
                            "executorch") from None
    path = Path(path)
    if not path.is_file():
        raise CpplanError(f"{path}: no such file")
    # torch logs the whole traceback of a file it cannot read before raising: the error below
    # says it in one line.
    try:
        with quiet_log("torch.export"):
            return torch.export.load(str(path))
    except Exception as e:  # torch raises many kinds for a file that is not a .pt2
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise CpplanError(f"{path}: not an ExportedProgram saved with torch.export.save "
                          f"({first})") from None


@contextlib.contextmanager
def quiet_log(logger: str) -> Iterator[None]:
    """``logger`` says only errors while the block runs."""
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def edge_program(exported: Any, *, constant_prop: bool = False) -> Any:
    """``to_edge(exported)``; ``constant_prop`` then runs ExecuTorch's ``constant_prop_pass``
    (weights computed from weights, such as a transposed linear weight, become constants
    instead of tensors computed into the arena at run time)."""
    from executorch.exir import EdgeProgramManager, to_edge

    edge = to_edge(exported)
    if constant_prop:
        from executorch.exir.passes.constant_prop_pass import constant_prop_pass

        edge = EdgeProgramManager({"forward": constant_prop_pass(edge.exported_program())},
                                  compile_config=edge.compile_config)
    return edge


def lower(program: Any, mpp: Any, *, constant_prop: bool = False) -> Any:
    """The ExecuTorch program (``.buffer`` is the ``.pte``) of ``program`` (an ExportedProgram,
    or an edge program from :func:`edge_program`, which can be lowered several times) with the
    memory-planning pass ``mpp``."""
    from executorch.exir import ExecutorchBackendConfig

    if hasattr(program, "to_executorch"):
        # to_executorch changes the edge program's graphs in place: lower a copy.
        edge = copy.deepcopy(program)
    else:
        edge = edge_program(program, constant_prop=constant_prop)
    return edge.to_executorch(ExecutorchBackendConfig(memory_planning_pass=mpp))


#: What receives the program graph's problem and the plans compared on it, label -> plan
#: (``cpplan executorch --view``: :func:`cpplan.view.write_view`).
Compared = Callable[[Problem, dict[str, Plan]], object]


def lower_pt2(path: str | Path, time_limit: float = 10.0,
              alignment: int = DEFAULT_ALIGNMENT, *, constant_prop: bool = False,
              view: Compared | None = None, **solve_options: Any) -> tuple[bytes, list]:
    """The ExecuTorch program (``.pte`` bytes) of the ExportedProgram at ``path``, planned by
    cpplan, and the :class:`ArenaReport` of every arena (``constant_prop``: after ExecuTorch's
    ``constant_prop_pass``). An error of cpplan's raised inside ExecuTorch's passes comes out
    as itself; any other failure to lower as a :class:`CpplanError` naming the file. ``view``
    is called with the program graph's problem and its plans (:func:`compared_plans`)."""
    exported = load_exported(path)
    mpp = memory_planning_pass(time_limit, alignment, **solve_options)
    try:
        program = lower(exported, mpp, constant_prop=constant_prop)
    except Exception as e:
        raise _cpplan_error(e, f"{path}: ExecuTorch could not lower it") from None
    if view is not None:
        view(*compared_plans(mpp.cpplan))
    return bytes(program.buffer), list(mpp.arenas)


def greedy_plan(problem: Problem) -> Plan:
    """ExecuTorch's own greedy plan of a problem :class:`CpplanAlgorithm` made (it gives every
    buffer greedy's offset as its ``hint``): each tensor where greedy put it, the space reserved
    for sub-graphs at its fixed offset; checked. Where greedy's offsets are missing, or break
    the checker (an alias greedy laid out otherwise), the ``executorch-greedy`` replica's plan
    (it reproduces greedy's: ``tests/runtimes/test_executorch.py``), named as such."""
    if all(b.hint is not None or b.offset is not None for b in problem.buffers):
        placements = {b.id: Placement(problem.candidates(b)[0],
                                      b.offset if b.offset is not None else int(b.hint or 0))
                      for b in problem.buffers}
        try:
            return ensure_valid(problem, Plan.build(problem, placements,
                                                    planner="executorch-greedy"))
        except PlanError:
            pass
    from ..planners.registry import get

    return ensure_valid(problem, get("executorch-greedy")(problem).with_record(
        planner="executorch-greedy (replica)"))


def compared_plans(algorithm: CpplanAlgorithm) -> tuple[Problem, dict[str, Plan]]:
    """The program's own graph (ExecuTorch plans it last, after its sub-graphs) as ``algorithm``
    planned it, and its plans by label: ExecuTorch's greedy (:func:`greedy_plan`), then
    cpplan's."""
    if not algorithm.problems:
        raise CpplanError("nothing was planned: no graph reached cpplan's planning pass")
    problem, plan = algorithm.problems[-1], algorithm.plans[-1]
    return problem, {"ExecuTorch greedy": greedy_plan(problem), "cpplan": plan}


def _cpplan_error(error: BaseException, context: str) -> CpplanError:
    """The CpplanError in ``error``'s chain (ExecuTorch wraps what its passes raise), else one
    that says ``context`` and the first line of ``error``."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, CpplanError):
            return seen
        seen = seen.__cause__ or seen.__context__
    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return CpplanError(f"{context} ({type(error).__name__}: {first})")


class _Capture:
    """An algorithm that records the problem and returns ExecuTorch's own greedy plan. With
    ``memories`` (and their ``mem_ids``) the problem is :func:`problem_in_memories`'s, taken
    before greedy runs (greedy sets every tensor's ``mem_id``)."""

    __name__ = "greedy"  # the stock pass then runs its Verifier, as it does by default

    def __init__(self, memories: Sequence[Any] = (), mem_ids: Sequence[int] = ()) -> None:
        self.memories = tuple(memories)
        self.mem_ids = tuple(mem_ids)
        self.problems: list[Problem] = []
        self.bufsizes: list[list[int]] = []

    def __call__(self, alignment: int, specs: Iterable[Any], graph_module: Any,
                 graph_signature: Any, extra_padding: int = 0) -> Any:
        from executorch.exir.memory_planning import greedy

        specs = list(specs)
        name = f"graph{len(self.problems)}"
        if self.memories:
            from .executorch_tiers import memory_pools

            problem, _ = problem_in_memories(
                specs, graph_module, memory_pools(self.memories, alignment, extra_padding),
                mem_ids=self.mem_ids, alignment=alignment, extra_padding=extra_padding,
                name=name)
        result = greedy(alignment, specs, graph_module, graph_signature, extra_padding)
        if not self.memories:
            problem, _ = problem_from_specs(specs, graph_module, alignment, extra_padding,
                                            name=name)
        self.problems.append(problem)
        self.bufsizes.append(list(result.bufsizes))
        return result


def greedy_problems(program: Any, alignment: int = DEFAULT_ALIGNMENT, *,
                    memories: Any = None
                    ) -> tuple[list[Problem], list[list[int]], bytes]:
    """Lower ``program`` (as :func:`lower` takes it) with ExecuTorch's default greedy: the
    problem of every graph (in planning order: sub-graphs first, the program's graph last),
    greedy's buffer sizes for each (index = ``mem_id``) and the program's bytes. With
    ``memories`` (as :func:`memory_planning_pass` takes them) the problems are those of a
    planner that chooses each tensor's memory among them (greedy still plans the program)."""
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite
    from executorch.exir.passes import MemoryPlanningPass

    capture = _Capture()
    if memories is not None:
        from .executorch_tiers import memory_map

        capture = _Capture(*memory_map(memories))
    mpp = MemoryPlanningPass(MemoryPlanningAlgorithmSuite(algo_list=[capture]),
                             alignment=alignment)
    lowered = lower(program, mpp)
    return capture.problems, capture.bufsizes, bytes(lowered.buffer)


def extract_pt2(path: str | Path, alignment: int = DEFAULT_ALIGNMENT,
                command: str = "", memories: Any = None) -> Problem:
    """The problem ExecuTorch plans for the program's own graph in the ExportedProgram at
    ``path`` (sub-graphs appear as the space reserved for them); ``meta`` records ExecuTorch's
    greedy arena bytes per pool. Every buffer's ``traffic`` is :func:`spec_traffic`'s. With
    ``memories`` (:class:`cpplan.memories.Memory`, fastest first) the problem is the one of
    choosing each tensor's memory among them (:func:`problem_in_memories`)."""
    exported = load_exported(path)
    try:
        problems, sizes, _ = greedy_problems(exported, alignment, memories=memories)
    except Exception as e:
        raise _cpplan_error(e, f"{path}: ExecuTorch could not lower it") from None
    problem = problems[-1]
    meta = dict(problem.meta, model=str(path))
    if memories is None:
        mem_ids = pool_mem_ids(problem)
        meta["executorch_greedy_bytes"] = {p.name: sizes[-1][mem_ids[p.name]]
                                           for p in problem.pools
                                           if mem_ids[p.name] < len(sizes[-1])}
    if command:
        meta["command"] = command
    return problem.replace(name=Path(path).stem, meta=meta)


def report_lines(arenas: list[ArenaReport]) -> list[str]:
    """The table the CLI prints: per arena, greedy's bytes beside cpplan's."""
    head = f"{'arena':<12} {'greedy':>12} {'cpplan':>12} {'lower bound':>12} {'saved':>16}  status"
    lines = [head]
    for a in arenas:
        if a.greedy_bytes is None:
            saved = "?"
        else:
            pct = 100 * (a.greedy_bytes - a.bytes) / a.greedy_bytes if a.greedy_bytes else 0.0
            saved = f"{a.saved} ({pct:.1f}%)"
        where = f"mem_id {a.mem_id}" + (f" g{a.graph}" if len(arenas) > 1 and a.graph else "")
        greedy = "?" if a.greedy_bytes is None else str(a.greedy_bytes)
        lines.append(f"{where:<12} {greedy:>12} {a.bytes:>12} {a.lower_bound:>12} "
                     f"{saved:>16}  {a.status} (gap {100 * a.gap:.2f}%, {a.seconds:.1f}s)")
    return lines


def describe(problem: Problem) -> list[str]:
    """A few lines on a problem :func:`extract_pt2` made: its buffers, aliases, alignment and
    traffic; then per pool its ExecuTorch ``mem_id``, and its buffers, max-load and greedy's
    bytes (one pool per ``mem_id``), or, the problem in memories (no greedy bytes), its
    capacity and traffic cost, every tensor free to go to any memory."""
    from ..bounds import max_load, total_load

    moved = sum(b.traffic for b in problem.buffers)
    lines = [f"{len(problem.buffers)} buffers, {len(problem.aliases)} aliases, "
             f"alignment {problem.meta.get('alignment')}, {moved} bytes moved per run"]
    mem_ids = pool_mem_ids(problem)
    if "executorch_greedy_bytes" not in problem.meta:
        for pool in problem.pools:
            cap = "unbounded" if pool.capacity is None else f"capacity {pool.capacity}"
            lines.append(f"{pool.name} (ExecuTorch mem_id {mem_ids[pool.name]}): "
                         f"{cap}, alignment {pool.alignment}, traffic cost {pool.traffic_cost}")
        lines.append("every tensor may go to any memory; max-load of all together "
                     f"{total_load(problem).bytes} bytes")
        return lines
    loads = max_load(problem)
    greedy = problem.meta["executorch_greedy_bytes"]
    for pool in problem.pools:
        n = sum(1 for b in problem.buffers if b.pools == (pool.name,))
        lines.append(f"{pool.name} (ExecuTorch mem_id {mem_ids[pool.name]}): {n} buffers, "
                     f"max-load {loads[pool.name].bytes} bytes, ExecuTorch greedy "
                     f"{greedy.get(pool.name, '?')} bytes")
    return lines
