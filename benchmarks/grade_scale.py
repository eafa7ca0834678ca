"""How grading scales out: instances graded per minute on this machine's process pool and on a
Dask ``LocalCluster`` (loopback, one thread per worker) with 1 and 2 workers.

Every run grades the same instances with the same planners and a fresh cache (so every
reference is solved, ``--time-limit`` seconds at most each), and says whether the graded
planners' results agree with the first run's and how many references were proven optimal (a
reference stopped by its time limit depends on the machine's load, so the best known heights,
and the ratios, may differ where it is not). Needs the ``distributed`` extra for the cluster
rows. The cluster's start-up is not counted.

    python benchmarks/grade_scale.py                            # instances/onnx, 1 s references
    python benchmarks/grade_scale.py instances/hand --time-limit 5 -p naive -p tflite-greedy

Takes about 30 s on this 2-core machine with the defaults. Prints each runner's row as it
finishes; exits 1 after the last when a run raised, an instance could not be graded, or a
planner's plan was invalid or raised (``grade``'s ``error`` and ``invalid`` cells).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from cpplan.grade import find_instances, grade

ROOT = Path(__file__).resolve().parents[1]


def results(report) -> list:
    """What the graded planners did, instance by instance (times aside)."""
    return [(i.name, i.error, [(r.planner, r.outcome, r.objective) for r in i.results])
            for i in report.instances]


def timed(paths, planners, time_limit, **how):
    with tempfile.TemporaryDirectory() as cache:
        t0 = time.perf_counter()
        report = grade(paths, planners or None, time_limit=time_limit, cache_dir=cache, **how)
        return report, time.perf_counter() - t0


def failures(report) -> list[str]:
    """The instances that could not be graded and the planners whose plan was invalid or that
    raised, as ``instance / planner: outcome``."""
    out = [f"{i.name}: {i.error.splitlines()[0]}" for i in report.instances if i.error]
    return out + [f"{i.name} / {r.planner}: {r.outcome}" for i in report.instances
                  for r in i.results if r.outcome in ("error", "invalid")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=[str(ROOT / "instances" / "onnx")])
    ap.add_argument("--time-limit", type=float, default=1.0)
    ap.add_argument("-p", "--planner", action="append", default=[],
                    help="planner to grade (repeat; default: every replica)")
    args = ap.parse_args()
    paths = find_instances(args.paths)
    print(f"{len(paths)} instances, reference time limit {args.time_limit:g} s, planners: "
          f"{', '.join(args.planner) or 'every replica'}")
    print(f"{'runner':<30} {'seconds':>8} {'instances/min':>14}  {'same results':>12}  "
          "references optimal", flush=True)
    first = None
    failed: list[str] = []

    def row(name: str, report, seconds: float) -> None:
        nonlocal first
        failed.extend(f"{name}: {f}" for f in failures(report))
        same = "-" if first is None else ("yes" if results(report) == first else "NO")
        first = first or results(report)
        optimal = sum(1 for i in report.graded if i.reference and i.reference.status == "optimal")
        print(f"{name:<30} {seconds:8.1f} {60 * len(paths) / seconds:14.1f}  {same:>12}  "
              f"{optimal}/{len(report.graded)}", flush=True)

    def raised(name: str, e: Exception) -> None:
        failed.append(f"{name}: {type(e).__name__}: {e}")
        print(f"{name:<30} FAILED: {type(e).__name__}: {e}", flush=True)

    for jobs in (1, 2):
        name = f"local processes, --jobs {jobs}"
        try:
            report, seconds = timed(paths, args.planner, args.time_limit, jobs=jobs)
        except Exception as e:
            raised(name, e)
            continue
        row(name, report, seconds)
    try:
        import distributed
    except ImportError as e:
        print(f"cluster rows not run: missing module {e.name or e} "
              "(pip install \".[distributed]\")")
        failed.append(f"the cluster rows: missing module {e.name or e}")
        distributed = None
    for workers in (1, 2) if distributed is not None else ():
        name = f"LocalCluster, {workers} worker{'s' * (workers > 1)}"
        try:
            with distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                          processes=True, host="127.0.0.1",
                                          dashboard_address=":0") as cluster, \
                    distributed.Client(cluster) as client:
                report, seconds = timed(paths, args.planner, args.time_limit, cluster=client)
        except Exception as e:
            raised(name, e)
            continue
        row(name, report, seconds)
    for f in failed:
        print(f"FAILED {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
