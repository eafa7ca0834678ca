"""Which planners are graded: specs (a registered name, a user's ``module:function`` or
``file.py:function``, a directory of plan files), loading the user's code, and turning what it
returns into a checked plan."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from pathlib import Path
from typing import Any

from ..errors import CpplanError, PlanError
from ..plan import Placement, Plan, check
from ..problem import Problem


@dataclass(frozen=True)
class PlannerSpec:
    """A planner to grade: ``kind`` is ``builtin`` (a registered name), ``function``
    (``module:function`` or ``file.py:function``) or ``plans`` (a directory of plan files).

    Args:
        label: Its name in the tables.
        kind: ``builtin``, ``function`` or ``plans``.
        target: The registered name, ``module:function``, or the plan directory.
    """

    label: str
    kind: str
    target: str

    def __str__(self) -> str:
        return self.label


def parse_planner(text: str) -> PlannerSpec:
    """The planner named by ``text`` (see :mod:`cpplan.grade`); a clear error if unknown.

    ``label=target`` names the planner in the tables. A user function is imported here, so a
    typo fails at once rather than in every instance.

    Args:
        text: ``[label=]NAME``, ``[label=]module:function``, ``[label=]path/file.py:function``
            or ``[label=]plans:DIR``.

    Returns:
        The spec; its label defaults to the target (for a plan directory, the folder's name).

    Raises:
        CpplanError: An empty spec, a missing plan directory, an unknown planner (naming the
            known ones), or a user function that cannot be imported.

    Examples:
        >>> parse_planner("tflite-arena")
        PlannerSpec(label='tflite-arena', kind='builtin', target='tflite-arena')
        >>> parse_planner("mine=cpplan.planners.fit:best_fit").label
        'mine'
    """
    from ..planners import names

    label, sep, target = text.partition("=")
    if not sep:
        label, target = "", text
    label, target = label.strip(), target.strip()
    if not target:
        raise CpplanError(f"empty planner spec {text!r}")
    if target.startswith("plans:"):
        folder = target[len("plans:"):]
        if not Path(folder).is_dir():
            raise CpplanError(f"plan directory {folder!r} does not exist")
        # (the folder's name alone labels its column: "plans:" said twice what it is)
        return PlannerSpec(label or Path(folder).resolve().name, "plans", folder)
    if target in names():
        return PlannerSpec(label or target, "builtin", target)
    if ":" in target:
        load_function(target)
        return PlannerSpec(label or target.rsplit("/", 1)[-1], "function", target)
    from ..planners import get

    get(target)  # raises "unknown planner ... known: ..."
    raise AssertionError("unreachable")


def default_planners() -> list[PlannerSpec]:
    """Every registered replica of a production allocator, as specs (what :func:`grade` grades
    when given no planners)."""
    from ..planners import names

    return [PlannerSpec(n, "builtin", n) for n in names("replica")]


def _is_file_target(where: str) -> bool:
    return where.endswith(".py") or os.sep in where or "/" in where


def user_source(spec: PlannerSpec) -> str | None:
    """The source text of the file behind a ``file.py:function`` spec (``None`` for any other
    kind), so that a machine without the file can run it (:func:`load_function`)."""
    if spec.kind != "function":
        return None
    where = spec.target.rpartition(":")[0]
    return Path(where).read_text(encoding="utf-8") if _is_file_target(where) else None


def load_function(target: str, source: str | None = None) -> Callable[[Problem], Any]:
    """The function named ``module:function`` or ``path/to/file.py:function``; with ``source``,
    the file's text is run instead of reading the file (as a worker of a cluster does).

    Args:
        target: ``module:function`` (imported; the current folder counts, as for
            ``python -m``) or ``path/to/file.py:function``.
        source: The file's text, to run instead of reading the file.

    Returns:
        The function.

    Raises:
        CpplanError: No ``:``, no such file, a module that fails to import (with the error in
            one line), or no such function in it.
    """
    where, _, fname = target.rpartition(":")
    if not where or not fname:
        raise CpplanError(f"planner {target!r}: expected module:function")
    try:
        if source is not None:
            module = _module_from_source(where, source)
        elif _is_file_target(where):
            path = Path(where)
            if not path.is_file():
                raise CpplanError(f"planner {target!r}: no file {where!r}")
            modname = f"_cpplan_user_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]}"
            loaded = sys.modules.get(modname)
            if loaded is None:
                spec = importlib.util.spec_from_file_location(modname, path)
                assert spec is not None and spec.loader is not None
                loaded = importlib.util.module_from_spec(spec)
                sys.modules[modname] = loaded
                spec.loader.exec_module(loaded)
            module = loaded
        else:
            if "" not in sys.path and os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())  # like `python -m`: the current directory counts
            module = importlib.import_module(where)
    except CpplanError:
        raise
    except Exception as e:  # the user's module failed to import: say so in one line
        raise CpplanError(f"planner {target!r}: cannot import {where!r}: "
                          f"{type(e).__name__}: {e}") from None
    fn = getattr(module, fname, None)
    if not callable(fn):
        raise CpplanError(f"planner {target!r}: {where!r} has no function {fname!r}")
    return fn


def _module_from_source(where: str, source: str) -> types.ModuleType:
    # Named by its content: the same file runs once per process, an edited one afresh.
    modname = f"_cpplan_user_{hashlib.sha1(source.encode()).hexdigest()[:12]}"
    module = sys.modules.get(modname)
    if module is None:
        module = types.ModuleType(modname)
        module.__file__ = where
        sys.modules[modname] = module
        exec(compile(source, where, "exec"), module.__dict__)
    return module


def as_plan(problem: Problem, result: object, *, planner: str = "",
            lower_bound: int | None = None, seconds: float = 0.0) -> Plan:
    """What a user's allocator returned, as a plan, rebuilt from its placements and checked.

    ``result`` is a :class:`Plan` or a mapping ``id -> offset`` (in the buffer's first candidate
    pool) or ``id -> (pool, offset)``. Aliased buffers missing from the mapping follow their
    root. Raises :class:`PlanError` (listing violations) if the plan breaks the problem.

    Args:
        problem: The problem the allocator was given.
        result: What it returned.
        planner: Its label, for the plan and the errors.
        lower_bound: The instance's lower bound, for the plan's status.
        seconds: How long it took.

    Returns:
        The checked plan.

    Raises:
        PlanError: ``result`` is neither a plan nor such a mapping, an ``infeasible`` plan, a
            placement that is not an offset or ``(pool, offset)``, or a plan that breaks the
            problem (its first violation, and how many more).
    """
    if isinstance(result, Plan):
        if result.status == "infeasible":
            raise PlanError(f"{planner or 'planner'} found no plan: {result.explanation}")
        raw: Mapping[Any, Any] = result.placements
    elif isinstance(result, Mapping):
        raw = result
    else:
        raise PlanError(f"{planner or 'planner'} returned {type(result).__name__}, expected a "
                        "Plan or a dict id -> offset or id -> (pool, offset)")
    placements: dict[str, Placement] = {}
    for key, value in raw.items():
        bid = str(key)
        if isinstance(value, Integral):
            pool = problem.candidates(bid)[0] if bid in problem.index else problem.pools[0].name
            placements[bid] = Placement(pool, int(value))
        elif isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
            pool, off = value
            placements[bid] = Placement(str(pool), int(off) if isinstance(off, Integral) else off)
        else:
            raise PlanError(f"{planner or 'planner'}: buffer {bid!r} placed at {value!r}; "
                            "expected an offset or (pool, offset)")
    for bid, (root, disp) in problem.root_of.items():
        if bid not in placements and root in placements:
            r = placements[root]
            placements[bid] = Placement(r.pool, r.offset + disp)
    plan = Plan.build(problem, placements, planner=planner, seconds=seconds,
                      lower_bound=lower_bound)
    ensure_checked(problem, plan)
    return plan


def ensure_checked(problem: Problem, plan: Plan) -> None:
    """Raise :class:`PlanError` naming the plan's first violation (and how many more)."""
    bad = check(problem, plan)
    if bad:
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise PlanError(f"{bad[0]}{more}", bad)
