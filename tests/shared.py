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


def require(module: str, extra: str) -> object:
    """Import ``module`` of an optional extra: skip the test without it, but fail under CI
    (env var ``CI`` set), where every extra is installed and a skip would hide a break."""
    import importlib
    import os

    try:
        return importlib.import_module(module)
    except ImportError as e:
        message = f"{module} is not installed (pip install 'cpplan[{extra}]'): {e}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message, allow_module_level=True)
