"""The exact engine: the CP-SAT packing model (:mod:`.model`), the search around it
(:mod:`.search`), the MiniMalloc-style branch and bound (:mod:`.dfs`) and the irreducible
infeasible sets (:mod:`.conflict`). Users call :func:`cpplan.solve.solve`, which also registers
itself as the planner ``cpplan`` (family ``exact``)."""
