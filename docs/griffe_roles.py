"""A Griffe extension for the docs build: cpplan's docstrings cross-reference in reST roles
(``:func:`check```, ``:class:`~cpplan.plan.Plan```, ``:mod:`.registry```), which Markdown shows
as they are. Each role becomes a code span linked to the object it names when the API pages
render that object (an optional cross-reference: no link, and no warning, otherwise).

A target is looked for as Sphinx would: a dotted path from ``cpplan``; a leading ``.``
relative to the docstring's module (or its package); a bare name in the object, its class, its
module, its package, then ``cpplan``. A leading ``~`` shows the last component only.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|meth|attr|mod|data|exc|obj|const):`(~?)([^`]+)`")


class RestRoles(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name == "cpplan":
            self._walk(pkg, pkg, set())

    def _walk(self, obj: griffe.Object, root: griffe.Module, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = ROLE.sub(lambda m: self._link(m, obj, root),
                                           obj.docstring.value)
        for member in obj.members.values():
            if not member.is_alias:
                self._walk(member, root, seen)  # type: ignore[arg-type]

    def _link(self, match: re.Match[str], obj: griffe.Object, root: griffe.Module) -> str:
        short, target = match.group(1) == "~", match.group(2).strip()
        target = target.removesuffix("()")
        shown = target.lstrip(".").rsplit(".", 1)[-1] if short else target.lstrip(".")
        path = self._resolve(target, obj, root)
        code = f"<code>{html.escape(shown)}</code>"
        if path is None:
            return code
        return f'<autoref identifier="{path}" optional>{code}</autoref>'

    def _resolve(self, target: str, obj: griffe.Object, root: griffe.Module) -> str | None:
        module = obj if obj.is_module else obj.module
        package = module if module.is_package or module.parent is None else module.parent
        if target.startswith("."):
            name = target.lstrip(".")
            candidates = [f"{module.path}.{name}", f"{package.path}.{name}"]
        elif target.startswith("cpplan.") or target == "cpplan":
            candidates = [target]
        else:
            scopes = [obj, obj.parent, module, package, root]
            candidates = [f"{s.path}.{target}" for s in scopes if s is not None]
        for path in candidates:
            if self._exists(path, root):
                return path
        return None

    @staticmethod
    def _exists(path: str, root: griffe.Module) -> bool:
        if path == root.path:
            return True
        if not path.startswith(root.path + "."):
            return False
        try:
            root[path[len(root.path) + 1:]]
        except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return False
        return True
