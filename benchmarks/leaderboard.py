"""The leaderboard of real networks: every replica of a production allocator against cpplan's
proven optimum, on the networks of cpplan's three front ends, each as its runtime sees it.

    python benchmarks/leaderboard.py                    # extract (once), grade, print
    python benchmarks/leaderboard.py --format md        # the markdown table of the README
    python benchmarks/leaderboard.py --quick            # a few small networks, no ExecuTorch

The networks (the problems are written to ``--out``, default ``/tmp/cpplan-leaderboard``; a
problem already there is not extracted again, so a rerun skips the slow ExecuTorch exports):

* **ONNX Runtime's view** (``onnx-*``): the real exports of the test suite,
  ``tests/data/onnx/*.onnx`` (``python -m cpplan.graph.exports``: torchvision's CNNs, ViT, Swin,
  BERT, GPT-2, Whisper, an LSTM; both exporters, QDQ, int8 and ORT-optimised variants), and the
  model-zoo graphs that ship inside the onnx package (those of ``instances/onnx``), extracted
  with element-wise operators in place and every buffer aligned to 64 bytes, as ONNX Runtime
  plans them (concat is not in place there); the arena only, as the graph inputs are the
  caller's (pool ``inputs``, the same for every planner, would only dilute the ratios). The
  ``bert-dynamic`` exports are left out: given their shapes they are ``bert``'s again.
* **ExecuTorch's view** (``executorch-*``): four programs of the test suite
  (``tests/runtimes/test_executorch.py``) at 64 x 64, batch 1: mobilenet_v3_small and
  mobilenet_v2 after ``constant_prop_pass``, resnet18, and a 2-layer BERT (16 tokens), exported
  and lowered with ``to_edge``; the problem is the one ExecuTorch's memory planning pass gives
  its greedy for the program's graph (alignment 16). Needs ``pip install ".[executorch]"``.
* **TFLite Micro's view** (``tflm-*``): ``instances/tflite/*.json``, the problems TFLM plans
  for the bundled ``.tflite`` models (alignment 16, scratch buffers measured in TFLM).

Each problem is graded with :func:`cpplan.grade.grade`: every registered replica
(``cpplan planners``; ``naive`` is the no-reuse baseline) and a reference solve by cpplan of
``--time-limit`` seconds per network, which proves a lower bound. The references are cached in
``--cache`` (default ``OUT/cache``), so a rerun does not solve again. The table gives per
planner the geometric mean and the worst of ``height / proven lower bound`` (1.000 = optimal;
with several pools, the objective ``sum(cost x height)``), the network where it loses most,
and its failures (``invalid``, ``capacity``, ``error``). A network where a planner fails does
not count in that planner's ratios.

Exits 1 if a network cannot be extracted (a missing extra: the message names it) or graded.
Takes about 45 s on this 2-core machine the first time (about 40 of them exporting the
ExecuTorch programs; every reference is proven optimal within 2 s), about 6 s once the problems
and references are cached; ``--quick`` about 1 s.
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))
ROOT = HERE.parent

ONNX_ALIGNMENT = 64  # ONNX Runtime's CPU allocator
ZOO = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet",
       "squeezenet", "vgg19", "zfnet512")
# (name, constant_prop): the ExecuTorch programs of tests/runtimes/test_executorch.py
EXECUTORCH = (("mobilenet_v3_small", True), ("mobilenet_v2", True), ("resnet18", False),
              ("bert", False))
EXECUTORCH_SIZE = 64
QUICK = {"onnx-resnet18.dynamo", "onnx-lstm.torchscript", "onnx-squeezenet1_1.torchscript",
         "onnx-zoo-squeezenet", "tflm-mobile_int8", "tflm-branchy_float"}


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def first_line(e: BaseException) -> str:
    return f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:200]}"


def arena_only(problem):
    """The part of an ONNX problem in its pool ``arena``: the graph inputs (pool ``inputs``)
    belong to the caller in ONNX Runtime, the same for every planner."""
    from cpplan.problem import Problem

    buffers = tuple(b for b in problem.buffers if b.pools == ("arena",))
    keep = {b.id for b in buffers}
    return Problem(buffers, (problem.pool("arena"),),
                   tuple(a for a in problem.aliases if a.buffer in keep and a.root in keep),
                   name=problem.name, meta=dict(problem.meta, leaderboard="arena only"))


def onnx_problems(quick: bool):
    """``(name, make)`` for the ONNX networks: the test suite's exports, then the zoo."""
    from cpplan.graph.exports import MODELS
    from cpplan.graph.instances import onnx_light_path
    from cpplan.graph.onnx import extract_onnx

    out = []
    for e in MODELS:
        path = ROOT / "tests" / "data" / "onnx" / f"{e.name}.onnx"
        # (gpt2's TorchScript export is absent: torch refuses it; the dynamic exports, once
        # given their shapes, are bert's plain ones again)
        if not path.is_file() or e.variant == "dynamic":
            continue
        out.append((f"onnx-{e.name}", lambda path=path, n=e.name: arena_only(extract_onnx(
            path, in_place=True, alignment=ONNX_ALIGNMENT, name=f"onnx-{n}"))))
    for model in ZOO:
        out.append((f"onnx-zoo-{model}", lambda model=model: arena_only(extract_onnx(
            onnx_light_path(model), in_place=True, alignment=ONNX_ALIGNMENT,
            name=f"onnx-zoo-{model}"))))
    return [(n, f) for n, f in out if not quick or n in QUICK]


