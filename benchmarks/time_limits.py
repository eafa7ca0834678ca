"""Does ``cpplan solve --time-limit T`` end on time, and Ctrl-C at once? On every shared instance.

For each instance and each limit T, runs the command line as a user would and prints the solve
time cpplan reports (reading the file and start-up aside), its overrun past T, the wall time of
the whole command, and the status. With ``--ctrl-c S`` it also sends SIGINT after S seconds of a
60 s solve and prints how long the command took to exit after it, and whether the plan it wrote
passes ``cpplan check``.

    python benchmarks/time_limits.py                    # T = 1 and 5, every instance
    python benchmarks/time_limits.py --limits 1 --sets idealloc --ctrl-c 3
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from shared_sets import instance_files


def run_solve(path: Path, limit: float) -> tuple[float, float, str]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "cpplan.cli", "solve", str(path), "--time-limit",
                           str(limit), "--quiet", "--json"], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    record = json.loads(done.stdout)
    return record["seconds"], wall, record["status"]


def ctrl_c(path: Path, after: float) -> tuple[float, bool]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "plan.json"
        proc = subprocess.Popen([sys.executable, "-m", "cpplan.cli", "solve", str(path),
                                 "--time-limit", "60", "--quiet", "-o", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(after)
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        proc.communicate()
        took = time.perf_counter() - sent
        ok = out.exists() and subprocess.run(
            [sys.executable, "-m", "cpplan.cli", "check", str(path), str(out)],
            capture_output=True).returncode == 0
        return took, ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limits", type=float, nargs="+", default=[1.0, 5.0])
    ap.add_argument("--sets", nargs="+", default=["challenging", "idealloc"])
    ap.add_argument("--names", nargs="*", default=None, help="only these instances")
    ap.add_argument("--ctrl-c", type=float, default=None, metavar="S",
                    help="also interrupt a 60 s solve after S seconds")
    args = ap.parse_args()
    files = []
    for s in args.sets:
        got = instance_files(s, args.names)
        if got is None:
            return
        files += got
    print(f"{'instance':<22} {'T':>5} {'solve s':>8} {'over T':>7} {'wall s':>7}  status")
    overruns = []
    for path in files:
        for limit in args.limits:
            seconds, wall, status = run_solve(path, limit)
            overruns.append(seconds - limit)
            print(f"{path.stem:<22} {limit:>5g} {seconds:>8.2f} {seconds - limit:>+7.2f} "
                  f"{wall:>7.2f}  {status}", flush=True)
    print(f"overrun past T: median {statistics.median(overruns):+.2f} s, "
          f"max {max(overruns):+.2f} s")
    if args.ctrl_c is not None:
        print(f"\n{'instance':<22} {'exit after SIGINT s':>20}  plan checked")
        for path in files:
            took, ok = ctrl_c(path, args.ctrl_c)
            print(f"{path.stem:<22} {took:>20.2f}  {'yes' if ok else 'NO'}", flush=True)


if __name__ == "__main__":
    main()
