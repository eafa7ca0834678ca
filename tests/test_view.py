"""The interactive page (cpplan.view): what it says and draws, and, in headless Chromium, that
it loads without a console error, shows a buffer on hover, states the difference, and draws
every panel. The browser tests skip without Chromium, selenium or bokeh, and fail under CI."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from cpplan import Buffer, CpplanError, PlanError, Problem
from cpplan.io import read_problem
from cpplan.plan import Placement, Plan
from cpplan.planners import get

from .shared import require

require("bokeh", "view")

from cpplan.view import (  # noqa: E402
    differences,
    labelled,
    pool_figures,
    show_view,
    view_html,
    view_layout,
    write_view,
)

ROOT = Path(__file__).resolve().parents[1]
BRANCHY = ROOT / "instances" / "tflite" / "branchy_int8.json"
UNET = ROOT / "instances" / "hand" / "unet.inplace-concat.json"


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %"


def branchy() -> tuple[Problem, dict[str, Plan]]:
    """A real TFLM model's arena: TFLM's own greedy against best-fit (which reaches the bound)."""
    problem = read_problem(BRANCHY)
    return problem, {"tflm-greedy": get("tflm-greedy")(problem),
                     "best-fit": get("best-fit")(problem)}


def unet() -> tuple[Problem, dict[str, Plan]]:
    """Two pools and 20 aliases (in place, concat slices): no reuse against best-fit."""
    problem = read_problem(UNET)
    return problem, {"naive": get("naive")(problem), "best-fit": get("best-fit")(problem)}


# -- without a browser ---------------------------------------------------------------------------
def test_the_difference_in_words() -> None:
    problem, plans = branchy()
    greedy, best = plans["tflm-greedy"].height, plans["best-fit"].height
    assert greedy > best
    bound = pool_figures(problem, plans)["best-fit"]["arena"].bound
    assert bound == best  # best-fit is at the max-load here
    assert differences(problem, plans) == [
        f"tflm-greedy uses {greedy:,} bytes, best-fit {best:,}: {greedy - best:,} bytes "
        f"({pct(greedy - best, greedy)}) less; the bound is {bound:,}."]
    # The other way round: more; alone: against the bound.
    reverse = differences(problem, {"best-fit": plans["best-fit"],
                                    "tflm-greedy": plans["tflm-greedy"]})
    assert reverse[0].startswith(f"best-fit uses {best:,} bytes, tflm-greedy {greedy:,}: "
                                 f"{greedy - best:,} bytes ({pct(greedy - best, best)}) more")
    assert differences(problem, [plans["tflm-greedy"]]) == [
        f"tflm-greedy uses {greedy:,} bytes: {greedy - bound:,} bytes "
        f"({pct(greedy - bound, greedy)}) above the bound (the bound is {bound:,})."]
    assert differences(problem, [plans["best-fit"]])[0].startswith(
        f"best-fit uses {best:,} bytes, at the bound")


def test_the_difference_per_pool_and_in_the_objective() -> None:
    problem, plans = unet()
    lines = differences(problem, plans)
    naive, best = plans["naive"], plans["best-fit"]
    a, b = naive.heights["arena"], best.heights["arena"]
    assert lines[0] == (f"In pool arena: naive uses {a:,} bytes, best-fit {b:,}: {a - b:,} bytes "
                        f"({pct(a - b, a)}) less; the bound is {b:,}.")
    inputs = best.heights["inputs"]
    assert lines[1] == (f"In pool inputs: naive and best-fit both use {inputs:,} bytes; the "
                        f"bound is {inputs:,}.")
    assert lines[2].startswith(f"Objective (sum of cost x height, and the traffic's cost): "
                               f"naive uses {naive.objective:,}, best-fit {best.objective:,}")


def test_pools_without_a_bound_of_their_own() -> None:
    """Buffers that may go to either pool: no pool has a max-load of its own, and the page
    claims none (the objective's proven bound still stands)."""
    from cpplan import Pool

    problem = Problem(tuple(Buffer(f"b{i}", 64 * (i + 1), i, i + 3) for i in range(8)),
                      (Pool("sram", capacity=300), Pool("dram", cost=4)))
    plan = get("best-fit")(problem)
    lines = differences(problem, [plan])
    assert lines[:2] == [f"In pool sram: best-fit uses {plan.heights['sram']:,} bytes.",
                         f"In pool dram: best-fit uses {plan.heights['dram']:,} bytes."]
    assert lines[2].startswith(f"Objective: best-fit {plan.objective:,}; the proven bound is")
    figures = pool_figures(problem, [plan])["best-fit"]
    assert all(f.bound == 0 for f in figures.values())
    layout = view_layout(problem, [plan])
    for row in layout.children:
        labels = [item.label.value for legend in row[0].select(type=_bokeh_legend())
                  for item in legend.items]
        assert not any(label.startswith("lower bound") for label in labels)


def test_figures_per_panel() -> None:
    problem, plans = unet()
    figures = pool_figures(problem, plans)
    assert list(figures) == ["naive", "best-fit"]
    for label, plan in plans.items():
        assert set(figures[label]) == {"arena", "inputs"}
        for pool, f in figures[label].items():
            assert f.height == plan.heights[pool]
            assert f.peak == max(f.load) and f.peak <= f.height
            assert f.above == max(0, f.height - f.bound)
    # Aliased buffers count once: the peak of the optimal plan's arena is its bound.
    best = figures["best-fit"]["arena"]
    assert best.peak == best.bound == best.height
    assert best.peak_moment is not None


def test_labels() -> None:
    problem, plans = branchy()
    a, b = plans["tflm-greedy"], plans["best-fit"]
    assert list(labelled([a, b, a, Plan.build(problem, a.placements)])) == [
        "tflm-greedy", "best-fit", "tflm-greedy #2", "plan 4"]
    assert list(labelled({"ExecuTorch": a, "cpplan": b})) == ["ExecuTorch", "cpplan"]
    with pytest.raises(CpplanError, match="no plan"):
        labelled([])


def test_every_plan_is_checked_first(tmp_path: Path) -> None:
    problem, plans = branchy()
    good = plans["best-fit"]
    first, second = problem.buffers[1].id, problem.buffers[2].id  # alive together
    assert problem.buffers[1].end > problem.buffers[2].start
    bad = Plan.build(problem, {**good.placements, second: Placement("arena",
                                                                    good.offset(first))},
                     planner="broken")
    path = tmp_path / "page.html"
    with pytest.raises(PlanError, match="broken"):
        write_view(problem, [good, bad], path)
    assert not path.exists()
    with pytest.raises(CpplanError, match="no placements"):
        write_view(problem, [Plan.infeasible(problem, "why not")], path)


def test_the_page_stands_alone(tmp_path: Path) -> None:
    problem, plans = unet()
    path = write_view(problem, plans, tmp_path / "page.html")
    text = path.read_text()
    assert "<script src=" not in text and "<link" not in text  # no file fetched: all inline
    assert "cdn.bokeh.org" not in text
    for line in differences(problem, plans):
        assert line.replace("'", "&#39;") in text  # stated in the HTML itself


def test_layout_panels_and_linked_axes() -> None:
    problem, plans = unet()
    layout = view_layout(problem, plans)
    figures = [child[0] for child in layout.children]
    assert sorted(f.name for f in figures) == ["panel 0 arena", "panel 0 inputs",
                                               "panel 1 arena", "panel 1 inputs"]
    assert len({id(f.x_range) for f in figures}) == 1  # time: one range for all
    by_pool: dict[str, set[int]] = {}
    for f in figures:
        by_pool.setdefault(f.name.split()[-1], set()).add(id(f.y_range))
    assert all(len(ranges) == 1 for ranges in by_pool.values())  # offset: one per pool
    assert all(f.output_backend == "canvas" for f in figures)
    webgl = view_layout(problem, plans, backend="webgl")
    assert all(row[0].output_backend == "webgl" for row in webgl.children)
    with pytest.raises(CpplanError, match="backend must be one of canvas, webgl, got 'svg'"):
        view_layout(problem, plans, backend="svg")
    arena = next(f for f in figures if f.name == "panel 1 arena")
    labels = [item.label.value for legend in arena.select(type=_bokeh_legend())
              for item in legend.items]
    height = plans["best-fit"].heights["arena"]
    assert "bytes live" in labels and f"height {height:,}" in labels
    assert f"lower bound {height:,}" in labels
    assert any(label.startswith("peak: ") for label in labels)


def _bokeh_legend() -> Any:
    from bokeh.models import Legend

    return Legend


def test_many_pieces_are_capped_and_the_page_says_so() -> None:
    problem, plans = branchy()
    text = view_html(problem, plans, max_pieces=10)
    assert f"{len(problem.buffers) - 10:,} of {len(problem.buffers):,} rectangles are left out" \
        in text


def test_gaps_are_drawn_per_piece() -> None:
    from cpplan import Gap

    problem = Problem((Buffer("g", 256, 0, 10, gaps=(Gap(3, 6, (0, 64)),)),
                       Buffer("h", 192, 3, 6)))
    plan = get("best-fit")(problem)
    layout = view_layout(problem, [plan])
    source = layout.children[0][0].renderers[0].data_source
    assert source.data["id"] == ["g", "g", "g", "h"]
    assert list(source.data["left"]) == [0, 3, 6, 3]


def test_a_notebook_shows_the_page_in_a_frame(tmp_path: Path) -> None:
    import html

    problem, plans = unet()
    view = show_view(problem, plans)
    shown = view._repr_html_()
    assert shown.startswith("<iframe srcdoc=") and "height: " in shown
    assert html.escape(differences(problem, plans)[0]) in shown
    assert view.height > 2 * 320  # two pools, a row each
    assert view.save(tmp_path / "page.html").read_text() == view.html


def test_without_bokeh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    problem, plans = branchy()
    monkeypatch.setitem(sys.modules, "bokeh", None)
    with pytest.raises(CpplanError, match=r"bokeh.*\.\[view\]"):
        write_view(problem, plans, tmp_path / "page.html")


# -- from the command line ------------------------------------------------------------------------
def cli(*args: object) -> Any:
    from click.testing import CliRunner

    from cpplan.cli import main

    return CliRunner().invoke(main, [str(a) for a in args])


def test_cpplan_view_of_plan_files_and_planners(tmp_path: Path) -> None:
    problem, plans = branchy()
    from cpplan.io import write_plan

    write_plan(problem, plans["tflm-greedy"], tmp_path / "greedy.plan.json")
    page = tmp_path / "page.html"
    result = cli("view", BRANCHY, tmp_path / "greedy.plan.json", "--planner", "best-fit",
                 "-o", page)
    assert result.exit_code == 0, result.output
    text = page.read_text()
    greedy, best = plans["tflm-greedy"].height, plans["best-fit"].height
    assert f"greedy uses {greedy:,} bytes, best-fit {best:,}" in text
    assert "2 plans of" in result.output


def test_cpplan_view_refuses_an_invalid_plan_in_one_line(tmp_path: Path) -> None:
    import json

    from cpplan.io import write_plan

    problem, plans = branchy()
    write_plan(problem, plans["best-fit"], tmp_path / "bad.plan.json")
    data = json.loads((tmp_path / "bad.plan.json").read_text())
    for placement in data["placements"]:
        placement["offset"] = 0  # everything on top of everything
    (tmp_path / "bad.plan.json").write_text(json.dumps(data))
    result = cli("view", BRANCHY, tmp_path / "bad.plan.json", "-o", tmp_path / "page.html")
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "page.html").exists()


