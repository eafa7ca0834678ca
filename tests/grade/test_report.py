"""The report: byte for byte what the one-file grader rendered (markdown, CSV, JSON), and its
statistics."""

from __future__ import annotations

import math

import pytest

from cpplan.grade.report import geomean

from .golden import GOLDEN, golden_no_reference, golden_report, render


@pytest.mark.parametrize("name, build", [("report", golden_report),
                                         ("no-reference", golden_no_reference)])
def test_the_report_is_rendered_as_before(name: str, build) -> None:
    for fmt, text in render(build()).items():
        assert text == (GOLDEN / f"{name}.{fmt}").read_text(encoding="utf-8"), fmt


def test_geomean_skips_what_has_no_ratio() -> None:
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert geomean([2.0, None, math.inf, 0.0, 8.0]) == pytest.approx(4.0)
    assert geomean([None, math.inf]) is None and geomean([]) is None
