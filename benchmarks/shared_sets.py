"""Where the public instance sets are: ``shared/benchmarks`` beside the repository."""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "benchmarks"
SETS = {"challenging": "minimalloc-challenging", "idealloc": "idealloc"}


def instance_files(set_name: str, names: list[str] | None = None) -> list[Path] | None:
    """The CSV files of one set (only those whose name before the first dot is in ``names``),
    or ``None`` after printing why, when the shared folder is absent."""
    folder = SHARED / SETS[set_name]
    if not folder.is_dir():
        print(f"skipped: {folder} is absent (the shared benchmark sets are not on this machine)")
        return None
    files = sorted(folder.glob("*.csv"))
    if names:
        files = [f for f in files if f.stem.split(".")[0] in names]
    return files
