"""Two-tier problems whose optimum is known, solved as a user would, from the command line.

SRAM (capacity W, traffic cost 1) is exactly tiled by a packing of width W from one of
``cpplan.perfect.FAMILIES`` whose buffers each move ``K`` times their size; decoys (random
lifetimes and sizes, overlapping anything) move once their size; DRAM is unbounded (cost 4).
Putting a decoy in SRAM evicts, at some moment, tiled buffers of at least its size, which move
``K`` times more per byte; so the optimum keeps the tiling in SRAM and every decoy in DRAM:
``optimum = K * sum(tiled sizes) + 4 * sum(decoy sizes)``.

For each size and seed it writes the problem, runs ``cpplan solve --time-limit T`` and
``cpplan check`` on the plan, and prints the objective as a multiple of the optimum, the status,
whether the proven bound is at or below the optimum (it must be), and the wall time. Exits 1
when a bound is above the optimum, a plan fails the check, or an answer claims "optimal"
above the optimum, or an instance raises (after the others). At most sizes x seeds x T seconds
and less where solve proves the optimum: about 50 s on this 2-core machine with the defaults.

    python benchmarks/two_tier.py --sizes 60 250 1000 --seeds 3 --time-limit 10
    python benchmarks/two_tier.py --family mosaic --sizes 250
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from cpplan import Buffer, Pool, Problem
from cpplan.io import write_problem
from cpplan.perfect import FAMILIES

K = 4  # bytes moved per byte of a tiled buffer


def two_tier(family: str, n: int, seed: int, decoys: int, width: int = 1 << 16,
             horizon: int = 1000) -> tuple[Problem, int]:
    """The problem and its optimum (see the module's docstring)."""
    rng = np.random.default_rng(seed)
    tiled = FAMILIES[family](n, seed=seed, width=width, horizon=horizon)
    buffers = [replace(b, id="t" + b.id, traffic=K * b.size) for b in tiled.buffers]
    for d in range(decoys):
        start = int(rng.integers(0, horizon - 10))
        end = min(horizon, start + int(rng.integers(1, horizon // 5)))
        size = int(rng.integers(1, width // 4))
        buffers.append(Buffer(f"d{d}", size, start, end, traffic=size))
    optimum = K * sum(b.size for b in tiled.buffers) + 4 * sum(
        b.size for b in buffers if b.id.startswith("d"))
    pools = (Pool("sram", width, cost=0, traffic_cost=1),
             Pool("dram", None, cost=0, traffic_cost=4))
    return Problem(tuple(buffers), pools, name=f"two-tier-{family}-{n}-{seed}"), optimum


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", default="perfect", choices=sorted(FAMILIES))
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 250, 1000])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--decoys", type=float, default=0.25, help="decoys per tiled buffer")
    parser.add_argument("--time-limit", type=float, default=10.0)
    args = parser.parse_args()
    wrong = 0
    print(f"{args.family} tilings of SRAM, {args.decoys:g} decoys per tiled buffer, "
          f"--time-limit {args.time_limit:g}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            for seed in range(args.seeds):
                problem, optimum = two_tier(args.family, n, seed, int(n * args.decoys))
                try:
                    wrong += row(problem, optimum, Path(tmp), args.time_limit)
                except Exception as e:  # (the rest still runs)
                    print(f"{problem.name}: FAILED: {type(e).__name__}: {e}", flush=True)
                    wrong += 1
    return 1 if wrong else 0


def row(problem: Problem, optimum: int, tmp: Path, time_limit: float) -> int:
    """Solve and check ``problem`` from the command line and print its line; 1 if wrong."""
    path = Path(tmp) / f"{problem.name}.json"
    plan_path = Path(tmp) / f"{problem.name}.plan.json"
    write_problem(problem, path)
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "cpplan.cli", "solve", str(path),
                          "--time-limit", str(time_limit), "--json", "-q",
                          "-o", str(plan_path)], capture_output=True, text=True)
    wall = time.perf_counter() - started
    if out.returncode != 0:
        print(f"{problem.name}: solve failed: {out.stderr.strip()}", flush=True)
        return 1
    result = json.loads(out.stdout)
    checked = subprocess.run([sys.executable, "-m", "cpplan.cli", "check", str(path),
                              str(plan_path)], capture_output=True).returncode == 0
    bound, objective = result["lower_bound"], result["objective"]
    sound = (bound is None or bound <= optimum) and checked and not (
        result["status"] == "optimal" and objective != optimum)
    print(f"{problem.name} ({len(problem.buffers)} buffers): "
          f"{objective / optimum:.4f} x optimum, {result['status']}, bound "
          f"{'-' if bound is None else f'{bound / optimum:.4f}'} x optimum, "
          f"check {'ok' if checked else 'FAILED'}, {wall:.1f} s"
          + ("" if sound else "  <-- WRONG"), flush=True)
    return 0 if sound else 1


if __name__ == "__main__":
    sys.exit(main())
