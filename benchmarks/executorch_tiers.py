"""Memory tiers in ExecuTorch: what SRAM serves under ExecuTorch's planners and under cpplan.

Each model is exported, lowered with ``to_edge`` (after ``constant_prop_pass``) and planned in
two memories, fastest first: SRAM (traffic cost 1 per byte moved) at 1/8, 1/4 and 1/2 of the
model's single-arena optimum (cpplan's proven optimal arena), and DRAM (cost 4) unbounded.
A tensor moves its bytes once when written and once per operator that reads it
(``cpplan.runtimes.executorch.spec_traffic``). On the same tensors, ExecuTorch's
``BankedGreedy`` and the Cadence backend's ``PositionBasedGreedyWithHierarchy`` and
``GreedyWithHeuristic`` run for real (from the executorch wheel); cpplan solves the problem
for ``--time-limit`` seconds (``--decoder-time-limit`` for the decoder). Printed per model and
SRAM size: the share of the bytes moved that SRAM serves under each planner and each one's
traffic cost (``fails`` where it aborts), cpplan's proven lower bound, status, gap and seconds
(and the real planners' seconds). With ``--run`` cpplan's program runs in
``executorch.runtime`` beside the default one ("same": bit-identical outputs).

    python benchmarks/executorch_tiers.py                          # every model below
    python benchmarks/executorch_tiers.py --models resnet18,llama --run
    python benchmarks/executorch_tiers.py --save /tmp/tiers        # the problems, as JSON

``llama`` is a Llama-style decoder from ``transformers``' ``LlamaConfig`` (24 layers, hidden
size 64, grouped-query attention, a static KV cache of 64 positions, 8 tokens; about 2000
tensors), ``bert`` a 4-layer BERT encoder (hidden 256, 128 tokens); the CNNs are torchvision's
at ``--size`` pixels. Needs ``pip install ".[executorch]"``: without it, says which module is
missing and exits 1. A model or SRAM size that fails (an exception, a lowering that fails, or
outputs that differ) is marked in its row, and the script exits 1 after the others.

Takes roughly 15 min on this 2-core machine with the defaults (estimated: the eight models
before ``llama`` take about 4 min, the decoder alone more than 6), 15-20 min with ``--run``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

MODELS = ("resnet18", "mobilenet_v2", "googlenet", "shufflenet_v2_x1_0", "mobilenet_v3_small",
          "efficientnet_b0", "densenet121", "bert", "llama")
SHARES = (8, 4, 2)  # SRAM = optimum / share


def model_of(name: str, size: int):
    """(model, inputs, edge program)."""
    from cpplan.runtimes import executorch as et
    from cpplan.runtimes.executorch_models import (
        export,
        llama_decoder,
        torchvision_model,
        transformer_model,
    )

    if name == "llama":
        model, inputs = llama_decoder(layers=24, tokens=8)
        return model, inputs, et.edge_program(export(model, inputs, strict=True),
                                              constant_prop=True)
    if name == "bert":
        model, inputs = transformer_model(layers=4, hidden=256, heads=4, tokens=128)
    else:
        model, inputs = torchvision_model(name, size)
    return model, inputs, et.edge_program(export(model, inputs), constant_prop=True)


def measure(name: str, size: int, time_limit: float, run: bool, save: Path | None) -> list[dict]:
    import torch

    from cpplan.io import write_problem
    from cpplan.memories import Memory
    from cpplan.runtimes import executorch as et
    from cpplan.solve import solve

    model, inputs, edge = model_of(name, size)
    problems, sizes, default_pte = et.greedy_problems(edge)
    single = solve(problems[-1], time_limit=10)
    optimum = single.heights["mem1"]
    rows = []
    for share in SHARES:
        memories = [Memory("sram", optimum // share // 64 * 64, 1), Memory("dram", None, 4)]
        mpp = et.memory_planning_pass(time_limit=time_limit, memories=memories)
        started = time.perf_counter()
        try:
            program = et.lower(edge, mpp)
        except Exception as e:  # no plan: say so in the row
            error = et._cpplan_error(e, "lowering failed")
            rows.append({"model": name, "share": share, "error": str(error)})
            continue
        lowering = time.perf_counter() - started
        (report,) = mpp.tiers[-1:]
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
            write_problem(mpp.cpplan.problems[-1], save / f"{name}_sram1of{share}.json")
        same = None
        if run:
            from executorch.runtime import Runtime

            outs = [Runtime.get().load_program(pte).load_method("forward")
                    .execute(list(inputs)) for pte in (bytes(program.buffer), default_pte)]
            same = all(torch.equal(a, b) for a, b in zip(*outs, strict=True))
        rows.append({"model": name, "share": share, "report": report, "same": same,
                     "optimum": optimum, "single": single.status, "lowering": lowering,
                     "greedy": sizes[-1][1]})
    return rows


def served(o) -> str:
    if not o.ok:
        return "fails"
    moved = sum(u.traffic for u in o.use)
    return f"{100 * o.use[0].traffic / moved:.1f} %" if moved else "-"


def cost(o) -> str:
    return "fails" if not o.ok else f"{o.traffic_cost:,}"


HEAD = ("| model | tensors | SRAM (of the optimum) | served from SRAM: banked / cadence pos. / "
        "cadence heur. / cpplan | traffic cost: banked / cadence pos. / cadence heur. / cpplan "
        "| cpplan bound | status | gap | cpplan s | ExecuTorch's planners s | same |\n"
        "| --- | ---: | ---: | --- | --- | ---: | --- | ---: | ---: | --- | --- |")


def row(r: dict) -> str:
    if "error" in r:
        return f"| {r['model']} | | 1/{r['share']} | {r['error']} |"
    rep = r["report"]
    others = [rep.outcome(n) for n in ("banked_greedy", "cadence position", "cadence heuristic")]
    tag = {"replica": " (replica)"}
    names = " / ".join(served(o) + tag.get(o.source, "") for o in others)
    costs = " / ".join(cost(o) for o in others)
    same = {None: "-", True: "yes", False: "NO"}[r["same"]]
    gap = "?" if rep.gap is None else f"{100 * rep.gap:.2f} %"
    theirs = " / ".join(f"{o.seconds:.1f}" for o in others)
    optimum = f"{r['optimum']:,}" + ("" if r["single"] == "optimal" else " (not proven)")
    return (f"| {r['model']} | {rep.tensors} | {rep.memories[0].capacity:,} (1/{r['share']} of "
            f"{optimum}) | "
            f"{names} / **{served(rep.cpplan)}** | {costs} / **{cost(rep.cpplan)}** | "
            f"{rep.lower_bound:,} | {rep.status} | {gap} | {rep.seconds:.2f} | {theirs} | "
            f"{same} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated: torchvision model names, bert, llama")
    ap.add_argument("--size", type=int, default=224, help="CNN input height and width")
    ap.add_argument("--time-limit", type=float, default=10.0, help="cpplan seconds per model")
    ap.add_argument("--decoder-time-limit", type=float, default=60.0,
                    help="cpplan seconds for the llama decoder")
    ap.add_argument("--run", action="store_true",
                    help="run cpplan's program and the default one, compare outputs")
    ap.add_argument("--save", type=Path, default=None,
                    help="write each problem here as NAME_sram1ofK.json")
    args = ap.parse_args()
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    try:
        import executorch.exir  # noqa: F401
        import torchvision  # noqa: F401
        if {"bert", "llama"} & set(names):
            import transformers  # noqa: F401
    except ImportError as e:
        print(f"missing module {e.name or e}: pip install \".[executorch]\"", file=sys.stderr)
        return 1
    print(f"fp32, batch 1, CNNs at {args.size} x {args.size}, alignment 16; SRAM traffic cost 1, "
          "DRAM 4 (unbounded); cpplan --time-limit "
          f"{args.time_limit} (decoder {args.decoder_time_limit})")
    print(HEAD, flush=True)
    failed: list[str] = []
    for name in names:
        limit = args.decoder_time_limit if name == "llama" else args.time_limit
        try:
            rows = measure(name, args.size, limit, args.run, args.save)
        except Exception as e:
            failed.append(name)
            first = (str(e).strip().splitlines() or [""])[0][:160]
            print(f"| {name} | FAILED: {type(e).__name__}: {first} |", flush=True)
            continue
        for r in rows:
            if "error" in r:
                failed.append(f"{name} 1/{r['share']}: {r['error']}")
            elif r["same"] is False:
                failed.append(f"{name} 1/{r['share']}: outputs differ")
            print(row(r), flush=True)
    if failed:
        print(f"\nFAILED: {'; '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
