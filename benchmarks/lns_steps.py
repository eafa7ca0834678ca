"""How the time a window has changes what large neighbourhood search reaches.

LNS (:mod:`cpplan.exact.lns`) re-packs windows of a component's blocks with CP-SAT, each
for at most ``step`` seconds. For each instance this starts it from best-fit's plan and runs
it ``--seconds`` with each step (two CP-SAT threads a window, as ``solve`` runs it once the
machine is its own), over ``--seeds`` seeds of its choice of windows, and prints the height
reached as a multiple of the optimum (or of the max-load, where none is known), with the
windows that lowered it. The instances: perfect packings of :data:`cpplan.perfect.FAMILIES`
(``--families``, ``--size``), thinned (``--thinned``, a share taken away) or whole.

    python benchmarks/lns_steps.py                      # thinned 2000, three families, ~9 min
    python benchmarks/lns_steps.py --families multiscale --thinned 0 --steps 0.3 0.1
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np


def main() -> int:
    from cpplan import make_blocks
    from cpplan.bounds import max_load
    from cpplan.deadline import Budget, PlanOptions
    from cpplan.exact.lns import improve
    from cpplan.perfect import FAMILIES, thinned
    from cpplan.planners import registry

    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", nargs="*", default=["fragments", "stack", "perfect"],
                    choices=sorted(FAMILIES))
    ap.add_argument("--size", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0, help="the instance's seed")
    ap.add_argument("--thinned", type=float, default=0.05)
    ap.add_argument("--steps", type=float, nargs="*", default=[0.3, 0.1, 0.05])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--seeds", type=int, default=2, help="LNS seeds per step")
    args = ap.parse_args()
    print(f"LNS from best-fit, {args.seconds:g} s, two threads a window; height / optimum "
          f"(median over {args.seeds} seeds), windows that lowered it (total)")
    print(f"{'instance':<32} {'best-fit':>8} " + " ".join(f"{'step ' + format(s, 'g'):>17}"
                                                         for s in args.steps))
    for family in args.families:
        problem = FAMILIES[family](args.size, seed=args.seed)
        if args.thinned:
            problem = thinned(problem, args.thinned, seed=args.seed)
        blocks = make_blocks(problem)
        (bound,) = max_load(blocks).values()
        optimum = problem.meta.get("optimum", bound.bytes)
        start = registry.get("best-fit")(problem, PlanOptions(time_limit=args.seconds))
        offsets = np.array([start.placements[b.id].offset for b in problem.buffers],
                           np.int64) // blocks.scale
        ids = np.arange(len(problem.buffers))
        cells = []
        for step in args.steps:
            heights, lowered = [], []
            for seed in range(args.seeds):
                out = improve(blocks, ids, offsets,
                              Budget(args.seconds, options=PlanOptions(args.seconds, seed=seed)),
                              workers=2, step=step, report=lambda h, _o, got=lowered: got.append(h))
                assert out.offsets is not None
                heights.append(int((out.offsets + blocks.size[ids]).max()) * blocks.scale)
            cells.append(f"{statistics.median(heights) / optimum:.4f} {len(lowered):>6}")
        print(f"{problem.name:<32} {start.height / optimum:>8.4f} "
              + " ".join(f"{c:>17}" for c in cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
