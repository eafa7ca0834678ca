"""Chrome trace-event files (cpplan.io.chrome_trace): the documented format, checked as a schema
(JSON Schema where jsonschema is installed, and by hand always), and the plan in it."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from cpplan import Alias, Buffer, FormatError, Gap, PlanError, Pool, Problem
from cpplan.bounds import max_load
from cpplan.io import EXPORTS, export_plan, read_problem
from cpplan.io.chrome_trace import PHASES, chrome_trace, write_chrome_trace
from cpplan.plan import Placement, Plan
from cpplan.planners import get

ROOT = Path(__file__).resolve().parents[2]

#: The Trace Event Format (Google's "Trace Event Format" document, the JSON Object Format) as
#: far as these files use it: an object with ``traceEvents``; complete events ``X`` with
#: integer microsecond ``ts`` and ``dur``; counters ``C`` whose args are numbers; metadata
#: ``M`` naming and ordering processes and threads.
SCHEMA = {
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "traceEvents": {"type": "array", "items": {"oneOf": [
            {"type": "object", "required": ["name", "ph", "ts", "dur", "pid", "tid", "args"],
             "properties": {"ph": {"const": "X"}, "name": {"type": "string"},
                            "cat": {"type": "string"},
                            "ts": {"type": "integer", "minimum": 0},
                            "dur": {"type": "integer", "minimum": 1},
                            "pid": {"type": "integer"}, "tid": {"type": "integer"},
                            "args": {"type": "object",
                                     "required": ["id", "offset", "size", "pool"]}}},
            {"type": "object", "required": ["name", "ph", "ts", "pid", "args"],
             "properties": {"ph": {"const": "C"}, "name": {"type": "string"},
                            "ts": {"type": "integer", "minimum": 0},
                            "pid": {"type": "integer"},
                            "args": {"type": "object", "minProperties": 1,
                                     "additionalProperties": {"type": "number"}}}},
            {"type": "object", "required": ["name", "ph", "pid", "args"],
             "properties": {"ph": {"const": "M"},
                            "name": {"enum": ["process_name", "process_sort_index",
                                              "thread_name", "thread_sort_index"]},
                            "pid": {"type": "integer"}, "tid": {"type": "integer"},
                            "args": {"type": "object"}}},
        ]}},
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "otherData": {"type": "object"},
    },
}


def problem_with_everything() -> Problem:
    """Two pools, aliases (in place and a slice), a buffer with gaps, a zero-size buffer and a
    schedule that starts before 0."""
    bufs = [Buffer("in", 256, -3, 4, pools=("sram",)),
            Buffer("a", 512, -2, 1), Buffer("b", 512, 0, 3), Buffer("c", 128, 2, 6),
            Buffer("cat", 1024, 3, 8, pools=("dram",)),
            Buffer("x0", 512, 1, 4), Buffer("x1", 512, 2, 5),
            Buffer("g", 384, -1, 7, gaps=(Gap(1, 4, (0, 128)),)),
            Buffer("relu", 512, 1, 2), Buffer("empty", 0, 0, 2)]
    return Problem(tuple(bufs), (Pool("sram", alignment=64), Pool("dram", cost=4)),
                   (Alias("x0", "cat", 0), Alias("x1", "cat", 512), Alias("relu", "b", 0)),
                   name="everything")


def check_format(trace: dict) -> None:
    """The documented format, by hand (every rule of SCHEMA, and those it cannot say)."""
    assert isinstance(trace, dict) and isinstance(trace["traceEvents"], list)
    named_processes, named_threads = set(), set()
    for e in trace["traceEvents"]:
        assert e["ph"] in PHASES
        assert isinstance(e["name"], str) and type(e["pid"]) is int
        if e["ph"] == "X":
            assert set(e) >= {"name", "ph", "ts", "dur", "pid", "tid", "args"}
            assert type(e["ts"]) is int and e["ts"] >= 0
            assert type(e["dur"]) is int and e["dur"] >= 1
            assert type(e["tid"]) is int
            assert {"id", "offset", "size", "pool"} <= set(e["args"])
        elif e["ph"] == "C":
            assert type(e["ts"]) is int and e["ts"] >= 0
            assert e["args"] and all(type(v) in (int, float) for v in e["args"].values())
        else:
            assert e["name"] in ("process_name", "process_sort_index", "thread_name",
                                 "thread_sort_index")
            if e["name"] == "process_name":
                named_processes.add(e["pid"])
            if e["name"] == "thread_name":
                named_threads.add((e["pid"], e["tid"]))
    for e in trace["traceEvents"]:
        assert e["pid"] in named_processes
        if e["ph"] == "X":
            assert (e["pid"], e["tid"]) in named_threads
    json.dumps(trace, allow_nan=False)  # plain JSON: no NaN, no infinities


def slices(trace: dict) -> dict[str, dict]:
    return {e["args"]["id"]: e for e in trace["traceEvents"] if e["ph"] == "X"}


def test_the_documented_format_and_the_plan_in_it(tmp_path: Path) -> None:
    problem = problem_with_everything()
    plan = get("best-fit")(problem)
    path = write_chrome_trace(problem, plan, tmp_path / "trace.json")
    trace = json.loads(path.read_text())
    check_format(trace)
    try:
        import jsonschema
    except ImportError:
        pass
    else:
        jsonschema.validate(trace, SCHEMA)
    assert trace["displayTimeUnit"] == "ms"
    t0 = problem.time_span[0]
    # A process per pool, named after it.
    names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e["name"] == "process_name"}
    assert sorted(names) == [1, 2]
    assert names[1].startswith("pool sram") and names[2].startswith("pool dram")
    # A slice per buffer: in its pool's process, its lifetime in microseconds from the first
    # step, its offset and size in args.
    got = slices(trace)
    assert set(got) == {b.id for b in problem.buffers}
    for b in problem.buffers:
        e = got[b.id]
        pl = plan.placements[b.id]
        assert e["pid"] == 1 + problem.pool_index[pl.pool]
        assert (e["ts"], e["dur"]) == (b.start - t0, b.end - b.start)
        assert (e["args"]["offset"], e["args"]["size"], e["args"]["pool"]) == (
            pl.offset, b.size, pl.pool)
        assert e["args"]["end_offset"] == pl.offset + b.size
        assert e["args"]["lifetime"] == [b.start, b.end]
    assert got["x1"]["args"]["inside"] == "cat" and got["x1"]["args"]["displacement"] == 512
    assert got["x1"]["cat"] == "alias" and got["a"]["cat"] == "buffer"
    assert got["g"]["args"]["gaps"] == [list(p) for p in problem.buffer("g").pieces()]
    # Slices of one lane never overlap (viewers nest the slices of one thread).
    lanes = defaultdict(list)
    for e in got.values():
        lanes[e["pid"], e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    for spans in lanes.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    assert trace["otherData"]["planner"] == "best-fit"
    assert trace["otherData"]["step_us"] == 1


def test_counters_are_the_bytes_live_per_pool() -> None:
    problem = problem_with_everything()
    plan = get("best-fit")(problem)
    trace = chrome_trace(problem, plan)
    t0, t1 = problem.time_span
    for p, pool in enumerate(problem.pools):
        points = sorted((e["ts"], e["args"]["bytes"]) for e in trace["traceEvents"]
                        if e["ph"] == "C" and e["pid"] == p + 1)
        assert points and points[-1][1] == 0  # nothing is live after the last step
        # The value at each step, by hand: the bytes each block covers (aliases inside
        # their root count once), from the pieces of the buffers in this pool.
        for t in range(t0, t1):
            live: dict[int, set] = defaultdict(set)  # root id -> byte ranges covered
            for b in problem.buffers:
                if plan.placements[b.id].pool != pool.name:
                    continue
                root, disp = problem.root_of.get(b.id, (b.id, 0))
                for s, e, lo, hi in b.pieces():
                    if s <= t < e:
                        live[hash(root)].update(range(disp + lo, disp + hi))
            expected = sum(len(v) for v in live.values())
            value = [v for ts, v in points if ts <= t - t0][-1]
            assert value == expected, (pool.name, t)
    # The peak of the counter in a pool with one candidate for all its buffers is its bound.
    sram = [e["args"]["bytes"] for e in trace["traceEvents"] if e["ph"] == "C" and e["pid"] == 1]
    assert max(sram) >= max_load(problem)["sram"].bytes


def test_step_scale_and_plain_problems() -> None:
    problem = read_problem(ROOT / "instances" / "tiny.csv")
    plan = get("best-fit")(problem)
    trace = chrome_trace(problem, plan, step_us=1000)
    check_format(trace)
    t0 = problem.time_span[0]
    for b in problem.buffers:
        e = slices(trace)[b.id]
        assert (e["ts"], e["dur"]) == ((b.start - t0) * 1000, (b.end - b.start) * 1000)
    assert "1000 microseconds" in trace["otherData"]["time"]
    for bad in (0, -1, 1.5):
        with pytest.raises(Exception, match="step_us"):
            chrome_trace(problem, plan, step_us=bad)  # type: ignore[arg-type]


def test_tflm_names_reach_the_args() -> None:
    problem = read_problem(ROOT / "instances" / "tflite" / "branchy_int8.json")
    trace = chrome_trace(problem, get("tflm-greedy")(problem))
    check_format(trace)
    e = slices(trace)["3:stem"]
    assert e["args"]["name"].startswith("subgraph 0 tensor 3; from operator 0 CONV_2D")


def test_an_invalid_plan_writes_nothing(tmp_path: Path) -> None:
    problem = problem_with_everything()
    plan = get("best-fit")(problem)
    bad = Plan.build(problem, {**plan.placements, "c": Placement(plan.pool("b"),
                                                                  plan.offset("b"))})
    path = tmp_path / "trace.json"
    with pytest.raises(PlanError):
        export_plan(problem, bad, path, "chrome-trace")
    assert not path.exists()
    with pytest.raises(FormatError, match="unknown export format 'svg'.*chrome-trace"):
        export_plan(problem, plan, path, "svg")
    assert sorted(EXPORTS) == ["chrome-trace"]
    assert export_plan(problem, plan, path, "chrome-trace") == path
    check_format(json.loads(path.read_text()))
