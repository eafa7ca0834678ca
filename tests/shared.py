"""Where the shared public benchmark instances are (beside the repository, never copied in)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / ".." / "shared" / "benchmarks"


def benchmark(*parts: str) -> Path:
    """Path of a shared benchmark file; skips the test with a clear message when absent."""
    path = BENCHMARKS.joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"shared benchmark {path.resolve()} is absent (expected the folder "
                    "shared/benchmarks beside the repository)")
    return path
