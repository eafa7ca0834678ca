"""The exact engine's entry points, loaded on first use.

:mod:`cpplan.exact.search` and :mod:`cpplan.exact.lns` import OR-Tools, and OR-Tools'
``cp_model`` imports pandas at its top level (OR-Tools 9.15: ``import pandas as pd``, with
``pd.Index`` and ``pd.Series`` in module-level annotations, so no lazy import inside OR-Tools
can avoid it): about 0.5 s of start-up. :mod:`cpplan.solve` imports these wrappers instead, so
a solve that the heuristics and the bounds settle (proven optimal without a probe) never loads
OR-Tools at all. Each wrapper calls the function of the same name in :mod:`cpplan.exact.search`
(``improve``: :mod:`cpplan.exact.lns`; ``peak_first``: :mod:`cpplan.exact.peak`), looked up at
call time, with the same arguments and result.
"""

from __future__ import annotations

from typing import Any

__all__ = ["improve", "minimise", "peak_first", "probe"]


def minimise(*args: Any, **kwargs: Any) -> Any:
    """:func:`cpplan.exact.search.minimise`, imported when first called."""
    from .search import minimise as run

    return run(*args, **kwargs)


def probe(*args: Any, **kwargs: Any) -> Any:
    """:func:`cpplan.exact.search.probe`, imported when first called."""
    from .search import probe as run

    return run(*args, **kwargs)


def improve(*args: Any, **kwargs: Any) -> Any:
    """:func:`cpplan.exact.lns.improve`, imported when first called."""
    from .lns import improve as run

    return run(*args, **kwargs)


def peak_first(*args: Any, **kwargs: Any) -> Any:
    """:func:`cpplan.exact.peak.peak_first`, imported when first called."""
    from .peak import peak_first as run

    return run(*args, **kwargs)
