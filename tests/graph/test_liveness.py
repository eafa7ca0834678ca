"""Liveness: half-open lifetimes, outputs to the end, inputs in or out of the arena."""

from cpplan.graph import Graph, liveness, to_problem
from cpplan.graph.models import chain_with_skips


def graph() -> Graph:
    g = Graph()
    g.add_input("x", (4,))
    g.add_input("unused", (4,))
    g.add_constant("w", (4,))
    g.add_operator("A", ["x", "w"], [("a", (4,))])       # step 0
    g.add_operator("B", ["a"], [("b", (4,)), ("dead", (2,))])  # step 1
    g.add_operator("C", ["a", "b"], [("c", (4,))])       # step 2
    g.add_operator("D", ["x"], [("d", (4,))])            # step 3
    g.add_operator("E", ["c"], [("e", (4,))])            # step 4
    g.mark_output("b", "e")
    return g


def test_half_open_lifetimes_from_producer_to_after_last_use():
    live = liveness(graph())
    assert live.steps == 5
    assert live.lifetime("a") == (0, 3)  # made at 0, last read at 2
    assert live.lifetime("c") == (2, 5)
    assert live.lifetime("d") == (3, 4)  # nobody reads it: its producer's step only
    assert live.lifetime("dead") == (1, 2)


def test_graph_outputs_live_to_the_end():
    live = liveness(graph())
    assert live.lifetime("b") == (1, 5)  # read at 2 but an output
    assert live.lifetime("e") == (4, 5)


def test_inputs_whole_run_by_default_or_until_last_use_in_the_arena():
    g = graph()
    assert liveness(g).lifetime("x") == (0, 5)
    assert liveness(g).lifetime("unused") == (0, 5)
    inside = liveness(g, inputs_in_arena=True)
    assert inside.lifetime("x") == (0, 4)
    assert inside.lifetime("unused") == (0, 1)


def test_constants_are_not_planned():
    assert "w" not in liveness(graph()).start
    p = to_problem(graph())
    assert "w" not in p.index
    assert p.meta["constants"]["tensors"] == {"w": 16}
    assert "not planned" in p.meta["constants"]["where"]


def test_inputs_pool_or_arena():
    own = to_problem(graph())
    assert [p.name for p in own.pools] == ["arena", "inputs"]
    assert own.buffer("x").pools == ("inputs",) and own.buffer("x").lifetime == (0, 5)
    assert own.buffer("a").pools == ("arena",)
    inside = to_problem(graph(), inputs_in_arena=True)
    assert [p.name for p in inside.pools] == ["arena"]
    assert inside.buffer("x").pools == ("arena",) and inside.buffer("x").lifetime == (0, 4)


def test_workspaces_live_during_their_step_only():
    g = Graph()
    g.add_input("x", (8,))
    g.add_operator("Conv", ["x"], [("y", (8,))], name="conv", workspace=(100, 0))
    g.add_operator("Conv", ["y"], [("z", (8,))], name="conv2", workspace=(50,))
    p = to_problem(g)
    assert p.buffer("conv:workspace0").lifetime == (0, 1)
    assert p.buffer("conv:workspace0").size == 100
    assert p.buffer("conv:workspace1").size == 0
    assert p.buffer("conv2:workspace0").lifetime == (1, 2)
    assert p.buffer("conv2:workspace0").pools == ("arena",)
    assert p.meta["workspaces"] == {"count": 3, "bytes": 150}


def test_skip_connections_extend_lifetimes():
    g = chain_with_skips(40, skip=8)
    live = liveness(g)
    assert live.lifetime("t0") == (0, 2)  # read by op1 only
    assert live.lifetime("t7") == (7, 16)  # also read by op15, the skip 8 steps later
    assert live.end["t39"] == 40  # the output
