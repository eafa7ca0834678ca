"""The exact engine's entry points, loaded on first use.

:mod:`cpplan.exact.search` and :mod:`cpplan.exact.lns` import OR-Tools, and OR-Tools'
``cp_model`` imports pandas at its top level (OR-Tools 9.15: ``import pandas as pd``, with
``pd.Index`` and ``pd.Series`` in module-level annotations, so no lazy import inside OR-Tools
can avoid it): about 0.5 s of start-up. :mod:`cpplan.solve` imports these names instead, so a
solve that the heuristics and the bounds settle (proven optimal without a probe) never loads
OR-Tools at all. Type checkers see the real functions and their signatures; at run time each
name is a wrapper that imports the real function on its first call and hands it the same
arguments.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["improve", "minimise", "peak_first", "probe", "tier_bound"]

if TYPE_CHECKING:
    from .lns import improve
    from .peak import peak_first
    from .search import minimise, probe
    from .tiers import tier_bound
else:
    def _lazy(module: str, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            return getattr(importlib.import_module(module, __package__), name)(*args, **kwargs)

        call.__name__ = call.__qualname__ = name
        call.__doc__ = f":func:`cpplan.exact{module}.{name}`, imported when first called."
        return call

    improve = _lazy(".lns", "improve")
    peak_first = _lazy(".peak", "peak_first")
    minimise = _lazy(".search", "minimise")
    probe = _lazy(".search", "probe")
    tier_bound = _lazy(".tiers", "tier_bound")
