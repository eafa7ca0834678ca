"""The replicas that choose a memory for every tensor, against the real allocators they copy
(the executorch wheel runs them here): the Cadence backend's ``PositionBasedGreedyWithHierarchy``
and ``GreedyWithHeuristic``, and ``exir/banked_memory_planning.py``'s ``BankedGreedy``.

* Real programs: torchvision models and a small BERT, exported with ``torch.export`` and lowered
  by ``to_executorch``; the graph that reaches memory planning is kept and planned again by the
  real pass (``CadenceMemoryPlanning``, ``banked_memory_planning_pass``) under memory maps whose
  capacities force spilling, or leave a tensor no room at all. The problem is taken from the
  specs the real algorithm is handed (:func:`cpplan.runtimes.executorch.problem_in_memories`,
  before it runs); the replica must give every tensor the memory and offset the original gave
  it, or fail on the tensor where the original aborts.
* Random problems: the real algorithms run on tensor specs made from random problems (pins,
  blocked memories, alignments, small memories), against the replica on the same problem.

Needs ``cpplan[executorch]`` (skipped without it, failed under CI).
"""

from __future__ import annotations

import copy
import functools
import re
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.shared import require

torch = require("torch", "executorch")
require("torchvision", "executorch")
require("executorch.exir", "executorch")

from executorch.backends.cadence.aot import ops_registrations  # noqa: E402, F401  (cadence ops)
from executorch.backends.cadence.aot.memory_constraints import MemConstraints  # noqa: E402
from executorch.backends.cadence.aot.memory_planning import (  # noqa: E402
    CadenceMemoryPlanning,
    GreedyWithHeuristic,
    PositionBasedGreedyWithHierarchy,
)
from executorch.backends.cadence.aot.memory_planning_algo import (  # noqa: E402
    MemoryPlanningState,
)
from executorch.backends.cadence.aot.pass_utils import CompileMode  # noqa: E402
from executorch.backends.cadence.aot.utils import MemoryConfig  # noqa: E402
from executorch.exir import banked_memory_planning as banked  # noqa: E402
from executorch.exir.tensor import TensorSpec  # noqa: E402

from cpplan.bounds import max_load  # noqa: E402
from cpplan.errors import CapacityError  # noqa: E402
from cpplan.plan import check  # noqa: E402
from cpplan.planners.registry import get  # noqa: E402
from cpplan.problem import Buffer, Pool, Problem  # noqa: E402
from cpplan.runtimes import executorch as et  # noqa: E402
from cpplan.runtimes.executorch_models import (  # noqa: E402
    export,
    torchvision_model,
    transformer_model,
)

BIG = 1 << 40  # the last memory: room for everything
CADENCE = {0: "cadence-position-greedy", 1: "cadence-greedy-heuristic"}
PROGRAMS = ["mobilenet_v2", "resnet18", "bert"]
# Memory maps, fastest memory first: (capacity as a share of the program's max-load ("load"),
# of its largest tensor ("largest") or room for everything ("big"), alignment). In "tight" the
# first of the largest tensors fits and a later one has no room; in "tiny" not even the first.
MAPS = {
    "two": [("load", 0.3, 16), ("big", 1, 16)],
    "three": [("load", 0.2, 64), ("load", 0.35, 32), ("big", 1, 16)],
    "tight": [("largest", 1.0, 16), ("largest", 0.6, 16)],
    "tiny": [("load", 0.15, 16), ("load", 0.25, 16)],
}


# -- real programs -------------------------------------------------------------------------------
class _Stop(Exception):
    pass


class _Stage:
    """A memory-planning pass that keeps the graph it is handed (the program as
    ``to_executorch`` hands it to memory planning) and stops the lowering there."""

    def __init__(self) -> None:
        self.graph = None
        self.signature = None

    def run(self, graph_module, graph_signature=None):
        self.graph = copy.deepcopy(graph_module)
        self.signature = copy.deepcopy(graph_signature)
        raise _Stop

    def fresh(self):
        """A copy of the graph whose specs carry no plan (a copy of a graph module shares the
        specs of its nodes, which every planning run fills in)."""
        graph = copy.deepcopy(self.graph)
        for node in graph.graph.nodes:
            specs = node.meta.get("spec")
            for spec in specs if isinstance(specs, (list, tuple)) else [specs]:
                if isinstance(spec, TensorSpec):
                    spec.init_mem_planning_fields()
                    spec.realign(16)
        return graph


