"""Faithful replicas of production allocators, one module per project.

Each module registers its planners (family ``replica``) in :mod:`cpplan.planners.registry` on
import, and its docstring names the project, the source file and the quirks it reproduces; the
registry's :func:`cpplan.planners.load_all` imports every module here, so a new replica needs no
other change. Shared machinery (the replay loop, the arena, alignment checks) is in
:mod:`._greedy`.
"""
