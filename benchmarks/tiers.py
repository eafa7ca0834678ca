"""Memory tiers on real models: cpplan against the allocators that choose each tensor's memory.

    python benchmarks/tiers.py                       # every model, 10 s per solve
    python benchmarks/tiers.py --models resnet18,branchy_int8 --time-limit 5
    python benchmarks/tiers.py --keep /tmp/cpplan-tiers   # where the two-memory problems go

Models: the ONNX package's model graphs (``instances/onnx``), torchvision CNNs and small
transformers exported to ONNX (``tests/data/onnx``, extracted here, needs ``pip install
".[onnx]"``) and the int8 TFLite Micro models (``instances/tflite``). A model whose input is
absent is skipped with a message. Every buffer moves the bytes the front end counts (size x
(1 write + 1 per operator that reads it), :mod:`cpplan.graph.traffic`).

For each model, the one-arena problem (every buffer in one pool, a byte of height costing 1) is
solved first: its optimum ``H``, or its proven lower bound where the optimum is not proven.
Then every buffer may go to either of two memories (``cpplan.memories.with_memories``):

* **SRAM** of ``H/8``, ``H/4`` and ``H/2`` bytes, traffic cost 1 per byte moved;
* **DRAM**, unbounded, traffic cost 4 per byte (``--dram-cost``): an assumption, the order of
  an off-chip access against an on-chip one in cycles on a microcontroller's external memory
  (energy ratios are larger still, which only widens the spread between good and bad plans).

The heights cost nothing (the memories are there); the objective is the traffic cost,
``sum(traffic x traffic_cost)``. Each tier replica plans the same problem with its own defaults
(``cadence-position-greedy``, ``cadence-greedy-heuristic``, ``executorch-banked-greedy`` with
ExecuTorch's 16-byte alignment, ``vela`` with Vela's 16-byte quantum, ``usmp-greedy-by-size``
with the pools in candidate order), then cpplan's ``tiers-greedy`` and ``cpplan solve`` (the
time limit). Columns: the share of the traffic each serves from SRAM (``<`` where its traffic
cost is below cpplan's, ``fail`` where the planner stops: a packing past the SRAM, an invalid
plan of the original), cpplan's traffic cost, its proven lower bound, status, gap and seconds,
and ``vs best``: cpplan's cost against the best replica's. The two-memory problems are written
to ``--keep`` so that any row can be solved again (``cpplan solve FILE``).

Each model's rows are printed as it finishes (its progress on stderr), the summary at the end.
A model that cannot run (its input absent, the onnx extra missing: the line says which, or
cpplan raising) is named on stderr and again at the end, and the script exits 1 after the
others. Takes about 20 s on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ONNX_INSTANCES = ("resnet50", "densenet121", "inception_v2", "squeezenet", "shufflenet",
                  "vgg19")
EXPORTS = ("resnet18", "mobilenet_v3_small", "shufflenet_v2_x0_5", "squeezenet1_1", "bert",
           "vit", "gpt2", "whisper-tiny-encoder")
TFLM = ("branchy_int8", "mobile_int8", "mean_int8")
FRACTIONS = (8, 4, 2)
REPLICAS = (("cadence-position-greedy", "cad-pos"), ("cadence-greedy-heuristic", "cad-heur"),
            ("executorch-banked-greedy", "banked"), ("vela", "vela"),
            ("usmp-greedy-by-size", "usmp"), ("tiers-greedy", "tiers"))


def load(name: str):
    """The model's problem, or a string saying why it is absent."""
    from cpplan.io import read_problem

    if name in ONNX_INSTANCES:
        path = ROOT / "instances" / "onnx" / f"{name}.json"
    elif name in TFLM:
        path = ROOT / "instances" / "tflite" / f"{name}.json"
    elif name in EXPORTS:
        path = ROOT / "tests" / "data" / "onnx" / f"{name}.dynamo.onnx"
        if not path.is_file():
            return f"{path} is absent"
        from cpplan.errors import CpplanError
        from cpplan.graph.onnx import extract_onnx

        try:
            return extract_onnx(path, name=name)
        except CpplanError as e:  # (the onnx extra missing says so too)
            return f"cannot extract {path.name}: {e}"
    else:
        return f"unknown model (choose from {', '.join(ONNX_INSTANCES + EXPORTS + TFLM)})"
    if not path.is_file():
        return f"{path} is absent"
    return read_problem(path)


@dataclass(frozen=True)
class Row:
    model: str
    tensors: int
    fraction: int
    sram: int
    shares: dict  # label -> (share, cost) or a failure word
    plan: object  # cpplan's
    best_replica: int | None


