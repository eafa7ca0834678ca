"""``cpplan grade`` from the command line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from cpplan.cli import main

from .shared import FIRST_FIT


def test_cli_grade_writes_markdown(instances: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "grade.md"
    result = CliRunner().invoke(main, [
        "grade", str(instances[0].parent), "-p", "naive", "-p", FIRST_FIT, "--time-limit", "1",
        "--cache", str(tmp_path / "c"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.startswith("# cpplan grade: 2 planners on 3 instances")
    assert "| naive |" in text and "| ff |" in text
    assert "grade: 3/3" in result.output  # progress (stderr is mixed in by CliRunner)
    csv_out = tmp_path / "grade.csv"
    result = CliRunner().invoke(main, ["grade", str(instances[0]), "-p", "naive", "-q",
                                       "--time-limit", "0", "-o", str(csv_out)])
    assert result.exit_code == 0 and csv_out.read_text().startswith("instance,")
    result = CliRunner().invoke(main, ["grade", str(instances[0]), "-p", "nosuch"])
    assert result.exit_code == 2 and "unknown planner 'nosuch'" in result.output
    result = CliRunner().invoke(main, ["grade", str(instances[0]), "-p", "nosuchmod:fn"])
    assert result.exit_code == 2 and "cannot import 'nosuchmod'" in result.output


def test_a_cluster_without_the_extra_says_how_to_install_it(instances: list[Path],
                                                              monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    result = CliRunner().invoke(main, ["grade", str(instances[0]), "-p", "naive", "-q",
                                       "--cluster", "tcp://127.0.0.1:8786"])
    assert result.exit_code == 2
    assert result.output.startswith("cpplan: error: grading on a cluster needs the distributed "
                                    "package: pip install \".[distributed]\"")
