"""ExecuTorch's greedy arena against cpplan's, on real PyTorch programs.

Each model (torchvision, ``weights=None``, batch-norm statistics filled from random batches;
``bert`` is a small BERT built from a configuration) is exported, lowered with ``to_edge`` and
planned by cpplan's ``memory_planning_pass``, which also runs ExecuTorch's own greedy on the same
tensors. With ``--run`` (default) the default program is lowered too and both run in
``executorch.runtime``: "same" says whether the outputs are bit-identical.

    python benchmarks/executorch.py                       # the default models at 224 x 224
    python benchmarks/executorch.py --models resnet18,bert --size 64 --time-limit 5
    python benchmarks/executorch.py --constant-prop       # also after constant_prop_pass

``--constant-prop`` plans every model twice, without and with ExecuTorch's
``constant_prop_pass``, and prints what it changes (the transposed weight of a linear layer,
computed into the arena at run time, becomes a constant).
Needs ``pip install ".[executorch]"``: without it, says which module is missing and exits 1.
A model that fails (an exception, or outputs that differ) is marked FAILED in its row, and the
script exits 1 after the others.

Takes about 5 min on this 2-core machine with the defaults, about 12 min with
``--constant-prop`` (every model exported and planned twice).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# This file is named like the package it measures: its own folder must not shadow the package.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

MODELS = ("mobilenet_v3_small", "densenet121", "shufflenet_v2_x1_0", "mobilenet_v2",
          "efficientnet_b0", "resnet18", "resnet50", "squeezenet1_1", "mnasnet1_0",
          "regnet_y_400mf", "googlenet", "bert")


def measure(name: str, size: int, time_limit: float, constant_prop: bool, run: bool) -> dict:
    import torch

    from cpplan.runtimes import executorch as et
    from cpplan.runtimes.executorch_models import export, torchvision_model, transformer_model

    if name == "bert":
        model, inputs = transformer_model(layers=4, hidden=256, heads=4, tokens=128)
    else:
        model, inputs = torchvision_model(name, size)
    edge = et.edge_program(export(model, inputs), constant_prop=constant_prop)
    mpp = et.memory_planning_pass(time_limit=time_limit)
    started = time.perf_counter()
    program = et.lower(edge, mpp)
    lowering = time.perf_counter() - started
    (arena,) = [a for a in mpp.arenas if a.mem_id == 1 and a.graph == len(mpp.cpplan.problems) - 1]
    same = None
    if run:
        from executorch.runtime import Runtime

        _, _, default_pte = et.greedy_problems(edge)
        outs = []
        for pte in (bytes(program.buffer), default_pte):
            method = Runtime.get().load_program(pte).load_method("forward")
            outs.append(method.execute(list(inputs)))
        same = all(torch.equal(a, b) for a, b in zip(*outs, strict=True))
    return {"model": name, "tensors": arena.buffers, "greedy": arena.greedy_bytes,
            "cpplan": arena.bytes, "bound": arena.lower_bound, "seconds": arena.seconds,
            "status": arena.status, "same": same, "lowering": lowering}


def row(r: dict) -> str:
    saving = 100 * (r["greedy"] - r["cpplan"]) / r["greedy"] if r["greedy"] else 0.0
    over = 100 * (r["greedy"] - r["bound"]) / r["bound"] if r["bound"] else 0.0
    same = {None: "-", True: "yes", False: "NO"}[r["same"]]
    return (f"| {r['model']} | {r['tensors']} | {r['greedy']:,} | {r['cpplan']:,} | "
            f"{r['bound']:,} | {over:.1f} % | {saving:.1f} % | {r['seconds']:.2f} | "
            f"{r['status']} | {same} |")


def first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [""])[0][:160]


HEAD = ("| model | tensors | greedy bytes | cpplan bytes | lower bound | greedy over bound | "
        "saving | cpplan s | status | same outputs |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated torchvision model names, or bert")
    ap.add_argument("--size", type=int, default=224, help="input height and width (pixels)")
    ap.add_argument("--time-limit", type=float, default=10.0, help="cpplan seconds per arena")
    ap.add_argument("--constant-prop", action="store_true",
                    help="also plan after constant_prop_pass and report what it changes")
    ap.add_argument("--no-run", dest="run", action="store_false",
                    help="do not run the programs to compare outputs")
    args = ap.parse_args()
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    try:
        import executorch.exir  # noqa: F401
        import torchvision  # noqa: F401
        if "bert" in names:
            import transformers  # noqa: F401
    except ImportError as e:
        print(f"missing module {e.name or e}: pip install \".[executorch]\"", file=sys.stderr)
        return 1
    variants = [False, True] if args.constant_prop else [False]
    results: dict[bool, list[dict]] = {v: [] for v in variants}
    failed: list[str] = []
    for cp in variants:
        print(f"\nfp32, batch 1, {args.size} x {args.size}, alignment 16, cpplan "
              f"--time-limit {args.time_limit}" + (", after constant_prop_pass" if cp else ""))
        print(HEAD, flush=True)
        for name in names:
            try:
                r = measure(name, args.size, args.time_limit, cp, args.run)
            except Exception as e:
                failed.append(name + (" (constant_prop_pass)" if cp else ""))
                print(f"| {name} | FAILED: {type(e).__name__}: {first_line(e)} |",
                      flush=True)
                continue
            results[cp].append(r)
            if r["same"] is False:
                failed.append(f"{name}{' (constant_prop_pass)' if cp else ''}: outputs differ")
            print(row(r), flush=True)
    if args.constant_prop:
        print("\nwhat constant_prop_pass changes (bytes: without -> with)")
        print("| model | tensors | lower bound | greedy | cpplan |")
        print("| --- | --- | --- | --- | --- |")
        after = {r["model"]: r for r in results[True]}
        for a in results[False]:
            b = after.get(a["model"])
            if b is None:  # (failed after constant_prop_pass)
                continue
            print(f"| {a['model']} | {a['tensors']} -> {b['tensors']} | {a['bound']:,} -> "
                  f"{b['bound']:,} | {a['greedy']:,} -> {b['greedy']:,} | {a['cpplan']:,} -> "
                  f"{b['cpplan']:,} |")
    if failed:
        print(f"\nFAILED: {'; '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
