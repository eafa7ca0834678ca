"""The torch.fx front end: graphs traced by make_fx, views folded into their base, a training
step of a small network planned and checked (needs torch and torchvision: the exports or
executorch extra)."""

import operator

import pytest

from tests.shared import require

torch = require("torch", "exports")
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402
from torch.multiprocessing.reductions import StorageWeakRef  # noqa: E402

from cpplan.bounds import max_load  # noqa: E402
from cpplan.errors import ProblemError  # noqa: E402
from cpplan.graph import to_problem  # noqa: E402
from cpplan.graph.fx import graph_from_fx, trace_training_step  # noqa: E402
from cpplan.io.minimalloc import problem_to_csv  # noqa: E402
from cpplan.plan import check  # noqa: E402
from cpplan.planners import get  # noqa: E402

VIEWS = {"aten.view.default", "aten._unsafe_view.default", "aten.t.default",
         "aten.transpose.int", "aten.expand.default", "aten.permute.default",
         "aten.alias.default", "aten.detach.default", "aten.slice.Tensor",
         "aten.unsqueeze.default", "aten.squeeze.dim", "aten.relu_.default"}


class Small(torch.nn.Module):
    """Conv, batch norm, in-place ReLU, a residual in-place add, a flatten (view), a linear
    layer (its weight transposed: a view of a constant)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.conv2 = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 8 * 8, 5)

    def forward(self, x):
        y = torch.relu_(self.bn(self.conv(x)))
        z = self.conv2(y)
        z += y
        return self.fc(z.flatten(1))


def _tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return []


def _peak(gm, constants):
    """Peak bytes of the storages a graph holds, straight from the traced values (no cpplan):
    a storage lives from the node that first holds it to the last node that reads any tensor
    of it (getitem only selects), or to the end when the graph returns it."""
    nodes = list(gm.graph.nodes)
    born, last, size = {}, {}, {}
    constant = set()
    for i, n in enumerate(nodes):
        reads = [] if n.target is operator.getitem else n.all_input_nodes
        for a in reads:
            for t in _tensors(a.meta.get("val")):
                s = StorageWeakRef(t.untyped_storage())
                last[s] = len(nodes) if n.op == "output" else max(last[s], i)
        for t in _tensors(n.meta.get("val")):
            s = StorageWeakRef(t.untyped_storage())
            if s not in born:
                born[s], last[s], size[s] = i, i, t.untyped_storage().nbytes()
                if n.op == "get_attr" or n.name in constants:
                    constant.add(s)
    events = sorted([(born[s], size[s]) for s in born if s not in constant]
                    + [(last[s] + 1, -size[s]) for s in born if s not in constant])
    live = peak = 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        live += delta
        peak = max(peak, live)
    return peak, sum(1 for s in born if s not in constant and size[s])


@pytest.fixture(scope="module")
def small_step():
    torch.manual_seed(0)
    gm, constants = trace_training_step(Small(), torch.zeros(2, 3, 8, 8),
                                        torch.zeros(2, dtype=torch.int64))
    return gm, constants


def test_training_step_buffers_match_the_storages(small_step):
    gm, constants = small_step
    graph = graph_from_fx(gm, constants=constants)
    problem = to_problem(graph, inputs_in_arena=True)
    peak, storages = _peak(gm, set(constants))
    assert len(problem.buffers) == storages
    assert max_load(problem)["arena"].bytes == peak
    assert not problem.aliases and [p.name for p in problem.pools] == ["arena"]
    # parameters and batch-norm statistics are constants, never planned
    ids = {b.id for b in problem.buffers}
    assert not ids & set(constants)
    # all but the batch norm's num_batches_tracked, which is only updated in place (add_)
    assert problem.meta["constants"]["count"] == len(constants) - 1
    # the images and labels are inputs in the arena; the gradients live to the end
    assert [t.name for t in graph.tensors_with_role("input")] == [
        n.name for n in gm.graph.nodes if n.op == "placeholder"][-2:]
    n_params = sum(1 for _ in Small().parameters())
    assert len(graph.outputs) == 1 + n_params  # the loss and one gradient per parameter
    steps = problem.meta["graph"]["steps"]
    assert all(problem.buffer(o).end == steps for o in graph.outputs)


def test_views_make_no_buffer(small_step):
    gm, constants = small_step
    graph = graph_from_fx(gm, constants=constants)
    problem = to_problem(graph, inputs_in_arena=True)
    ids = {b.id for b in problem.buffers}
    views = [n.name for n in gm.graph.nodes if str(n.target) in VIEWS]
    assert len(views) >= 5  # t of the linear weight, flatten, alias/detach, relu_
    assert not ids & set(views)
    assert not {op.name for op in graph.operators} & set(views)


def test_a_view_keeps_its_base_alive():
    def f(x):
        a = x * 2
        v = a.t()  # a view: no buffer, a lives as long as v
        c = x + 3
        d = c * 4
        return (v.sum() + d.sum(),)

    gm = make_fx(f)(torch.ones(3, 4))
    problem = to_problem(graph_from_fx(gm), inputs_in_arena=True)
    a = problem.buffer("mul")
    v_use = next(n for n in gm.graph.nodes if n.target == torch.ops.aten.sum.default)
    assert v_use.args[0].target == torch.ops.aten.t.default
    assert a.end == problem.buffer(v_use.name).start + 1  # until the sum of the view
    assert a.end > problem.buffer("mul_1").start  # so it overlaps d, made after it
    assert "t" not in problem.index


def test_in_place_write_keeps_what_it_reads():
    def f(x):
        a = x * 2
        b = x * 3
        a.add_(b)  # writes into a, reads b: b lives until this step
        return (a.sum(),)

    gm = make_fx(f)(torch.ones(16))
    graph = graph_from_fx(gm)
    problem = to_problem(graph, inputs_in_arena=True)
    assert sorted(b.id for b in problem.buffers) == ["mul", "mul_1", "sum_1", "x_1"]
    add = next(op for op in graph.operators if op.op_type == "aten.add_.Tensor")
    assert add.outputs == () and set(add.inputs) == {"mul", "mul_1"}
    step = graph.operators.index(add)
    assert problem.buffer("mul_1").end == step + 1
    assert problem.buffer("mul").end == step + 2  # the sum reads the in-place result


def test_tuple_outputs():
    def f(x):
        values, indices = torch.max(x, dim=0)
        return (values * 2,)  # indices unused: alive at their producer's step only

    gm = make_fx(f)(torch.ones(4, 5))
    problem = to_problem(graph_from_fx(gm), inputs_in_arena=True)
    node = next(n for n in gm.graph.nodes if n.target == torch.ops.aten.max.dim)
    values, indices = problem.buffer(node.name), problem.buffer(f"{node.name}.1")
    assert (values.size, indices.size) == (5 * 4, 5 * 8)  # float32 and int64
    assert indices.end == indices.start + 1 and values.end == values.start + 2


def test_list_of_views_makes_no_buffer():
    def f(x):
        y = x * 2
        a, b = y.split(2)  # Tensor(a)[]: both views of y
        c = x + 1
        return (a.sum() + b.sum() + c.sum(),)

    gm = make_fx(f)(torch.ones(4, 3))
    graph = graph_from_fx(gm)
    problem = to_problem(graph, inputs_in_arena=True)
    split = next(n for n in gm.graph.nodes if n.target == torch.ops.aten.split.Tensor)
    assert not any(b.id.startswith(split.name) for b in problem.buffers)
    last = max(i for i, op in enumerate(graph.operators) if "mul" in op.inputs)
    assert graph.operators[last].op_type == "aten.sum.default"
    assert problem.buffer("mul").end == last + 1 > problem.buffer("add").start


def test_small_step_plan_passes_the_checker(small_step):
    gm, constants = small_step
    problem = to_problem(graph_from_fx(gm, constants=constants), inputs_in_arena=True)
    plan = get("best-fit")(problem)
    assert check(problem, plan) == []
    assert plan.heights["arena"] >= max_load(problem)["arena"].bytes
    assert problem_to_csv(problem).startswith("id,lower,upper,size")


def test_errors_name_the_node():
    def f(x):
        return (x * 2,)

    gm = make_fx(f)(torch.ones(3))
    with pytest.raises(ProblemError, match="not placeholders"):
        graph_from_fx(gm, constants=["w"])
    node = next(n for n in gm.graph.nodes if n.op == "call_function")
    del node.meta["val"]
    with pytest.raises(ProblemError, match=f"node '{node.name}'.*make_fx"):
        graph_from_fx(gm)


def test_torchvision_training_step_from_the_command_line(tmp_path):
    require("torchvision", "exports")
    from click.testing import CliRunner

    from cpplan.cli import main
    from cpplan.graph.fx import training_problem
    from cpplan.io import read_problem

    out = tmp_path / "sq.json"
    r = CliRunner().invoke(main, ["extract", "torchvision:squeezenet1_1", "--training", "-o",
                                  str(out), "--dim", "batch=1", "--dim", "resolution=32"])
    assert r.exit_code == 0, r.output
    p = read_problem(out)
    assert p.name == "squeezenet1_1-train-b1-32"
    assert p.meta["command"] == ("cpplan extract torchvision:squeezenet1_1 --training -o "
                                 f"{out} --dim batch=1 --dim resolution=32")
    assert p.meta["source"]["torch_version"] == torch.__version__
    assert len(p.buffers) > 100 and not p.aliases and p.meta["constants"]["count"] > 50
    same = training_problem("squeezenet1_1", batch=1, resolution=32)
    assert [(b.id, b.size, b.start, b.end) for b in p.buffers] == [
        (b.id, b.size, b.start, b.end) for b in same.buffers]
    for args, message in ((["torchvision:squeezenet1_1"], "--training traces"),
                          (["torchvision:nope", "--training"], "unknown torchvision network"),
                          (["torchvision:squeezenet1_1", "--training", "--dim", "width=2"],
                           "batch and resolution only"),
                          (["torchvision:squeezenet1_1", "--training", "--in-place"],
                           "for ONNX models")):
        r = CliRunner().invoke(main, ["extract", *args, "-o", str(tmp_path / "x.csv")])
        assert r.exit_code == 2 and message in r.output and len(r.output.splitlines()) == 1
    assert not (tmp_path / "x.csv").exists()
