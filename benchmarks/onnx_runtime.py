"""cpplan's arena against ONNX Runtime's measured peak, on the project's real exports.

    python benchmarks/onnx_runtime.py [--time-limit S] [--alignment A] [NAME ...]

Needs ``pip install 'cpplan[exports]'`` (torch, torchvision, transformers, onnxscript,
onnxruntime). Each model of ``cpplan.graph.exports.MODELS`` (or those named) is built with its
weights in a temporary folder, then:

* **ORT peak**: :func:`cpplan.runtimes.ort.measured_peak`: one run on the CPU with graph
  optimisation off (the very graph cpplan reads), the peak of the profiler's arena figures.
  Kernels' scratch buffers count there; graph inputs do not (the caller owns them), graph
  outputs do.
* **cpplan plain / rewrites**: ``cpplan extract`` (views only; then ``--in-place
  --concat-in-place``) with every buffer aligned as ORT's allocator aligns (64 bytes), solved
  for ``--time-limit`` seconds; the height of pool ``arena`` (graph inputs sit in a pool of their
  own, as in ORT), with ``*`` when proven optimal.
* **ratio**: cpplan with rewrites / ORT peak (below 1: cpplan's arena is smaller).

With optimisation off ONNX Runtime computes at run time what cpplan folds before it (shape
arithmetic; a QDQ model's ``DequantizeLinear`` of every weight, whose float copies then sit in
its arena): the ORT figure is what a user who turns optimisation off pays.

Each model's row is printed as it finishes. A model that fails (a module of the extra missing:
the row names it and the install command; ONNX Runtime or cpplan raising; an invalid plan) is
marked in its row, and the script exits 1 after the others. A model that torch's exporter
refuses (``torch.onnx``'s errors: gpt2 with the TorchScript exporter) is skipped with the
reason, as ``python -m cpplan.graph.exports`` skips it.

Takes about 2 min on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from cpplan.graph.exports import MODELS, build
from cpplan.graph.onnx import extract_onnx
from cpplan.plan import check
from cpplan.runtimes.ort import example_feeds, measured_peak
from cpplan.solve import solve

ALIGNMENT = 64  # ORT's kAllocAlignment
EXTRA = 'pip install ".[exports]"'  # torch, torchvision, transformers, onnxscript, onnxruntime


def exporter_limit(err: Exception) -> bool:
    """Whether torch's exporter refused the model (an operator it cannot export, say), which is
    a limit of the exporter, not a failure: ``python -m cpplan.graph.exports`` skips it too."""
    return any(c.__module__.startswith("torch.onnx") for c in type(err).__mro__)


def why(err: Exception) -> str:
    """One line for a failed row: the missing module and the extra, or the error's first line."""
    if isinstance(err, ImportError):
        return f"missing module {err.name or err} ({EXTRA})"
    first = (str(err).strip().splitlines() or [""])[0][:120]
    return f"{type(err).__name__}: {first}" if first else type(err).__name__


def cpplan_arena(path: Path, e, time_limit: float, alignment: int, **rewrites):
    shapes = {n: s for n, (s, _) in e.inputs.items()} if e.variant == "dynamic" else None
    problem = extract_onnx(path, input_shapes=shapes, alignment=alignment, **rewrites)
    plan = solve(problem, time_limit=time_limit)
    wrong = check(problem, plan)
    if wrong:
        raise AssertionError(f"invalid plan: {wrong[0]}")
    return plan.heights.get("arena", 0), plan.status == "optimal"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="models to run (default: all)")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--alignment", type=int, default=ALIGNMENT)
    args = ap.parse_args()
    chosen = [e for e in MODELS if not args.names or e.name in args.names]
    print(f"{'model':<34}{'ORT peak':>11}{'cpplan plain':>14}{'cpplan rewrites':>17}"
          f"{'ratio':>7}{'s':>6}", flush=True)
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for e in chosen:
            t = time.perf_counter()
            folder = Path(tmp) / e.name
            try:
                path = build(e, folder)
            except Exception as err:
                if exporter_limit(err):  # (python -m cpplan.graph.exports skips it too)
                    print(f"{e.name:<34}skipped, the exporter's limit: {why(err)}", flush=True)
                    continue
                failed.append(e.name)  # a module of the extra missing, or a bug
                print(f"{e.name:<34}export failed: {why(err)}", flush=True)
                continue
            try:
                ort = measured_peak(path, example_feeds(e.inputs))
            except Exception as err:
                failed.append(e.name)
                print(f"{e.name:<34}ONNX Runtime failed: {why(err)}", flush=True)
                continue
            try:
                plain, p_opt = cpplan_arena(path, e, args.time_limit, args.alignment)
                rw, r_opt = cpplan_arena(path, e, args.time_limit, args.alignment,
                                         in_place=True, concat_in_place=True)
            except Exception as err:
                failed.append(e.name)
                print(f"{e.name:<34}cpplan failed: {why(err)}", flush=True)
                continue
            print(f"{e.name:<34}{ort:>11}{plain:>13}{'*' if p_opt else ' '}"
                  f"{rw:>16}{'*' if r_opt else ' '}{rw / ort if ort else 0:>7.3f}"
                  f"{time.perf_counter() - t:>6.1f}", flush=True)
    print("* proven optimal; ratio = cpplan with rewrites / ORT peak")
    if failed:
        print(f"{len(failed)} of {len(chosen)} models failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
