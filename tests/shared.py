"""Where the shared public benchmark instances are (beside the repository, never copied in)."""

from __future__ import annotations

import importlib
import os
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


def require(module: str, extra: str | None = None):
    """Import ``module`` for a test that needs an extra: skips cleanly without it, but fails
    under CI (env ``CI`` set), where every extra is installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        why = f"{module} is not installed (pip install 'cpplan[{extra or module}]')"
        if os.environ.get("CI"):
            pytest.fail(f"CI installs every extra, yet {why}")
        pytest.skip(why, allow_module_level=True)