def test_cpplan_export_writes_a_chrome_trace(tmp_path: Path) -> None:
    import json

    from cpplan.io import EXPORTS, write_plan

    problem, plans = branchy()
    write_plan(problem, plans["best-fit"], tmp_path / "p.plan.json")
    result = cli("export", BRANCHY, tmp_path / "p.plan.json", "--format", "chrome-trace",
                 "-o", tmp_path / "trace.json")
    assert result.exit_code == 0, result.output
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    assert sum(e["ph"] == "X" for e in events) >= len(problem.buffers)
    from cpplan.cli.convert import export

    choices = next(p for p in export.params if p.name == "fmt").type.choices
    assert sorted(choices) == sorted(EXPORTS)  # the CLI names every format io can write


def test_cpplan_tflm_view_shows_tflms_plan_beside_cpplans(tmp_path: Path) -> None:
    require("tflite_micro", "tflite")
    page = tmp_path / "branchy.html"
    result = cli("tflm", ROOT / "instances" / "tflite" / "branchy_int8.tflite", "-q",
                 "-o", tmp_path / "planned.tflite", "--view", page)
    assert result.exit_code == 0, result.output
    assert "TFLM greedy uses" in page.read_text() and f"wrote {page}" in result.output


def test_cpplan_executorch_view_is_for_one_arena(tmp_path: Path) -> None:
    result = cli("executorch", tmp_path / "m.pt2", "-o", tmp_path / "m.pte", "--memory",
                 "sram:1KiB:1", "--view", tmp_path / "v.html")
    assert result.exit_code == 2 and "--view" in result.output
    assert not (tmp_path / "v.html").exists()


