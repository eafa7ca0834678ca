"""Liveness of a long chain with skip connections: one sweep, target under 5 s for 100k operators.

    python benchmarks/liveness.py [--operators 100000] [--skip 8] [--repeat 3]

Prints the seconds to build the graph, to compute liveness (best of ``--repeat``), and to build
the whole problem (liveness + rewrites + buffers) with in-place on, each line as it is measured.

Takes about 10 s on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import time

from cpplan.graph import liveness, to_problem
from cpplan.graph.models import chain_with_skips


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--operators", type=int, default=100_000)
    ap.add_argument("--skip", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    t = time.perf_counter()
    graph = chain_with_skips(args.operators, skip=args.skip)
    built = time.perf_counter() - t
    print(f"graph: {len(graph.operators)} operators, {len(graph.tensors)} tensors, skip every "
          f"{args.skip} (built in {built:.2f} s)", flush=True)
    best = float("inf")
    for _ in range(args.repeat):
        t = time.perf_counter()
        live = liveness(graph)
        best = min(best, time.perf_counter() - t)
    print(f"liveness: {best:.3f} s (best of {args.repeat}; target < 5 s) for "
          f"{len(live.start)} lifetimes", flush=True)
    t = time.perf_counter()
    problem = to_problem(graph, in_place=True)
    whole = time.perf_counter() - t
    print(f"to_problem with in-place: {whole:.2f} s, {len(problem.buffers)} buffers, "
          f"{len(problem.aliases)} aliases")


if __name__ == "__main__":
    main()
