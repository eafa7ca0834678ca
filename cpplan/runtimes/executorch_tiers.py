"""ExecuTorch on a device with several memories (memory tiers): cpplan chooses every tensor's
memory (``mem_id``) and offset, and says what its plan costs beside ExecuTorch's own planners.

The memories are given fastest first, as :class:`cpplan.memories.Memory` (name, capacity in
bytes or ``None`` for unbounded, ``traffic_cost`` per byte moved, alignment, cost per byte of
height) or as ExecuTorch's own ``TargetMemoryMap`` (``exir/banked_memory_planning.py``; a bank
says nothing of cost: the k-th bank costs ``traffic_costs[k]``, default ``4 ** k``). They
become the program's arenas, ``mem_id`` 1..N in that order (a ``TargetMemoryMap`` keeps its
banks' ``mem_id``). :class:`TierAlgorithm` is an ExecuTorch memory-planning algorithm that, for
each graph:

* builds the problem (:func:`cpplan.runtimes.executorch.problem_in_memories`): every tensor
  may go to any memory, a memory's alignment is the graph's joined with its own, a tensor's
  ``traffic`` is what :func:`cpplan.runtimes.executorch.spec_traffic` counts (its bytes,
  written once and read once by each operator that takes it), so the objective is the
  traffic cost ``sum(traffic x traffic_cost of its memory)`` (plus ``cost x height`` where
  a memory's ``cost`` says so);
* runs ExecuTorch's own planners that choose the memory on the same tensor specs, from the
  executorch wheel (``BankedGreedy``; the Cadence backend's
  ``PositionBasedGreedyWithHierarchy`` and ``GreedyWithHeuristic``, ``CompileMode.MINIMAL``),
  and checks their plans with cpplan's checker; where a real one cannot run (a memory map it
  does not accept, the Cadence backend missing) cpplan's replica of it runs instead
  (:mod:`cpplan.replicas.executorch`, :mod:`cpplan.replicas.cadence`), and says so;
* solves the problem with :func:`cpplan.solve.solve` (the tier relaxation proves a bound on
  the traffic cost), checks the plan, and hands ExecuTorch each tensor's ``mem_id``, offset and
  a ``mem_obj_id``, and each memory's arena bytes (its height, plus ``extra_padding`` where it
  holds something; a capacity is the arena's limit, padding included).

When no plan fits the memories, the solve proves it (``infeasible``, with the tensors that
cannot fit together) or runs out of time without a plan (``unknown``), and
:class:`NoPlanError` carries the :class:`TierReport` of the graph (what the other planners
did). Every plan handed to ExecuTorch has passed cpplan's checker.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import CapacityError, CpplanError, ProblemError
from ..memories import Memory
from ..plan import Placement, Plan, check, ensure_valid
from ..problem import Pool, Problem
from .executorch import (
    RESERVED,
    pool_mem_ids,
    problem_in_memories,
    quiet_log,
    solve_with,
    storage_objects,
)

__all__ = ["MemoryUse", "Outcome", "TierReport", "TierAlgorithm", "NoPlanError",
           "memory_map", "memory_pools", "executorch_outcomes", "arena_sizes", "check_arenas",
           "lower_pt2_in_memories", "BANKED", "CADENCE_POSITION", "CADENCE_HEURISTIC",
           "UNBOUNDED"]

#: The size ExecuTorch's planners get for an unbounded memory (they need a number).
UNBOUNDED = 1 << 40
BANKED = "banked_greedy"
CADENCE_POSITION = "cadence position"
CADENCE_HEURISTIC = "cadence heuristic"
#: ExecuTorch's planner -> cpplan's replica of it.
REPLICAS = {BANKED: "executorch-banked-greedy", CADENCE_POSITION: "cadence-position-greedy",
            CADENCE_HEURISTIC: "cadence-greedy-heuristic"}


def memory_map(memories: Any, traffic_costs: Sequence[int] | None = None, *,
               field: str = "memories") -> tuple[tuple[Memory, ...], tuple[int, ...]]:
    """``(memories, mem_ids)`` from a sequence of :class:`Memory` (``mem_id`` 1..N in order)
    or an ExecuTorch ``TargetMemoryMap`` (its banks in preference order, their ``mem_id``;
    the k-th bank's traffic cost is ``traffic_costs[k]``, default ``4 ** k``). Raises
    :class:`ProblemError` naming ``field`` for anything else."""
    banks = getattr(memories, "banks", None)
    if banks is not None:
        costs = list(traffic_costs) if traffic_costs is not None else [
            4 ** k for k in range(len(banks))]
        if len(costs) != len(banks):
            raise ProblemError(f"{len(banks)} banks need as many traffic costs, got "
                               f"{len(costs)}", field="traffic_costs")
        out = tuple(Memory(b.name, int(b.size), int(c), int(b.alignment or 1))
                    for b, c in zip(banks, costs, strict=True))
        ids = tuple(int(b.mem_id) for b in banks)
    else:
        out = tuple(memories)
        if traffic_costs is not None:
            raise ProblemError("traffic costs come with the memories (Memory.traffic_cost); "
                               "traffic_costs is for a TargetMemoryMap", field="traffic_costs")
        ids = tuple(range(1, len(out) + 1))
    if not out:
        raise ProblemError("no memories given", field=field)
    for m in out:
        if not isinstance(m, Memory):
            raise ProblemError(f"expected cpplan.memories.Memory or a TargetMemoryMap, got "
                               f"{m!r}", field=field)
    names = [m.name for m in out]
    for name in names:
        if names.count(name) > 1:
            raise ProblemError("named twice", pool=name, field=field)
    return out, ids


def memory_pools(memories: Sequence[Memory], alignment: int, extra_padding: int = 0
                 ) -> tuple[Pool, ...]:
    """The memories as a problem's pools: alignments joined with the graph's ``alignment``,
    capacities less ``extra_padding`` (ExecuTorch adds it to every arena that holds
    something)."""
    pools = []
    for m in memories:
        cap = m.capacity
        if cap is not None and extra_padding:
            if cap < extra_padding:
                raise ProblemError(f"capacity {cap} is below the {extra_padding} bytes of "
                                   "padding ExecuTorch adds to an arena", pool=m.name,
                                   field="capacity")
            cap -= extra_padding
        pools.append(Pool(m.name, cap, math.lcm(m.alignment, alignment), m.cost,
                          m.traffic_cost))
    return tuple(pools)


@dataclass(frozen=True)
class MemoryUse:
    """One memory in one plan: the arena's ``bytes``, the bytes its tensors move per run
    (``traffic``) and what they cost (``traffic_cost``)."""

    bytes: int
    traffic: int
    traffic_cost: int


@dataclass(frozen=True)
class Outcome:
    """One planner's plan of a graph: ``use`` per memory (in the map's order), or ``error``:
    why it has none. ``source``: ``executorch`` (the real planner, from the wheel), ``replica``
    (cpplan's copy of it, where the real one could not run; ``note`` says why) or ``cpplan``.
    ``seconds``: how long it planned (cpplan's: the solve's)."""

    planner: str
    source: str
    use: tuple[MemoryUse, ...] = ()
    error: str = ""
    note: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def traffic_cost(self) -> int | None:
        return None if self.error else sum(u.traffic_cost for u in self.use)

    @property
    def label(self) -> str:
        return self.planner + (" (replica)" if self.source == "replica" else "")


@dataclass(frozen=True)
class TierReport:
    """One graph planned in the memories (``graph`` counts graphs in planning order: ExecuTorch
    plans sub-graphs first, the program's graph last): cpplan's outcome with its ``status``,
    proven ``lower_bound`` on the objective (the traffic cost, plus ``cost x height`` where a
    memory's ``cost`` says so), ``objective`` and ``seconds``, and the other planners'
    outcomes. ``summary`` is the plan's one-line summary (with the conflict when infeasible).
    """

    graph: int
    memories: tuple[Memory, ...]
    mem_ids: tuple[int, ...]
    tensors: int
    cpplan: Outcome
    status: str
    objective: int | None
    lower_bound: int | None
    seconds: float
    others: tuple[Outcome, ...] = ()
    summary: str = ""
    fast_share: float | None = None

    @property
    def gap(self) -> float | None:
        if self.objective is None or self.lower_bound is None:
            return None
        return 0.0 if self.objective == 0 else max(
            0.0, (self.objective - self.lower_bound) / self.objective)

    def outcome(self, planner: str) -> Outcome:
        """The outcome of ``planner`` (``cpplan``, ``banked_greedy``, ...)."""
        for o in (self.cpplan, *self.others):
            if o.planner == planner:
                return o
        raise KeyError(planner)

    def lines(self, verdict: bool = True) -> list[str]:
        """The table the command line prints: per planner, per memory its bytes and the bytes
        moved there, and the traffic cost; then (``verdict``) cpplan's status and bound, or
        why it has no plan."""
        mems = ", ".join(
            f"{m.name} (mem_id {i}, "
            f"{'unbounded' if m.capacity is None else f'{m.capacity} bytes'}, "
            f"traffic cost {m.traffic_cost})"
            for m, i in zip(self.memories, self.mem_ids, strict=True))
        out = [f"graph {self.graph}: {self.tensors} tensors; memories, fastest first: {mems}"]
        width = max(len(o.label) for o in (self.cpplan, *self.others)) + 1
        head = f"{'planner':<{width}}" + "".join(
            f" {m.name + ' bytes':>12} {m.name + ' moved':>13}" for m in self.memories)
        out.append(head + f" {'traffic cost':>14}")
        for o in (*self.others, self.cpplan):
            if not o.ok:
                out.append(f"{o.label:<{width}} fails: {o.error}")
                continue
            cells = "".join(f" {u.bytes:>12} {u.traffic:>13}" for u in o.use)
            out.append(f"{o.label:<{width}}{cells} {o.traffic_cost:>14}")
        for o in self.others:
            if o.note:
                out.append(f"  ({o.planner}: the replica ran: {o.note})")
        if self.objective is None:
            if verdict:
                out.append(f"cpplan: {self.summary}")
            return out
        bound = "?" if self.lower_bound is None else str(self.lower_bound)
        gap = "?" if self.gap is None else f"{100 * self.gap:.2f}%"
        share = "" if self.fast_share is None else (
            f"; {100 * self.fast_share:.1f}% of the bytes moved served by "
            f"{self.memories[0].name}")
        out.append(f"cpplan: {self.status}, objective {self.objective}, lower bound {bound} "
                   f"(gap {gap}), {self.seconds:.1f}s{share}")
        return out


class NoPlanError(CpplanError):
    """No plan fits the memories: proven (``infeasible``, with the tensors that cannot fit
    together) or none found in the time limit (``unknown``). ``report`` is the graph's
    :class:`TierReport`."""

    def __init__(self, message: str, report: TierReport) -> None:
        self.report = report
        super().__init__(message)


class TierAlgorithm:
    """An ExecuTorch memory-planning algorithm (``(alignment, specs, graph_module,
    graph_signature, extra_padding) -> MemoryAlgoResult``) that plans every tensor into one of
    ``memories`` (fastest first, the arenas ``mem_ids``) with cpplan; see the module docstring.

    ``compare``: also run ExecuTorch's planners that choose the memory (their replicas where
    they cannot run). Each call appends a :class:`TierReport` to ``reports``, the problem to
    ``problems`` and cpplan's checked plan to ``plans``. ``solver``: another function with
    :func:`cpplan.solve.solve`'s signature (for tests).
    """

    __name__ = "cpplan_tiers"

    def __init__(self, memories: Sequence[Memory], mem_ids: Sequence[int],
                 time_limit: float = 10.0, *, compare: bool = True,
                 alloc_graph_input: bool = True, alloc_graph_output: bool = True,
                 solver: Callable[..., Plan] | None = None, **solve_options: Any) -> None:
        self.memories = tuple(memories)
        self.mem_ids = tuple(mem_ids)
        self.time_limit = time_limit
        self.compare = compare
        self.alloc_graph_input = alloc_graph_input
        self.alloc_graph_output = alloc_graph_output
        self.solve_options = solve_options
        self._solver = solver
        self.reports: list[TierReport] = []
        self.problems: list[Problem] = []
        self.plans: list[Plan] = []

    def solve(self, problem: Problem) -> Plan:
        return solve_with(self._solver, problem, self.time_limit, self.solve_options)

    def __call__(self, alignment: int, specs: Iterable[Any], graph_module: Any,
                 graph_signature: Any, extra_padding: int = 0) -> Any:
        specs = list(specs)
        graph = len(self.problems)
        pools = memory_pools(self.memories, alignment, extra_padding)
        problem, owners = problem_in_memories(
            specs, graph_module, pools, mem_ids=self.mem_ids, alignment=alignment,
            extra_padding=extra_padding, name=f"graph{graph}")
        others: tuple[Outcome, ...] = ()
        if self.compare:
            others = tuple(executorch_outcomes(
                problem, owners, specs, graph_module, graph_signature, alignment,
                extra_padding, self.memories, self.mem_ids, self.alloc_graph_input,
                self.alloc_graph_output))
        tensors = sum(1 for b in problem.buffers if not b.id.startswith(RESERVED))
        started = time.perf_counter()
        plan = self.solve(problem)
        seconds = time.perf_counter() - started
        if not plan.placements:
            why = "infeasible" if plan.status == "infeasible" else "no plan in the time limit"
            report = TierReport(graph, self.memories, self.mem_ids, tensors,
                                Outcome("cpplan", "cpplan", error=why), plan.status, None,
                                plan.lower_bound, seconds, others, plan.summary())
            what = ("no plan fits within the memories' capacities"
                    if plan.status == "infeasible" else "cpplan found no plan in the time limit")
            raise NoPlanError(f"{what} (graph {graph}): {plan.summary()}", report)
        plan = ensure_valid(problem, plan)
        # An arena is the height, plus the padding ExecuTorch adds to every arena in use.
        arenas = {p: h + (extra_padding if h else 0) for p, h in plan.heights.items()}
        self.problems.append(problem)
        self.plans.append(plan)
        self.reports.append(TierReport(
            graph, self.memories, self.mem_ids, tensors,
            Outcome("cpplan", "cpplan", _uses(plan, self.memories, arenas), seconds=seconds),
            plan.status, plan.objective, plan.lower_bound, seconds, others, plan.summary(),
            plan.fast_share))
        return self._result(problem, owners, plan, arenas)

    def _result(self, problem: Problem, owners: list[Any], plan: Plan,
                arenas: dict[str, int]) -> Any:
        """ExecuTorch's ``MemoryAlgoResult`` of the checked ``plan``: each spec's ``mem_id``,
        offset and a ``mem_obj_id`` shared by specs whose bytes intersect; the arena bytes per
        ``mem_id``."""
        from executorch.exir.memory_planning import MemoryAlgoResult, SpecAllocResult

        mem_id_of = pool_mem_ids(problem)
        entries = [(spec, mem_id_of[plan.placements[b.id].pool], plan.placements[b.id].offset,
                    b.size) for b, spec in zip(problem.buffers, owners, strict=True)
                   if spec is not None]
        objects = storage_objects(entries)
        result = MemoryAlgoResult({}, [])
        for spec, mem_id, off, _size in entries:
            result.spec_dict[spec] = SpecAllocResult(mem_id, objects[id(spec)], off)
        sizes = [0] * (max(mem_id_of.values()) + 1)
        for pool, size in arenas.items():
            sizes[mem_id_of[pool]] = size
        result.bufsizes = sizes
        return result


def _uses(plan: Plan, memories: Sequence[Memory], arena: dict[str, int]) -> tuple[MemoryUse, ...]:
    return tuple(MemoryUse(int(arena.get(m.name, 0)), int(plan.traffic.get(m.name, 0)),
                           int(plan.traffic_cost.get(m.name, 0))) for m in memories)


# -- ExecuTorch's own planners on the same specs ---------------------------------------------------
_FIELDS = ("mem_id", "mem_offset", "mem_obj_id", "alignment")


def executorch_outcomes(problem: Problem, owners: list[Any], specs: list[Any], graph_module: Any,
                        graph_signature: Any, alignment: int, extra_padding: int,
                        memories: Sequence[Memory], mem_ids: Sequence[int],
                        alloc_graph_input: bool = True, alloc_graph_output: bool = True
                        ) -> list[Outcome]:
    """``BankedGreedy`` and the Cadence backend's two planners on ``specs`` (each from the
    specs as they came: every field a planner sets is put back after it), their plans read
    back into ``problem`` and checked; the replica where the real one cannot run."""
    saved = [(spec, tuple(getattr(spec, f) for f in _FIELDS)) for spec in specs]
    names = {id(s): b.id for b, s in zip(problem.buffers, owners, strict=True) if s is not None}

    def restore() -> None:
        for spec, values in saved:
            for f, v in zip(_FIELDS, values, strict=True):
                setattr(spec, f, v)

    runs = [(BANKED, functools.partial(_run_banked, specs, graph_module, graph_signature,
                                       alignment, extra_padding, memories, mem_ids, names)),
            *((name, functools.partial(_run_cadence, algo, specs, graph_module, graph_signature,
                                       alignment, extra_padding, memories, alloc_graph_input,
                                       alloc_graph_output, names))
              for name, algo in ((CADENCE_POSITION, 0), (CADENCE_HEURISTIC, 1)))]
    out = []
    for name, run in runs:
        started = time.perf_counter()
        got: Outcome | tuple[dict[int, tuple[int, int]], list[int]]
        try:
            got = run()
        except _Fails as e:
            got = Outcome(name, "executorch", error=str(e))
        except Exception as e:  # the real planner cannot run here: its replica does
            got = _replica(problem, name, alignment, extra_padding, memories,
                           note=_first_line(e))
        finally:
            restore()
        if not isinstance(got, Outcome):
            got = _read_back(problem, owners, name, *got, memories, mem_ids)
        out.append(replace(got, seconds=time.perf_counter() - started))
    return out


class _Fails(Exception):
    """A real planner's own failure to place a tensor (its message, first line)."""


def _first_line(error: BaseException, limit: int = 160) -> str:
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    text = f"{type(error).__name__}: {text}"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _tried(obj: Any, method: str, box: list) -> None:
    """Record in ``box`` every spec ``obj.method`` is called with (the last one is the tensor
    a failure is about)."""
    inner = getattr(obj, method)

    def wrapped(spec: Any, *args: Any, **kwargs: Any) -> Any:
        box.append(spec)
        return inner(spec, *args, **kwargs)

    setattr(obj, method, wrapped)


def _failure(error: BaseException, tried: list, names: dict[int, str], what: str = "") -> _Fails:
    """A real planner's failure, naming the tensor it could not place (``what``: a shorter
    message than the planner's own)."""
    text = what or _first_line(error, 120)
    if tried:
        spec = tried[-1]
        name = names.get(id(spec), "?")
        text = f"tensor {name!r} ({int(spec.allocated_memory)} bytes): {text}"
    return _Fails(text)


def _run_banked(specs: list[Any], graph_module: Any, graph_signature: Any, alignment: int,
                extra_padding: int, memories: Sequence[Memory], mem_ids: Sequence[int],
                names: dict[int, str]) -> tuple[dict[int, tuple[int, int]], list[int]]:
    """ExecuTorch's ``BankedGreedy``: ``id(spec) -> (mem_id, offset)`` and its bufsizes."""
    from executorch.exir import banked_memory_planning as banked

    target = banked.TargetMemoryMap([
        banked.Bank(m.name, UNBOUNDED if m.capacity is None else m.capacity, i,
                    None if math.lcm(m.alignment, alignment) == alignment
                    else math.lcm(m.alignment, alignment))
        for m, i in zip(memories, mem_ids, strict=True)])
    planner = banked.BankedGreedy(target)
    tried: list = []
    _tried(planner, "_place_free", tried)
    try:
        result = planner(alignment, specs, graph_module, graph_signature, extra_padding)
    except banked.BankPlacementError as e:
        raise _failure(e, tried, names) from None
    return ({id(s): (int(r.mem_id), int(r.mem_offset)) for s, r in result.spec_dict.items()},
            [int(x) for x in result.bufsizes])


def _run_cadence(algo: int, specs: list[Any], graph_module: Any, graph_signature: Any,
                 alignment: int, extra_padding: int, memories: Sequence[Memory],
                 alloc_graph_input: bool, alloc_graph_output: bool, names: dict[int, str]
                 ) -> tuple[dict[int, tuple[int, int]], list[int]]:
    """The Cadence backend's planner ``algo`` (0: ``PositionBasedGreedyWithHierarchy``,
    1: ``GreedyWithHeuristic``) as ``CadenceMemoryPlanning`` builds it, ``CompileMode.MINIMAL``:
    ``id(spec) -> (mem_id in map order, offset)`` and its bufsizes."""
    from executorch.backends.cadence.aot import ops_registrations  # noqa: F401 (its ops)
    from executorch.backends.cadence.aot.memory_planning import CadenceMemoryPlanning
    from executorch.backends.cadence.aot.pass_utils import CompileMode
    from executorch.backends.cadence.aot.utils import MemoryConfig, MemoryPlanningAlgoFailure

    config = MemoryConfig([UNBOUNDED if m.capacity is None else m.capacity for m in memories],
                          [math.lcm(m.alignment, alignment) for m in memories])
    planner = CadenceMemoryPlanning(config, CompileMode.MINIMAL, algo,
                                    alloc_graph_input=alloc_graph_input,
                                    alloc_graph_output=alloc_graph_output).algo
    tried: list = []
    _tried(planner, "plan_spec", tried)
    try:
        with quiet_log("executorch.exir.pass_manager"):  # "PassManager is deprecated"
            bufsizes = planner(alignment, specs, graph_module, graph_signature, extra_padding)
    except (MemoryPlanningAlgoFailure, MemoryError) as e:
        raise _failure(e, tried, names, f"{type(e).__name__}: Cannot fit it in any memory "
                       "hierarchy") from None
    placed = {id(s): (int(s.mem_id), int(s.mem_offset)) for s in specs
              if s.mem_id is not None and s.mem_offset is not None}
    return placed, [int(x) for x in bufsizes]


def _read_back(problem: Problem, owners: list[Any], name: str,
               placements: dict[int, tuple[int, int]], bufsizes: list[int],
               memories: Sequence[Memory], mem_ids: Sequence[int]) -> Outcome:
    """A real planner's placements as a plan of ``problem``, checked by cpplan's checker."""
    if name == BANKED:
        pool_of = {i: m.name for m, i in zip(memories, mem_ids, strict=True)}
        index = {m.name: i for m, i in zip(memories, mem_ids, strict=True)}
    else:  # Cadence numbers the memories 1..N in the map's order
        pool_of = {k + 1: m.name for k, m in enumerate(memories)}
        index = {m.name: k + 1 for k, m in enumerate(memories)}
    mem_id_of = pool_mem_ids(problem)
    for p in problem.pools[len(memories):]:  # pins to undeclared mem_ids
        pool_of[mem_id_of[p.name]] = p.name
    chosen: dict[str, Placement] = {}
    for b, spec in zip(problem.buffers, owners, strict=True):
        if spec is None:
            if b.offset is not None and b.pools:  # reserved space: where it is fixed
                chosen[b.id] = Placement(b.pools[0], b.offset)
            continue
        got = placements.get(id(spec))
        if got is None or got[0] not in pool_of:
            return Outcome(name, "executorch", error=f"left tensor {b.id!r} without a place")
        chosen[b.id] = Placement(pool_of[got[0]], got[1])
    plan = Plan.build(problem, chosen, planner=name)
    bad = check(problem, plan)
    if bad:
        return Outcome(name, "executorch", error=f"its plan is invalid: {bad[0]}")
    arena = {m.name: bufsizes[index[m.name]] if index[m.name] < len(bufsizes) else 0
             for m in memories}
    return Outcome(name, "executorch", _uses(plan, memories, arena))


def _replica(problem: Problem, name: str, alignment: int, extra_padding: int,
             memories: Sequence[Memory], note: str) -> Outcome:
    """cpplan's replica of ``name`` on ``problem`` (what the real one would have done)."""
    from ..planners.registry import get

    try:  # (the problem's capacities leave the padding out already)
        plan = get(REPLICAS[name])(problem, alignment=alignment)
    except CapacityError as e:
        return Outcome(name, "replica", error=_first_line(e), note=note)
    pad = extra_padding if name == BANKED else 0  # (BankedGreedy pads the banks it uses)
    arena = {p: h + (pad if h else 0) for p, h in plan.heights.items()}
    return Outcome(name, "replica", _uses(plan, memories, arena), note=note)


# -- programs on disk ------------------------------------------------------------------------------
def arena_sizes(program: Any) -> list[int]:
    """The arena bytes per ``mem_id`` that the ExecuTorch program (an
    ``ExecutorchProgramManager``) allocates for its first method: its serialised
    ``non_const_buffer_sizes``."""
    return [int(x) for x in program.executorch_program.execution_plan[0].non_const_buffer_sizes]


def check_arenas(sizes: Sequence[int], memories: Sequence[Memory], mem_ids: Sequence[int]
                 ) -> None:
    """Raise :class:`CpplanError` when an arena the program allocates is larger than its
    memory's capacity."""
    for m, i in zip(memories, mem_ids, strict=True):
        got = sizes[i] if i < len(sizes) else 0
        if m.capacity is not None and got > m.capacity:
            raise CpplanError(f"the program's arena mem_id {i} ({m.name}) is {got} bytes, above "
                              f"its capacity {m.capacity}")


def lower_pt2_in_memories(path: Any, memories: Any, time_limit: float = 10.0,
                          alignment: int = 16, *, compare: bool = True,
                          traffic_costs: Sequence[int] | None = None,
                          constant_prop: bool = False, **solve_options: Any
                          ) -> tuple[bytes, list[TierReport], list[int]]:
    """The ExecuTorch program (``.pte`` bytes) of the ExportedProgram at ``path`` planned by
    cpplan in ``memories`` (see :func:`memory_map`), the :class:`TierReport` of every graph
    and the arena bytes per ``mem_id`` read back from the program, each checked against its
    memory's capacity (``constant_prop``: after ExecuTorch's ``constant_prop_pass``).
    :class:`NoPlanError` when no plan fits."""
    from .executorch import _cpplan_error, load_exported, lower, memory_planning_pass

    mems, mem_ids = memory_map(memories, traffic_costs)
    exported = load_exported(path)
    mpp = memory_planning_pass(time_limit, alignment, memories=memories,
                               traffic_costs=traffic_costs, compare_greedy=compare,
                               **solve_options)
    try:
        program = lower(exported, mpp, constant_prop=constant_prop)
    except Exception as e:
        raise _cpplan_error(e, f"{path}: ExecuTorch could not lower it") from None
    sizes = arena_sizes(program)
    check_arenas(sizes, mems, mem_ids)
    return bytes(program.buffer), list(mpp.tiers), sizes