def test_browser_tests_skip_without_chromium_but_fail_in_ci(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    from .browser import require_browser

    monkeypatch.setenv("CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium chromium-driver"):
        require_browser()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="apt-get install chromium chromium-driver"):
        require_browser()


# -- in headless Chromium ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Any:
    from .browser import chromium

    with chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Problem, dict]]:
    folder = tmp_path_factory.mktemp("pages")
    out = {}
    for name, make in (("branchy", branchy), ("unet", unet)):
        problem, plans = make()
        out[name] = (write_view(problem, plans, folder / f"{name}.html"), problem, plans)
    problem, plans = branchy()
    out["branchy-webgl"] = (write_view(problem, plans, folder / "branchy-webgl.html",
                                       backend="webgl"), problem, plans)
    return out


def test_pages_load_without_console_errors(browser: Any, pages: dict) -> None:
    from .browser import console_errors, open_page, panel_names

    for name, (path, _problem, plans) in pages.items():
        open_page(browser, path)
        assert console_errors(browser) == [], name
        pools = {pl.pool for plan in plans.values() for pl in plan.placements.values()}
        assert len(panel_names(browser)) == len(plans) * len(pools)


@pytest.mark.parametrize("page", ["branchy", "branchy-webgl"])
def test_hovering_a_buffer_shows_its_id_and_size(browser: Any, pages: dict, page: str) -> None:
    from .browser import hover, open_page

    path, problem, plans = pages[page]
    open_page(browser, path)
    webgl = browser.execute_script(
        "const m = Bokeh.documents[0].get_model_by_name('panel 0 arena'); "
        "return Bokeh.index.find_one(m).canvas_view.webgl != null")
    assert webgl == page.endswith("webgl")
    for k, plan in enumerate(plans.values()):
        # The largest buffer (each is its own root here), at the middle of its rectangle.
        b = max(problem.buffers, key=lambda b: b.size * (b.end - b.start))
        off = plan.offset(b.id)
        text = hover(browser, f"panel {k} arena", (b.start + b.end) / 2, off + b.size / 2,
                     b.id).text
        assert f"buffer:\t{b.id}" in text
        assert f"size:\t{b.size:,} bytes" in text
        assert f"lifetime:\t[{b.start}, {b.end})" in text
        assert f"offset:\t{off:,}" in text
        assert "pool:\tarena" in text
        assert "name:\tsubgraph 0 tensor" in text


