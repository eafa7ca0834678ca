"""The one exception to cpplan's shared segment trees (:mod:`cpplan.segtree`), measured: the
placer's occupancy tree inlines the walk of :func:`cpplan.segtree.canonical_nodes` in ``add``
and ``query`` instead of calling it.

Times ``best-fit`` (in-process, on an already-read problem, as ``benchmarks/fit_speed.py``)
with the occupancy tree as it is and with a variant that calls the shared walk, alternating,
and prints the median of each and their ratio (the heights must agree). Default instance:
idealloc's Y_1 (62185 buffers), else a perfect packing of 10000 buffers.

    python benchmarks/segtree.py [FILE] [--repeat 5]

Prints each round as it ends (the two variants alternate), then the medians. Exits 1 when the two
variants' heights differ. Takes about 50 s on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from array import array
from pathlib import Path

from shared_sets import SHARED

import cpplan.planners.placer as placer
from cpplan.io import read_problem
from cpplan.perfect import perfect_packing
from cpplan.planners import registry
from cpplan.planners.occupancy import OccupancyTree, add_run, path_union
from cpplan.segtree import canonical_nodes

DEFAULT = SHARED / "idealloc" / "Y_1.csv"


class SharedWalk(OccupancyTree):
    """:class:`OccupancyTree` with :func:`canonical_nodes` called, not inlined."""

    def add(self, q: int, s: int, e: int, x: int, y: int) -> None:
        b = self.buckets
        size = self.size
        c0, c1, f0, f1 = b.span(s, e)
        cover, agg = self.cover, self.agg
        for node in canonical_nodes(size, f0, f1):
            add_run(cover, node, x, y)
        npath = b.npath
        a, c = c0 + size, c1 + size
        if a != c:
            own = npath[a]
            for node in own[:len(own) - len(npath[a >> (a ^ c).bit_length()])]:
                if add_run(agg, node, x, y):
                    break
        for node in npath[c]:
            if add_run(agg, node, x, y):
                break
        piece = (s, e, x, y)
        c = b.part_s[q]
        if c >= 0:
            self.part[c].append(piece)
        c = b.part_e[q]
        if c >= 0:
            self.part[c].append(piece)

    def query(self, s: int, e: int, out: array) -> None:
        b = self.buckets
        size = self.size
        c0, c1, f0, f1 = b.span(s, e)
        cover, agg = self.cover, self.agg
        if f0 < f1:
            nodes = canonical_nodes(size, f0, f1)
            left = c0 + size if c0 < f0 else nodes[0]
            right = c1 + size if c1 >= f1 else nodes[-1]
            for node in nodes:
                got = agg[node]
                if got is not None:
                    out += got
                if node != left and node != right:
                    got = cover[node]
                    if got is not None:
                        out += got
        else:
            left, right = c0 + size, c1 + size
        for node in path_union(b.npath, left, right):
            got = cover[node]
            if got is not None:
                out += got
        part = self.part
        if c0 < f0 or f0 >= f1:
            for ps, pe, x, y in part[c0]:
                if ps < e and pe > s:
                    out.append(x)
                    out.append(y)
        if c1 != c0 and c1 >= f1:
            for ps, pe, x, y in part[c1]:
                if ps < e and pe > s:
                    out.append(x)
                    out.append(y)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
          flush=True)
    path = args.file or DEFAULT
    problem = read_problem(path) if path.exists() else perfect_packing(10_000, seed=0)
    fit = registry.get("best-fit")
    times: dict[str, list[float]] = {"inlined": [], "shared": []}
    heights: dict[str, set[int]] = {"inlined": set(), "shared": set()}
    for k in range(max(args.repeat, 1)):
        for name, tree in (("inlined", OccupancyTree), ("shared", SharedWalk)):
            placer.OccupancyTree = tree
            fresh = problem.replace()  # (the checker checks every run's plan again)
            t0 = time.perf_counter()
            plan = fit(fresh)
            times[name].append(time.perf_counter() - t0)
            heights[name].add(plan.objective)
        print(f"  round {k + 1}: inlined {times['inlined'][-1]:.3f} s, shared "
              f"{times['shared'][-1]:.3f} s", flush=True)
    placer.OccupancyTree = OccupancyTree
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{problem.name or path.name}: best-fit, {len(problem.buffers)} buffers; heights "
          f"inlined {sorted(heights['inlined'])}, shared {sorted(heights['shared'])}")
    for name, got in times.items():
        print(f"  {name:8} median {med[name]:.3f} s (runs: "
              + ", ".join(f"{t:.3f}" for t in got) + ")")
    print(f"  shared walk / inlined: {med['shared'] / med['inlined']:.3f}")
    if heights["inlined"] != heights["shared"]:
        print("FAILED: the heights differ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
