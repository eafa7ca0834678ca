"""How long reading a MiniMalloc CSV takes in-process: ``read_problem`` (parse and validate).

Prints the machine's load (``uptime``: 2 shared cores, so figures move with it), then per file
the median of ``--repeat`` runs, every run, and the buffer count. Issue 14 asks Y_1 (62185
buffers) <= 0.5 s.

    python benchmarks/read_speed.py [FILE ...] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from cpplan.io import read_problem

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from shared_sets import SHARED  # noqa: E402

DEFAULT = SHARED / "idealloc"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = args.files or [DEFAULT / "Y_1.csv"]
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    for path in files:
        if not path.exists():
            print(f"{path}: not found (skipped)")
            continue
        runs = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            problem = read_problem(path)
            runs.append(time.perf_counter() - t0)
        each = ", ".join(f"{t:.3f}" for t in runs)
        print(f"{path.name}: {len(problem.buffers)} buffers, median {statistics.median(runs):.3f} s"
              f" (runs: {each})")


if __name__ == "__main__":
    main()
