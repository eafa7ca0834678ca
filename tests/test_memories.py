"""Memory maps: NAME[:CAPACITY[:TRAFFIC_COST]], fastest first, as a problem's pools."""

from __future__ import annotations

import pytest

from cpplan import Buffer, Pool, Problem, ProblemError
from cpplan.memories import Memory, parse_memory, parse_size, with_memories


@pytest.mark.parametrize("text,size", [("262144", 262144), ("256KiB", 262144), ("1.5MiB", 1572864),
                                       ("4M", 4_000_000), ("2 GiB", 2 << 30), ("64kB", 64000)])
def test_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "12QB", "-3", "0.5", "1.5KB5"])
def test_bad_sizes_name_the_field(text):
    with pytest.raises(ProblemError, match="capacity"):
        parse_size(text)


def test_memories_parse_with_defaults():
    assert parse_memory("sram:256KiB:1") == Memory("sram", 262144, 1)
    assert parse_memory("dram::4") == Memory("dram", None, 4)
    assert parse_memory("tcm") == Memory("tcm", None, 0)
    for bad in ("", ":12", "a:1:2:3", "sram:1k:x"):
        with pytest.raises(ProblemError):
            parse_memory(bad)


def test_with_memories_lets_every_buffer_go_anywhere_and_keeps_the_arena_alignment():
    problem = Problem((Buffer("a", 64, 0, 2, pools=("arena",)), Buffer("b", 32, 1, 3)),
                      (Pool("arena", alignment=16), Pool("inputs")))
    tiered = with_memories(problem, [Memory("sram", 128, 1), Memory("dram", None, 4)])
    assert tiered.pools == (Pool("sram", 128, 16, 0, 1), Pool("dram", None, 16, 0, 4))
    assert all(b.pools == () for b in tiered.buffers)
    with pytest.raises(ProblemError, match="named twice"):
        with_memories(problem, [Memory("x"), Memory("x")])