@functools.cache
def stage(name: str) -> _Stage:
    from executorch.exir import ExecutorchBackendConfig

    if name == "bert":
        model, inputs = transformer_model(layers=1, hidden=32, heads=2, tokens=8)
    else:
        model, inputs = torchvision_model(name, 32, batches=1)
    edge = et.edge_program(export(model, inputs), constant_prop=True)
    kept = _Stage()
    with pytest.raises(_Stop):
        edge.to_executorch(ExecutorchBackendConfig(memory_planning_pass=kept))
    return kept


@functools.cache
def sizes(name: str) -> tuple[int, int]:
    """(max-load, largest tensor) of the program's arena, in bytes."""
    s = stage(name)
    captured = []
    pass_ = CadenceMemoryPlanning(MemoryConfig([BIG], [16]), CompileMode.MINIMAL, 0)
    pass_.algo = _Capture(pass_.algo, [Pool("m1", capacity=BIG, alignment=16)], captured)
    pass_.run(s.fresh(), s.signature)
    problem = captured[0][0]
    return max_load(problem)["m1"].bytes, max(b.size for b in problem.buffers)


def memories(name: str, layout: str) -> list[Pool]:
    load, largest = sizes(name)
    out = []
    for k, (of, share, align) in enumerate(MAPS[layout]):
        whole = load if of == "load" else largest
        cap = BIG if of == "big" else -(-int(share * whole) // 64) * 64
        out.append(Pool(f"m{k + 1}", capacity=cap, alignment=align))
    return out


class _Capture:
    """Wraps a real algorithm: builds the problem from the specs it is handed (before it runs,
    so that what it sees is untouched) and remembers the last spec it placed."""

    def __init__(self, inner, pools: list[Pool], out: list, mem_ids=None) -> None:
        self.inner = inner
        self.pools = pools
        self.out = out
        self.mem_ids = mem_ids
        self.__name__ = getattr(inner, "__name__", "algo")

    def __call__(self, alignment, specs, graph_module, graph_signature, extra_padding=0):
        specs = list(specs)
        problem, owners = et.problem_in_memories(specs, graph_module, self.pools,
                                                 mem_ids=self.mem_ids, alignment=alignment)
        self.out.append((problem, owners))
        return self.inner(alignment, specs, graph_module, graph_signature, extra_padding)


def _last_spec(obj, method: str, box: list) -> None:
    """Record in ``box`` each spec ``obj.method`` is called with (the one an abort names)."""
    inner = getattr(obj, method)

    def wrapped(spec, *args, **kwargs):
        box.append(spec)
        return inner(spec, *args, **kwargs)

    setattr(obj, method, wrapped)


def compare(problem, owners, pools, name, failure, mem_id_pool):
    """The replica on ``problem`` against the real outcome: every spec's memory and offset,
    or the same failing tensor. Returns how many tensors agreed."""
    index = {id(s): b.id for b, s in zip(problem.buffers, owners, strict=True) if s is not None}
    if failure is not None:
        with pytest.raises(CapacityError) as err:
            get(name)(problem)
        assert re.search(r"buffer '([^']*)'", str(err.value))[1] == index[id(failure)]
        return 0
    plan = get(name)(problem)
    assert check(problem, plan) == []
    agreed = 0
    for b, spec in zip(problem.buffers, owners, strict=True):
        if spec is None:
            continue
        assert plan.placements[b.id] == (mem_id_pool[spec.mem_id], spec.mem_offset), b.id
        agreed += 1
    assert agreed == len(index)
    return agreed


def run_cadence(program: str, layout: str, algo: int):
    pools = memories(program, layout)
    s = stage(program)
    captured: list = []
    config = MemoryConfig([p.capacity for p in pools], [p.alignment for p in pools])
    pass_ = CadenceMemoryPlanning(config, CompileMode.MINIMAL, algo)
    tried: list = []
    _last_spec(pass_.algo, "plan_spec", tried)
    pass_.algo = _Capture(pass_.algo, pools, captured)
    failure = None
    try:
        pass_.run(s.fresh(), s.signature)
    except Exception as e:  # MemoryPlanningAlgoFailure, wrapped by the pass
        if "Cannot fit" not in str(e) and "Cannot fit" not in str(e.__cause__):
            raise
        failure = tried[-1]
    (problem, owners), = captured
    return problem, owners, pools, failure


@pytest.mark.parametrize("algo", [0, 1], ids=["position", "heuristic"])
@pytest.mark.parametrize("layout", list(MAPS))
@pytest.mark.parametrize("program", PROGRAMS)
def test_cadence_replica_places_every_tensor_where_cadence_does(program, layout, algo):
    problem, owners, pools, failure = run_cadence(program, layout, algo)
    mem_id_pool = {k + 1: p.name for k, p in enumerate(pools)}
    agreed = compare(problem, owners, pools, CADENCE[algo], failure, mem_id_pool)
    if failure is None and layout in ("two", "three"):
        used = {mem_id_pool[s.mem_id] for s in owners if s is not None}
        assert agreed > 20 and len(used) >= 2  # it spilled: the comparison covers several pools


@pytest.mark.parametrize("program", PROGRAMS)
def test_the_tight_maps_make_cadence_abort(program):
    """The failure comparisons are exercised: in "tight" Cadence aborts on a tensor after
    placing others, in "tiny" on the first."""
    problem, owners, _, failure = run_cadence(program, "tight", 0)
    assert failure is not None and any(s.mem_id is not None for s in owners if s is not failure)
    assert run_cadence(program, "tiny", 0)[3] is not None


def run_banked(program: str, layout: str, alignments: tuple = ()):
    pools = memories(program, layout)
    if alignments:
        pools = [Pool(p.name, p.capacity, a) for p, a in zip(pools, alignments, strict=True)]
    # Sparse, out-of-order mem_ids: the map's order is the preference, the id the identity.
    mem_ids = [3, 1, 4][:len(pools)]
    bank_list = [banked.Bank(p.name, p.capacity, m, p.alignment if p.alignment != 16 else None)
                 for p, m in zip(pools, mem_ids, strict=True)]
    mpp = banked.banked_memory_planning_pass(banked.TargetMemoryMap(bank_list))
    suite = mpp.memory_planning_algo
    planner = suite.algo_list[0]
    tried: list = []
    _last_spec(planner, "_place_free", tried)
    captured: list = []
    suite.algo_list[0] = _Capture(planner, pools, captured, mem_ids)
    s = stage(program)
    failure = None
    try:
        mpp.run(s.fresh(), s.signature)
    except banked.BankPlacementError:
        failure = tried[-1]
    (problem, owners), = captured
    return problem, owners, pools, failure, dict(zip(mem_ids, (p.name for p in pools),
                                                      strict=True))


@pytest.mark.parametrize("layout", list(MAPS))
@pytest.mark.parametrize("program", PROGRAMS)
def test_banked_replica_places_every_tensor_where_executorch_does(program, layout):
    problem, owners, pools, failure, mem_id_pool = run_banked(program, layout)
    agreed = compare(problem, owners, pools, "executorch-banked-greedy", failure, mem_id_pool)
    if failure is None and layout in ("two", "three"):
        assert agreed > 20 and len({s.mem_id for s in owners if s is not None}) >= 2


@pytest.mark.parametrize("program", PROGRAMS)
def test_banked_replica_realigns_to_each_bank(program):
    """Banks of their own alignment (64 and 32 bytes): sizes are rounded up per bank."""
    problem, owners, pools, failure, mem_id_pool = run_banked(program, "three", (64, 32, 16))
    assert failure is None
    compare(problem, owners, pools, "executorch-banked-greedy", None, mem_id_pool)


@pytest.mark.parametrize("program", PROGRAMS)
def test_the_tight_maps_make_the_banked_planner_abort(program):
    assert all(run_banked(program, layout)[3] is not None for layout in ("tight", "tiny"))


# -- random problems ------------------------------------------------------------------------------
@st.composite
def tier_problems(draw, banks: bool = False) -> Problem:
    """Plain buffers over one to three memories of random sizes and alignments; buffers may
    go anywhere, be pinned to one memory or (Cadence) kept out of some."""
    n_pools = draw(st.integers(1, 3))
    pools = []
    for k in range(n_pools):
        cap = draw(st.integers(1 if banks else 0, 300))
        if k == n_pools - 1 and draw(st.booleans()):
            cap = BIG
        pools.append(Pool(f"m{k + 1}", capacity=cap,
                          alignment=draw(st.sampled_from([1, 1, 2, 4, 8, 16]))))
    names = [p.name for p in pools]
    buffers = []
    for k in range(draw(st.integers(0, 10))):
        size = draw(st.one_of(st.just(0), st.integers(1, 90)))
        start = draw(st.integers(0, 8))
        cands: tuple[str, ...] = ()
        if n_pools > 1 and draw(st.integers(0, 2)) == 0:
            cands = tuple(draw(st.permutations(names))[:1 if banks else draw(
                st.integers(1, n_pools))])
        buffers.append(Buffer(f"t{k}", size, start, start + draw(st.integers(1, 5)),
                              pools=cands))
    return Problem(buffers, pools)


def specs_of(problem: Problem) -> list:
    out = []
    for b in problem.buffers:
        spec = TensorSpec(torch.uint8, [b.size])
        spec.realign(1)  # allocated_memory is the size itself
        spec.lifetime = [b.start, b.end - 1]
        out.append(spec)
    return out


def real_cadence(problem: Problem, cls) -> tuple[list, object]:
    """The specs after the real algorithm ran on ``problem``, and the spec it aborted on."""
    specs = specs_of(problem)
    names = [p.name for p in problem.pools]
    config = MemoryConfig([p.capacity for p in problem.pools],
                          [p.alignment for p in problem.pools])
    algo = cls(config)
    constraints = MemConstraints()
    for b, spec in zip(problem.buffers, specs, strict=True):
        if len(b.pools) == 1 and len(names) > 1:
            node = types.SimpleNamespace(meta={"spec": spec})
            constraints.add_absolute_placement_constraint(node, names.index(b.pools[0]) + 1)
        elif b.pools:
            for k, name in enumerate(names):
                if name not in b.pools:
                    constraints.add_mem_id_to_blocklist(spec, k + 1)
    tried: list = []
    _last_spec(algo, "plan_spec", tried)
    try:
        algo.plan_with_constraints(specs, None, None, MemoryPlanningState(config), constraints)
    except Exception as e:
        if "Cannot fit" not in str(e):
            raise
        return specs, tried[-1]
    return specs, None


def real_banked(problem: Problem, monkeypatch) -> tuple[list, object]:
    specs = specs_of(problem)
    names = [p.name for p in problem.pools]
    for b, spec in zip(problem.buffers, specs, strict=True):
        if b.pools:
            spec.mem_id = names.index(b.pools[0]) + 1
    target = banked.TargetMemoryMap([banked.Bank(p.name, p.capacity, k + 1, p.alignment)
                                     for k, p in enumerate(problem.pools)])
    planner = banked.BankedGreedy(target)
    tried: list = []
    _last_spec(planner, "_place_free", tried)
    pick = banked.pick_shared_obj

    def picked(objects, spec, *args):
        tried.append(spec)
        return pick(objects, spec, *args)

    monkeypatch.setattr(banked, "pick_shared_obj", picked)
    try:
        result = planner(1, specs, types.SimpleNamespace(), None, 0)
    except banked.BankPlacementError:
        return specs, tried[-1]
    for spec in specs:
        got = result.spec_dict[spec]
        spec.mem_id, spec.mem_offset = got.mem_id, got.mem_offset
    return specs, None


def same_outcome(problem: Problem, specs: list, failure, name: str, **options) -> None:
    try:
        plan = get(name)(problem, **options)
    except CapacityError as err:
        assert failure is not None, f"{name} failed where the original did not: {err}"
        bid = re.search(r"buffer '([^']*)'", str(err))[1]
        assert bid == problem.buffers[specs.index(failure)].id
        return
    assert failure is None, f"the original aborted on {failure}, {name} did not"
    assert check(problem, plan) == []
    for b, spec in zip(problem.buffers, specs, strict=True):
        assert plan.placements[b.id] == (problem.pools[spec.mem_id - 1].name,
                                         spec.mem_offset), b.id


@pytest.mark.parametrize("cls", [PositionBasedGreedyWithHierarchy, GreedyWithHeuristic],
                         ids=["position", "heuristic"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=tier_problems())
def test_cadence_replicas_match_the_real_algorithms_on_random_problems(cls, problem):
    specs, failure = real_cadence(problem, cls)
    name = CADENCE[0 if cls is PositionBasedGreedyWithHierarchy else 1]
    same_outcome(problem, specs, failure, name)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(problem=tier_problems(banks=True))
def test_banked_replica_matches_banked_greedy_on_random_problems(problem, monkeypatch):
    specs, failure = real_banked(problem, monkeypatch)
    same_outcome(problem, specs, failure, "executorch-banked-greedy", alignment=1)
