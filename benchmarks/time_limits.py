"""Does ``cpplan solve --time-limit T`` end on time, and Ctrl-C at once? On every shared instance.

For each instance and each limit T, runs the command line as a user would and prints the solve
time cpplan reports (the planning: reading the file, start-up and writing aside), the wall time
of the whole command, its overrun past T (the limit covers the whole command: on Linux from the
process's start, Python's start-up and cpplan's imports included), and the status. With
``--ctrl-c S`` it also sends SIGINT after S seconds of a 60 s solve and prints how long the
command took to exit after it, and whether the plan it wrote passes ``cpplan check``.

    python benchmarks/time_limits.py                    # T = 1 and 5, every instance
    python benchmarks/time_limits.py --limits 1 --sets idealloc --ctrl-c 3
    python benchmarks/time_limits.py --limits 1 3 10 --sets --families mosaic repeated

``--families`` adds the generated problems of :data:`cpplan.perfect.FAMILIES` (``--size``
buffers, seed 0; ``aligned-`` before a name for its aligned variant): at zero slack, where the
searches' fixed costs (listing the candidate holes, building their model) are largest.

Each row is printed as its command ends; exits 1 after the last when a command failed (no JSON
record: the row gives its last error line) or, with ``--ctrl-c``, a plan written after SIGINT
fails ``cpplan check`` (an overrun is printed, not an error: it moves with the machine's load).
Takes about 70 s on this 2-core machine with the defaults (``--ctrl-c S`` adds about S + 3 s
per instance).
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
    try:
        record = json.loads(done.stdout)
    except json.JSONDecodeError:
        why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise RuntimeError(why) from None
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limits", type=float, nargs="+", default=[1.0, 5.0])
    ap.add_argument("--sets", nargs="*", default=["challenging", "idealloc"],
                    help="shared sets (none: only --families)")
    ap.add_argument("--names", nargs="*", default=None, help="only these instances")
    ap.add_argument("--families", nargs="*", default=[],
                    help="generated problems too (cpplan.perfect.FAMILIES; aligned-NAME)")
    ap.add_argument("--size", type=int, default=2000, help="buffers of each generated problem")
    ap.add_argument("--ctrl-c", type=float, default=None, metavar="S",
                    help="also interrupt a 60 s solve after S seconds")
    args = ap.parse_args()
    files = []
    for s in args.sets:
        got = instance_files(s, args.names)
        if got is None:
            return 0
        files += got
    tmp = tempfile.TemporaryDirectory()  # (the generated problems', until the script ends)
    if args.families:
        from cpplan.io import write_problem
        from cpplan.perfect import FAMILIES

        for name in args.families:
            family = name.removeprefix("aligned-")
            path = Path(tmp.name) / f"{name}-{args.size}-0.json"
            write_problem(FAMILIES[family](args.size, seed=0, aligned=family != name), path)
            files.append(path)
    print(f"{'instance':<22} {'T':>5} {'solve s':>8} {'wall s':>7} {'over T':>7}  status",
          flush=True)
    overruns = []
    failed: list[str] = []
    for path in files:
        for limit in args.limits:
            try:
                seconds, wall, status = run_solve(path, limit)
            except Exception as e:
                failed.append(f"{path.stem} T={limit:g}")
                print(f"{path.stem:<22} {limit:>5g} FAILED: {type(e).__name__}: {e}", flush=True)
                continue
            overruns.append(wall - limit)
            print(f"{path.stem:<22} {limit:>5g} {seconds:>8.2f} {wall:>7.2f} {wall - limit:>+7.2f}"
                  f"  {status}", flush=True)
    if overruns:
        print(f"wall time past T: median {statistics.median(overruns):+.2f} s, "
              f"max {max(overruns):+.2f} s")
    if args.ctrl_c is not None:
        print(f"\n{'instance':<22} {'exit after SIGINT s':>20}  plan checked")
        for path in files:
            try:
                took, ok = ctrl_c(path, args.ctrl_c)
            except Exception as e:
                failed.append(f"{path.stem} Ctrl-C")
                print(f"{path.stem:<22} FAILED: {type(e).__name__}: {e}", flush=True)
                continue
            if not ok:
                failed.append(f"{path.stem} Ctrl-C: no checked plan")
            print(f"{path.stem:<22} {took:>20.2f}  {'yes' if ok else 'NO'}", flush=True)
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
