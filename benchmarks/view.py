"""How the interactive page (cpplan.view) holds up: built for every bundled instance and for
idealloc's Y_1 (62185 buffers), opened in headless Chromium (Selenium; Debian's chromium and
chromium-driver), hovered.

Per page: the buffers, the file's size, the seconds to build and write it, to load it (from
asking the browser for the file to the first frame on screen after Bokeh's document idle:
everything drawn; Bokeh's own "document idle" time, counted from the navigation's start, in
brackets) and to show a hover's
tooltip (in the page, from the pointer's move to the first frame that shows the tooltip;
Selenium's round trip in brackets), each the median of ``--repeat`` loads, with the slowest.
Every instance is drawn with two plans side by side (first-fit against best-fit); Y_1 also
alone; ``--backend canvas webgl`` draws each page both ways. Issue 24 asks Y_1 to open and
answer a hover within 3 s. Prints the machine's load first (2 shared cores: figures move with
it).

    python benchmarks/view.py [--repeat 3] [--only Y_1] [--keep DIR] [--backend canvas webgl]
    python benchmarks/view.py --readme docs/view-resnet50.png   # the README's picture

``--readme PNG`` instead writes the page of torchvision's resnet50 (224 x 224, random weights)
lowered by ExecuTorch, its greedy plan against cpplan's (what ``cpplan executorch --view``
writes; needs cpplan[executorch]), and the browser's screenshot of it.

Needs ``pip install ".[view,test]"`` (bokeh, selenium) and Debian's ``chromium`` and
``chromium-driver``: without one, says which and exits 1. Each page's row is printed as it is
measured; a page that raises or logs errors in the browser's console is marked FAILED, and the
script exits 1 after the others. Takes about 90 s on this 2-core machine with the defaults.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# (not this folder: its executorch.py would hide the executorch package)
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from cpplan.io import read_problem  # noqa: E402
from cpplan.planners import get  # noqa: E402
from cpplan.problem import Problem  # noqa: E402
from cpplan.view import BACKENDS, write_view  # noqa: E402
from tests.shared import BENCHMARKS as SHARED  # noqa: E402

ROOT = HERE.parent


def instances() -> list[Path]:
    files = sorted((ROOT / "instances").rglob("*.json")) + [ROOT / "instances" / "tiny.csv"]
    y1 = SHARED / "idealloc" / "Y_1.csv"
    if y1.exists():
        files.append(y1)
    else:
        print(f"{y1}: absent (python benchmarks/fetch_sets.py fetches it); Y_1 skipped")
    return files


def hover_target(problem: Problem, plan: object) -> tuple[str, float, float]:
    """The buffer with the largest rectangle (bytes x steps), and its middle."""
    b = max((b for b in problem.buffers if b.size > 0 and b.id not in problem.root_of),
            key=lambda b: b.size * (b.end - b.start))
    return b.id, (b.start + b.end) / 2, plan.offset(b.id) + b.size / 2  # type: ignore[attr-defined]


def measure(driver: object, path: Path, problem: Problem, plans: dict, repeat: int
            ) -> tuple[list[float], list[float], list[float], list[float], int]:
    import re

    from tests.browser import console_errors, hover, open_page

    loads, idles, hovers, walls = [], [], [], []
    failures = 0
    last = list(plans)[-1]
    pool = plans[last].pool(hover_target(problem, plans[last])[0])
    for _ in range(repeat):
        loads.append(open_page(driver, path, timeout=120))
        logs = driver.get_log("browser")  # type: ignore[attr-defined]
        idle = [re.search(r"document idle at (\d+) ms", e["message"]) for e in logs]
        idles.extend(int(m.group(1)) / 1000 for m in idle if m)
        errors = [e for e in logs if e["level"] == "SEVERE"]
        if errors or console_errors(driver):
            failures += 1
            print(f"  console errors: {errors[:3]}", flush=True)
        bid, x, y = hover_target(problem, plans[last])
        got = hover(driver, f"panel {len(plans) - 1} {pool}", x, y, bid, timeout=60)
        hovers.append((got.page_ms or 0) / 1000)
        walls.append(got.seconds)
    return loads, idles, hovers, walls, failures


def readme_picture(png: Path, folder: Path) -> None:
    """The README's screenshot: resnet50's page, ExecuTorch's greedy against cpplan."""
    import torchvision

    from cpplan.runtimes import executorch as et
    from cpplan.runtimes.executorch_models import export
    from tests.browser import chromium, open_page

    model = torchvision.models.resnet50(weights=None).eval()
    import torch

    program = export(model, (torch.randn(1, 3, 224, 224),))
    mpp = et.memory_planning_pass(time_limit=10, deterministic=True)
    et.lower(et.edge_program(program), mpp)
    problem, plans = et.compared_plans(mpp.cpplan)
    page = write_view(problem.replace(name="resnet50 (ExecuTorch, 224 x 224)"), plans,
                      folder / "resnet50.html", width=1400, panel_height=430)
    with chromium(1500, 700) as driver:
        open_page(driver, page)
        from tests.browser import move_to, panel_point

        b = max(problem.buffers, key=lambda b: b.size * (b.end - b.start))
        move_to(driver, *panel_point(driver, "panel 1 mem1", (b.start + b.end) / 2,
                                     plans["cpplan"].offset(b.id) + b.size / 2))
        time.sleep(0.5)
        png.write_bytes(driver.get_screenshot_as_png())
    print(f"wrote {png} (the page: {page})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None, help="instance names (file stems)")
    ap.add_argument("--keep", type=Path, default=None, help="write the pages here")
    ap.add_argument("--time-limit", type=float, default=10.0, help="seconds per planner")
    ap.add_argument("--backend", nargs="*", default=["canvas"], choices=BACKENDS,
                    help="how the pages draw (each one in turn)")
    ap.add_argument("--readme", type=Path, default=None, metavar="PNG",
                    help="write the README's screenshot (resnet50 in ExecuTorch) instead")
    args = ap.parse_args()
    for module, extra in (("bokeh", "view"), ("selenium", "test")):
        try:
            __import__(module)
        except ImportError as e:
            print(f"missing module {e.name or module}: pip install \".[{extra}]\" (this "
                  "benchmark needs \".[view,test]\")", file=sys.stderr)
            return 1
    import pytest

    from tests.browser import chromium, require_browser

    try:
        require_browser()
    except pytest.skip.Exception as e:  # (outside pytest: its message says what to install)
        print(e, file=sys.stderr)
        return 1

    if args.readme is not None:
        folder = args.keep or Path(tempfile.mkdtemp(prefix="cpplan-view-"))
        folder.mkdir(parents=True, exist_ok=True)
        readme_picture(args.readme, folder)
        return 0

    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
          flush=True)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="cpplan-view-"))
    folder.mkdir(parents=True, exist_ok=True)
    head = (f"{'instance':<28} {'draw':>6} {'plans':>5} {'buffers':>8} {'MB':>6} {'build s':>8} "
            f"{'load s (idle)':>16} {'hover s (round trip)':>22}")
    print(head, flush=True)
    failed: list[str] = []
    with chromium() as driver:
        for path in instances():
            if args.only and path.stem not in args.only:
                continue
            try:
                failed += pages(driver, path, folder, args)
            except Exception as e:
                failed.append(path.stem)
                print(f"{path.stem:<28} FAILED: {type(e).__name__}: {e}", flush=True)
    print(f"pages in {folder}")
    for f in failed:
        print(f"FAILED {f}")
    return 1 if failed else 0


