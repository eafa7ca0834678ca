"""Does every registered planner honour ``--time-limit``? ``cpplan solve --planner X`` on one
instance (default idealloc's Y_1, 62185 buffers) for every registered X, as a user runs it.

Per planner it prints the wall time of the whole command (start-up and reading the file
included), the status, the height as a multiple of the max-load L, whether the plan written
passes ``cpplan check``, and, for a planner out of time, that its answer is the fallback (the
no-reuse stacking, status unknown). The acceptance is a wall time within ``T + 0.5`` s and a
checked plan for every planner.

    python benchmarks/planner_limits.py                       # Y_1, T = 1 s
    python benchmarks/planner_limits.py --instance S_1 --time-limit 2

Prints each planner's row as its command ends; exits 1 after the last when a command failed or
a plan failed ``cpplan check`` (a wall time past ``T + 0.5`` s is printed, not an error: it
moves with the machine's load). Takes about 2 min on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from shared_sets import instance_files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instance", default="Y_1")
    ap.add_argument("--set", default="idealloc")
    ap.add_argument("--time-limit", type=float, default=1.0)
    ap.add_argument("--planners", nargs="*", default=None)
    args = ap.parse_args()
    files = instance_files(args.set, [args.instance])
    if files is None:
        return 0
    if not files:
        print(f"no instance named {args.instance} in the {args.set} set")
        return 1
    path = files[0]
    from cpplan.bounds import objective_lower_bound
    from cpplan.io import read_problem
    from cpplan.planners import names

    lb = objective_lower_bound(read_problem(path))
    planners = args.planners or names()
    print(f"{path.name}: max-load L = {lb}; --time-limit {args.time_limit:g}")
    print(f"{'planner':<34} {'wall s':>7} {'status':<9} {'height/L':>9}  checked  note",
          flush=True)
    worst = 0.0
    failed: list[str] = []
    for name in planners:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "plan.json"
            t0 = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "cpplan.cli", "solve", str(path), "--planner", name,
                 "--time-limit", str(args.time_limit), "--quiet", "--json", "-o", str(out)],
                capture_output=True, text=True)
            wall = time.perf_counter() - t0
            worst = max(worst, wall)
            try:
                record = json.loads(done.stdout)
            except json.JSONDecodeError:
                err = (done.stderr.strip().splitlines() or ["?"])[-1]
                failed.append(f"{name}: {err}")
                print(f"{name:<34} {wall:7.2f} {'error':<9} {'-':>9}  -        {err[:60]}",
                      flush=True)
                continue
            checked = "-"
            if out.exists():
                ok = subprocess.run([sys.executable, "-m", "cpplan.cli", "check", str(path),
                                     str(out)], capture_output=True, text=True).returncode == 0
                checked = "yes" if ok else "NO"
                if not ok:
                    failed.append(f"{name}: its plan fails cpplan check")
            ratio = "-" if not record.get("objective") else f"{record['objective'] / lb:.4f}"
            note = "fallback (out of time)" if record.get("stats", {}).get("out_of_time") else ""
            if wall > args.time_limit + 0.5:
                note = (note + "; " if note else "") + "past T + 0.5 s"
            print(f"{name:<34} {wall:7.2f} {record['status']:<9} {ratio:>9}  {checked:<8} "
                  f"{note}", flush=True)
    print(f"slowest command: {worst:.2f} s (limit {args.time_limit:g} s)")
    for f in failed:
        print(f"FAILED {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
