"""A report built by hand, covering every outcome and corner of the tables, for the golden
comparison: its markdown, CSV and JSON are kept in tests/data/grade/ as rendered before grading
became a package, and must not change by a byte."""

from __future__ import annotations

from pathlib import Path

from cpplan.grade import InstanceReport, Reference, Report, Result

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "grade"


def golden_report() -> Report:
    ref = Reference(96, 96, "optimal", "solve", 2.0, 0.031, "cp-sat")
    gap = Reference(130, 112, "feasible", "solve", 2.0, 2.004, "cp-sat", cached=True)
    none = Reference(None, 40, "infeasible", "solve", 2.0, 0.2, "cp-sat")
    a = InstanceReport("p0", "inst/p0.json", 12, 96, ref, (
        Result("naive", "ok", 160, {"default": 160}, 0.0012),
        Result("ff", "ok", 96, {"default": 96}, 0.0031),
        Result("broken", "invalid", seconds=0.0005, message="a and b share bytes | at t=3"),
        Result("my|mod:fn", "error", seconds=0.01, message="RuntimeError: bug\nline two"),
    ), 0.5)
    b = InstanceReport("dir/p1", "inst/dir/p1.csv", 1234, 112, gap, (
        Result("naive", "ok", 140, {"sram": 100, "dram": 40}, 0.25),
        Result("ff", "ok", 128, {"sram": 100, "dram": 28}, 0.125),
        Result("broken", "capacity", seconds=0.002, message="b7 fits no pool"),
        Result("my|mod:fn", "timeout", seconds=1.0, message="no plan within 1 s"),
    ), 3.25)
    c = InstanceReport("zero", "inst/zero.json", 2, 0, None, (
        Result("naive", "ok", 8, {"default": 8}, 0.0),
        Result("ff", "ok", 0, {"default": 0}, 0.0),
        Result("broken", "missing", message="no plan for zero.json in plans"),
        Result("my|mod:fn", "ok", 0, {"default": 0}, 0.001),
    ), 0.01)
    d = InstanceReport("tight", "inst/tight.json", 3, 40, none, (
        Result("naive", "ok", 48, {"default": 48}, 0.004),
        Result("ff", "ok", 44, {"default": 44}, 0.004),
        Result("broken", "ok", 41, {"default": 41}, 0.004),
        Result("my|mod:fn", "ok", 43, {"default": 43}, 0.004),
    ), 0.2)
    bad = InstanceReport("bad", "inst/bad.csv", seconds=0.001,
                         error="line 2, field upper: 'x' is not an integer")
    return Report((a, b, c, d, bad), ("naive", "ff", "broken", "my|mod:fn"), 2.0, "solve",
                  7.5)


def golden_no_reference() -> Report:
    a = InstanceReport("p0", "p0.json", 12, 96, None, (
        Result("naive", "ok", 160, {"default": 160}, 0.0012),), 0.1)
    return Report((a,), ("naive",), 0.0, "none", 0.1)


def render(report: Report) -> dict[str, str]:
    return {"md": report.to_markdown(), "csv": report.to_csv(), "json": report.to_json()}