def executorch_problem(name: str, constant_prop: bool):
    from cpplan.runtimes import executorch as et
    from cpplan.runtimes.executorch_models import export, torchvision_model, transformer_model

    if name == "bert":
        model, inputs = transformer_model(layers=2, hidden=64, heads=4, tokens=16)
    else:
        model, inputs = torchvision_model(name, EXECUTORCH_SIZE)
    edge = et.edge_program(export(model, inputs), constant_prop=constant_prop)
    problems, sizes, _ = et.greedy_problems(edge)
    problem = problems[-1]
    meta = dict(problem.meta, executorch={
        "model": name, "size": EXECUTORCH_SIZE, "constant_prop": constant_prop,
        "greedy_bytes": list(sizes[-1])})
    return problem.replace(name=f"executorch-{name}", meta=meta)


def tflm_problems(quick: bool):
    from cpplan.io import read_problem

    out = []
    for path in sorted((ROOT / "instances" / "tflite").glob("*.json")):
        name = f"tflm-{path.stem}"
        if not quick or name in QUICK:
            out.append((name, lambda path=path, name=name: read_problem(path).replace(name=name)))
    return out


def networks(out: Path, quick: bool, log=log) -> tuple[list[Path], list[str]]:
    """Write every network's problem into ``out`` (unless there already) and return the files,
    and the networks that could not be extracted (with why); ``log(line)`` says each one."""
    from cpplan.grade import problem_key
    from cpplan.io import read_problem, write_problem

    makers = onnx_problems(quick) + tflm_problems(quick)
    if not quick:
        makers += [(f"executorch-{n}", lambda n=n, cp=cp: executorch_problem(n, cp))
                   for n, cp in EXECUTORCH]
    out.mkdir(parents=True, exist_ok=True)
    files, failed, seen = [], [], {}
    for k, (name, make) in enumerate(makers, 1):
        path = out / f"{name}.json"
        started = time.perf_counter()
        try:
            if path.is_file():
                problem, how = read_problem(path), "cached"
            else:
                problem = make()
                write_problem(problem, path)
                how = f"extracted in {time.perf_counter() - started:.1f} s"
        except Exception as e:
            path.unlink(missing_ok=True)
            hint = (' (pip install ".[executorch]")'
                    if isinstance(e, ImportError) and name.startswith("executorch") else "")
            failed.append(f"{name}: {first_line(e)}{hint}")
            log(f"[{k}/{len(makers)}] {name}: FAILED {first_line(e)}{hint}")
            continue
        key = problem_key(problem)
        if key in seen:
            log(f"[{k}/{len(makers)}] {name}: same problem as {seen[key]}, left out")
            continue
        seen[key] = name
        files.append(path)
        log(f"[{k}/{len(makers)}] {name}: {len(problem.buffers)} buffers, {how}")
    return files, failed


