"""cpplan's own heuristic planners and the registry every planner is found in.

Every module in this package registers its planners on import (see :mod:`.registry`);
:func:`load_all` imports them all, so a new module needs no other change.
"""

from __future__ import annotations

import importlib
import pkgutil

from .registry import PLANNERS, PlannerInfo, get, info, names, register

__all__ = ["PLANNERS", "PlannerInfo", "get", "info", "names", "register", "load_all"]

_loaded = False


def load_all() -> None:
    """Import every planner module, so that every planner is registered (cpplan's own, the
    replicas, and the solver as ``cpplan``). :func:`get` and :func:`names` call it; calling it
    again does nothing."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for mod in pkgutil.iter_modules(__path__):
        if mod.name not in ("registry",) and not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")
    # The replicas of production allocators live in cpplan.replicas and register the same way.
    from .. import replicas

    for mod in pkgutil.iter_modules(replicas.__path__):
        if not mod.name.startswith("_"):
            importlib.import_module(f"{replicas.__name__}.{mod.name}")
    # The solver registers itself as the planner "cpplan" (it sits above every planner).
    importlib.import_module("cpplan.solve")
