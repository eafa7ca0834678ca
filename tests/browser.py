"""Headless Chromium driven by Selenium, for the pages of :mod:`cpplan.view` (the tests and
``benchmarks/view.py``).

The browser is Debian's (``apt-get install chromium chromium-driver``: ``/usr/bin/chromium``,
``/usr/bin/chromedriver``; ``$CHROMIUM`` and ``$CHROMEDRIVER`` name others). Without it, or
without selenium or bokeh, :func:`chromium` skips the test, and fails it under CI (env var
``CI`` set), where ``.ci/run`` installs all three.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from .shared import require

#: Where Debian puts them; the first that exists is used.
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver",)


def _binary(env: str, names: tuple[str, ...]) -> str | None:
    given = os.environ.get(env)
    if given:
        return given if Path(given).is_file() else None
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_browser() -> tuple[str, str]:
    """Chromium and its driver (paths): skip without them, fail under CI."""
    browser = _binary("CHROMIUM", BROWSERS)
    driver = _binary("CHROMEDRIVER", DRIVERS)
    if browser is None or driver is None:
        message = ("headless Chromium is not installed (apt-get install chromium "
                   f"chromium-driver): browser {browser}, driver {driver}")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return browser, driver


def options(browser: str, width: int = 1500, height: int = 1000) -> Any:
    from selenium import webdriver

    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--hide-scrollbars",
                # No GPU here: composite and rasterise in software (through SwiftShader's GL
                # every frame of a large page took seconds), and let WebGL pages still run on
                # SwiftShader.
                "--disable-gpu", "--enable-unsafe-swiftshader"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return opts


@contextmanager
def chromium(width: int = 1500, height: int = 1000) -> Iterator[Any]:
    """A headless Chromium (a Selenium ``WebDriver``), quit on exit."""
    require("selenium", "test")
    require("bokeh", "view")
    browser, driver_path = require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    driver = webdriver.Chrome(service=Service(driver_path), options=options(browser, width,
                                                                             height))
    try:
        yield driver
    finally:
        driver.quit()


#: Calls back once the next frame after this one is drawn: what the page shows is on screen.
_PAINTED = """
const done = arguments[arguments.length - 1];
requestAnimationFrame(() => requestAnimationFrame(() => done(true)));
"""


def open_page(driver: Any, path: str | Path, timeout: float = 60.0) -> float:
    """Load the page at ``path`` and wait until Bokeh has drawn it and the browser has shown it
    (the frame after Bokeh's document idle); the seconds it took."""
    started = time.perf_counter()
    driver.get(Path(path).resolve().as_uri())
    wait(driver, "return !!(window.Bokeh && Bokeh.documents.length && "
                 "Bokeh.documents[0].is_idle)", timeout)
    driver.set_script_timeout(timeout)
    driver.execute_async_script(_PAINTED)
    return time.perf_counter() - started


def wait(driver: Any, script: str, timeout: float = 10.0, interval: float = 0.01) -> Any:
    """Run ``script`` until it returns something true; that value (TimeoutError after
    ``timeout`` seconds)."""
    end = time.perf_counter() + timeout
    while True:
        value = driver.execute_script(script)
        if value:
            return value
        if time.perf_counter() > end:
            raise TimeoutError(f"waited {timeout}s for: {script}")
        time.sleep(interval)


def console_errors(driver: Any) -> list[str]:
    """The browser console's errors (and warnings that are Bokeh's or JavaScript's) since the
    last call."""
    out = []
    for entry in driver.get_log("browser"):
        if entry["level"] in ("SEVERE", "ERROR") or (
                entry["level"] == "WARNING" and "bokeh" in entry["message"].lower()):
            out.append(f"{entry['level']}: {entry['message']}")
    return out


_POINT = """
const [name, x, y] = arguments;
const model = Bokeh.documents[0].get_model_by_name(name);
if (model == null) return null;
const view = Bokeh.index.find_one(model);
const frame = view.frame;
const rect = view.canvas_view.el.getBoundingClientRect();
// (the scales map data to canvas pixels, the frame's offset included)
return [rect.left + frame.x_scale.compute(x), rect.top + frame.y_scale.compute(y)];
"""


def panel_point(driver: Any, panel: str, x: float, y: float) -> tuple[float, float]:
    """Where data point ``(x, y)`` of the panel named ``panel`` is in the window (pixels)."""
    got = driver.execute_script(_POINT, panel, x, y)
    if got is None:
        raise KeyError(f"no panel named {panel!r} on the page")
    return float(got[0]), float(got[1])


def panel_names(driver: Any) -> list[str]:
    """The names of the page's panels (figures), in document order."""
    return list(driver.execute_script(
        "const out = []; for (const m of Bokeh.documents[0].all_models) "
        "if (m.type === 'Figure' || (m.constructor && m.constructor.__name__ === 'Figure')) "
        "out.push(m.name); return out.filter(n => n && n.startsWith('panel '));"))


_FRAMES = """
const out = {};
for (const model of Bokeh.documents[0].all_models) {
  if (!model.name || !model.name.startsWith('panel ')) continue;
  const view = Bokeh.index.find_one(model);
  if (view == null || view.frame == null) continue;
  const rect = view.canvas_view.el.getBoundingClientRect();
  const bbox = view.frame.bbox;
  out[model.name] = [rect.left + bbox.left, rect.top + bbox.top, bbox.width, bbox.height];
}
return out;
"""


def panel_frames(driver: Any) -> dict[str, tuple[float, float, float, float]]:
    """Each drawn panel's plot area in the window: name -> (left, top, width, height)."""
    return {k: tuple(v) for k, v in driver.execute_script(_FRAMES).items()}


def zoom(driver: Any, panel: str, x: tuple[float, float], y: tuple[float, float]) -> None:
    """Show data ranges ``x`` and ``y`` in ``panel`` (as a box zoom does; the panels linked to
    it follow), and wait until it is drawn again."""
    driver.execute_script("""
const [name, x0, x1, y0, y1] = arguments;
const model = Bokeh.documents[0].get_model_by_name(name);
model.x_range.setv({start: x0, end: x1});
model.y_range.setv({start: y0, end: y1});
""", panel, x[0], x[1], y[0], y[1])
    wait(driver, "return Bokeh.documents[0].is_idle")
    time.sleep(0.1)


def ranges(driver: Any, panel: str) -> list[float]:
    """``[x start, x end, y start, y end]`` that ``panel`` shows now."""
    return list(driver.execute_script(
        "const m = Bokeh.documents[0].get_model_by_name(arguments[0]); "
        "return [m.x_range.start, m.x_range.end, m.y_range.start, m.y_range.end];", panel))


def move_to(driver: Any, x: float, y: float) -> None:
    """Move the mouse to window pixel ``(x, y)``."""
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    actions = ActionBuilder(driver, duration=0)  # (the default glides for 250 ms)
    actions.pointer_action.move_to_location(int(round(x)), int(round(y)))
    actions.perform()


#: The text of every Bokeh tooltip shown (a popover element with its content in its own
#: shadow root, beside the styles).
_TOOLTIPS_JS = """
const tooltipText = () => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList && el.classList.contains('bk-Tooltip') && el.shadowRoot
          && el.matches(':popover-open') && getComputedStyle(el).display !== 'none') {
        for (const child of el.shadowRoot.children)
          if (child.tagName !== 'STYLE' && child.tagName !== 'LINK') out.push(child.innerText);
      }
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return out.join('\\n');
};
"""

#: Times the next hover in the page: from the pointer's move to the first frame drawn with a
#: tooltip that contains ``arguments[0]`` (performance.now(), milliseconds).
_ARM = _TOOLTIPS_JS + """
const expect = arguments[0];
const timing = window.__cpplanHover = {moved: null, shown: null};
document.addEventListener('pointermove', () => {
  timing.moved = performance.now();
  const check = () => {
    if (tooltipText().includes(expect)) timing.shown = performance.now();
    else requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
}, {capture: true, once: true});
"""


def tooltip_text(driver: Any) -> str:
    """The text of the tooltips shown now ('' when none)."""
    return str(driver.execute_script(_TOOLTIPS_JS + "return tooltipText();"))


class Hover(NamedTuple):
    text: str  # the tooltips' text
    seconds: float  # from sending the move to seeing the tooltip (Selenium's round trips too)
    page_ms: float | None  # in the page: from the pointer's move to the frame that shows it


def hover(driver: Any, panel: str, x: float, y: float, expect: str,
          timeout: float = 10.0) -> Hover:
    """Move the mouse onto data point ``(x, y)`` of ``panel`` and wait for a tooltip that
    contains ``expect``."""
    px, py = panel_point(driver, panel, x, y)
    move_to(driver, 1, 1)  # (from outside the panels: a move onto it is a new hover)
    driver.execute_script(_ARM, expect)
    started = time.perf_counter()
    move_to(driver, px, py)
    end = started + timeout
    while True:
        text = tooltip_text(driver)
        if expect in text:
            seconds = time.perf_counter() - started
            timing = wait(driver, "const t = window.__cpplanHover; "
                                  "return t.shown === null ? null : [t.moved, t.shown];", 5.0)
            return Hover(text, seconds, timing[1] - timing[0])
        if time.perf_counter() > end:
            raise TimeoutError(f"no tooltip with {expect!r} after {timeout}s at ({x}, {y}) of "
                               f"{panel!r}; tooltips shown: {text!r}")
        time.sleep(0.005)
