"""Mutation check of the two oracles every other test leans on: the plan checker and the
brute-force reference. Flip one comparison, run the tests that guard that code, and count the
mutants the suite kills. A surviving mutant is a comparison no test can tell from its flip.

Targets (module, functions, the tests that guard them):

- ``checker``: :func:`cpplan.plan.check` and its helpers (``_passes``, ``_aligned``,
  ``_aliases_kept``, ``_overlaps``, ``_traffic``, ``objective_of``, ``_is_int``) and the
  overlap sweep of :mod:`cpplan.sweep` they call (``events``, ``find_overlaps``,
  ``overlaps_of``); guarded by ``tests/test_plan.py`` and ``tests/test_sweep.py``.
- ``oracle``: ``tests/bruteforce.py`` (every function); guarded by the test files that import
  it (``tests/test_solve.py``, ``tests/test_gaps.py``, ``tests/exact/...``).

Each comparison operator is flipped to its neighbour (``<`` and ``<=``, ``>`` and ``>=``,
``==`` and ``!=``, ``in`` and ``not in``, ``is`` and ``is not``), one at a time, in a copy of
the repository (``git worktree``-free: the files are copied to a temporary folder), and the
guarding tests run there with ``-x`` under ``--timeout`` seconds (a mutant that hangs counts as
killed: a test noticed). Prints one line per mutant as it goes and the totals; exits 1 when a
mutant survives. A mutant killed takes a few seconds, one that survives the whole run of its
tests: about 15 minutes for the checker's 79 mutants and 20 for the oracle's 30 on 2 cores.
A survivor is either a gap in the tests or an equivalent mutant (one that changes no answer,
e.g. a fast path made more cautious): read each one.

    python benchmarks/mutation.py                 # both targets
    python benchmarks/mutation.py checker --list  # the mutants only, no tests run
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
          ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


@dataclass(frozen=True)
class Target:
    """A module, the functions in it to mutate (None: all) and the tests that guard it."""
    path: str
    functions: frozenset[str] | None
    tests: tuple[str, ...]


def _importers(module: str) -> tuple[str, ...]:
    """Every test file that imports ``module`` (a name such as ``tests.bruteforce``)."""
    short = module.rsplit(".", 1)[-1]
    return tuple(sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py")
                        if f"import {short}" in (text := p.read_text())
                        or f"{module} import" in text or f".{short} import" in text))


CHECKER_FUNCTIONS = frozenset({"check", "_passes", "_pool_indexes", "_aligned", "_aliases_kept",
                               "_overlaps", "_traffic", "objective_of", "_is_int"})
TARGETS: dict[str, list[Target]] = {
    "checker": [Target("cpplan/plan.py", CHECKER_FUNCTIONS,
                       ("tests/test_plan.py", "tests/test_sweep.py")),
                Target("cpplan/sweep.py", frozenset({"events", "find_overlaps", "overlaps_of"}),
                       ("tests/test_plan.py", "tests/test_sweep.py"))],
    "oracle": [Target("tests/bruteforce.py", None, _importers("tests.bruteforce"))],
}


@dataclass(frozen=True)
class Mutant:
    path: str
    line: int
    function: str
    was: str
    now: str
    source: str  # the whole mutated module


def mutants(target: Target) -> list[Mutant]:
    """One mutant per comparison operator in the target's functions."""
    text = (ROOT / target.path).read_text()
    tree = ast.parse(text)
    sites: list[tuple[str, ast.Compare, int]] = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if target.functions is not None and fn.name not in target.functions:
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Compare):
                sites.extend((fn.name, node, k) for k in range(len(node.ops)))
    out = []
    seen: set[tuple[int, int]] = set()
    for name, node, k in sites:
        key = (id(node), k)
        if key in seen:  # (a nested function is walked twice)
            continue
        seen.add(key)
        op = node.ops[k]
        node.ops[k] = FLIP[type(op)]()
        source = ast.unparse(tree)
        node.ops[k] = op
        out.append(Mutant(target.path, node.lineno, name, SYMBOL[type(op)],
                          SYMBOL[FLIP[type(op)]], source))
    return out


def run(mutant: Mutant, tests: tuple[str, ...], copy: Path, timeout: float) -> str:
    """'killed', 'survived' or 'timeout' for one mutant, run in ``copy``."""
    target = copy / mutant.path
    original = target.read_text()
    target.write_text(mutant.source)
    env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                               "-p", "no:randomly", *tests], cwd=copy, env=env,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    finally:
        target.write_text(original)
    return "survived" if done.returncode == 0 else "killed"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="*", metavar="TARGET",
                        help=f"{' or '.join(TARGETS)} (default: both)")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per mutant's tests")
    args = parser.parse_args()
    names = args.targets or list(TARGETS)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        parser.error(f"unknown target {unknown[0]!r}: choose from {', '.join(TARGETS)}")
    survivors: list[Mutant] = []
    totals: dict[str, tuple[int, int]] = {}
    with tempfile.TemporaryDirectory(prefix="cpplan-mutation-") as tmp:
        copy = Path(tmp)
        for part in ("cpplan", "tests", "instances", "examples", "pyproject.toml"):
            source = ROOT / part
            if source.is_dir():
                shutil.copytree(source, copy / part,
                                ignore=shutil.ignore_patterns("__pycache__", ".cpplan-cache"))
            elif source.exists():
                shutil.copy2(source, copy / part)
        for name in names:
            killed = total = 0
            for target in TARGETS[name]:
                print(f"{name}: {target.path}, guarded by {' '.join(target.tests)}", flush=True)
                for m in mutants(target):
                    total += 1
                    if args.list:
                        print(f"  {m.path}:{m.line} {m.function}: {m.was} -> {m.now}")
                        continue
                    started = time.perf_counter()
                    verdict = run(m, target.tests, copy, args.timeout)
                    killed += verdict != "survived"
                    if verdict == "survived":
                        survivors.append(m)
                    print(f"  {m.path}:{m.line} {m.function}: {m.was} -> {m.now}: {verdict} "
                          f"({time.perf_counter() - started:.1f} s)", flush=True)
            totals[name] = (killed, total)
    if args.list:
        return 0
    for name, (killed, total) in totals.items():
        print(f"{name}: {killed} of {total} mutants killed")
    for m in survivors:
        print(f"survived: {m.path}:{m.line} {m.function}: {m.was} -> {m.now}")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
