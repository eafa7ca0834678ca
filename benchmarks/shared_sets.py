"""Where the public instance sets are: ``$CPPLAN_BENCHMARKS``, else ``shared/benchmarks``
beside the repository (``python benchmarks/fetch_sets.py`` puts them there)."""

from __future__ import annotations

import os
from pathlib import Path

SHARED = Path(os.environ.get("CPPLAN_BENCHMARKS")
              or Path(__file__).resolve().parents[1].parent / "shared" / "benchmarks")
SETS = {"challenging": "minimalloc-challenging", "idealloc": "idealloc"}


def instance_files(set_name: str, names: list[str] | None = None) -> list[Path] | None:
    """The CSV files of one set (only those whose name before the first dot is in ``names``),
    or ``None`` after printing why, when the shared folder is absent."""
    folder = SHARED / SETS[set_name]
    if not folder.is_dir():
        print(f"skipped: {folder} is absent (python benchmarks/fetch_sets.py fetches the public "
              "sets)")
        return None
    files = sorted(folder.glob("*.csv"))
    if names:
        files = [f for f in files if f.stem.split(".")[0] in names]
    return files
