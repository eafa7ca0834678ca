"""How much memory does ``cpplan solve`` take? ``cpplan solve FILE --time-limit T`` as a user
runs it, one child process per instance, with the peak resident memory of each.

Per instance it prints the child's peak RSS in MB (``os.wait4``'s ``ru_maxrss``: the
kernel's exact figure for that process and the processes it waited for), the wall time of the
whole command, the status, the height as a multiple of the lower bound the solve proved
(``height/LB``; LB is the max-load unless a probe raised it), and whether the peak is within
the limit (issue 26: at most 300 MB at every size). With ``--timeline`` the child's VmRSS is
sampled every 0.5 s, and the moment of its peak and the curve (every ~5 s) are printed too.

    python benchmarks/solve_memory.py                          # G_1, resnet50, pangu_2.6B, S_1, Y_1
    python benchmarks/solve_memory.py --instances S_1 --timeline
    python benchmarks/solve_memory.py --set challenging --time-limit 10

Prints each instance's row as its command ends; exits 1 after the last when a command failed
(an instance over the memory limit is printed, not an error). Takes about 4 min on this
2-core machine with the defaults (S_1 uses its whole 60 s; the others are proven optimal
sooner).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from shared_sets import instance_files

REPO = Path(__file__).resolve().parents[1]
DEFAULT = ["G_1", "resnet50", "pangu_2.6B", "S_1", "Y_1"]
LIMIT_MB = 300.0
SAMPLE_SECONDS = 0.5


def vm_rss_mb(pid: int) -> float | None:
    """The process's resident memory now (VmRSS), in MB; None once it has ended."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def run(path: Path, time_limit: float, timeline: bool) -> tuple[dict, float, float,
                                                                 list[tuple[float, float]]]:
    """(the plan's JSON record, or {"error": ...}; wall seconds; peak RSS in MB; the sampled
    (seconds, MB) timeline) of one solve in a child process."""
    cmd = [sys.executable, "-m", "cpplan.cli", "solve", str(path), "--time-limit",
           str(time_limit), "--quiet", "--json"]
    samples: list[tuple[float, float]] = []
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        # (run from this checkout, so that its cpplan is the one measured)
        child = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=REPO)
        done = threading.Event()

        def sample() -> None:
            while not done.wait(SAMPLE_SECONDS):
                mb = vm_rss_mb(child.pid)
                if mb is not None:
                    samples.append((time.perf_counter() - t0, mb))

        sampler = threading.Thread(target=sample, daemon=True)
        if timeline:
            sampler.start()
        _pid, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - t0
        done.set()
        child.returncode = os.waitstatus_to_exitcode(status)  # (reaped here, not by Popen)
        peak = usage.ru_maxrss / 1024  # KB on Linux
        out.seek(0)
        err.seek(0)
        try:
            record = json.loads(out.read())
        except json.JSONDecodeError:
            lines = err.read().strip().splitlines() or [f"exit {child.returncode}"]
            record = {"error": lines[-1]}
        if child.returncode != 0 and "error" not in record:
            record = {"error": f"exit {child.returncode}"}
    return record, wall, peak, samples


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", default="idealloc")
    ap.add_argument("--instances", nargs="*", default=None,
                    help=f"names before the first dot (default with idealloc: "
                         f"{' '.join(DEFAULT)}; with another set: all of it)")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--timeline", action="store_true",
                    help=f"sample VmRSS every {SAMPLE_SECONDS} s; print when the peak came")
    args = ap.parse_args()
    names = args.instances or (DEFAULT if args.set == "idealloc" else None)
    files = instance_files(args.set)
    if files is None:
        return 0
    if names:  # (in the order given; a name may hold a dot, as pangu_2.6B does)
        files = [f for n in names for f in files if n in (f.stem, f.stem.split(".")[0])]
    if not files:
        print(f"no such instances in the {args.set} set")
        return 1
    print(f"cpplan solve FILE --time-limit {args.time_limit:g}; limit {LIMIT_MB:g} MB peak RSS")
    print(f"{'instance':<14} {'peak MB':>8} {'wall s':>7} {'status':<9} {'height/LB':>10}  "
          f"{'<=300 MB':<8}", flush=True)
    failed: list[str] = []
    over = 0
    for path in files:
        record, wall, peak, samples = run(path, args.time_limit, args.timeline)
        name = path.stem
        if "error" in record:
            failed.append(f"{name}: {record['error']}")
            print(f"{name:<14} {peak:8.0f} {wall:7.1f} {'error':<9} {'-':>10}  -  "
                  f"{record['error'][:60]}", flush=True)
            continue
        lb, obj = record.get("lower_bound"), record.get("objective")
        ratio = f"{obj / lb:.5f}" if lb and obj else "-"
        ok = peak <= LIMIT_MB
        over += not ok
        print(f"{name:<14} {peak:8.0f} {wall:7.1f} {record['status']:<9} {ratio:>10}  "
              f"{'yes' if ok else 'NO':<8}", flush=True)
        if samples:
            at, top = max(samples, key=lambda s: s[1])
            step = max(1, round(5 / SAMPLE_SECONDS))
            curve = " ".join(f"{t:.0f}s:{mb:.0f}" for t, mb in samples[::step])
            print(f"    sampled peak {top:.0f} MB at {at:.1f} s; {curve}", flush=True)
    print(f"{len(files) - over - len(failed)} of {len(files)} within {LIMIT_MB:g} MB")
    for f in failed:
        print(f"FAILED {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