def run_model(name: str, problem, args) -> list[Row]:
    from cpplan.errors import CpplanError
    from cpplan.io import write_problem
    from cpplan.memories import Memory, with_memories
    from cpplan.planners.registry import get
    from cpplan.solve import solve

    one = with_memories(problem, [Memory("arena", cost=1)])
    single = solve(one, time_limit=args.time_limit, workers=args.workers)
    optimum = single.objective if single.status == "optimal" else single.lower_bound
    what = "optimum" if single.status == "optimal" else "bound"
    print(f"  {name}: one arena {single.objective} bytes ({single.status}); SRAM sizes from the "
          f"{what} {optimum}", file=sys.stderr)
    rows = []
    for k in FRACTIONS:
        sram = optimum // k
        two = with_memories(problem, [Memory("sram", sram, 1), Memory("dram", None,
                                                                      args.dram_cost)])
        two = two.replace(name=f"{name}-sram{k}")
        if args.keep:
            write_problem(two, Path(args.keep) / f"{name}-sram{k}.json")
        shares: dict = {}
        for planner, label in REPLICAS:
            try:
                p = get(planner)(two, time_limit=args.time_limit)
            except CpplanError as e:
                shares[label] = ("fail", str(e).splitlines()[0])
                continue
            if not p.placements or p.status == "unknown":
                shares[label] = ("t/o", p.explanation)
                continue
            shares[label] = (p.fast_share or 0.0, p.objective)
        plan = solve(two, time_limit=args.time_limit, workers=args.workers)
        costs = [v[1] for lab, v in shares.items() if lab != "tiers" and v[0] not in ("fail",
                                                                                       "t/o")]
        rows.append(Row(name, len(problem.buffers), k, sram, shares, plan,
                        min(costs) if costs else None))
        print(f"    1/{k}: {plan.summary()}", file=sys.stderr)
    return rows


def cell(value, ours: int) -> str:
    share, cost = value
    if share in ("fail", "t/o"):
        return share
    return f"{100 * share:.1f}%" + (" <" if cost < ours else "")


def _bytes(n: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def print_row(r: Row, labels: list[str]) -> None:
    p = r.plan
    ours = p.objective
    gap = p.gap if p.gap is not None else float("nan")
    vs = ("-" if r.best_replica is None else
          f"{100 * (ours - r.best_replica) / r.best_replica:+.1f}%")
    share = "-" if p.fast_share is None else f"{100 * p.fast_share:.1f}%"
    print(f"| {r.model} | {r.tensors} | 1/{r.fraction} = {_bytes(r.sram)} | "
          + " | ".join(cell(r.shares[lab], ours) for lab in labels)
          + f" | {share} | {ours} | {p.lower_bound} | {p.status} | {100 * gap:.2f}% | "
          f"{vs} | {p.seconds:.1f} |", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(ONNX_INSTANCES + EXPORTS + TFLM),
                    help="comma-separated model names")
    ap.add_argument("--time-limit", type=float, default=10.0,
                    help="seconds for each solve (and each replica at most)")
    ap.add_argument("--workers", type=int, default=2, help="CP-SAT threads")
    ap.add_argument("--dram-cost", type=int, default=4, help="DRAM's traffic cost per byte")
    ap.add_argument("--keep", default="/tmp/cpplan-tiers",
                    help="write each two-memory problem here ('' to keep none)")
    args = ap.parse_args()
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
    labels = [label for _, label in REPLICAS]
    print(f"SRAM at 1/8, 1/4, 1/2 of the one-arena optimum, traffic cost 1; DRAM unbounded, "
          f"traffic cost {args.dram_cost}; share = traffic served from SRAM "
          f"(< : that planner's traffic cost is below cpplan's); time limit {args.time_limit:g} s")
    print()
    print("| model | tensors | SRAM | " + " | ".join(labels) + " | cpplan | traffic cost | "
          "lower bound | status | gap | vs best replica | s |")
    print("|---|---:|---|" + "---:|" * (len(labels) + 1) + "---:|---:|---|---:|---:|---:|",
          flush=True)
    rows: list[Row] = []
    failed: list[str] = []
    for name in args.models.split(","):
        problem = load(name.strip())
        if isinstance(problem, str):
            failed.append(f"{name}: {problem}")
            print(f"skip {name}: {problem}", file=sys.stderr, flush=True)
            continue
        try:
            got = run_model(name.strip(), problem, args)
        except Exception as e:
            failed.append(f"{name}: {type(e).__name__}: {e}")
            print(f"failed {name}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            continue
        for r in got:
            print_row(r, labels)
        rows += got
    at_or_below = 0
    gaps = []
    above = []
    for r in rows:
        p = r.plan
        gaps.append(p.gap if p.gap is not None else float("nan"))
        rivals = [v[1] for v in r.shares.values() if v[0] not in ("fail", "t/o")]
        if all(p.objective <= c for c in rivals):
            at_or_below += 1
        else:
            above.append(f"{r.model} 1/{r.fraction}")
    print()
    if rows:
        finite = [g for g in gaps if g == g]
        print(f"cpplan's traffic cost at or below every replica's (and tiers-greedy's): "
              f"{at_or_below} of {len(rows)}" + (f" (above on {', '.join(above)})"
                                                 if above else ""))
        print(f"optimal: {sum(r.plan.status == 'optimal' for r in rows)} of {len(rows)}"
              + (f"; gap: max {100 * max(finite):.2f}%, median "
                 f"{100 * statistics.median(finite):.2f}%" if finite else ""))
        open_rows = [r for r in rows if r.plan.status != "optimal"]
        for r in sorted(open_rows, key=lambda r: -(r.plan.gap or 0.0)):
            where = (f": {Path(args.keep) / f'{r.model}-sram{r.fraction}.json'}" if args.keep
                     else "")
            print(f"not proven optimal: {r.model} 1/{r.fraction}, gap "
                  f"{100 * (r.plan.gap or 0.0):.2f}%{where}")
    for f in failed:
        print(f"FAILED {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
