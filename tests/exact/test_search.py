"""The raced probe (:func:`cpplan.exact.search.probe`): its memory ceiling."""

from __future__ import annotations

import numpy as np

from cpplan import Buffer, Problem, make_blocks
from cpplan.deadline import Budget
from cpplan.exact.search import probe


def test_a_race_past_its_memory_ceiling_starts_no_solve():
    # Three buffers that fit in 12 bytes: CP-SAT says so at once. With a ceiling already below
    # the process's memory (a negative growth), no CP-SAT slice starts: the race ends with no
    # answer.
    problem = Problem((Buffer("a", 4, 0, 2), Buffer("b", 8, 1, 3), Buffer("c", 4, 2, 4)))
    blocks = make_blocks(problem)
    ids = np.arange(len(blocks))
    race = {"dfs": False, "dive": False, "tiling": False}
    assert probe(blocks, ids, {0: 12}, Budget(5.0), **race).status == "feasible"
    assert probe(blocks, ids, {0: 12}, Budget(5.0), growth_mb=-1.0, **race).status == "unknown"
