"""The notebooks run headless, top to bottom, in their quick mode (CPPLAN_NOTEBOOK_QUICK=1:
fewer instances, short time limits), with a fresh cache of exact results."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
# Notebooks that need an extra beyond [notebooks]: (module, extra).
EXTRAS = {"04-executorch": ("executorch.exir", "executorch")}


def test_there_are_notebooks() -> None:
    assert len(NOTEBOOKS) >= 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if path.stem in EXTRAS:
        from tests.shared import require

        require(*EXTRAS[path.stem])
    monkeypatch.setenv("CPPLAN_NOTEBOOK_QUICK", "1")
    monkeypatch.setenv("CPPLAN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    book = nbformat.read(path, as_version=4)
    # Stored notebooks carry no outputs: the repository stays small and diffs stay readable.
    assert all(not c.get("outputs") for c in book.cells if c.cell_type == "code"), (
        f"{path.name} has stored outputs; strip them")
    client = nbclient.NotebookClient(book, timeout=110, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in book.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    # what a reader sees on stderr: no log lines of the libraries below (cpuinfo's probe, torch)
    noise = [line for c in book.cells for o in c.get("outputs", [])
             if o.output_type == "stream" and o.name == "stderr"
             for line in o.text.splitlines() if line.startswith(("[cpuinfo", "W1", "I1"))]
    assert not noise, f"{path.name} prints library logs: {noise[:3]}"
    images = [o for c in book.cells for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert images, f"{path.name} drew no picture"
