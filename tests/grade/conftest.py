"""Fixtures of the grading tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from .shared import write_instances


@pytest.fixture
def instances(tmp_path: Path) -> list[Path]:
    """Three random problems, ``inst/p0.json`` to ``inst/p2.json``."""
    return write_instances(tmp_path / "inst")
