"""Rewrites: views, in-place (only over an input that dies, output not larger), concat without
copies (only contiguous slices, at their byte displacements). Each is checked both by the
aliases it makes and by a byte-level simulation (memsim) that every read sees the right data."""

from hypothesis import given, settings
from hypothesis import strategies as st
from memsim import simulate

from cpplan.blocks import make_blocks
from cpplan.bounds import max_load
from cpplan.graph import Graph, concat_is_contiguous, to_problem
from cpplan.problem import Alias
from cpplan.replicas.naive import plan as naive_plan

ALL = {"in_place": True, "concat_in_place": True}


def aliases(problem):
    return {a.buffer: (a.root, a.displacement) for a in problem.aliases}


def relu_chain(extra_reader: bool = False, grow: bool = False) -> Graph:
    g = Graph()
    g.add_input("x", (16,))
    g.add_operator("Conv", ["x"], [("a", (16,))])
    g.add_operator("Relu", ["a"], [("b", (32,) if grow else (16,))], inplace=(0,))
    if extra_reader:
        g.add_operator("Conv", ["a"], [("c", (16,))])
    g.add_operator("Conv", ["b"], [("d", (4,))])
    g.mark_output("d")
    return g


def test_in_place_over_an_input_that_dies():
    p = to_problem(relu_chain(), in_place=True)
    assert aliases(p) == {"b": ("a", 0)}
    assert p.meta["rewrites"]["in-place"]["bytes_saved"] == 64
    assert max_load(p)["arena"].bytes == 64 + 16  # a and b count once
    assert max_load(to_problem(relu_chain()))["arena"].bytes == 64 + 64
    assert to_problem(relu_chain()).aliases == ()  # off by default


def test_no_in_place_when_the_input_lives_on():
    p = to_problem(relu_chain(extra_reader=True), in_place=True)
    assert p.aliases == ()
    assert p.meta["rewrites"]["in-place"]["kept_copies"] == {"input lives on after this step": 1}


def test_no_in_place_when_the_output_is_larger():
    p = to_problem(relu_chain(grow=True), in_place=True)
    assert p.aliases == ()
    assert p.meta["rewrites"]["in-place"]["kept_copies"] == {"output larger than input": 1}


def test_in_place_never_over_graph_outputs_or_inputs_outside_the_arena():
    g = Graph()
    g.add_input("x", (4,))
    g.add_operator("Relu", ["x"], [("y", (4,))], inplace=(0,))
    g.add_operator("Relu", ["y"], [("z", (4,))], inplace=(0,))
    g.mark_output("y", "z")
    p = to_problem(g, in_place=True)
    assert p.aliases == ()  # x lives the whole run in its pool; y is an output
    inside = to_problem(g, in_place=True, inputs_in_arena=True)
    assert aliases(inside) == {"y": ("x", 0)}  # x dies at step 0 once it is in the arena
    assert simulate(g, inside) == []


def test_view_aliases_its_input_and_blocks_in_place_while_the_input_lives():
    g = Graph()
    g.add_input("x", (2, 8))
    g.add_operator("Conv", ["x"], [("a", (2, 8))])
    g.add_operator("Reshape", ["a"], [("v", (16,))], view=True)
    g.add_operator("Relu", ["v"], [("r", (16,))], inplace=(0,))  # v dies here, a does not
    g.add_operator("Add", ["a", "r"], [("out", (2, 8))])
    g.mark_output("out")
    plain = to_problem(g)
    assert aliases(plain) == {"v": ("a", 0)}
    assert plain.meta["rewrites"]["view"] == {"aliases": 1, "bytes_saved": 64}
    p = to_problem(g, **ALL)
    assert "r" not in aliases(p)  # writing r over v would clobber a
    assert simulate(g, p) == []
    assert to_problem(g, views=False).aliases == ()


def concat_graph(shape_a, shape_b, axis) -> Graph:
    g = Graph()
    g.add_input("x", (4,))
    g.add_operator("Conv", ["x"], [("a", shape_a)], name="make_a")
    g.add_operator("Conv", ["x"], [("pad", (64,))], name="other")
    g.add_operator("Conv", ["x"], [("b", shape_b)], name="make_b")
    out = list(shape_a)
    out[axis] += shape_b[axis]
    g.add_operator("Concat", ["a", "b"], [("c", tuple(out))], name="cat", concat_axis=axis)
    g.add_operator("Conv", ["c"], [("y", (4,))])
    g.mark_output("y")
    return g


def test_concat_contiguity_rule():
    assert concat_is_contiguous((1, 6, 4, 4), 1)  # channels at batch 1
    assert concat_is_contiguous((6, 4), 0)
    assert concat_is_contiguous((1, 1, 6), 2)
    assert not concat_is_contiguous((2, 6, 4, 4), 1)
    assert not concat_is_contiguous((1, 6, 4, 4), 2)


def test_concat_without_copies_at_slice_displacements():
    g = concat_graph((1, 2, 3, 3), (1, 4, 3, 3), axis=1)
    p = to_problem(g, concat_in_place=True)
    assert aliases(p) == {"a": ("c", 0), "b": ("c", 2 * 9 * 4)}
    rw = p.meta["rewrites"]["concat"]
    assert rw["aliases"] == 2 and rw["bytes_saved"] == 6 * 9 * 4 and rw["contiguous"] == 1
    assert simulate(g, p) == []
    # the output's block holds memory from when its first input is made (step 0), slice by slice
    blocks = make_blocks(p)
    i = [p.buffers[r].id for r in blocks.root].index("c")
    assert blocks.times[blocks.start[i]] == p.buffer("a").start == 0
    assert max_load(p)["arena"].bytes < max_load(to_problem(g))["arena"].bytes


