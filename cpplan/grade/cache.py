"""The cache of references: one record and one plan per problem *content*, in a directory.

``<key>.json`` records the :class:`~cpplan.grade.Reference`, ``<key>.plan.json`` holds its plan,
where ``key`` is :func:`problem_key`. Only the process that grades (the client of a cluster)
reads and writes it: workers need no shared disk. Deleting the directory is always safe.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

from ..plan import Plan, check
from ..problem import Problem
from .results import Reference

ENGINE = "solve"  # the engine recorded with cached references


def problem_key(problem: Problem) -> str:
    """The first 32 hex digits (128 bits) of the SHA-256 of the problem's content: buffers,
    pools and aliases, in order.

    The name and provenance (``meta``) do not count: the same problem under two names is
    solved once.

    Returns:
        32 lower-case hex digits.
    """
    from ..io.native import problem_to_dict

    data = problem_to_dict(problem)
    data.pop("name", None)
    data.pop("meta", None)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def default_cache_dir() -> Path:
    """``$CPPLAN_CACHE`` if set, else ``.cpplan-cache`` in the current directory."""
    return Path(os.environ.get("CPPLAN_CACHE") or ".cpplan-cache")


def load_cached(cache_dir: Path, key: str, engine: str, time_limit: float) -> Reference | None:
    """The cached reference under ``key`` if usable: the same engine, and final (optimal or
    infeasible) or given at least ``time_limit``; ``None`` when absent, unreadable or stale."""
    path = cache_dir / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        ref = Reference(**{k: data[k] for k in ("objective", "lower_bound", "status", "engine",
                                                "time_limit", "seconds", "planner")})
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent or unreadable: compute again
    if ref.engine != engine:
        return None
    if ref.status not in ("optimal", "infeasible") and ref.time_limit < time_limit:
        return None
    return Reference(**{**asdict(ref), "cached": True})


def store(cache_dir: Path, key: str, ref: Reference, problem: Problem, plan: Plan | None) -> None:
    """Keep ``ref`` and its ``plan`` under ``key`` (atomic writes)."""
    from ..io import write_plan
    from ..io.atomic import write_text_atomic

    cache_dir.mkdir(parents=True, exist_ok=True)
    if plan is not None and plan.status != "infeasible":
        write_plan(problem, plan, cache_dir / f"{key}.plan.json")
    record = {k: v for k, v in asdict(ref).items() if k != "cached"}
    record.update(format="cpplan-reference", key=key, name=problem.name,
                  buffers=len(problem.buffers))
    write_text_atomic(cache_dir / f"{key}.json", json.dumps(record, indent=1) + "\n")


def cached_plan(problem: Problem, cache_dir: str | Path | None = None) -> Plan | None:
    """The reference plan kept in the cache for ``problem`` (checked), or ``None``.

    Args:
        problem: The problem.
        cache_dir: The cache folder; ``None`` for :func:`default_cache_dir`.

    Returns:
        The plan a grading run's reference solve found for a problem of the same content, if
        it is in the cache and passes the checker; ``None`` otherwise.
    """
    from ..io import read_plan

    cdir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path = cdir / f"{problem_key(problem)}.plan.json"
    if not path.is_file():
        return None
    plan = read_plan(path, problem)
    return plan if not check(problem, plan) else None
