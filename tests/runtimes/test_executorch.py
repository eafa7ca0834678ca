"""ExecuTorch runs the programs cpplan plans: real torchvision models and a transformer built
from a configuration, each lowered twice (ExecuTorch's default greedy plan, cpplan's plan) and
run in ``executorch.runtime``. Needs ``cpplan[executorch]`` (skipped without it, failed under
CI). Inputs are 64 x 64 to keep the suite fast; ``benchmarks/executorch.py`` measures 224 x 224.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util

import pytest

from tests.shared import require

torch = require("torch", "executorch")
require("torchvision", "executorch")
require("executorch.exir", "executorch")

from cpplan.bounds import max_load  # noqa: E402
from cpplan.errors import CpplanError, PlanError  # noqa: E402
from cpplan.plan import Plan, check  # noqa: E402
from cpplan.planners.registry import get  # noqa: E402
from cpplan.runtimes import executorch as et  # noqa: E402
from cpplan.runtimes.executorch_models import (  # noqa: E402
    export,
    torchvision_model,
    transformer_model,
)

SIZE = 64
# (model, constant_prop): with constant propagation the transposed classifier weight (4 MB)
# stops being computed into the arena, and the activations decide it.
MODELS = [("mobilenet_v3_small", True), ("densenet121", True), ("shufflenet_v2_x1_0", False),
          ("mobilenet_v2", True), ("resnet18", False), ("efficientnet_b0", True),
          ("bert", False)]


def run(pte: bytes, inputs) -> list:
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(pte).load_method("forward")
    return list(method.execute(list(inputs)))


def model_of(name: str):
    if name == "bert":
        return transformer_model(layers=2, hidden=64, heads=4, tokens=16)
    return torchvision_model(name, SIZE)


@functools.cache
def lowered(name: str, constant_prop: bool):
    """Both lowerings of one model: ExecuTorch's default (captured: problems and greedy's
    sizes) and cpplan's (the pass, to read its reports)."""
    model, inputs = model_of(name)
    edge = et.edge_program(export(model, inputs), constant_prop=constant_prop)
    problems, sizes, default_pte = et.greedy_problems(edge)
    mpp = et.memory_planning_pass(time_limit=5, deterministic=True)
    program = et.lower(edge, mpp)
    return model, inputs, problems, sizes, default_pte, mpp, program


@pytest.mark.parametrize("name,constant_prop", MODELS, ids=[m for m, _ in MODELS])
def test_cpplan_plan_runs_in_executorch_with_identical_outputs(name, constant_prop):
    model, inputs, problems, sizes, default_pte, mpp, program = lowered(name, constant_prop)
    ours = run(bytes(program.buffer), inputs)
    theirs = run(default_pte, inputs)
    assert len(ours) == len(theirs) >= 1
    for a, b in zip(ours, theirs, strict=True):
        assert torch.equal(a, b)
    with torch.no_grad():
        eager = model(*inputs)
    # The programs compute the model. Batch-norm statistics are filled, so outputs are far from
    # the 1e-15 of a fresh network (the smallest, 1e-5, are mobilenet_v3's: torchvision
    # initialises its classifier with std 0.01).
    scale = float(eager.abs().max())
    assert scale > 1e-5
    torch.testing.assert_close(ours[0], eager, rtol=1e-3, atol=1e-3 * scale)

    (arena,) = [a for a in mpp.arenas if a.mem_id == 1]
    greedy = sizes[-1][1]
    assert arena.greedy_bytes == greedy
    assert arena.bytes <= greedy
    # The max-load of the problem (computed here, not taken from the report) is reached.
    assert arena.bytes == max_load(mpp.cpplan.problems[-1])["mem1"].bytes == arena.lower_bound
    assert arena.status == "optimal"
    # What ExecuTorch serialised is cpplan's arena.
    gm = program.exported_program().graph_module
    assert gm.meta["non_const_buffer_sizes"][1] == arena.bytes


@pytest.mark.parametrize("name,constant_prop", MODELS, ids=[m for m, _ in MODELS])
def test_plan_passes_executorchs_verifier(name, constant_prop):
    from executorch.exir.memory_planning import Verifier

    *_, program = lowered(name, constant_prop)
    ep = program.exported_program()
    pairs = Verifier(ep.graph_module, True, True, True,
                     ep.graph_signature).verify_storage_reuse()
    assert pairs > 0  # storage is reused, and every reuse is one ExecuTorch accepts


