"""``python -m cpplan.cli``: the ``cpplan`` command."""

from . import run

run()
