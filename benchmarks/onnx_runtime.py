"""cpplan's arena against ONNX Runtime's measured peak, on the project's real exports.

    python benchmarks/onnx_runtime.py [--time-limit S] [--alignment A] [NAME ...]

Needs ``pip install 'cpplan[exports]'`` (torch, torchvision, transformers, onnxscript,
onnxruntime). Each model of ``cpplan.graph.exports.MODELS`` (or those named) is built with its
weights in a temporary folder, then:

* **ORT peak**: ONNX Runtime runs it once on the CPU with graph optimisation off (so it runs the
  very graph cpplan reads), memory patterns off, weights outside the arena
  (``session.use_device_allocator_for_initializers``), profiling on. The profiler's arena
  figures give the peak: the largest ``mem_in_use_peak`` of the run's nodes less the bytes in
  use before the first node (pre-packed weights). Kernels' scratch buffers count here; graph
  inputs do not (the caller owns them), graph outputs do.
* **cpplan plain / rewrites**: ``cpplan extract`` (views only; then ``--in-place
  --concat-in-place``) with every buffer aligned as ORT's allocator aligns (64 bytes), solved
  for ``--time-limit`` seconds; the height of pool ``arena`` (graph inputs sit in a pool of their
  own, as in ORT), with ``*`` when proven optimal.
* **ratio**: cpplan with rewrites / ORT peak (below 1: cpplan's arena is smaller).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from cpplan.graph.exports import MODELS, build
from cpplan.graph.onnx import extract_onnx
from cpplan.plan import check
from cpplan.solve import solve

ALIGNMENT = 64  # ORT's kAllocAlignment


def ort_peak(path: Path, e, folder: Path) -> int:
    """ONNX Runtime's measured peak arena bytes for one run of the model at ``path``."""
    import numpy as np
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.enable_mem_pattern = False
    so.enable_profiling = True
    so.profile_file_prefix = str(folder / "ort_profile")
    so.add_session_config_entry("session.use_device_allocator_for_initializers", "1")
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {}
    for i in sess.get_inputs():
        shape, dtype = e.inputs[i.name]
        feeds[i.name] = (np.ones(shape, dtype=np.int64) if dtype == "int64"
                         else rng.standard_normal(shape).astype(np.float32))
    sess.run(None, feeds)
    events = json.loads(Path(sess.end_profiling()).read_text())
    nodes = [ev["args"] for ev in events
             if ev.get("cat") == "Node" and "mem_in_use_peak" in ev.get("args", {})]
    if not nodes:
        raise RuntimeError("the profiler gave no arena figures")
    first = nodes[0]
    before = int(first["mem_bytes_in_use"]) - int(first["mem_in_use_delta"])
    return max(int(a["mem_in_use_peak"]) for a in nodes) - before


def cpplan_arena(path: Path, e, time_limit: float, alignment: int, **rewrites):
    shapes = {n: s for n, (s, _) in e.inputs.items()} if e.variant == "dynamic" else None
    problem = extract_onnx(path, input_shapes=shapes, alignment=alignment, **rewrites)
    plan = solve(problem, time_limit=time_limit)
    assert not check(problem, plan), f"{path}: invalid plan"
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
          f"{'ratio':>7}{'s':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for e in chosen:
            t = time.perf_counter()
            folder = Path(tmp) / e.name
            try:
                path = build(e, folder)
            except Exception as err:  # the exporter's limit
                print(f"{e.name:<34}export failed: {type(err).__name__}", flush=True)
                continue
            try:
                ort = ort_peak(path, e, folder)
            except Exception as err:
                first = (str(err).strip().splitlines() or [""])[0][:60]
                print(f"{e.name:<34}ONNX Runtime failed: {first}", flush=True)
                continue
            plain, p_opt = cpplan_arena(path, e, args.time_limit, args.alignment)
            rw, r_opt = cpplan_arena(path, e, args.time_limit, args.alignment, in_place=True,
                                     concat_in_place=True)
            print(f"{e.name:<34}{ort:>11}{plain:>13}{'*' if p_opt else ' '}"
                  f"{rw:>16}{'*' if r_opt else ' '}{rw / ort if ort else 0:>7.3f}"
                  f"{time.perf_counter() - t:>6.1f}", flush=True)
    print("* proven optimal; ratio = cpplan with rewrites / ORT peak")
    return 0


if __name__ == "__main__":
    sys.exit(main())
