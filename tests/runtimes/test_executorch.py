"""ExecuTorch runs the programs cpplan plans: real torchvision models and a transformer built
from a configuration, each lowered twice (ExecuTorch's default greedy plan, cpplan's plan) and
run in ``executorch.runtime``. Needs ``cpplan[executorch]`` (skipped without it, failed under
CI). Inputs are 64 x 64 to keep the suite fast; ``benchmarks/executorch.py`` measures 224 x 224.
"""

from __future__ import annotations

import functools

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
    for pool in problem.pools:
        assert plan.heights[pool.name] == sizes[-1][int(pool.name[3:])]


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
    got = runner.invoke(main, ["executorch", str(pt2), "-o", str(tmp_path / "m.pte"),
                               "--time-limit", "5"])
    assert got.exit_code == 0, got.output
    assert "greedy" in got.output and "optimal" in got.output
    out = run((tmp_path / "m.pte").read_bytes(), inputs)[0]
    torch.testing.assert_close(out, model(*inputs), rtol=1e-3, atol=1e-4)

    got = runner.invoke(main, ["extract", str(pt2), "-o", str(tmp_path / "p.json")])
    assert got.exit_code == 0, got.output
    problem = read_problem(tmp_path / "p.json")
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


def test_bad_alignment_is_a_clear_error():
    with pytest.raises(CpplanError, match="alignment"):
        et.memory_planning_pass(alignment=0)
