"""The problem model: what a valid problem is, and the error bad input gets.

Every error is a :class:`ProblemError` that names the buffer (or pool) and the field.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from cpplan import Alias, Buffer, Placement, Plan, Pool, Problem, ProblemError, check
from tests.strategies import naive_plan, problems


def bad(match: str | None = None, *, buffer: str | None = None, pool: str | None = None,
        field: str | None = None):
    """Context: the body raises a ProblemError naming ``buffer``/``pool`` and ``field``."""
    class _Ctx:
        def __enter__(self):
            self.raises = pytest.raises(ProblemError, match=match)
            self.info = self.raises.__enter__()
            return self.info

        def __exit__(self, *exc):
            out = self.raises.__exit__(*exc)
            e = self.info.value
            if buffer is not None:
                assert e.buffer == buffer, str(e)
                assert repr(buffer) in str(e)
            if pool is not None:
                assert e.pool == pool, str(e)
                assert repr(pool) in str(e)
            if field is not None:
                assert e.field == field, str(e)
                assert field in str(e)
            return out

    return _Ctx()


def P(*buffers: Buffer, pools=(), aliases=()) -> Problem:
    return Problem(tuple(buffers), tuple(pools), tuple(aliases))


# -- a valid problem ----------------------------------------------------------------------------

def test_defaults_and_lookups():
    p = P(Buffer("a", 64, 0, 2), Buffer("b", 32, 1, 3, alignment=8))
    assert p.pools == (Pool("default", None, 1, 1),)
    assert p.index == {"a": 0, "b": 1}
    assert p.buffer("b").alignment == 8
    assert p.candidates("a") == ("default",)
    assert p.time_span == (0, 3)
    assert p.root_of == {}
    assert Problem(()).time_span == (0, 0)


def test_candidates_are_ordered_and_default_to_every_pool():
    pools = (Pool("sram", 1024), Pool("dram"))
    p = P(Buffer("a", 8, 0, 1, pools=("dram", "sram")), Buffer("b", 8, 0, 1), pools=pools)
    assert p.candidates("a") == ("dram", "sram")
    assert p.candidates(p.buffer("b")) == ("sram", "dram")


def test_integer_ids_become_strings():
    p = P(Buffer(7, 1, 0, 1), Buffer("x", 1, 0, 1), aliases=(Alias("x", 7),))
    assert p.buffers[0].id == "7"
    assert p.root_of == {"x": ("7", 0)}


def test_alias_chains_resolve_to_one_root():
    p = P(Buffer("a", 64, 0, 4), Buffer("b", 32, 1, 2), Buffer("c", 8, 1, 2),
          aliases=(Alias("c", "b", 16), Alias("b", "a", 32)))
    assert p.root_of == {"b": ("a", 32), "c": ("a", 48)}
    assert p.parent == {"b": ("a", 32), "c": ("b", 16)}


def test_with_capacity_and_replace_validate_again():
    p = P(Buffer("a", 64, 0, 2, offset=0))
    assert p.with_capacity({"default": 64}).pools[0].capacity == 64
    with bad("capacity", buffer="a", field="offset"):
        p.with_capacity({"default": 63})
    with bad(pool="nope", field="capacity"):
        p.with_capacity({"nope": 1})
    with bad(buffer="a", field="id"):
        p.replace(buffers=p.buffers * 2)


@given(problems())
def test_generated_problems_are_valid_and_equal_to_a_rebuild(problem):
    again = Problem(problem.buffers, problem.pools, problem.aliases, problem.name, problem.meta)
    assert again == problem
    for bid, (root, disp) in problem.root_of.items():
        assert root not in problem.root_of
        b, r = problem.buffer(bid), problem.buffer(root)
        assert disp >= 0 and disp + b.size <= r.size


# -- buffers --------------------------------------------------------------------------------------

def test_negative_size():
    with bad("must be >= 0, got -3", buffer="conv1", field="size"):
        Buffer("conv1", -3, 0, 1)


@pytest.mark.parametrize("end", [4, 3, -1])
def test_end_not_after_start(end):
    with bad("half-open", buffer="x", field="end"):
        Buffer("x", 8, 4, end)


@pytest.mark.parametrize("field,kwargs", [
    ("size", {"size": 1.5}), ("size", {"size": "8"}), ("size", {"size": None}),
    ("size", {"size": True}), ("start", {"start": 0.0}), ("end", {"end": "3"}),
    ("alignment", {"alignment": 2.0}), ("offset", {"offset": 1.0}), ("hint", {"hint": "0"}),
])
def test_non_integer_values(field, kwargs):
    args = {"id": "x", "size": 8, "start": 0, "end": 3} | kwargs
    with bad("must be an integer", buffer="x", field=field):
        Buffer(**args)


def test_numpy_integers_are_integers():
    np = pytest.importorskip("numpy")
    b = Buffer("x", np.int64(8), np.int32(0), np.int64(3), alignment=np.int64(4))
    assert (b.size, b.start, b.end, b.alignment) == (8, 0, 3, 4)
    assert type(b.size) is int


@pytest.mark.parametrize("alignment", [0, -8])
def test_alignment_not_positive(alignment):
    with bad("positive integer", buffer="x", field="alignment"):
        Buffer("x", 8, 0, 1, alignment=alignment)


def test_empty_id():
    with bad(field="id"):
        Buffer("", 8, 0, 1)


def test_duplicate_id():
    with bad("duplicate id", buffer="a", field="id"):
        P(Buffer("a", 8, 0, 1), Buffer("b", 8, 0, 1), Buffer("a", 4, 2, 3))


def test_unknown_pool():
    with bad("unknown pool 'l2'", buffer="a", field="pools"):
        P(Buffer("a", 8, 0, 1, pools=("l2",)), pools=(Pool("sram"),))


def test_pool_listed_twice():
    with bad(buffer="a", field="pools"):
        Buffer("a", 8, 0, 1, pools=("sram", "sram"))


def test_negative_hint():
    with bad(buffer="a", field="hint"):
        Buffer("a", 8, 0, 1, hint=-1)


# -- pools ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,field", [
    ({"capacity": -1}, "capacity"), ({"capacity": 1.5}, "capacity"),
    ({"alignment": 0}, "alignment"), ({"alignment": "64"}, "alignment"),
    ({"cost": -1}, "cost"), ({"cost": 0.5}, "cost"),
    ({"traffic_cost": -2}, "traffic_cost"), ({"traffic_cost": 1.5}, "traffic_cost"),
])
def test_bad_pool_fields(kwargs, field):
    with bad(pool="sram", field=field):
        Pool("sram", **kwargs)


def test_duplicate_pool_name():
    with bad(pool="sram", field="name"):
        P(Buffer("a", 8, 0, 1), pools=(Pool("sram"), Pool("sram")))


def test_no_pools_means_one_unbounded_default_pool():
    assert Problem((Buffer("a", 8, 0, 1),), ()).pools == (Pool(),)


# -- fixed offsets --------------------------------------------------------------------------------

def test_fixed_offset_negative():
    with bad(">= 0", buffer="w", field="offset"):
        Buffer("w", 8, 0, 1, offset=-8)


def test_fixed_offset_misaligned_to_the_buffer():
    with bad("not a multiple of the alignment 16", buffer="w", field="offset"):
        Buffer("w", 8, 0, 1, alignment=16, offset=8)


def test_fixed_offset_misaligned_to_a_candidate_pool():
    pools = (Pool("sram", alignment=64), Pool("dram", alignment=4096))
    P(Buffer("w", 8, 0, 1, pools=("sram",), offset=64), pools=pools)
    with bad("base alignment 4096", buffer="w", field="offset"):
        P(Buffer("w", 8, 0, 1, offset=64), pools=pools)  # any pool, so dram too


def test_fixed_offset_beyond_capacity():
    with bad("capacity 100", buffer="w", field="offset"):
        P(Buffer("w", 8, 0, 1, offset=93), pools=(Pool("sram", 100),))
    P(Buffer("w", 8, 0, 1, offset=92), pools=(Pool("sram", 100),))
    # It is enough that one candidate pool has room.
    P(Buffer("w", 8, 0, 1, offset=93), pools=(Pool("sram", 100), Pool("dram")))


def test_fixed_buffers_overlapping():
    with bad("overlaps fixed buffer", field="offset") as e:
        P(Buffer("a", 16, 0, 4, offset=0), Buffer("b", 16, 3, 5, offset=15))
    assert {e.value.buffer, "a", "b"} == {"a", "b"}
    assert "'a'" in str(e.value) and "'b'" in str(e.value)


def test_fixed_buffers_overlapping_that_may_share_a_pool():
    # Both could go to 'sram' or both to 'dram': a fixed offset is a placement already made, so
    # the pool must not be left to chance.
    pools = (Pool("sram"), Pool("dram"))
    with bad("may go to pool", field="offset"):
        P(Buffer("a", 16, 0, 4, offset=0), Buffer("b", 16, 0, 4, offset=0), pools=pools)
    with bad("pool 'dram'", field="offset"):
        P(Buffer("a", 16, 0, 4, pools=("sram", "dram"), offset=0),
          Buffer("b", 16, 0, 4, pools=("dram",), offset=8), pools=pools)


def test_fixed_buffers_that_do_not_overlap():
    P(Buffer("a", 16, 0, 4, offset=0), Buffer("b", 16, 3, 5, offset=16))  # adjacent bytes
    P(Buffer("a", 16, 0, 4, offset=0), Buffer("b", 16, 4, 5, offset=0))  # half-open lifetimes
    P(Buffer("a", 0, 0, 4, offset=0), Buffer("b", 16, 0, 5, offset=0))  # zero size
    pools = (Pool("sram"), Pool("dram"))
    P(Buffer("a", 16, 0, 4, pools=("sram",), offset=0),
      Buffer("b", 16, 0, 4, pools=("dram",), offset=0), pools=pools)


def test_fixed_root_overlapping_through_an_alias_that_outlives_it():
    # 'v' lives inside fixed 'a' after 'a' ends, on the bytes fixed 'b' takes then.
    with bad("overlaps fixed buffer", field="offset"):
        P(Buffer("a", 16, 0, 2, offset=0), Buffer("v", 8, 1, 6), Buffer("b", 8, 3, 5, offset=0),
          aliases=(Alias("v", "a", 0),))
    P(Buffer("a", 16, 0, 2, offset=0), Buffer("v", 8, 1, 6), Buffer("b", 8, 3, 5, offset=8),
      aliases=(Alias("v", "a", 0),))


def test_fixed_root_misaligned_for_an_aliased_member():
    # 'v' sits at 8 + 0 = 8, which breaks its alignment 16: no plan can exist.
    with bad("16", buffer="a", field="offset"):
        P(Buffer("a", 32, 0, 2, offset=8), Buffer("v", 16, 0, 2, alignment=16),
          aliases=(Alias("v", "a", 0),))
    P(Buffer("a", 32, 0, 2, offset=16), Buffer("v", 16, 0, 2, alignment=16),
      aliases=(Alias("v", "a", 0),))


# -- aliases --------------------------------------------------------------------------------------

def test_alias_cycle():
    bufs = (Buffer("a", 8, 0, 1), Buffer("b", 8, 0, 1), Buffer("c", 8, 0, 1))
    with bad("alias cycle", field="alias root"):
        P(*bufs, aliases=(Alias("a", "b"), Alias("b", "c"), Alias("c", "a")))
    with bad("alias cycle", field="alias root"):
        P(*bufs, aliases=(Alias("a", "b"), Alias("b", "a")))
    with bad("itself", buffer="a", field="alias root"):
        P(*bufs, aliases=(Alias("a", "a"),))


def test_alias_displacement_outside_its_root():
    bufs = (Buffer("a", 64, 0, 2), Buffer("v", 16, 0, 2))
    P(*bufs, aliases=(Alias("v", "a", 48),))
    with bad("overhangs root 'a'", buffer="v", field="alias displacement"):
        P(*bufs, aliases=(Alias("v", "a", 49),))
    with bad(">= 0", buffer="v", field="alias displacement"):
        Alias("v", "a", -1)
    with bad("must be an integer", buffer="v", field="displacement"):
        Alias("v", "a", 1.0)


def test_alias_chain_overhanging_its_direct_parent():
    bufs = (Buffer("a", 64, 0, 2), Buffer("b", 16, 0, 2), Buffer("c", 8, 0, 2))
    with bad("overhangs root 'b'", buffer="c", field="alias displacement"):
        P(*bufs, aliases=(Alias("b", "a", 0), Alias("c", "b", 9)))


def test_alias_displacement_misaligned():
    bufs = (Buffer("a", 64, 0, 2), Buffer("b", 32, 0, 2), Buffer("c", 8, 0, 2, alignment=8))
    with bad("not a multiple of the alignment 8", buffer="c", field="alias displacement"):
        P(*bufs, aliases=(Alias("b", "a", 4), Alias("c", "b", 0)))  # 4 + 0 from root 'a'
    P(*bufs, aliases=(Alias("b", "a", 4), Alias("c", "b", 4)))


@pytest.mark.parametrize("alias,field", [
    (Alias("v", "nope"), "alias root"), (Alias("nope", "a"), "alias buffer"),
])
def test_alias_of_unknown_buffer(alias, field):
    with bad("unknown buffer 'nope'", field=field):
        P(Buffer("a", 8, 0, 1), Buffer("v", 8, 0, 1), aliases=(alias,))


def test_aliased_twice():
    bufs = (Buffer("a", 8, 0, 1), Buffer("b", 8, 0, 1), Buffer("v", 8, 0, 1))
    with bad("aliased twice", buffer="v", field="alias"):
        P(*bufs, aliases=(Alias("v", "a"), Alias("v", "b")))


def test_aliased_buffer_with_its_own_offset():
    with bad("no offset of its own", buffer="v", field="offset"):
        P(Buffer("a", 8, 0, 1), Buffer("v", 8, 0, 1, offset=0), aliases=(Alias("v", "a"),))


def test_alias_in_no_pool_of_its_root():
    pools = (Pool("sram"), Pool("dram"))
    with bad("no candidate pool", buffer="v", field="pools"):
        P(Buffer("a", 8, 0, 1, pools=("sram",)), Buffer("v", 8, 0, 1, pools=("dram",)),
          pools=pools, aliases=(Alias("v", "a"),))


def test_block_members_with_no_common_pool():
    # Each member shares a pool with the root, but the block as a whole has none.
    pools = (Pool("sram"), Pool("dram"))
    with bad("no candidate pool", field="pools"):
        P(Buffer("a", 8, 0, 1), Buffer("v", 8, 0, 1, pools=("sram",)),
          Buffer("w", 8, 0, 1, pools=("dram",)), pools=pools,
          aliases=(Alias("v", "a"), Alias("w", "a")))


# -- semantics ------------------------------------------------------------------------------------

def test_zero_size_buffer_conflicts_with_nothing():
    p = P(Buffer("a", 64, 0, 4), Buffer("z", 0, 0, 4, alignment=8))
    plan = Plan.build(p, {"a": ("default", 0), "z": ("default", 8)})
    assert check(p, plan) == []
    assert plan.height == 64
    naive = naive_plan(p)
    assert naive.offset("z") % 8 == 0


def test_zero_size_buffer_still_needs_an_aligned_offset():
    p = P(Buffer("z", 0, 0, 4, alignment=8))
    plan = Plan.build(p, {"z": ("default", 4)})
    assert [v.kind for v in check(p, plan)] == ["alignment"]


def test_alias_that_outlives_its_root_keeps_only_its_own_bytes():
    # 'v' = bytes [16, 24) of 'a', alive until step 6 while 'a' dies at step 2.
    p = P(Buffer("a", 32, 0, 2), Buffer("v", 8, 1, 6), Buffer("c", 16, 2, 6),
          aliases=(Alias("v", "a", 16),))

    def plan(c_offset: int) -> Plan:
        return Plan.build(p, {"a": ("default", 0), "v": ("default", 16),
                              "c": ("default", c_offset)})

    assert check(p, plan(0)) == []  # [0, 16): a's own bytes, free once 'a' is gone
    assert check(p, plan(24)) == []
    bad_plan = [v for v in check(p, plan(1)) if v.kind == "overlap"]
    assert [set(v.buffers) for v in bad_plan] == [{"v", "c"}]


def test_alias_that_starts_before_its_root():
    # A concat input written into its slice of the output before the output is complete.
    p = P(Buffer("out", 32, 2, 5), Buffer("in", 16, 0, 3), Buffer("c", 16, 0, 2),
          aliases=(Alias("in", "out", 16),))
    ok = Plan.build(p, {"out": ("default", 0), "in": ("default", 16), "c": ("default", 0)})
    assert check(p, ok) == []
    clash = Plan.build(p, {"out": ("default", 0), "in": ("default", 16), "c": ("default", 16)})
    assert [set(v.buffers) for v in check(p, clash)] == [{"in", "c"}]


def test_members_of_one_block_may_share_bytes():
    p = P(Buffer("x", 32, 0, 2), Buffer("y", 32, 1, 3), aliases=(Alias("y", "x"),))
    assert check(p, Plan.build(p, {"x": Placement("default", 0), "y": ("default", 0)})) == []


def test_numbers_beyond_64_bit_arithmetic():
    with bad("2\\*\\*62", buffer="x", field="size"):
        Buffer("x", 2**62, 0, 1)
    with bad("2\\*\\*62", buffer="x", field="start"):
        Buffer("x", 8, -(2**62), 1)
    with bad("2\\*\\*62", pool="p", field="capacity"):
        Pool("p", 10**30)
    big = Buffer("x", 2**61, 0, 1)
    with bad("2\\*\\*62", field="sizes"):
        P(big, Buffer("y", 2**61, 5, 6))


# -- traffic ------------------------------------------------------------------------------------

def test_traffic_defaults_to_nothing_and_must_be_a_non_negative_integer():
    assert Buffer("a", 8, 0, 1).traffic == 0 and Pool("sram").traffic_cost == 0
    assert not P(Buffer("a", 8, 0, 1)).has_traffic
    assert P(Buffer("a", 8, 0, 1, traffic=24)).has_traffic
    with bad(buffer="a", field="traffic"):
        Buffer("a", 8, 0, 1, traffic=-1)
    with bad(buffer="a", field="traffic"):
        Buffer("a", 8, 0, 1, traffic=2.5)


def test_traffic_times_its_cost_must_stay_within_int64():
    with bad(field="traffic"):
        P(Buffer("a", 8, 0, 1, traffic=2**40), Buffer("b", 8, 0, 1, traffic=2**40),
          pools=(Pool("sram", traffic_cost=2**22),))


def test_with_capacity_keeps_the_other_pool_fields():
    p = P(Buffer("a", 8, 0, 1), pools=(Pool("sram", None, 4, 2, 7),))
    assert p.with_capacity({"sram": 64}).pools == (Pool("sram", 64, 4, 2, 7),)
