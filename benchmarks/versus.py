"""cpplan side by side with its peers (MiniMalloc, idealloc) in one run, per instance.

Every tool runs from its command line, one after the other on the same machine, so that the
ratios mean something (never compare absolute times across runs). Per instance it prints the
max-load L, and for each tool its wall time and height (``-`` when it gave no answer):

* ``cpplan solve --time-limit T`` (``--fit --capacity C`` on the challenging set, which asks
  MiniMalloc's question "does it fit in C?");
* ``minimalloc --capacity=C`` with C the set's capacity (challenging) or the max-load L (the
  others: a yes is a proven optimum), ``--timeout=T``;
* ``idealloc ex-csv`` (one improvement pass; it needs integer ids and lifetimes of at least 2
  steps, see ../shared/anchors/README.md), with a wall-clock cap of ``T`` plus a minute.

``--tools best-fit`` adds ``cpplan solve --planner best-fit`` (cpplan's greedy planner alone).
With ``--below``, where cpplan's height is above L and not proven optimal (the optimum is
unknown: ``random`` below), MiniMalloc is asked to fit in one byte less: a height in its
column is a better plan than cpplan's.

Families: ``challenging`` (MiniMalloc's A-K), ``idealloc`` (its sets), ``perfect`` and
``aligned`` (perfect packings from :mod:`cpplan.perfect`, optimum = L by construction), the
other constructions of :data:`cpplan.perfect.FAMILIES` (``mosaic``, ``realloc``, ``regroup``,
``serving``, ``multiscale``, ``repeated``, ``stack``, ``ring``, and ``aligned-mosaic`` etc.
with alignments; optimum = L too), ``random`` and ``aligned-random`` (buffers on a random
schedule, not tight: :func:`cpplan.random_problems.random_problem`; the optimum is unknown,
above L), and ``training`` (one training step, forward + loss + backward, of torchvision
networks traced with ``make_fx`` by :func:`cpplan.graph.fx.training_problem`; needs
``.[exports]``).

    python benchmarks/versus.py --families perfect --sizes 2000 10000 --time-limit 60
    python benchmarks/versus.py --families challenging --time-limit 60
    python benchmarks/versus.py --families aligned --sizes 120 --count 10 --time-limit 10
    python benchmarks/versus.py --families training --time-limit 60 --tools cpplan minimalloc
    python benchmarks/versus.py --families random aligned-random --sizes 250 2000 --count 3 \
        --time-limit 10 --tools cpplan best-fit idealloc minimalloc --below
    python benchmarks/versus.py --families mosaic realloc regroup serving multiscale repeated \
        --sizes 250 2000 --count 3 --time-limit 10 --tools cpplan best-fit idealloc minimalloc
    python benchmarks/versus.py --families perfect mosaic realloc regroup serving multiscale \
        repeated stack ring --sizes 250 --count 3 --time-limit 10 --thinned 0.05 \
        --tools cpplan minimalloc

How long it takes depends on the arguments: up to ``--time-limit`` per tool and instance, and
less where they answer early (MiniMalloc often takes the whole limit). On this 2-core machine:
``--families perfect --sizes 2000 10000`` about 2 min and ``--families idealloc --tools cpplan
idealloc`` about 2 min and the ``mosaic realloc regroup serving multiscale repeated`` command
above about 14 min (estimated); the defaults (challenging, perfect, aligned) roughly 10 min
(estimated: MiniMalloc's 60 s limit on the larger packings, idealloc's cap of the limit plus a
minute where it gives no answer).

Each instance's row is printed as its tools end; exits 1 after the last when one of cpplan's
commands failed (``(error: ...)`` in its cell) or an instance raised. A peer giving no answer
is a result (``-``), not a failure; without ``.[exports]`` the ``training`` family says which
module is missing, and the script exits 1.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from shared_sets import instance_files

ROOT = Path(__file__).resolve().parents[1]
ANCHORS = ROOT.parent / "shared" / "anchors"


def _cpplan(path: Path, limit: float, capacity: int | None,
            extra: tuple[str, ...] = ()) -> tuple[float, int | None, str]:
    cmd = [sys.executable, "-m", "cpplan.cli", "solve", str(path), "--time-limit", str(limit),
           "--quiet", "--json", *extra]
    if capacity is not None:
        cmd += ["--fit", "--capacity", str(capacity)]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    try:
        record = json.loads(done.stdout)
    except json.JSONDecodeError:
        return wall, None, "error: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    return wall, record.get("height") or record.get("objective"), record.get("status", "?")


def _minimalloc(path: Path, limit: float, capacity: int) -> tuple[float, int | None]:
    binary = ANCHORS / "minimalloc"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "plan.csv"
        t0 = time.perf_counter()
        try:
            subprocess.run([str(binary), f"--capacity={capacity}", f"--input={path}",
                            f"--output={out}", f"--timeout={int(limit)}s"], capture_output=True,
                           text=True, timeout=limit + 60)
        except subprocess.TimeoutExpired:  # (no answer, as idealloc's below)
            return time.perf_counter() - t0, None
        wall = time.perf_counter() - t0
        if not out.exists():
            return wall, None
        rows = out.read_text().splitlines()
        head = rows[0].split(",")
        i_off, i_size = head.index("offset"), head.index("size")
        height = max((int(r.split(",")[i_off]) + int(r.split(",")[i_size]) for r in rows[1:]),
                     default=0)
    return wall, height


def _idealloc_csv(problem) -> str:
    """idealloc's input: integer ids, lifetimes of at least two steps (every time stamp doubled
    when a lifetime of one step occurs, which keeps every overlap)."""
    k = 2 if any(b.end - b.start == 1 for b in problem.buffers) else 1
    rows = ["id,lower,upper,size" + (",alignment" if any(b.alignment > 1
                                                         for b in problem.buffers) else "")]
    aligned = rows[0].endswith("alignment")
    for n, b in enumerate(problem.buffers):
        row = f"{n},{b.start * k},{b.end * k},{b.size}"
        rows.append(row + (f",{b.alignment}" if aligned else ""))
    return "\n".join(rows) + "\n"


def _idealloc(problem, limit: float) -> tuple[float, int | None]:
    binary = ANCHORS / "idealloc"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.csv"
        src.write_text(_idealloc_csv(problem))
        t0 = time.perf_counter()
        try:
            done = subprocess.run([str(binary), "-i", str(src), "ex-csv"], capture_output=True,
                                  text=True, timeout=limit + 60)
        except subprocess.TimeoutExpired:
            return time.perf_counter() - t0, None
        wall = time.perf_counter() - t0
    m = re.search(r"Makespan\D*(\d+)", done.stdout + done.stderr)
    return wall, int(m.group(1)) if m else None


def _instances(families: list[str], sizes: list[int], count: int, tmp: Path,
               failed: list[str], thin: float = 0.0):
    """(family, name, CSV path, capacity for a "fits?" question or None); perfect packings
    thinned by ``thin`` (:func:`cpplan.perfect.thinned`) where it is not 0."""
    from cpplan.io import write_problem
    from cpplan.perfect import FAMILIES, thinned
    from cpplan.random_problems import random_problem

    generators = {**FAMILIES, "random": random_problem}
    for fam in families:
        # "aligned" alone: aligned perfect packings; "aligned-F": aligned problems of family F.
        generator = generators.get("perfect" if fam == "aligned"
                                   else fam.removeprefix("aligned-"))
        if fam in ("challenging", "idealloc"):
            for f in instance_files(fam) or []:
                yield fam, f.stem, f, (int(f.stem.split(".")[1]) if fam == "challenging"
                                       else None)
        elif generator is not None:
            for n in sizes:
                for seed in range(count):
                    p = generator(n, seed=seed, aligned=fam.startswith("aligned"))
                    if thin and generator is not random_problem:
                        p = thinned(p, thin, seed=seed)
                    path = tmp / f"{p.name}.csv"
                    write_problem(p, path)
                    yield fam, p.name, path, None
        elif fam == "training":
            try:
                import torchvision  # noqa: F401

                from cpplan.graph.fx import TRAINING_MODELS, training_problem
            except ImportError as e:
                print(f"skipped training: missing module {e.name or e} (tracing needs torch and "
                      "torchvision: pip install \".[exports]\")", flush=True)
                failed.append(f"training: missing module {e.name or e}")
                continue
            for arch in TRAINING_MODELS:
                t0 = time.perf_counter()
                p = training_problem(arch)
                path = tmp / f"{p.name}.csv"
                write_problem(p, path)
                print(f"# traced {p.name}: {len(p.buffers)} buffers, "
                      f"{time.perf_counter() - t0:.1f} s", flush=True)
                yield fam, p.name, path, None
        else:
            raise SystemExit(f"unknown family {fam!r}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", nargs="+", default=["challenging", "perfect", "aligned"])
    ap.add_argument("--sizes", type=int, nargs="+", default=[60, 120, 2000, 10000])
    ap.add_argument("--count", type=int, default=1, help="perfect packings per size")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--names", nargs="*", default=None, help="only these instances")
    ap.add_argument("--tools", nargs="+", default=["cpplan", "minimalloc", "idealloc"])
    ap.add_argument("--thinned", type=float, default=0.0, metavar="SHARE",
                    help="take SHARE of each perfect packing's buffers away, all but those "
                         "alive at its middle moment (cpplan.perfect.thinned: optimum = L still)")
    ap.add_argument("--below", action="store_true",
                    help="ask MiniMalloc to fit below cpplan's height where that is above L "
                         "and not proven (instances whose optimum is unknown)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    own = [t for t in ("cpplan", "best-fit") if t in args.tools]
    peers = [t for t in args.tools if t not in own]
    if peers and not ANCHORS.is_dir():
        print(f"skipped peers: {ANCHORS} is absent (the anchors are built for benchmark machines)")
        peers = []
    print(f"time limit {args.time_limit:g} s; wall seconds of each command line; height/L")
    print(f"{'family':16} {'instance':26} {'L':>12}  " + "  ".join(
        f"{t + ' s':>12} {'h/L':>7}" for t in own + peers), flush=True)
    totals: dict[str, float] = {}
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for fam, name, path, cap in _instances(args.families, args.sizes, args.count,
                                                Path(tmp), failed, args.thinned):
            if args.names and name.split(".")[0] not in args.names:
                continue
            try:
                row(fam, name, path, cap, args, own + peers, totals, failed)
            except Exception as e:
                failed.append(f"{name}: {type(e).__name__}: {e}")
                print(f"{fam:16} {name:26} FAILED: {type(e).__name__}: {e}", flush=True)
    print("total wall seconds: " + ", ".join(f"{t} {s:.1f}" for t, s in totals.items()))
    for f in failed:
        print(f"FAILED {f}")
    return 1 if failed else 0


def row(fam: str, name: str, path: Path, cap: int | None, args: argparse.Namespace,
        tools: list[str], totals: dict[str, float], failed: list[str]) -> None:
    """Run every tool on one instance and print its row."""
    from cpplan.blocks import make_blocks
    from cpplan.bounds import objective_lower_bound
    from cpplan.io import read_problem

    problem = read_problem(path)
    lower = objective_lower_bound(make_blocks(problem))
    cells = []
    for tool in tools:  # (in the order of the header)
        status = ""
        if tool == "cpplan":
            wall, h, status = _cpplan(path, args.time_limit, cap)
        elif tool == "best-fit":
            wall, h, status = _cpplan(path, args.time_limit, cap,
                                      ("--planner", "best-fit"))
        elif tool == "minimalloc":
            # (with --below, where cpplan's answer is above L and unproven: can it do better?)
            mine = next((c for c in cells if c[0] == "cpplan"), None)
            below = args.below and cap is None and mine is not None and mine[2] is not None \
                and mine[2] > lower and mine[3] != "optimal"
            wall, h = _minimalloc(path, args.time_limit, mine[2] - 1 if below
                                  else cap if cap is not None else lower)
        elif tool == "idealloc":
            wall, h = _idealloc(problem, args.time_limit)
        else:
            raise SystemExit(f"unknown tool {tool!r}")
        cells.append((tool, wall, h, status))
    line = f"{fam:16} {name:26} {lower:>12}  "
    for tool, wall, h, status in cells:
        totals[tool] = totals.get(tool, 0.0) + wall
        ratio = "-" if h is None else f"{h / lower:.4f}"
        line += f"{wall:>12.2f} {ratio:>7}  "
        if status and status not in ("optimal", "feasible"):
            line += f"({status}) "
        if status.startswith("error"):
            failed.append(f"{name}: {tool}: {status}")
    print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