def test_zooming_one_panel_zooms_its_row_and_hovering_an_alias_names_its_root(
        browser: Any, pages: dict) -> None:
    from .browser import hover, open_page, ranges, zoom

    path, problem, plans = pages["unet"]
    open_page(browser, path)
    plan = plans["best-fit"]
    b = max((problem.buffer(a.buffer) for a in problem.aliases if a.displacement > 0),
            key=lambda b: b.size)
    root, disp = problem.root_of[b.id]
    off = plan.offset(b.id)
    # Zoom onto the buffer (a few pixels tall at full view): the other plan's panel of the
    # same pool follows in both axes, the other pool's in time only.
    box = ((b.start - 2, b.end + 2), (off - b.size, off + 2 * b.size))
    zoom(browser, "panel 1 arena", *box)
    assert ranges(browser, "panel 0 arena") == [*box[0], *box[1]]
    assert ranges(browser, "panel 1 inputs")[:2] == list(box[0])
    assert ranges(browser, "panel 1 inputs")[2:] != list(box[1])
    # Where only the alias lives (before its root's lifetime starts), if anywhere.
    x = (b.start + b.end) / 2 if b.start >= problem.buffer(root).start else b.start + 0.5
    text = hover(browser, "panel 1 arena", x, off + b.size / 2, b.id).text
    assert f"inside:\t{root} at +{disp:,}" in text
    assert f"size:\t{b.size:,} bytes" in text