def test_concat_keeps_its_copy_when_slices_are_strided():
    g = concat_graph((1, 2, 3, 3), (1, 2, 3, 4), axis=3)
    p = to_problem(g, concat_in_place=True)
    assert p.aliases == ()
    assert p.meta["rewrites"]["concat"]["kept_copies"] == {
        "slices not contiguous (axis is not the outermost non-unit)": 1}


def test_concat_slice_must_respect_alignment():
    g = concat_graph((1, 3), (1, 5), axis=1)  # b's slice starts at byte 12
    p = to_problem(g, concat_in_place=True, alignment=16)
    assert aliases(p) == {"a": ("c", 0)}
    assert p.meta["rewrites"]["concat"]["kept_copies"] == {"slice not aligned": 1}


def test_in_place_output_already_in_a_concat_slice_takes_its_input_along():
    # UNet's skip: conv -> relu (in place) -> concat; the conv writes straight into the slice
    g = Graph()
    g.add_input("x", (1, 4))
    g.add_operator("Conv", ["x"], [("a", (1, 4))])
    g.add_operator("Relu", ["a"], [("b", (1, 4))], inplace=(0,))
    g.add_operator("Conv", ["b"], [("c", (1, 2))])
    g.add_operator("Concat", ["b", "c"], [("d", (1, 6))], concat_axis=1)
    g.mark_output("d")
    p = to_problem(g, **ALL)
    assert aliases(p) == {"b": ("d", 0), "c": ("d", 16), "a": ("b", 0)}
    assert p.meta["rewrites"]["bytes_saved"] == 16 + 24
    assert simulate(g, p) == []


def test_a_tensor_read_by_two_concats_is_aliased_once():
    g = Graph()
    g.add_input("x", (4,))
    g.add_operator("Conv", ["x"], [("a", (4,))])
    g.add_operator("Conv", ["x"], [("b", (4,))])
    g.add_operator("Concat", ["a", "b"], [("c1", (8,))], concat_axis=0)
    g.add_operator("Concat", ["b", "a"], [("c2", (8,))], concat_axis=0)
    g.mark_output("c1", "c2")
    p = to_problem(g, concat_in_place=True)
    assert aliases(p) == {"a": ("c1", 0), "b": ("c1", 16)}
    assert p.meta["rewrites"]["concat"]["kept_copies"] == {"input already aliased by a concat": 2}
    assert simulate(g, p) == []


def test_the_simulation_catches_a_wrong_alias():
    g = relu_chain(extra_reader=True)  # a lives on after b is made: b over a is wrong
    p = to_problem(g)
    bad = p.replace(aliases=(Alias("b", "a", 0),))
    assert simulate(g, bad)
    assert simulate(g, p) == []


@st.composite
def random_graphs(draw):
    """Random DAGs of element-wise (in-place capable), view, concat and plain operators."""
    g = Graph("random")
    n_in = draw(st.integers(1, 2))
    tensors = [g.add_input(f"in{i}", (draw(st.integers(1, 4)),)) for i in range(n_in)]
    for k in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["ew", "ew2", "view", "concat", "concat", "plain"]))
        pick = st.sampled_from(tensors)
        x = draw(pick)
        n = g.tensors[x].shape[0]
        name = f"t{k}"
        if kind == "ew":
            g.add_operator("Relu", [x], [(name, (n,))], inplace=(0,))
        elif kind == "ew2":
            y = draw(pick)
            m = max(n, g.tensors[y].shape[0])
            ok = tuple(i for i, t in enumerate((x, y)) if g.tensors[t].shape[0] >= m)
            g.add_operator("Add", [x, y], [(name, (m,))], inplace=ok)
        elif kind == "view":
            g.add_operator("Reshape", [x], [(name, (1, n))], view=True)
            g.add_operator("Reshape", [name], [(name + "f", (n,))], view=True)
            name += "f"
        elif kind == "concat":
            ins = draw(st.lists(pick, min_size=1, max_size=3))
            total = sum(g.tensors[t].shape[0] for t in ins)
            g.add_operator("Concat", ins, [(name, (total,))], concat_axis=0)
        else:
            g.add_operator("Conv", [x], [(name, (draw(st.integers(1, 4)),))],
                           workspace=(draw(st.integers(0, 8)),))
        tensors.append(name)
    outs = draw(st.lists(st.sampled_from(tensors[n_in:]), min_size=1, max_size=2, unique=True))
    g.mark_output(*outs)
    return g


@settings(max_examples=150, deadline=None)
@given(random_graphs(), st.booleans(), st.booleans(), st.booleans())
def test_random_graphs_rewrites_are_safe_and_plannable(g, in_place, concat, inputs_in_arena):
    p = to_problem(g, in_place=in_place, concat_in_place=concat, inputs_in_arena=inputs_in_arena)
    assert simulate(g, p) == []
    plan = naive_plan(p)  # passes the checker with the aliases, or raises
    assert plan.placements.keys() == set(p.index)
    # aliases only ever merge bytes: the max-load of every pool can only drop
    base = max_load(to_problem(g, inputs_in_arena=inputs_in_arena, views=False))
    for pool, bound in max_load(p).items():
        assert bound.bytes <= base[pool].bytes
    rw = p.meta["rewrites"]
    assert rw["bytes_saved"] == sum(p.buffer(a.buffer).size for a in p.aliases)
