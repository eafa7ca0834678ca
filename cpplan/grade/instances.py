"""Which instances are graded: problem files found in the paths given, their names in the
tables, and the plan file of a ``plans:DIR`` planner for each."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import CpplanError

PROBLEM_SUFFIXES = (".json", ".csv")
PLAN_ONLY_SUFFIXES = (".plan.json", ".plan.csv")  # never taken for a problem file
PLAN_SUFFIXES = PLAN_ONLY_SUFFIXES + PROBLEM_SUFFIXES  # tried in this order


def find_instances(paths: Iterable[str | Path]) -> list[Path]:
    """Problem files named by ``paths``: files as given, directories searched recursively for
    ``.json`` and ``.csv`` files (sorted; ``*.plan.*`` files and hidden folders such as the cache
    skipped). A missing path is an error.

    Args:
        paths: Files and folders.

    Returns:
        The problem files, in the order given (each folder's sorted).

    Raises:
        CpplanError: A path that does not exist, or a folder with no problem files.
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file()
                           and f.suffix.lower() in PROBLEM_SUFFIXES
                           and not f.name.lower().endswith(PLAN_ONLY_SUFFIXES)
                           and not any(part.startswith(".") for part in f.relative_to(p).parts))
            if not found:
                raise CpplanError(f"{p}: no .json or .csv problem files in this directory")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise CpplanError(f"{p}: no such file or directory")
    return out


def instance_names(paths: list[Path]) -> list[str]:
    """Instance names: file names without extension, with the folder where two collide."""
    stems = [p.stem for p in paths]
    return [f"{p.parent.name}/{s}" if stems.count(s) > 1 else s
            for p, s in zip(paths, stems, strict=True)]


def plan_file_for(folder: str | Path, instance: str | Path) -> Path | None:
    """The plan in ``folder`` for the instance file ``instance``, or ``None``.

    Tried in order, with ``NAME`` the instance's file name without its extension:
    ``NAME.plan.json``, ``NAME.plan.csv``, ``NAME.json``, ``NAME.csv`` (never the instance file
    itself, so plans may sit beside their problems).
    """
    folder, instance = Path(folder), Path(instance)
    for suffix in PLAN_SUFFIXES:
        cand = folder / f"{instance.stem}{suffix}"
        if cand.is_file() and cand.resolve() != instance.resolve():
            return cand
    return None
