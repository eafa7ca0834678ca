"""The README's Python examples, run as doctests; and the examples of the API reference's pages
(``docs/*.md``) and of the API's docstrings.

Every ```python block of README.md is a test, in the README's order. A block written as a
doctest (``>>>`` lines) must print what the README shows (``...`` stands for what changes from
run to run, such as seconds); a block without ``>>>`` must run. A block that uses names it does
not define continues the block before it (as a reader does), in the same namespace. Blocks run
in a scratch folder with the repository's ``instances/`` and ``examples/`` linked in, so the
README's relative paths work and what a block writes (a cache, a plan) stays out of the
repository. A block that imports an optional extra is skipped without it, and fails under CI.
"""

from __future__ import annotations

import ast
import builtins
import doctest
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.shared import require

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# What an import needs: module prefix -> (module to import, the extra that has it).
EXTRAS = {
    "executorch": ("executorch.exir", "executorch"),
    "torch": ("torch", "executorch"),
    "torchvision": ("torchvision", "executorch"),
    "onnx": ("onnx", "onnx"),
    "onnxruntime": ("onnxruntime", "ort"),
    "cpplan.plot": ("matplotlib", "plot"),
    "cpplan.view": ("bokeh", "view"),
}
# Docstrings with examples (``>>>``), run with doctest.
DOCTEST_MODULES = ["cpplan", "cpplan.memories", "cpplan.grade.specs"]


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    text: str

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def is_doctest(self) -> bool:
        return any(line.lstrip().startswith(">>>") for line in self.text.splitlines())

    def source(self) -> str:
        """The block's Python code (a doctest's examples joined)."""
        if not self.is_doctest:
            return self.text
        return "".join(ex.source for ex in doctest.DocTestParser().get_examples(self.text))


def python_blocks(path: Path) -> list[Block]:
    blocks = []
    fence = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)
    text = path.read_text(encoding="utf-8")
    for m in fence.finditer(text):
        blocks.append(Block(path, text.count("\n", 0, m.start()) + 1, m.group(1)))
    return blocks


README_BLOCKS = python_blocks(README)
BLOCKS = README_BLOCKS + [b for page in PAGES for b in python_blocks(page)]


def imported(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
    return out


def free_names(tree: ast.AST) -> set[str]:
    """Names the code reads and neither binds nor gets from builtins."""
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return read - bound - set(dir(builtins))


def needs(block: Block) -> list[tuple[str, str]]:
    mods = imported(ast.parse(block.source()))
    return sorted({need for prefix, need in EXTRAS.items()
                   if any(m == prefix or m.startswith(prefix + ".") for m in mods)})


_namespaces: dict[int, dict] = {}


def run_block(k: int, cwd: Path) -> dict:
    """Run block ``k`` (after the block it continues, if any) and return its namespace."""
    if k in _namespaces:
        return _namespaces[k]
    block = BLOCKS[k]
    for module, extra in needs(block):
        require(module, extra)
    if free_names(ast.parse(block.source())):
        assert k > 0 and BLOCKS[k - 1].path == block.path, \
            f"{block.name}: the first block of its file uses undefined names"
        namespace = run_block(k - 1, cwd)
    else:
        namespace = {"__name__": "__readme__"}
    _namespaces[k] = namespace
    here = os.getcwd()
    os.chdir(cwd)
    try:
        name = block.name
        if block.is_doctest:
            test = doctest.DocTestParser().get_doctest(block.text, namespace, name,
                                                       str(block.path), block.line)
            runner = doctest.DocTestRunner(optionflags=FLAGS)
            runner.run(test, clear_globs=False)
            namespace.update(test.globs)  # (a DocTest runs in a copy of the globals given)
            result = runner.summarize(verbose=False)
            assert result.failed == 0, f"{name}: {result.failed} example(s) failed (above)"
        else:
            exec(compile(block.text, name, "exec"), namespace)
    finally:
        os.chdir(here)
    return namespace


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("readme")
    for name in ("instances", "examples"):
        (folder / name).symlink_to(ROOT / name, target_is_directory=True)
    return folder


def test_readme_has_python_examples() -> None:
    assert len(README_BLOCKS) >= 4
    assert all(block.is_doctest for block in README_BLOCKS), "write README examples as doctests"


@pytest.mark.parametrize("k", range(len(BLOCKS)), ids=[b.name for b in BLOCKS])
def test_example(k: int, scratch: Path) -> None:
    run_block(k, scratch)


@pytest.mark.parametrize("module", DOCTEST_MODULES)
def test_docstring_examples(module: str) -> None:
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=FLAGS)
    assert result.attempted > 0
    assert result.failed == 0
