"""The ``cpplan`` command, and all of the command-line glue: one module per family of commands
(:mod:`.solve`: info, check, solve, planners; :mod:`.convert`: convert, extract; :mod:`.grade`;
:mod:`.plot`; :mod:`.tflm`; :mod:`.executorch`), what they share in :mod:`.common`, and the
front-end options, defined once, in :mod:`.frontend`. Front ends and runtimes expose functions;
the commands call them, and print.

Every user error is one line on stderr and exit code 2, with no traceback and no half-written
output (writers are atomic). ``cpplan check`` exits 1 when the plan is invalid.
"""

from __future__ import annotations

import gc
import sys

# First: installs the handler of Ctrl-C before anything heavy is imported.
from .common import count_from_process_start, main

try:
    import click

    # Each module registers its commands with `main`.
    from . import convert, executorch, grade, plot, solve, tflm  # noqa: F401
except KeyboardInterrupt:
    sys.stderr.write("cpplan: interrupted\n")
    sys.exit(130)

__all__ = ["main", "run"]


def run() -> None:
    """The ``cpplan`` command's entry point: :func:`main`, with Ctrl-C at any moment (start-up
    included) one line and exit code 130; the time limit counts from the process's start."""
    count_from_process_start()
    try:
        main()
    except KeyboardInterrupt:
        click.echo("cpplan: interrupted", err=True)
        sys.exit(130)
    finally:
        # What the command made is left to the operating system: the collections of the
        # interpreter's exit would walk all of it again, past the time limit (README, Time).
        # Exit handlers still run.
        gc.freeze()
