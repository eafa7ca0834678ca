"""TFLite Micro: TFLM's greedy planner against cpplan's offline plan, measured in TFLM.

    python benchmarks/tflm.py [MODEL.tflite ...] [--time-limit 10]

Without arguments: the project's test models (``instances/tflite/*.tflite``) and
``sine_float.tflite`` from the tflite-micro package. For each model: TFLM's arena head with its
default greedy planner (measured in TFLM), cpplan's head (measured in TFLM with the offline plan
written by ``cpplan tflm``), the lower bound cpplan proved, the saving, and the smallest
``arena_size`` (head + tail + TFLM's temporary planning memory, found by bisection in TFLM) with
which each model allocates and runs. Needs ``pip install ".[tflite]"``: without it, says which
module is missing and exits 1. Each model's row is printed as it finishes; a model that fails
is marked FAILED in its row, and the script exits 1 after the others.

Takes about 10 s on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def default_models() -> list[Path]:
    from tflite_micro.python.tflite_micro import runtime

    return [*sorted((ROOT / "instances" / "tflite").glob("*.tflite")),
            Path(runtime.__file__).with_name("sine_float.tflite")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--time-limit", type=float, default=10.0)
    args = ap.parse_args()
    try:
        import tflite_micro  # noqa: F401

        from cpplan.runtimes.tflm_interpreter import smallest_arena
        from cpplan.runtimes.tflm_plan import plan_model
    except ImportError as e:
        print(f"missing module {e.name or e}: pip install \".[tflite]\"", file=sys.stderr)
        return 1

    head = (f"| {'model':<44} | {'TFLM greedy':>11} | {'cpplan':>8} | {'lower bound':>11} | "
            f"{'saving':>6} | {'status':<8} | {'min arena greedy':>16} | "
            f"{'min arena cpplan':>16} |")
    print(head)
    print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|", flush=True)
    failed = []
    for path in args.models or default_models():
        try:
            r = plan_model(path, time_limit=args.time_limit, deterministic=True)
            bound = r.plan.lower_bound if r.plan.lower_bound is not None else r.lower_bound
            arena_default = smallest_arena(path.read_bytes())
            arena_cpplan = smallest_arena(r.model)
        except Exception as e:
            failed.append(path.name)
            first = (str(e).strip().splitlines() or [""])[0][:160]
            print(f"| {path.name:<44} | FAILED: {type(e).__name__}: {first} |", flush=True)
            continue
        print(f"| {path.name:<44} | {r.default_run.head:>11} | {r.planned_run.head:>8} | "
              f"{bound:>11} | {100 * r.saving:>5.1f}% | {r.plan.status:<8} | "
              f"{arena_default:>16} | {arena_cpplan:>16} |", flush=True)
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