def worst_bound(report, planner: str) -> tuple[float | None, str]:
    """The largest ``height / lower bound`` of ``planner`` and where."""
    worst, at = None, ""
    for inst in report.graded:
        r = inst.result(planner)
        if r is None:
            continue
        v = inst.ratio_bound(r)
        if v is not None and (worst is None or v > worst):
            worst, at = v, inst.name
    return worst, at


def fmt(v: float | None) -> str:
    if v is None:
        return "–"
    if v == math.inf:
        return "∞"
    text = f"{v:.3f}"
    return f"{v:.5f}" if text == "1.000" and v > 1 else text  # (not optimal: say so)


def table(report, md: bool) -> list[str]:
    rows = []
    for s in sorted(report.summary(), key=lambda s: (s.geomean_bound is None,
                                                     s.geomean_bound or 0.0)):
        worst, at = worst_bound(report, s.planner)
        fails = ", ".join(f"{n} {o}" for o, n in sorted(s.failures.items())) or "–"
        if worst is not None and worst <= 1:
            at = "–"  # (optimal everywhere)
        rows.append((s.planner, fmt(s.geomean_bound), fmt(worst), at, f"{s.optimal}",
                     f"{s.solved}/{s.instances}", fails))
    head = ("planner", "geomean / bound", "worst / bound", "loses most on", "optimal",
            "valid", "failures")
    if md:
        out = ["| " + " | ".join(head) + " |",
               "| --- | ---: | ---: | --- | ---: | ---: | --- |"]
        out += ["| " + " | ".join(f"`{c}`" if i in (0, 3) and c != "–" else c
                                  for i, c in enumerate(r)) + " |" for r in rows]
        return out
    widths = [max(len(str(x[i])) for x in [head, *rows]) for i in range(len(head))]
    return ["  ".join(str(c).ljust(w) for c, w in zip(x, widths, strict=True)).rstrip()
            for x in [head, *rows]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("/tmp/cpplan-leaderboard"),
                    help="folder of the extracted problems (reused when there)")
    ap.add_argument("--cache", type=Path, default=None,
                    help="folder of the cached references (default OUT/cache)")
    ap.add_argument("--time-limit", type=float, default=10.0,
                    help="seconds of cpplan's reference solve per network")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="networks graded at once")
    ap.add_argument("--format", choices=("text", "md"), default="text")
    ap.add_argument("--quick", action="store_true",
                    help=f"only {len(QUICK)} small networks, no ExecuTorch")
    args = ap.parse_args()

    from cpplan.grade import grade

    started = time.perf_counter()
    files, failed = networks(args.out, args.quick)
    cache = args.cache or args.out / "cache"

    def progress(done: int, total: int, inst) -> None:
        if inst.error:
            log(f"graded {done}/{total} {inst.name}: FAILED {inst.error}")
            return
        ref = inst.reference
        status = "optimal" if inst.proven_optimum is not None else "bound"
        log(f"graded {done}/{total} {inst.name}: {inst.buffers} buffers, lower bound "
            f"{inst.lower_bound:,} ({status}{', cached' if ref and ref.cached else ''}), "
            f"{inst.seconds:.1f} s")

    report = grade(files, time_limit=args.time_limit, jobs=args.jobs, cache_dir=cache,
                   progress=progress)
    failed += [f"{i.name}: {i.error}" for i in report.failed]
    graded = report.graded
    fronts = {f: sum(1 for i in graded if i.name.startswith(f + "-"))
              for f in ("onnx", "executorch", "tflm")}
    optimal = sum(1 for i in graded if i.proven_optimum is not None)
    md = args.format == "md"
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    intro = (f"{len(graded)} networks ({fronts['onnx']} ONNX Runtime, {fronts['executorch']} "
             f"ExecuTorch, {fronts['tflm']} TFLite Micro); reference: cpplan, "
             f"{args.time_limit:g} s per network, optimum proven on {optimal} of {len(graded)}; "
             f"ratio = height / proven lower bound (1.000 = optimal); {today}, "
             f"{time.perf_counter() - started:.0f} s.")
    print("", flush=True)
    print(intro)
    print("")
    print("\n".join(table(report, md)), flush=True)
    if failed:
        print("\nFAILED: " + "; ".join(failed), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
