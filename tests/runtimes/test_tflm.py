"""TensorFlow Lite Micro: the problem as TFLM sees it, offline plans written into models, and
everything verified in TFLM's own interpreter (the tflite-micro package, extra ``tflite``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cpplan import Buffer
from cpplan.bounds import max_load
from cpplan.errors import FormatError, PlanError, ProblemError
from cpplan.plan import Placement, Plan
from cpplan.planners.registry import get
from cpplan.solve import solve
from tests.shared import ROOT, require

require("tflite_micro", "tflite")
from cpplan.cli import main  # noqa: E402
from cpplan.runtimes import tflm, tflm_models  # noqa: E402
from cpplan.runtimes import tflm_interpreter as ti  # noqa: E402
from cpplan.runtimes.tflm_plan import extract_model, plan_model  # noqa: E402

INSTANCES = ROOT / "instances" / "tflite"


def sine_path() -> Path:
    from tflite_micro.python.tflite_micro import runtime

    return Path(runtime.__file__).with_name("sine_float.tflite")


MODELS = [*tflm_models.MODELS, "sine_float"]


def model_path(name: str) -> Path:
    return sine_path() if name == "sine_float" else INSTANCES / f"{name}.tflite"


@pytest.fixture(scope="module")
def planned() -> dict:
    """Every model planned once by ``plan_model`` (deterministic, small time limit)."""
    return {name: plan_model(model_path(name), time_limit=5, deterministic=True)
            for name in MODELS}


def words(data: bytes) -> np.ndarray:
    m = tflm.load_model(data)
    i = tflm.offline_metadata(m)
    return np.frombuffer(m.buffers[m.metadata[i].buffer].data.tobytes(), "<i4").copy()


def with_words(data: bytes, new: np.ndarray) -> bytes:
    """The model with its offline-plan words replaced (to make the plans TFLM should refuse)."""
    m = tflm.load_model(data)
    i = tflm.offline_metadata(m)
    m.buffers[m.metadata[i].buffer].data = np.frombuffer(new.astype("<i4").tobytes(),
                                                         np.uint8).copy()
    return tflm.align_model(tflm.pack_model(m))


def same(a: ti.Run, b: ti.Run) -> bool:
    return len(a.outputs) == len(b.outputs) and all(
        x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a.outputs, b.outputs,
                                                                    strict=True))


# -- the models --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(tflm_models.MODELS))
def test_generated_models_are_up_to_date(name: str) -> None:
    """instances/tflite holds what `python -m cpplan.runtimes.tflm_models` makes (same bytes)."""
    assert (INSTANCES / f"{name}.tflite").read_bytes() == tflm_models.build(name)


# -- the replica against the real planner ------------------------------------------------------
@pytest.mark.parametrize("name", MODELS)
def test_tflm_greedy_replica_equals_tflm_default_head(name: str) -> None:
    data = model_path(name).read_bytes()
    real = ti.run(data).head
    problem = extract_model(data)
    assert get("tflm-greedy")(problem).height == real


# -- plans written back, run in TFLM -----------------------------------------------------------
@pytest.mark.parametrize("name", MODELS)
def test_planned_model_runs_identically_with_the_planned_head(name: str, planned) -> None:
    result = planned[name]
    data = model_path(name).read_bytes()
    inputs = ti.random_inputs(data, seed=7)  # another input than the one plan_model tried
    before, after = ti.run(data, inputs), ti.run(result.model, inputs)
    assert same(before, after)
    assert after.head == result.predicted_head <= result.plan.height
    assert after.head <= before.head == result.greedy_head
    assert result.plan.height >= max_load(result.problem)["arena"].bytes
    # the metadata: [version 1, subgraph 0, tensor count, offsets...], -1 where TFLM plans
    w = words(result.model)
    assert list(w[:3]) == [1, 0, result.problem.meta["tflm"]["tensor_count"]]
    tensors = result.problem.meta["tflm"]["tensors"]
    starts = tflm.subgraph_starts(tflm.load_model(data))  # entries run over all subgraphs
    offsets = {starts[sg] + index: result.plan.offset(bid) for bid, (sg, index) in tensors.items()}
    assert [int(x) for x in w[3:]] == [offsets.get(i, -1) for i in range(len(w) - 3)]


def test_branchy_models_beat_tflm_greedy_and_reach_the_max_load(planned) -> None:
    for name in ("branchy_int8", "branchy_float"):
        r = planned[name]
        assert r.plan.status == "optimal"
        assert r.planned_run.head == r.lower_bound < r.default_run.head


def test_scratch_buffers_are_measured_and_planned_online(planned) -> None:
    """int8 MEAN asks for output_elements * 4 bytes of scratch: measured in TFLM, in the
    problem, left to TFLM (no entry in the file), and the head still the predicted one."""
    r = planned["mean_int8"]
    scratch = r.problem.meta["tflm"]["scratch"]
    assert list(scratch) == ["scratch:5:MEAN"]
    assert r.problem.buffer("scratch:5:MEAN").size == 48 * 4
    assert len(words(r.model)) == 3 + r.problem.meta["tflm"]["tensor_count"]
    assert r.planned_run.head == r.predicted_head
    # without measurements, the problem has the tensors only
    tensors_only = tflm.extract_tflm(model_path("mean_int8"))
    assert len(tensors_only.buffers) == len(r.problem.buffers) - 1


def test_variable_tensors_stay_in_the_tail(planned) -> None:
    r = planned["variable_float"]
    m = tflm.load_model(r.model)
    (var,) = [i for i, t in enumerate(m.subgraphs[0].tensors) if t.isVariable]
    assert words(r.model)[3 + var] == -1
    assert r.problem.meta["tflm"]["not_planned"]["variables"] == 1
    # measured: a variable tensor given an offset is planned in the head by TFLM, which then
    # no longer keeps it for the next inference in the tail
    w = words(r.model)
    w[3 + var] = r.plan.height
    given = ti.run(with_words(r.model, w))
    size = -(-tflm.tensor_bytes(m.subgraphs[0].tensors[var]) // 16) * 16
    assert given.head == r.planned_run.head + size
    assert given.tail == r.planned_run.tail - size


# -- the problem as TFLM sees it ---------------------------------------------------------------
def test_extract_sine_lifetimes_sizes_and_names() -> None:
    p = tflm.extract_tflm(sine_path())
    m = tflm.load_model(sine_path())
    sg = m.subgraphs[0]
    assert len(sg.operators) == 3 and p.meta["tflm"]["steps"][0] == "subgraph 0 inputs"
    assert p.meta["tflm"]["steps"][1].endswith("FULLY_CONNECTED")
    by_index = {index: p.buffer(bid) for bid, (_, index) in p.meta["tflm"]["tensors"].items()}
    (inp,) = sg.inputs
    (out,) = sg.outputs
    assert by_index[int(inp)].lifetime == (0, 2)        # step 0, read by operator 0 (step 1)
    assert by_index[int(out)].lifetime == (3, 4)        # made by the last operator, to the end
    for op_index, op in enumerate(sg.operators[:-1]):   # inner activations: maker to reader
        b = by_index[int(op.outputs[0])]
        assert b.lifetime == (op_index + 1, op_index + 3)
    for bid, (_, index) in p.meta["tflm"]["tensors"].items():
        b = p.buffer(bid)
        assert bid.startswith(f"{index}:") and b.alignment == 16 and b.size % 16 == 0
        assert b.size >= tflm.tensor_bytes(sg.tensors[index]) > 0
    assert p.meta["tflm"]["not_planned"]["constants"] == len(sg.tensors) - len(p.buffers)


def test_offline_plan_in_the_file_becomes_fixed_offsets(planned) -> None:
    r = planned["branchy_int8"]
    again = tflm.extract_tflm(r.model)
    assert again.meta["tflm"]["offline_plan_in_file"]
    assert {b.id: b.offset for b in again.buffers} == {
        bid: r.plan.offset(bid) for bid in r.problem.meta["tflm"]["tensors"]}


# -- the pitfalls, measured in TFLM ------------------------------------------------------------
def test_preserve_all_tensors_refuses_offline_plans(planned) -> None:
    r = planned["branchy_float"]
    ti.run(model_path("branchy_float").read_bytes(), preserve_all_tensors=True)  # runs
    with pytest.raises(ti.TflmError):
        ti.run(r.model, preserve_all_tensors=True)


def test_wrong_tensor_count_is_refused_by_tflm_and_by_cpplan(planned) -> None:
    r = planned["branchy_float"]
    w = words(r.model)
    bad = with_words(r.model, np.concatenate([[1, 0, w[2] + 1], w[3:], [-1]]))
    with pytest.raises(ti.TflmError, match="not equal nbr tensors"):
        ti.run(bad)
    with pytest.raises(FormatError, match="offsets for"):
        tflm.extract_tflm(bad)


def test_overlapping_offsets_run_silently_wrong_and_the_checker_refuses(planned) -> None:
    r = planned["branchy_float"]
    w = words(r.model)
    w[3:][w[3:] >= 0] = 0  # every tensor at offset 0: TFLM says nothing
    bad = with_words(r.model, w)
    data = model_path("branchy_float").read_bytes()
    assert not same(ti.run(data), ti.run(bad))
    with pytest.raises(ProblemError, match="overlap"):
        tflm.extract_tflm(bad)  # the fixed offsets overlap: not a valid problem
    zero = Plan.build(r.problem, {b.id: Placement("arena", 0) for b in r.problem.buffers})
    with pytest.raises(PlanError):
        tflm.write_offline_plan(data, r.problem, zero)


def test_misaligned_offsets_run_silently_and_the_checker_refuses(planned) -> None:
    r = planned["branchy_float"]
    w = words(r.model)
    k = 3 + int(np.argmax(w[3:]))  # the highest offset: +8 keeps it clear of the others
    w[k] += 8
    assert same(ti.run(model_path("branchy_float").read_bytes()), ti.run(with_words(r.model, w)))
    bid = next(b for b, (_, i) in r.problem.meta["tflm"]["tensors"].items() if i == k - 3)
    moved = dict(r.plan.placements)
    moved[bid] = Placement("arena", moved[bid].offset + 8)
    with pytest.raises(PlanError):
        tflm.write_offline_plan(model_path("branchy_float"), r.problem,
                                Plan.build(r.problem, moved))


def test_a_plan_for_another_model_is_refused(planned) -> None:
    r = planned["branchy_float"]
    with pytest.raises(PlanError, match="extract the problem from this model"):
        tflm.write_offline_plan(model_path("mean_int8"), r.problem, r.plan)


def test_not_a_tflite_file(tmp_path: Path) -> None:
    bad = tmp_path / "x.tflite"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(FormatError, match="x.tflite"):
        tflm.extract_tflm(bad)


def test_unreached_tensor_is_named() -> None:
    m = tflm.load_model(sine_path())
    s = tflm.schema()
    t = s.TensorT()
    t.name, t.shape, t.type = "dangling", [4], s.TensorType.FLOAT32
    m.subgraphs[0].tensors.append(t)
    with pytest.raises(FormatError, match="dangling"):
        tflm.extract_tflm(tflm.pack_model(m))


def test_predicted_head_places_scratch_around_the_fixed_tensors() -> None:
    problem = tflm.extract_tflm(model_path("mean_int8"),
                                scratch=ti.scratch_bytes(model_path("mean_int8").read_bytes()))
    plan = solve(problem, time_limit=2, deterministic=True)
    assert tflm.predicted_head(problem, plan) <= plan.height
    assert isinstance(problem.buffer("scratch:5:MEAN"), Buffer)


# -- the command line --------------------------------------------------------------------------
def cli(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_cli_tflm_writes_the_planned_model_and_prints_the_heads(tmp_path: Path) -> None:
    out = tmp_path / "planned.tflite"
    r = cli("tflm", model_path("branchy_int8"), "-o", out, "--time-limit", 2, "-q")
    assert r.exit_code == 0, r.output
    assert "TFLM greedy head" in r.output and "cpplan head" in r.output
    assert "lower bound" in r.output
    greedy = int(r.output.split("TFLM greedy head")[1].split()[0])
    ours = int(r.output.split("cpplan head")[1].split()[0])
    assert ours < greedy
    assert ti.run(out.read_bytes()).head == ours


def test_cli_extract_tflite(tmp_path: Path) -> None:
    from cpplan.io import read_problem

    out = tmp_path / "p.json"
    r = cli("extract", model_path("mean_int8"), "-o", out)
    assert r.exit_code == 0, r.output
    assert "1 scratch" in r.output
    p = read_problem(out)
    assert p.meta["tflm"]["scratch"] == {"scratch:5:MEAN": [0, 5]}
    assert p.meta["command"].startswith("cpplan extract ")


def test_cli_bad_model_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a model")
    out = tmp_path / "out.tflite"
    r = cli("tflm", bad, "-o", out)
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "bad.tflite" in r.output
    assert not out.exists()


def test_a_model_tflm_aborts_on_is_an_error_not_a_crash(tmp_path: Path) -> None:
    """TFLM's int8 SOFTMAX aborts the process on an input scale near 1e-8 (as in untrained
    Keras models converted with random calibration data): cpplan tries TFLM in a child
    process first and says so in one line."""
    g = tflm_models._Graph(True, seed=0)
    s = g.s
    x = g.tensor("logits", (1, 10), s.TensorType.INT8, quant=g._quant(7.8e-9))
    g.shapes[x] = (1, 10)
    path = tmp_path / "abort.tflite"
    path.write_bytes(g.finish([x], [g.softmax(x)], "softmax that TFLM aborts on"))
    out = tmp_path / "out.tflite"
    r = cli("tflm", path, "-o", out)
    assert r.exit_code == 2 and "aborted" in r.output and r.output.count("\n") == 1
    assert not out.exists()


def test_cli_step_by_step_extract_solve_write(tmp_path: Path) -> None:
    """extract, solve with any planner, then write that plan: the checker guards the last step."""
    problem, plan = tmp_path / "p.json", tmp_path / "plan.json"
    model, out = model_path("branchy_float"), tmp_path / "planned.tflite"
    assert cli("extract", model, "-o", problem).exit_code == 0
    r = cli("solve", problem, "-o", plan, "--planner", "tflm-greedy", "-q")
    assert r.exit_code == 0, r.output
    r = cli("tflm", model, "-o", out, "--plan", plan)
    assert r.exit_code == 0, r.output
    assert ti.run(out.read_bytes()).head == ti.run(model.read_bytes()).head  # TFLM's own plan
    bad = tmp_path / "bad.json"
    bad.write_text(plan.read_text().replace('"offset": 0', '"offset": 8', 1))
    out.unlink()
    r = cli("tflm", model, "-o", out, "--plan", bad)
    assert r.exit_code == 2 and not out.exists()


def test_control_flow_subgraphs_are_planned_together(planned) -> None:
    """IF calls its subgraphs between the operator's outputs and its inputs' last use; the
    offline plan covers the tensors of all three subgraphs, and both branches run identically."""
    r = planned["if_float"]
    steps = r.problem.meta["tflm"]["steps"]
    assert steps[2:5] == ["operator 1 IF", "IF operator 1 calls subgraph 1",
                          "subgraph 1 operator 0 ADD"]
    p = r.problem
    assert p.buffer("0:cond").lifetime == (0, 8)          # read by IF after both branches ran
    assert p.buffer("1.0:then_in").lifetime == (3, 6)
    assert p.buffer("2.1:else_out").lifetime == (7, 8)
    data = model_path("if_float").read_bytes()
    x = np.linspace(-1, 1, 256, dtype=np.float32)
    for cond in (True, False):
        inputs = [np.array([cond]), x]
        assert same(ti.run(data, inputs), ti.run(r.model, inputs))
    assert (words(r.model)[3:] >= 0).sum() == len(p.buffers) == 10


def test_offline_entries_run_over_all_subgraphs(planned) -> None:
    """Measured: shifting subgraph 0's entries moves subgraph 0's tensors only (TFLM numbers
    offline entries over all subgraphs, not per subgraph as older sources did)."""
    r = planned["if_float"]
    p, w = r.problem, words(r.model)
    n0 = len(tflm.load_model(r.model).subgraphs[0].tensors)
    w[3:3 + n0][w[3:3 + n0] >= 0] += 4096
    subgraph = {bid: sg for bid, (sg, _) in p.meta["tflm"]["tensors"].items()}
    expected = max(r.plan.offset(b.id) + b.size + (4096 if subgraph[b.id] == 0 else 0)
                   for b in p.buffers)
    assert ti.run(with_words(r.model, w)).head == expected


def test_cli_extract_tflite_refuses_onnx_options(tmp_path: Path) -> None:
    r = cli("extract", model_path("sine_float"), "-o", tmp_path / "p.json", "--in-place")
    assert r.exit_code == 2 and "ONNX models only" in r.output
    assert not (tmp_path / "p.json").exists()


def test_traffic_is_counted_over_subgraphs_by_hand() -> None:
    """bytes x (1 + readers): a subgraph's inputs are written by the caller or the IF that
    copies into them, its outputs read once more (the caller, or the IF copying them back)."""
    p = tflm.extract_tflm(model_path("if_float"))
    kb = 1024  # every float tensor: 256 x 4 bytes
    assert {b.id: b.traffic for b in p.buffers} == {
        "0:cond": 1 * 2,  # a 1-byte bool (16 in the arena: the padding moves nothing), IF reads
        "1:x": kb * 2,  # read twice by one ADD: once
        "2:a": kb * 3,  # read by the IF and the last ADD
        "3:b": kb * 2, "4:y": kb * 2,  # y: the caller reads the result
        "1.0:then_in": kb * 3,  # written by the IF, read by ADD and MUL
        "1.1:then_mid": kb * 2, "1.2:then_out": kb * 2,  # then_out: copied back by the IF
        "2.0:else_in": kb * 2, "2.1:else_out": kb * 2,
    }
    assert p.meta["traffic"]["bytes"] == sum(b.traffic for b in p.buffers)


def test_scratch_traffic_and_what_the_user_states(tmp_path: Path) -> None:
    from cpplan.io import read_problem

    p = extract_model(model_path("mean_int8"))
    assert p.buffer("scratch:5:MEAN").traffic == 2 * 48 * 4  # written and read by its kernel
    out = tmp_path / "p.json"
    r = cli("extract", model_path("mean_int8"), "-o", out, "--traffic", "scratch:5:MEAN=9")
    assert r.exit_code == 0, r.output
    assert "1 buffer(s) as stated" in r.output
    stated = read_problem(out)
    assert stated.buffer("scratch:5:MEAN").traffic == 9
    assert {b.id: b.traffic for b in stated.buffers if b.id != "scratch:5:MEAN"} == {
        b.id: b.traffic for b in p.buffers if b.id != "scratch:5:MEAN"}
    r = cli("extract", model_path("mean_int8"), "-o", tmp_path / "q.json", "--traffic", "no=1")
    assert r.exit_code == 2 and "'no': no planned buffer" in r.output
    assert not (tmp_path / "q.json").exists()


# -- the page ------------------------------------------------------------------------------------
def test_compared_plans_for_the_view(planned: dict, tmp_path: Path) -> None:
    """``cpplan tflm --view``: TFLM's default plan (its greedy, whose head TFLM measures the
    same) against cpplan's, both checked, on one page."""
    require("bokeh", "view")
    from cpplan.view import differences, write_view

    result = planned["branchy_int8"]
    plans = result.compared()
    assert list(plans) == ["TFLM greedy", "cpplan"]
    assert plans["TFLM greedy"].height == result.greedy_head
    assert plans["cpplan"] is result.plan
    write_view(result.problem, plans, tmp_path / "view.html")
    greedy, ours = result.greedy_head, result.plan.height
    assert differences(result.problem, plans)[0].startswith(
        f"TFLM greedy uses {greedy:,} bytes, cpplan {ours:,}: {greedy - ours:,} bytes")
