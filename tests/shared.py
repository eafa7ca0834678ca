"""Where the public benchmark instances are: ``$CPPLAN_BENCHMARKS``, else ``shared/benchmarks``
beside the repository (never copied in; ``python benchmarks/fetch_sets.py`` fetches them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = Path(os.environ.get("CPPLAN_BENCHMARKS") or ROOT / ".." / "shared" / "benchmarks")


def benchmark(*parts: str) -> Path:
    """Path of a shared benchmark file; skips the test with a clear message when absent."""
    path = BENCHMARKS.joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"benchmark set file {path.resolve()} is absent (python "
                    "benchmarks/fetch_sets.py fetches the public sets)")
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
