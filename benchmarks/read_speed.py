"""How long reading a MiniMalloc CSV takes in-process (``read_problem``: parse and validate),
building and checking a plan of it, and writing that plan (``write_plan``, as JSON and as CSV).

Prints the machine's load (``uptime``: 2 shared cores, so figures move with it), then per file
the median of ``--repeat`` runs, every run, and the buffer count; then the median time to build
and check a plan (``Blocks.to_plan``, a first check of that problem), in microseconds a buffer:
of the problem as it is, with a gap in every buffer and with an alias for every buffer, beside
what planners keep of their time limit for it (``cpplan.plan.finish_seconds_per_buffer``); then
the median write, beside ``cpplan.io.WRITE_SECONDS_PER_BUFFER`` (what ``cpplan solve`` keeps of
its time limit for writing). Issue 14 asks Y_1 (62185 buffers) <= 0.5 s to read.

    python benchmarks/read_speed.py [FILE ...] [--repeat 3]

Takes about 20 s on this 2-core machine with the defaults. A file named that is absent or
cannot be read is reported on its line and the script exits 1 after the others; without the
public sets (the default file) it says so and exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from cpplan.io import WRITE_SECONDS_PER_BUFFER, read_problem, write_plan
from cpplan.plan import FINISH_SECONDS_PER_BUFFER, FINISH_SECONDS_PER_BUFFER_LOOPS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from shared_sets import SHARED  # noqa: E402

DEFAULT = SHARED / "idealloc"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not args.files and not (DEFAULT / "Y_1.csv").exists():
        print(f"skipped: {DEFAULT / 'Y_1.csv'} is absent (python benchmarks/fetch_sets.py fetches "
              "the public sets)")
        return 0
    files = args.files or [DEFAULT / "Y_1.csv"]
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
          flush=True)
    failed = []
    for path in files:
        if not path.exists():
            print(f"{path}: not found", flush=True)
            failed.append(str(path))
            continue
        runs = []
        try:
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                problem = read_problem(path)
                runs.append(time.perf_counter() - t0)
        except Exception as e:
            print(f"{path.name}: FAILED: {type(e).__name__}: {e}", flush=True)
            failed.append(path.name)
            continue
        each = ", ".join(f"{t:.3f}" for t in runs)
        print(f"{path.name}: {len(problem.buffers)} buffers, median {statistics.median(runs):.3f} s"
              f" (runs: {each})", flush=True)
        print(f"  build and check: {_finish_us(problem, args.repeat)} (kept: "
              f"{FINISH_SECONDS_PER_BUFFER * 1e6:.1f} us/buffer, with gaps or aliases "
              f"{FINISH_SECONDS_PER_BUFFER_LOOPS * 1e6:.1f})", flush=True)
        print(f"  write: {_write_us(problem, args.repeat)} (kept for writing: "
              f"{WRITE_SECONDS_PER_BUFFER * 1e6:.1f} us/buffer)", flush=True)
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


def _finish_us(problem, repeat: int) -> str:
    """The median time to build and check the no-reuse plan of ``problem`` (a new copy of the
    problem each run: the checker remembers the plans it passed), of ``problem`` itself, with a
    gap in every buffer that lives three steps or more, and with an alias (half its size, at
    displacement 0) for every buffer of two bytes or more, in microseconds a buffer."""
    from cpplan.blocks import make_blocks
    from cpplan.planners.stacking import stack
    from cpplan.problem import Alias, Buffer, Problem

    plain = list(problem.buffers)
    gapped = [Buffer(b.id, b.size, b.start, b.end, b.alignment, gaps=((b.start + 1,
                     b.start + 2),)) if b.end - b.start >= 3 else b for b in plain]
    views = [Buffer(f"{b.id}.view", b.size // 2, b.start, b.end) for b in plain if b.size >= 2]
    out = []
    for name, buffers, aliases in (
            ("as it is", plain, ()), ("gaps", gapped, ()),
            ("aliases", plain + views, tuple(Alias(v.id, v.id.removesuffix(".view"), 0)
                                             for v in views))):
        runs = []
        for _ in range(repeat):
            copy = Problem(tuple(buffers), problem.pools, aliases)
            blocks = make_blocks(copy)
            pools, offsets = stack(blocks, ticking=False)
            t0 = time.perf_counter()
            blocks.to_plan(pools, offsets, planner="naive")
            runs.append((time.perf_counter() - t0) / len(buffers))
        out.append(f"{name} {statistics.median(runs) * 1e6:.2f} us/buffer")
    return ", ".join(out)


def _write_us(problem, repeat: int) -> str:
    """The median time to write the no-reuse plan of ``problem`` as JSON and as CSV, in
    microseconds a buffer (the plan is checked once before, as ``write_plan`` does)."""
    import tempfile

    from cpplan.planners import registry

    plan = registry.info("naive")(problem)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for ext in ("json", "csv"):
            runs = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                write_plan(problem, plan, Path(tmp) / f"plan.{ext}")
                runs.append(time.perf_counter() - t0)
            us = statistics.median(runs) / max(1, len(problem.buffers)) * 1e6
            out.append(f"{ext} {us:.2f} us/buffer")
    return ", ".join(out)


if __name__ == "__main__":
    sys.exit(main())