def test_the_two_plan_page_states_the_difference(browser: Any, pages: dict) -> None:
    from .browser import open_page

    path, problem, plans = pages["branchy"]
    open_page(browser, path)
    shown = browser.execute_script("return document.body.innerText")
    greedy, best = plans["tflm-greedy"].height, plans["best-fit"].height
    assert (f"tflm-greedy uses {greedy:,} bytes, best-fit {best:,}: {greedy - best:,} bytes "
            f"({pct(greedy - best, greedy)}) less; the bound is {best:,}.") in shown


def test_a_screenshot_shows_every_panel(browser: Any, pages: dict) -> None:
    import io

    from PIL import Image

    from .browser import open_page, panel_frames

    path, problem, plans = pages["unet"]
    open_page(browser, path)
    frames = panel_frames(browser)
    assert len(frames) == 4
    shot = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")
    everywhere = shot.getcolors(maxcolors=1 << 24) or []
    assert len(everywhere) > 50  # not blank
    scale = shot.width / browser.execute_script("return window.innerWidth")
    for name, (left, top, width, height) in frames.items():
        assert width > 100 and height > 100, name
        box = tuple(round(v * scale) for v in (left, top, left + width, top + height))
        region = shot.crop(box)
        colours = region.getcolors(maxcolors=1 << 16)
        assert colours is None or len(colours) > 8, name  # drawn, not an empty frame
        # the buffers' colours: something far from white and from grey in every panel
        assert any(max(px) - min(px) > 60 for _, px in (colours or [(1, (0, 0, 255))])), name


def test_the_notebook_frame_loads(browser: Any, tmp_path: Path) -> None:
    """What Jupyter shows for show_view: the page in a frame of its own, drawn, no errors."""
    from .browser import console_errors, panel_names, wait

    problem, plans = branchy()
    notebook = tmp_path / "notebook.html"
    notebook.write_text(f"<html><body><p>a cell</p>{show_view(problem, plans)._repr_html_()}"
                        "</body></html>")
    browser.get(notebook.resolve().as_uri())
    browser.switch_to.frame(0)
    try:
        wait(browser, "return !!(window.Bokeh && Bokeh.documents.length && "
                      "Bokeh.documents[0].is_idle)", 60)
        assert len(panel_names(browser)) == 2
        assert "less; the bound is" in browser.execute_script("return document.body.innerText")
    finally:
        browser.switch_to.default_content()
    assert console_errors(browser) == []
