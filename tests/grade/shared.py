"""What the tests of grading share: small random problems, the user's planners of the examples,
and planners a user could write for the failure tests (``tests.grade.shared:NAME``)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from cpplan import Buffer, Problem, write_problem
from cpplan.grade import Reference, Report

ROOT = Path(__file__).resolve().parents[2]
FIRST_FIT = f"ff={ROOT / 'examples' / 'first_fit.py'}:plan"
BROKEN = f"broken={ROOT / 'examples' / 'first_fit.py'}:overlapping"


def random_problem(seed: int, n: int = 12, name: str = "") -> Problem:
    rng = random.Random(seed)
    bufs = []
    for i in range(n):
        s = rng.randrange(0, 20)
        bufs.append(Buffer(f"b{i}", rng.choice([8, 16, 24, 32, 64]), s, s + rng.randrange(1, 8)))
    return Problem(tuple(bufs), name=name or f"p{seed}")


def write_instances(folder: Path, count: int = 3) -> list[Path]:
    """``count`` random problems ``p0.json``, ``p1.json``, ... in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for seed in range(count):
        p = folder / f"p{seed}.json"
        write_problem(random_problem(seed), p)
        paths.append(p)
    return paths


# Planners a user could write, for the failure tests (module:function of this very module).
def raises(problem: Problem) -> dict:
    raise RuntimeError("my allocator has a bug")


def returns_nonsense(problem: Problem) -> object:
    return [1, 2, 3]


def pooled(problem: Problem) -> dict:
    """id -> (pool, offset), stacking every buffer (valid, never good)."""
    out, top = {}, 0
    for b in problem.buffers:
        out[b.id] = (problem.pools[0].name, top)
        top += b.size
    return out


def without_times(report: Report) -> Report:
    """``report`` with every time set to 0: what a local and a cluster run must share."""
    def ref(r: Reference | None) -> Reference | None:
        return None if r is None else replace(r, seconds=0.0)

    return replace(report, seconds=0.0, instances=tuple(
        replace(i, seconds=0.0, reference=ref(i.reference),
                results=tuple(replace(r, seconds=0.0) for r in i.results))
        for i in report.instances))
