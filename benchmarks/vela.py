"""Arm's Vela against the ``vela`` replica on the project's int8 TFLM models.

    python benchmarks/vela.py [--sram 2048,4096,8192,12288]

Each model (``instances/tflite/*_int8.tflite``) is compiled by Vela 5.2.0's Python core for an
Ethos-U65 whose dedicated SRAM (``arena_cache_size``) is each size given; Vela's allocators are
watched as they run (``tests/replicas/vela_capture.py``). Two comparisons per compile:

* **exact**: the replica's rule on the live ranges, access estimates and limit of Vela's final
  fast-storage decision, and its hill climb on the live ranges of each of Vela's allocations:
  decisions and addresses that agree, out of all;
* **TFLM view**: the replica on the problem TFLM plans for the same model (``cpplan extract``:
  TFLM's tensors and lifetimes, no fusing), with the SRAM as the fast pool and the graph's
  input and output kept in DRAM as Vela keeps them, traffic as size x (1 + readers): which
  feature maps stay in SRAM, against Vela's choice for the tensors both graphs have (by name),
  and the arenas (SRAM, DRAM) each plans.

They cannot agree exactly in the TFLM view: Vela lowers the graph first (softmax becomes some
thirty NPU operators with tensors of their own, concatenations and additions write into shared
live ranges, feature maps take the NHCWB16 brick format, padded to 16 channels), its clock and
cascades are its own, weight buffers take SRAM, and its access estimates count element
accesses per operator where the TFLM view has size x (1 + readers). Needs
``pip install ".[vela,tflite]"``: without it, says which module is missing and exits 1.

Each compile's row is printed as it ends; one that raises is marked FAILED in its row, and the
script exits 1 after the others. Takes about 10 s on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def traffic_problem(model: Path, sram: int):
    """The TFLM view: TFLM's problem for ``model``, pools ``sram`` (``sram`` bytes) and
    ``dram``; the graph's inputs and outputs pinned to ``dram``; traffic = size x (1 +
    operators reading the tensor)."""
    from cpplan.problem import Pool
    from cpplan.runtimes.tflm import extract_tflm, load_model

    problem = extract_tflm(model)
    graph = load_model(model).subgraphs[0]
    readers: dict[int, int] = {}
    for op in graph.operators:
        for t in op.inputs if op.inputs is not None else []:
            readers[int(t)] = readers.get(int(t), 0) + 1
    ends = {int(t) for t in graph.inputs} | {int(t) for t in graph.outputs}
    buffers = []
    for b in problem.buffers:
        index = int(b.id.split(":", 1)[0])
        buffers.append(b.__class__(b.id, b.size, b.start, b.end, b.alignment,
                                   ("dram",) if index in ends else (), traffic=b.size * (
                                       1 + readers.get(index, 0))))
    return problem.replace(buffers=tuple(buffers),
                           pools=(Pool("sram", capacity=sram, alignment=16),
                                  Pool("dram", alignment=16)))


def exact(got: dict) -> tuple[int, int, int, int]:
    """(decisions agreed, decisions, addresses agreed, addresses) on Vela's own inputs."""
    from cpplan.replicas.vela import fast_storage, hill_climb

    same = total = same_at = at = 0
    for call in got["fast"]:
        lrs = call["lrs"]
        s = np.asarray([r["start"] for r in lrs], np.int64)
        e = np.asarray([r["end"] for r in lrs], np.int64)
        stay, _ = fast_storage(s, e + 1, s, e, np.asarray([r["size"] for r in lrs]),
                               np.asarray([r["access"] for r in lrs]),
                               np.asarray([r["competes"] for r in lrs]), call["limit"])
        for r, k in zip(lrs, stay.tolist(), strict=True):
            if r["competes"]:
                total += 1
                same += r["stays"] == k
    for climb in got["climbs"]:
        lrs = climb["lrs"]
        a = hill_climb(*(np.asarray([r[k] for r in lrs]) for k in range(4)), climb["limit"],
                       climb["max_iterations"])
        at += len(lrs)
        same_at += int((a == np.asarray(climb["addresses"])).sum())
    return same, total, same_at, at


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sram", default="2048,4096,8192,12288",
                    help="SRAM sizes in bytes, comma-separated")
    args = ap.parse_args()
    for module, extra in (("ethosu.vela", "vela"), ("tflite_micro", "tflite")):
        try:
            __import__(module)
        except ImportError as e:
            print(f"missing module {e.name or module}: pip install \".[{extra}]\" (this "
                  "benchmark needs \".[vela,tflite]\")", file=sys.stderr)
            return 1

    sizes = [int(s) for s in args.sram.split(",")]
    print("| model | SRAM | exact: decisions | exact: addresses | Vela FMs in SRAM | "
          "replica (TFLM view) FMs in SRAM | same choice (names in both) | Vela SRAM / DRAM "
          "arena | replica SRAM / DRAM |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as out:
        for model in sorted((ROOT / "instances" / "tflite").glob("*_int8.tflite")):
            for sram in sizes:
                try:
                    row(model, sram, out)
                except Exception as e:
                    failed.append(f"{model.stem} at {sram}")
                    first = (str(e).strip().splitlines() or [""])[0][:160]
                    print(f"| {model.stem} | {sram} | FAILED: {type(e).__name__}: {first} |",
                          flush=True)
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


def row(model: Path, sram: int, out: str) -> None:
    """Compile ``model`` with ``sram`` bytes of SRAM and print its row."""
    from cpplan.errors import CapacityError
    from cpplan.planners.registry import get
    from tests.replicas.vela_capture import compile_model

    got = compile_model(str(model), sram, out)
    same, total, same_at, at = exact(got)
    final = got["fast"][-1]["lrs"]
    vela_fast = {t: r["stays"] for r in final if r["competes"]
                 for t in r["tensors"]}
    problem = traffic_problem(model, sram)
    try:
        plan = get("vela")(problem)
    except CapacityError as err:
        print(f"| {model.stem} | {sram} | {same}/{total} | {same_at}/{at} | "
              f"{sum(vela_fast.values())}/{len(vela_fast)} | fails: {err} |", flush=True)
        return
    ours = {b.id.split(":", 1)[1]: plan.placements[b.id].pool == "sram"
            for b in problem.buffers if not b.pools}
    both = sorted(set(ours) & set(vela_fast))
    agree = sum(ours[n] == vela_fast[n] for n in both)
    used = got["used"]
    print(f"| {model.stem} | {sram} | {same}/{total} | {same_at}/{at} | "
          f"{sum(vela_fast.values())}/{len(vela_fast)} | "
          f"{sum(ours.values())}/{len(ours)} | {agree}/{len(both)} | "
          f"{used['scratch_fast']} / {used['scratch']} | "
          f"{plan.heights['sram']} / {plan.heights['dram']} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
