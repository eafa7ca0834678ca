"""The exact engine: the CP-SAT packing model (:mod:`.model`), the search around it
(:mod:`.search`), the MiniMalloc-style branch and bound (:mod:`.dfs`), the tiling search for
tight problems (:mod:`.tiling`) and the merging of their blocks into rectangles
(:mod:`.dissection`), peak-first packing (:mod:`.peak`), large neighbourhood search
(:mod:`.lns`) and the irreducible infeasible sets (:mod:`.conflict`). Users call
:func:`cpplan.solve.solve`, which also registers itself as the planner ``cpplan`` (family
``exact``)."""
