"""MkDocs hooks for the API reference: the table of registered planners, made from the
registry when the site is built (the list ``cpplan planners`` prints)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

MARKER = "<!-- planners-table -->"
# A reST role in a summary (``:func:`cpplan.solve.solve```), as in docs/griffe_roles.py.
ROLE = re.compile(r":(?:func|class|meth|attr|mod|data|exc|obj|const):`(~?)([^`]+)`")
ROOT = Path(__file__).resolve().parents[1]


def on_startup(**kwargs: Any) -> None:
    # The pages document this checkout: the table imports cpplan from it, as the API pages
    # read it (mkdocs.yml: paths [.]), whatever else is installed.
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    if MARKER not in markdown:
        return markdown
    from cpplan.planners import get, names

    rows = ["| planner | family | what it does | reproduces |", "| --- | --- | --- | --- |"]
    for name in names():
        p = get(name)
        cells = (f"`{p.name}`", p.family, ROLE.sub(_link, p.summary), p.reproduces)
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return markdown.replace(MARKER, "\n".join(rows))


def _link(match: re.Match[str]) -> str:
    target = match.group(2)
    shown = target.rsplit(".", 1)[-1] if match.group(1) else target
    if not target.startswith("cpplan."):
        return f"`{shown}`"
    return f'<autoref identifier="{target}" optional><code>{shown}</code></autoref>'