@pytest.mark.parametrize("name,constant_prop", MODELS, ids=[m for m, _ in MODELS])
def test_replica_reproduces_executorch_greedy(name, constant_prop):
    """Golden: the replica's arena on the extracted problem is the bytes ExecuTorch's own
    greedy allocated for the same program."""
    _, _, problems, sizes, *_ = lowered(name, constant_prop)
    problem = problems[-1]
    plan = get("executorch-greedy")(problem)
    assert check(problem, plan) == []
    mem_ids = et.pool_mem_ids(problem)
    for pool in problem.pools:
        assert plan.heights[pool.name] == sizes[-1][mem_ids[pool.name]]


def test_saves_memory_where_greedy_leaves_it():
    """On these models ExecuTorch's greedy is above the bound, and cpplan reaches it."""
    saved = {name: lowered(name, cp)[5].arenas[-1].saved for name, cp in MODELS}
    assert saved["mobilenet_v3_small"] > 0 and saved["densenet121"] > 0
    assert saved["bert"] > 0


# -- sub-graphs ------------------------------------------------------------------------------------
class Branchy(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(64, 64)

    def forward(self, x, p):
        y = torch.relu(self.linear(x)) * 2

        def yes(y):
            return torch.sin(y.T @ y).sum(0, keepdim=True) + y

        def no(y):
            return torch.cos(y) - y.mean()

        z = torch.cond(p.sum() > 0, yes, no, (y,))
        return torch.tanh(z + x) + y


def test_cond_sub_graphs_keep_their_reserved_space():
    torch.manual_seed(0)
    model, x = Branchy().eval(), torch.randn(8, 64)
    edge = et.edge_program(export(model, (x, torch.ones(1))))
    _, sizes, default_pte = et.greedy_problems(edge)
    mpp = et.memory_planning_pass(time_limit=2, deterministic=True)
    pte = bytes(et.lower(edge, mpp).buffer)
    main = mpp.cpplan.problems[-1]
    reserved = [b for b in main.buffers if b.id.startswith(et.RESERVED)]
    # The branches' arena is reserved at offset 0 while the cond node runs, not all along.
    (space,) = reserved
    assert space.offset == 0 and space.end - space.start == 1
    assert space.size == max(s[1] for s in sizes[:-1])
    assert mpp.arenas[-1].bytes <= sizes[-1][1]
    for p in (torch.ones(1), -torch.ones(1)):
        ours, theirs = run(pte, (x, p)), run(default_pte, (x, p))
        assert torch.equal(ours[0], theirs[0])
        torch.testing.assert_close(ours[0], model(x, p), rtol=1e-4, atol=1e-5)


class Accumulate(torch.nn.Module):
    """A mutable buffer (state kept across calls) beside ordinary activations."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.zeros(4, 8))
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = torch.relu(self.linear(x))
        self.total.add_(y)
        return self.total * 2 + y


@pytest.mark.parametrize("alloc_graph_input", [True, False])
def test_mutable_state_and_inputs_left_to_the_runtime(alloc_graph_input):
    torch.manual_seed(0)
    model, x = Accumulate().eval(), torch.randn(4, 8)
    edge = et.edge_program(export(model, (x,)))
    _, sizes, default_pte = et.greedy_problems(edge)
    mpp = et.memory_planning_pass(time_limit=1, alloc_graph_input=alloc_graph_input)
    pte = bytes(et.lower(edge, mpp).buffer)
    assert mpp.arenas[-1].bytes <= mpp.arenas[-1].greedy_bytes
    ids = [b.id for b in mpp.cpplan.problems[-1].buffers]
    assert ("x" in ids) == alloc_graph_input
    from executorch.runtime import Runtime

    ours = Runtime.get().load_program(pte).load_method("forward")
    theirs = Runtime.get().load_program(default_pte).load_method("forward")
    for _ in range(3):  # the state accumulates the same way in both programs
        assert torch.equal(ours.execute([x])[0], theirs.execute([x])[0])


def test_never_above_greedy_even_with_a_weak_solver():
    """ExecuTorch's greedy plan is every buffer's hint: with only the no-reuse planner and no
    exact search, cpplan's arena is still no larger than greedy's."""
    from cpplan.planners.registry import get as planner

    torch.manual_seed(0)
    edge = et.edge_program(export(Accumulate().eval(), (torch.randn(4, 8),)))
    mpp = et.memory_planning_pass(time_limit=1, planners=["naive"], exact=False)
    et.lower(edge, mpp)
    problem, arena = mpp.cpplan.problems[-1], mpp.arenas[-1]
    assert planner("naive")(problem).heights["mem1"] > arena.greedy_bytes
    assert arena.bytes <= arena.greedy_bytes


# -- the checks have teeth ---------------------------------------------------------------------
def all_at_zero(problem, **options):
    """A planner gone wrong: every buffer at offset 0 (never checked)."""
    return Plan.build(problem, {b.id: (b.pools[0], 0) for b in problem.buffers}, planner="bad")


def test_overlapping_plan_is_caught_before_anything_is_written(tmp_path):
    model, inputs = torchvision_model("resnet18", 32)
    path = tmp_path / "r.pt2"
    torch.export.save(export(model, inputs), str(path))
    with pytest.raises(PlanError, match="share bytes"):
        et.lower_pt2(path, time_limit=1, solver=all_at_zero)
    # Through the pass as a user installs it, too.
    with pytest.raises(Exception) as info:
        et.lower(torch.export.load(str(path)),
                 et.memory_planning_pass(time_limit=1, solver=all_at_zero))
    assert isinstance(et._cpplan_error(info.value, ""), PlanError)


def test_executorch_itself_runs_an_overlapping_plan_and_computes_garbage():
    """Why the checker matters, and proof that the output comparison above can fail: the same
    all-at-zero plan handed to ExecuTorch directly (no cpplan check) runs, and its outputs are
    wrong."""
    from executorch.exir.memory_planning import (
        MemoryAlgoResult,
        MemoryPlanningAlgorithmSuite,
        SpecAllocResult,
    )
    from executorch.exir.passes import MemoryPlanningPass

    def zeros(alignment, specs, graph_module, graph_signature, extra_padding=0):
        specs = list(specs)
        result = MemoryAlgoResult({}, [])
        for k, spec in enumerate(specs):
            spec.realign(alignment)
            result.spec_dict[spec] = SpecAllocResult(1, k, 0)
        result.bufsizes = [0, max((s.allocated_memory for s in specs), default=0)]
        return result

    model, inputs, _, _, default_pte, *_ = lowered("resnet18", False)
    edge = et.edge_program(export(model, inputs))
    bad = et.lower(edge, MemoryPlanningPass(MemoryPlanningAlgorithmSuite(algo_list=[zeros])))
    wrong = run(bytes(bad.buffer), inputs)[0]
    right = run(default_pte, inputs)[0]
    assert not torch.equal(wrong, right)


# -- the command line ------------------------------------------------------------------------------
def test_cli_executorch_and_extract(tmp_path):
    from click.testing import CliRunner

    from cpplan.cli import main
    from cpplan.io import read_problem

    model, inputs = torchvision_model("mobilenet_v3_small", SIZE)
    pt2 = tmp_path / "m.pt2"
    torch.export.save(export(model, inputs), str(pt2))
    runner = CliRunner()
    view = ["--view", str(tmp_path / "m.html")] if importlib.util.find_spec("bokeh") else []
    got = runner.invoke(main, ["executorch", str(pt2), "-o", str(tmp_path / "m.pte"),
                               "--time-limit", "5", *view])
    assert got.exit_code == 0, got.output
    assert "greedy" in got.output and "optimal" in got.output
    if view:  # the page of ExecuTorch's greedy plan beside cpplan's
        page = (tmp_path / "m.html").read_text()
        assert "ExecuTorch greedy" in page and "cpplan" in page
    out = run((tmp_path / "m.pte").read_bytes(), inputs)[0]
    torch.testing.assert_close(out, model(*inputs), rtol=1e-3, atol=1e-4)

    got = runner.invoke(main, ["extract", str(pt2), "-o", str(tmp_path / "p.json")])
    assert got.exit_code == 0, got.output
    problem = read_problem(tmp_path / "p.json")
    assert problem.meta["mem_ids"] == {"mem1": 1}  # carried as data, never parsed from a name
    greedy = problem.meta["executorch_greedy_bytes"]["mem1"]
    assert get("executorch-greedy")(problem).heights["mem1"] == greedy
    assert all(b.alignment == 16 and b.size % 16 == 0 for b in problem.buffers)

    got = runner.invoke(main, ["executorch", str(tmp_path / "p.json"), "-o",
                               str(tmp_path / "x.pte")])
    assert got.exit_code == 2 and "not an ExportedProgram" in got.output
    assert not (tmp_path / "x.pte").exists()


# -- pieces --------------------------------------------------------------------------------------
def test_storage_objects_group_intersecting_ranges():
    a, b, c, d, e = (object() for _ in range(5))
    ids = et.storage_objects([(a, 1, 0, 32), (b, 1, 16, 32), (c, 1, 48, 16), (d, 1, 0, 0),
                              (e, 2, 0, 32)])
    assert ids[id(a)] == ids[id(b)]  # [0, 32) and [16, 48) intersect
    assert ids[id(c)] != ids[id(a)]  # [48, 64) only touches
    assert len({ids[id(x)] for x in (a, c, d, e)}) == 4


def test_mem_ids_are_data_not_names():
    """A pool's mem_id is what the problem carries, whatever the pool is called."""
    from cpplan.problem import Buffer, Pool, Problem

    problem = Problem((Buffer("a", 16, 0, 1),), (Pool("sram"), Pool("mem7")),
                      meta={"mem_ids": {"sram": 3, "mem7": 1}})
    assert et.pool_mem_ids(problem) == {"sram": 3, "mem7": 1}
    with pytest.raises(CpplanError, match="mem_id"):
        et.pool_mem_ids(problem.replace(meta={}))


def test_bad_alignment_is_a_clear_error():
    with pytest.raises(CpplanError, match="alignment"):
        et.memory_planning_pass(alignment=0)


# -- memory tiers: cpplan chooses each tensor's memory --------------------------------------------
TIER_MODELS = ["mobilenet_v3_small", "resnet18", "shufflenet_v2_x1_0", "mobilenet_v2", "bert",
               "llama"]


def tier_model(name: str):
    """(model, inputs, edge program) for the tier tests: the CNNs at 64 x 64 after
    constant_prop_pass, a two-layer BERT, a one-layer Llama decoder with its static KV cache."""
    from cpplan.runtimes.executorch_models import llama_decoder

    if name == "llama":
        model, inputs = llama_decoder(layers=1, tokens=8)
        return model, inputs, et.edge_program(export(model, inputs, strict=True),
                                              constant_prop=True)
    model, inputs = model_of(name)
    return model, inputs, et.edge_program(export(model, inputs), constant_prop=True)


@functools.cache
def tier_lowered(name: str, sram_share: float = 0.25):
    """The model lowered twice: ExecuTorch's default program, and cpplan's in two memories,
    SRAM (traffic cost 1) at ``sram_share`` of the arena's max-load and DRAM (cost 4)
    unbounded."""
    from cpplan.memories import Memory

    model, inputs, edge = tier_model(name)
    problems, _, default_pte = et.greedy_problems(edge)
    load = max_load(problems[-1])["mem1"].bytes
    memories = [Memory("sram", int(load * sram_share) // 64 * 64, 1), Memory("dram", None, 4)]
    mpp = et.memory_planning_pass(time_limit=10, memories=memories)
    program = et.lower(edge, mpp)
    return model, inputs, default_pte, memories, mpp, program


def planned_specs(program) -> dict:
    """``node name -> (mem_id, mem_offset)`` of every planned tensor in the lowered program."""
    from executorch.exir.memory_planning import get_node_tensor_specs

    out = {}
    for node in program.exported_program().graph_module.graph.nodes:
        specs = get_node_tensor_specs(node)
        for k, spec in enumerate(specs):
            if spec.mem_id is not None and not spec.const:
                out.setdefault(node.name if len(specs) == 1 else f"{node.name}.{k}",
                               (spec.mem_id, spec.mem_offset))
    return out


@pytest.mark.parametrize("name", TIER_MODELS)
def test_two_memory_plan_runs_in_executorch_with_identical_outputs(name):
    from executorch.exir.memory_planning import Verifier

    from cpplan.runtimes.executorch_tiers import arena_sizes

    _, inputs, default_pte, memories, mpp, program = tier_lowered(name)
    ours = run(bytes(program.buffer), inputs)
    theirs = run(default_pte, inputs)
    assert len(ours) == len(theirs) >= 1
    for a, b in zip(ours, theirs, strict=True):
        assert torch.equal(a, b)
    (report,) = mpp.tiers
    problem, plan = mpp.cpplan.problems[-1], mpp.cpplan.plans[-1]
    assert check(problem, plan) == []
    # The program's two arenas are cpplan's, and SRAM's is within its capacity.
    sizes = arena_sizes(program)
    assert len(sizes) == 3
    assert sizes[1] == report.cpplan.use[0].bytes <= memories[0].capacity
    assert sizes[2] == report.cpplan.use[1].bytes > 0  # it spilled: both arenas are used
    assert sizes[1] > 0
    # What ExecuTorch serialised is cpplan's plan: every tensor's memory and offset.
    pool_id = {"sram": 1, "dram": 2}
    got = planned_specs(program)
    for b in problem.buffers:
        if b.id in got:
            pl = plan.placements[b.id]
            assert got[b.id] == (pool_id[pl.pool], pl.offset), b.id
    assert len(got) >= len(problem.buffers) // 2
    ep = program.exported_program()
    assert Verifier(ep.graph_module, True, True, True, ep.graph_signature).verify_storage_reuse()


@pytest.mark.parametrize("name", TIER_MODELS)
def test_traffic_cost_at_or_below_executorchs_planners(name):
    """cpplan's traffic cost is at or below banked_greedy's and both Cadence planners' (run
    for real on the same tensors, their plans checked), and its bound is below all of them."""
    *_, mpp, _ = tier_lowered(name)
    (report,) = mpp.tiers
    others = {o.planner: o for o in report.others}
    assert set(others) == {"banked_greedy", "cadence position", "cadence heuristic"}
    ours = report.cpplan.traffic_cost
    assert ours == report.objective  # (memories cost nothing by height here)
    assert report.lower_bound is not None and report.lower_bound <= ours
    for o in others.values():
        assert o.source == "executorch" and o.ok, o
        assert ours <= o.traffic_cost
        # The traffic columns add up to what the problem says each tensor moves.
        assert sum(u.traffic for u in o.use) == sum(u.traffic for u in report.cpplan.use)
    assert report.status in ("optimal", "feasible")


def test_cpplan_moves_less_than_every_executorch_planner_somewhere():
    """Not a tie everywhere: on these models cpplan's traffic cost is strictly below banked's
    and below Cadence's on some."""
    costs = {n: tier_lowered(n)[4].tiers[0] for n in TIER_MODELS}
    assert any(r.cpplan.traffic_cost < r.outcome("banked_greedy").traffic_cost
               for r in costs.values())
    assert any(r.cpplan.traffic_cost < r.outcome("cadence position").traffic_cost
               for r in costs.values())


def test_traffic_is_bytes_written_and_read_by_each_operator():
    """As cpplan.graph.traffic counts a graph's (the ONNX and TFLite front ends)."""
    class Fan(torch.nn.Module):
        def forward(self, x):
            a = x + 1  # read by three operators
            b = a * 2
            c = a - 3
            return b + c + a

    x = torch.randn(4, 8)
    problems, _, _ = et.greedy_problems(et.edge_program(export(Fan().eval(), (x,))))
    n = x.numel() * 4
    # (the constants 1, 2 and 3 are 4-byte tensors, each written once and read once)
    assert {b.traffic for b in problems[-1].buffers if b.size < n} == {4 * 2}
    moved = {b.id: b.traffic for b in problems[-1].buffers if b.size == n}
    assert moved["x"] == n * 2  # the input: copied in, read by the add
    assert sorted(moved.values()) == [n * 2] * 5 + [n * 4]
    # a: written once, read three times; b, c, b + c: once and once; the output: written once,
    # read once by the caller after the run


def test_three_memories_from_executorchs_target_memory_map():
    """A TargetMemoryMap (sparse mem_ids, a bank alignment of 64) plans as cpplan's memories:
    the arenas are the banks' mem_ids, the outputs identical."""
    from executorch.exir.banked_memory_planning import Bank, TargetMemoryMap

    model, inputs, edge = tier_model("resnet18")
    problems, _, default_pte = et.greedy_problems(edge)
    load = max_load(problems[-1])["mem1"].bytes
    banks = TargetMemoryMap([Bank("tcm", load // 8 // 64 * 64, 3, 64),
                             Bank("sram", load // 4 // 64 * 64, 1), Bank("dram", 1 << 30, 4)])
    mpp = et.memory_planning_pass(time_limit=10, memories=banks, traffic_costs=[1, 2, 8])
    program = et.lower(edge, mpp)
    ours = run(bytes(program.buffer), inputs)
    assert torch.equal(ours[0], run(default_pte, inputs)[0])
    from cpplan.runtimes.executorch_tiers import arena_sizes

    sizes = arena_sizes(program)
    (report,) = mpp.tiers
    assert report.mem_ids == (3, 1, 4) and sizes[2] == 0
    assert [sizes[3], sizes[1], sizes[4]] == [u.bytes for u in report.cpplan.use]
    assert 0 < sizes[3] <= load // 8 and 0 < sizes[1] <= load // 4
    plan = mpp.cpplan.plans[-1]
    assert all(pl.offset % 64 == 0 for pl in plan.placements.values() if pl.pool == "tcm")
    assert report.cpplan.traffic_cost <= min(o.traffic_cost for o in report.others if o.ok)


def test_where_executorchs_planners_fail_cpplan_finds_a_plan():
    """SRAM at a quarter of the decoder's arena and DRAM at the least that can then hold the
    rest (found by cpplan): banked_greedy and both Cadence planners abort, cpplan's plan runs
    with identical outputs and both arenas within their capacities."""
    from cpplan.bounds import total_load
    from cpplan.memories import Memory
    from cpplan.problem import Pool
    from cpplan.runtimes.executorch_tiers import arena_sizes
    from cpplan.solve import solve

    model, inputs, edge = tier_model("llama")
    problems, _, default_pte = et.greedy_problems(edge, memories=[Memory("sram"),
                                                                  Memory("dram")])
    sram = int(total_load(problems[-1]).bytes * 0.25) // 64 * 64
    # The least DRAM with that SRAM: DRAM's height is what costs.
    fewest = solve(problems[-1].replace(pools=(Pool("sram", sram, 16, 0, 0),
                                               Pool("dram", None, 16, 1, 0))), time_limit=10)
    assert fewest.status == "optimal"
    memories = [Memory("sram", sram, 1), Memory("dram", fewest.heights["dram"], 4)]
    mpp = et.memory_planning_pass(time_limit=10, memories=memories)
    program = et.lower(edge, mpp)
    (report,) = mpp.tiers
    for o in report.others:
        assert not o.ok and o.source == "executorch", o
    assert "BankPlacementError" in report.outcome("banked_greedy").error
    assert "Cannot fit" in report.outcome("cadence position").error
    assert report.cpplan.ok
    sizes = arena_sizes(program)
    assert sizes[1] <= memories[0].capacity and sizes[2] <= memories[1].capacity
    for _ in range(2):  # the KV cache is state: a second call agrees too
        assert torch.equal(run(bytes(program.buffer), inputs)[0], run(default_pte, inputs)[0])


def test_memories_too_small_prove_no_plan_naming_the_tensors():
    from cpplan.memories import Memory
    from cpplan.runtimes.executorch_tiers import NoPlanError

    *_, edge = tier_model("bert")
    problems, _, _ = et.greedy_problems(edge)
    load = max_load(problems[-1])["mem1"].bytes
    memories = [Memory("sram", load // 4 // 64 * 64, 1), Memory("dram", load // 2, 4)]
    with pytest.raises(Exception) as info:
        et.lower(edge, et.memory_planning_pass(time_limit=5, memories=memories))
    error = et._cpplan_error(info.value, "")
    assert isinstance(error, NoPlanError)
    report = error.report
    assert report.status == "infeasible" and "cannot fit" in str(error)
    assert not report.cpplan.ok and all(not o.ok for o in report.others)
    problem = problems[-1]
    named = str(error).split(":")[-1].replace("+", ",").split(",")
    ids = {b.id for b in problem.buffers}
    assert any(n.strip() in ids for n in named)


def test_a_memory_executorch_refuses_runs_its_replica():
    """A memory of capacity 0 (none of it for this program): ExecuTorch's TargetMemoryMap
    refuses a bank of size 0, so cpplan's replica of banked_greedy stands in, and says so."""
    from cpplan.memories import Memory

    _, inputs, edge = tier_model("resnet18")
    mpp = et.memory_planning_pass(time_limit=5, memories=[Memory("tcm", 0, 1),
                                                          Memory("dram", None, 4)])
    program = et.lower(edge, mpp)
    (report,) = mpp.tiers
    banked = report.outcome("banked_greedy")
    assert banked.source == "replica" and "non-positive size" in banked.note
    assert report.outcome("cadence position").source == "executorch"
    assert report.cpplan.use[0].bytes == 0 and report.cpplan.use[0].traffic == 0
    assert report.cpplan.traffic_cost == banked.traffic_cost  # everything in DRAM
    assert any("replica" in line for line in report.lines())
    assert run(bytes(program.buffer), inputs)


def test_tier_plan_is_checked_before_executorch_sees_it():
    from cpplan.memories import Memory

    def all_at_zero(problem, **options):
        return Plan.build(problem, {b.id: (problem.pools[0].name, 0)
                                    for b in problem.buffers}, planner="bad")

    *_, edge = tier_model("resnet18")
    with pytest.raises(Exception) as info:
        et.lower(edge, et.memory_planning_pass(
            time_limit=1, memories=[Memory("sram", None, 1)], solver=all_at_zero))
    assert isinstance(et._cpplan_error(info.value, ""), PlanError)


def test_cli_executorch_and_extract_in_memories(tmp_path):
    from click.testing import CliRunner

    from cpplan.cli import main
    from cpplan.io import read_problem

    model, inputs = torchvision_model("mobilenet_v3_small", SIZE)
    pt2 = tmp_path / "m.pt2"
    torch.export.save(export(model, inputs), str(pt2))
    runner = CliRunner()
    args = ["--memory", "sram:24KiB:1", "--memory", "dram::4"]
    got = runner.invoke(main, ["executorch", str(pt2), "-o", str(tmp_path / "m.pte"),
                               "--time-limit", "5", "--constant-prop", *args])
    assert got.exit_code == 0, got.output
    assert "mem_id 2)" in got.output.splitlines()[0]  # the arenas read back from the program
    for word in ("banked_greedy", "cadence position", "cadence heuristic", "cpplan",
                 "lower bound", "sram moved", "traffic cost", "mem_id 2"):
        assert word in got.output
    out = run((tmp_path / "m.pte").read_bytes(), inputs)[0]
    torch.testing.assert_close(out, model(*inputs), rtol=1e-3, atol=1e-4)

    got = runner.invoke(main, ["extract", str(pt2), "-o", str(tmp_path / "p.json"), *args])
    assert got.exit_code == 0, got.output
    problem = read_problem(tmp_path / "p.json")
    assert [(p.name, p.capacity, p.traffic_cost) for p in problem.pools] == [
        ("sram", 24576, 1), ("dram", None, 4)]
    assert all(b.traffic > 0 for b in problem.buffers if b.size)  # (written once at least)
    assert sum(b.traffic for b in problem.buffers) > sum(b.size for b in problem.buffers)
    assert problem.meta["mem_ids"] == {"sram": 1, "dram": 2}
    got = runner.invoke(main, ["solve", str(tmp_path / "p.json"), "--time-limit", "5"])
    assert got.exit_code == 0 and "traffic cost" in got.output

    # Without --memory the problem carries the traffic too.
    got = runner.invoke(main, ["extract", str(pt2), "-o", str(tmp_path / "q.json")])
    assert got.exit_code == 0, got.output
    plain = read_problem(tmp_path / "q.json")
    assert [b.traffic for b in plain.buffers] == [b.traffic for b in problem.buffers]

    # Memories too small: the table, one error line, exit 1, nothing written.
    got = runner.invoke(main, ["executorch", str(pt2), "-o", str(tmp_path / "x.pte"),
                               "--memory", "sram:4KiB:1", "--memory", "dram:8KiB:4"])
    assert got.exit_code == 1
    assert "cannot fit" in got.output and "banked_greedy" in got.output
    assert not (tmp_path / "x.pte").exists()
    for bad, field in ((["--memory", "sram:24Ki:1"], "--memory capacity"),
                       (["--memory", "sram:1:x"], "--memory traffic_cost"),
                       (["--memory", "sram", "--memory", "sram"], "named twice")):
        got = runner.invoke(main, ["executorch", str(pt2), "-o", str(tmp_path / "x.pte"), *bad])
        assert got.exit_code == 2 and field in got.output, got.output
        assert len(got.output.strip().splitlines()) == 1
        assert not (tmp_path / "x.pte").exists()


def test_cond_sub_graphs_in_memories():
    """Each branch of a torch.cond is planned in the memories, and its arenas are reserved at
    the bottom of each memory while the cond runs. The Cadence planners know nothing of that
    space: their plans of the main graph overlap it, and the checker says so."""
    from cpplan.memories import Memory
    from cpplan.runtimes.executorch_tiers import arena_sizes

    torch.manual_seed(0)
    model, x = Branchy().eval(), torch.randn(8, 64)
    edge = et.edge_program(export(model, (x, torch.ones(1))))
    _, _, default_pte = et.greedy_problems(edge)
    memories = [Memory("sram", 2048, 1), Memory("dram", None, 4)]
    mpp = et.memory_planning_pass(time_limit=2, memories=memories)
    program = et.lower(edge, mpp)
    assert len(mpp.tiers) == 3  # both branches, then the program's graph
    main = mpp.tiers[-1]
    reserved = [b for b in mpp.cpplan.problems[-1].buffers if b.id.startswith(et.RESERVED)]
    assert {b.pools for b in reserved} == {("sram",), ("dram",)}
    assert all(b.offset == 0 for b in reserved)
    assert "share bytes" in main.outcome("cadence position").error
    assert main.outcome("banked_greedy").ok
    assert main.cpplan.traffic_cost <= main.outcome("banked_greedy").traffic_cost
    assert arena_sizes(program)[1] <= 2048
    for p in (torch.ones(1), -torch.ones(1)):
        assert torch.equal(run(bytes(program.buffer), (x, p))[0], run(default_pte, (x, p))[0])


# -- the page ------------------------------------------------------------------------------------
def test_compared_plans_for_the_view(tmp_path):
    """``cpplan executorch --view``: ExecuTorch's greedy plan (its own offsets, read from the
    hints cpplan's pass gave every buffer) against cpplan's, both checked."""
    require("bokeh", "view")
    from cpplan.view import differences, write_view

    mpp = lowered("mobilenet_v3_small", True)[5]
    problem, plans = et.compared_plans(mpp.cpplan)
    assert list(plans) == ["ExecuTorch greedy", "cpplan"]
    arena = mpp.arenas[-1]
    assert plans["ExecuTorch greedy"].planner == "executorch-greedy"
    assert plans["ExecuTorch greedy"].heights["mem1"] == arena.greedy_bytes
    assert plans["cpplan"].heights["mem1"] == arena.bytes
    write_view(problem, plans, tmp_path / "view.html")
    assert differences(problem, plans)[0].startswith(
        f"ExecuTorch greedy uses {arena.greedy_bytes:,} bytes, cpplan {arena.bytes:,}: "
        f"{arena.saved:,} bytes")
    # Without greedy's offsets (a problem read from a file): the replica, named so.
    bare = problem.replace(buffers=tuple(dataclasses.replace(b, hint=None)
                                         for b in problem.buffers))
    replica = et.greedy_plan(bare)
    assert replica.planner == "executorch-greedy (replica)"
    assert replica.heights == plans["ExecuTorch greedy"].heights

