"""The exact engine: the CP-SAT packing model and the search around it."""
