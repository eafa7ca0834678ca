"""The grade report as a web page: ``cpplan grade ... --format html``."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cpplan.cli import main
from cpplan.io import read_problem

from ..shared import require
from .shared import FIRST_FIT, write_instances


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page of naive, first fit and a planner that fails, on three instances."""
    require("bokeh", "view")
    require("matplotlib", "plot")
    tmp = tmp_path_factory.mktemp("html")
    folder = tmp / "inst"
    write_instances(folder)
    out = tmp / "report.html"
    result = CliRunner().invoke(main, [
        "grade", str(folder), "-p", "naive", "-p", FIRST_FIT,
        "-p", "bad=tests.grade.shared:raises", "--time-limit", "1", "-q",
        "--cache", str(tmp / "cache"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _links(text: str) -> list[str]:
    return re.findall(r'<a href="([^"]+)"', text)


def test_the_page_has_the_leaderboard_the_heat_map_and_a_link_per_valid_plan(page: Path
                                                                              ) -> None:
    text = page.read_text()
    assert "<h1>cpplan grade: 3 planners on 3 instances</h1>" in text
    board = text[text.index('<table class="leaderboard">'):]
    board = board[:board.index("</table>")]
    assert "<td>naive</td>" in board and "<td>ff</td>" in board and "<td>bad</td>" in board
    assert re.search(r'<img class="heat-map" src="data:image/png;base64,[A-Za-z0-9+/=]{200,}',
                     text)
    links = _links(text)
    assert len(links) == 6 == len(set(links))  # naive and ff on 3 instances; bad failed
    for link in links:
        assert link.startswith("report.views/") and (page.parent / link).is_file(), link
    # the heat map's cells link to the same pages
    assert sorted(re.findall(r'<area shape="rect" coords="[0-9,]+" href="([^"]+)"', text)) \
        == sorted(links)
    assert ">error</td>" in text and "p0 / bad: error: RuntimeError: my allocator" in text


def test_a_view_states_the_difference_and_loads_bokeh_from_a_relative_path(page: Path) -> None:
    from cpplan.grade import cached_plan
    from cpplan.planners import get
    from cpplan.view import differences

    link = next(a for a in _links(page.read_text()) if a.endswith("--naive.html"))
    view = page.parent / link
    text = view.read_text()
    problem = read_problem(page.parent / "inst" / (view.name.split("--")[0] + ".json"))
    ref = cached_plan(problem, page.parent / "cache")
    assert ref is not None
    for line in differences(problem, {"naive": get("naive")(problem), "cpplan (reference)": ref}):
        assert line.replace("'", "&#39;") in text
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', text)
    assert scripts == ["bokeh/js/bokeh.min.js"]
    assert (view.parent / scripts[0]).stat().st_size > 500_000
    assert view.stat().st_size < 200_000  # Bokeh is not inline


def test_html_needs_o_and_names_the_extra_without_bokeh(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    inst = write_instances(tmp_path / "inst", 1)[0]
    result = CliRunner().invoke(main, ["grade", str(inst), "-p", "naive", "-q",
                                       "--time-limit", "0", "--format", "html"])
    assert result.exit_code == 2 and "give the file with -o" in result.output
    monkeypatch.setitem(sys.modules, "bokeh", None)  # as if not installed
    result = CliRunner().invoke(main, ["grade", str(inst), "-p", "naive", "-q",
                                       "--time-limit", "0", "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and 'pip install ".[view]"' in result.output
    assert not (tmp_path / "r.html").exists()
    # without views, no Bokeh is needed and no folder is written
    result = CliRunner().invoke(main, ["grade", str(inst), "-p", "naive", "-q", "--no-views",
                                       "--time-limit", "0", "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert "<td>naive</td>" in (tmp_path / "r.html").read_text()
    assert _links((tmp_path / "r.html").read_text()) == []
    assert not (tmp_path / "r.views").exists()


def test_a_linked_view_loads_in_chromium_without_console_errors(page: Path) -> None:
    from ..browser import chromium, console_errors, open_page, panel_names

    with chromium() as driver:
        driver.get(page.resolve().as_uri())
        assert console_errors(driver) == []
        link = _links(page.read_text())[0]
        open_page(driver, page.parent / link)
        assert console_errors(driver) == []
        assert len(panel_names(driver)) == 2  # the plan and the reference


def test_views_in_processes_are_those_of_one_process_and_need_no_reference(tmp_path: Path
                                                                            ) -> None:
    require("bokeh", "view")
    from cpplan.grade import grade, parse_planner
    from cpplan.grade_html import views_dir, write_html

    folder = tmp_path / "inst"
    write_instances(folder)
    specs = [parse_planner("naive"), parse_planner(FIRST_FIT)]
    report = grade([folder], specs, time_limit=0)  # no reference: each view shows one plan
    pages = {}
    for jobs in (1, 2):
        out = write_html(report, tmp_path / f"r{jobs}.html", specs=specs, jobs=jobs)
        pages[jobs] = [link.split("/", 1)[1] for link in _links(out.read_text())]
        for name in pages[jobs]:
            text = (views_dir(out) / name).read_text()
            assert "cpplan (reference)" not in text and "the bound is" in text
    assert pages[1] == pages[2] and len(pages[1]) == 6


def _crash(*args: object) -> None:
    import os

    os._exit(1)  # a view process that dies (killed, out of memory)


def test_a_view_process_that_dies_is_a_note_not_a_traceback(tmp_path: Path, monkeypatch
                                                           ) -> None:
    require("bokeh", "view")
    from cpplan import grade_html
    from cpplan.grade import grade, parse_planner

    folder = tmp_path / "inst"
    write_instances(folder)
    specs = [parse_planner("naive")]
    report = grade([folder], specs, time_limit=0)
    monkeypatch.setattr(grade_html, "_instance_views", _crash)  # (forked processes see it)
    links, notes = grade_html.write_views(report, specs, tmp_path / "views", jobs=2)
    assert links == {}
    assert len(notes) == len(report.graded) and all("ended abruptly" in n for n in notes)