def pages(driver: object, path: Path, folder: Path, args: argparse.Namespace) -> list[str]:
    """Build, open and hover ``path``'s pages, a row each; the pages that failed."""
    failed = []
    problem = read_problem(path)
    first = get("first-fit")(problem, time_limit=args.time_limit)
    best = get("best-fit")(problem, time_limit=args.time_limit)
    cases = [{"first-fit": first, "best-fit": best}]
    if len(problem.buffers) > 10000:
        cases.insert(0, {"best-fit": best})
    for plans, backend in ((p, b) for p in cases for b in args.backend):
        page = folder / f"{path.stem}.{len(plans)}.{backend}.html"
        started = time.perf_counter()
        write_view(problem, plans, page, backend=backend)
        build = time.perf_counter() - started
        loads, idles, hovers, walls, errors = measure(driver, page, problem, plans,
                                                      args.repeat)
        if errors:
            failed.append(f"{page.name}: errors in the browser's console")
        load = f"{statistics.median(loads):.2f} ({statistics.median(idles):.2f})" \
            if idles else f"{statistics.median(loads):.2f}"
        hov = f"{statistics.median(hovers):.3f} ({statistics.median(walls):.2f})"
        print(f"{path.stem:<28} {backend:>6} {len(plans):>5} {len(problem.buffers):>8} "
              f"{page.stat().st_size / 1e6:>6.2f} {build:>8.2f} {load:>16} {hov:>22}"
              f"   slowest load {max(loads):.2f}, hover {max(hovers):.3f}"
              + ("   FAILED: console errors" if errors else ""), flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
