"""Pictures of plans: a panel per pool, aliases inside their roots, files of the size asked for."""

from __future__ import annotations

import random
import struct
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cpplan import Alias, Buffer, CpplanError, Pool, Problem, write_plan, write_problem
from cpplan.cli import main
from cpplan.planners import get

pytest.importorskip("matplotlib")

from cpplan.plot import plot_plan, save_plot  # noqa: E402


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def two_pools_with_aliases() -> Problem:
    rng = random.Random(7)
    bufs = [Buffer(f"t{i}", rng.choice([64, 128, 512]), s, s + rng.randrange(1, 9), alignment=64,
                   pools=("sram", "dram") if i % 3 else ("dram",))
            for i, s in enumerate(rng.randrange(0, 30) for _ in range(20))]
    bufs += [Buffer("cat", 1024, 10, 20, pools=("sram", "dram")),
             Buffer("x0", 512, 8, 12), Buffer("x1", 512, 9, 14)]
    return Problem(tuple(bufs), (Pool("sram", capacity=2048, alignment=64),
                                 Pool("dram", alignment=64, cost=4)),
                   (Alias("x0", "cat", 0), Alias("x1", "cat", 512)), name="two-pools")


def test_plot_two_pools_with_aliases(tmp_path: Path) -> None:
    problem = two_pools_with_aliases()
    plan = get("naive")(problem)
    assert set(p.pool for p in plan.placements.values()) == {"sram", "dram"}
    fig = plot_plan(problem, plan)
    axes = fig.get_axes()
    panels = [ax for ax in axes if ax.get_ylabel().endswith("offset")]
    assert [ax.get_ylabel() for ax in panels] == ["sram: offset", "dram: offset"]
    # Roots and aliases are separate collections; the two aliases are drawn in cat's pool.
    cat_pool = plan.pool("cat")
    panel = panels[0] if cat_pool == "sram" else panels[1]
    sizes = sorted(len(c.get_paths()) for c in panel.collections)
    assert sizes[0] == 2
    # The height of each pool is a line at the plan's height.
    for ax, name in zip(panels, ["sram", "dram"], strict=True):
        assert any(line.get_ydata()[0] == plan.heights[name] for line in ax.get_lines())
    out = save_plot(problem, plan, tmp_path / "plan.png", width=900, height=600)
    assert png_size(out) == (900, 600)


def test_plot_many_buffers_stays_light(tmp_path: Path) -> None:
    rng = random.Random(3)
    bufs = tuple(Buffer(str(i), rng.randrange(1, 4096), s, s + rng.randrange(1, 40))
                 for i, s in enumerate(rng.randrange(0, 500) for _ in range(1000)))
    problem = Problem(bufs, name="thousand")
    plan = get("naive")(problem)
    fig = plot_plan(problem, plan, color_by="lifetime")
    ax = fig.get_axes()[0]
    assert not ax.texts  # no names past the label limit
    (coll,) = ax.collections
    assert len(coll.get_paths()) == 1000 and max(coll.get_linewidths()) <= 0.25
    assert png_size(save_plot(problem, plan, tmp_path / "k.png", width=640, height=480)) == (
        640, 480)


def test_cli_plot(tmp_path: Path) -> None:
    problem = two_pools_with_aliases()
    write_problem(problem, tmp_path / "p.json")
    write_plan(problem, get("naive")(problem), tmp_path / "plan.json")
    out = tmp_path / "plan.png"
    result = CliRunner().invoke(main, ["plot", str(tmp_path / "p.json"),
                                       str(tmp_path / "plan.json"), "-o", str(out),
                                       "--size", "800x500"])
    assert result.exit_code == 0, result.output
    assert png_size(out) == (800, 500)
    result = CliRunner().invoke(main, ["plot", str(tmp_path / "p.json"), "--planner", "naive",
                                       "-o", str(tmp_path / "x.gif")])
    assert result.exit_code == 2 and "unknown picture type" in result.output


def test_missing_matplotlib_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = two_pools_with_aliases()
    plan = get("naive")(problem)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(CpplanError, match=r'pip install "\.\[plot\]"'):
        plot_plan(problem, plan)


def test_plot_grade_is_a_grid_of_ratios(tmp_path: Path) -> None:
    from cpplan.grade import grade
    from cpplan.plot import plot_grade

    examples = Path(__file__).resolve().parents[1] / "examples" / "first_fit.py"
    paths = []
    for seed in (1, 2):
        rng = random.Random(seed)
        problem = Problem(tuple(Buffer(f"b{i}", rng.randrange(1, 64), s, s + rng.randrange(1, 6))
                                for i, s in enumerate(rng.randrange(0, 20) for _ in range(15))))
        paths.append(tmp_path / f"p{seed}.json")
        write_problem(problem, paths[-1])
    report = grade(paths, ["naive", f"ff={examples}:plan", f"bad={examples}:overlapping"],
                   time_limit=0)
    fig = plot_grade(report)
    ax = fig.get_axes()[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [s.planner for s in report.summary()]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["p1", "p2", "geo-mean"]
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("invalid") == 2 and any(t.startswith("1.000") for t in texts)
    fig.savefig(tmp_path / "grade.png")
    assert png_size(tmp_path / "grade.png")[0] > 100


def test_a_buffer_with_gaps_is_drawn_as_the_pieces_it_occupies() -> None:
    # a: idle during [2, 4), only bytes [0, 8) of it during [4, 6): three rectangles; b: one.
    problem = Problem((Buffer("a", 16, 0, 6, gaps=[(2, 4), (4, 6, 0, 8)]), Buffer("b", 8, 2, 4)))
    plan = get("naive")(problem)
    ax = next(ax for ax in plot_plan(problem, plan).get_axes()
              if ax.get_ylabel().endswith("offset"))
    boxes = sorted(tuple(p.get_extents().bounds) for c in ax.collections for p in c.get_paths())
    oa, ob = plan.offset("a"), plan.offset("b")
    assert boxes == sorted([(0, oa, 2, 16), (4, oa, 2, 8), (2, ob, 2, 8)])


def test_plot_memory_tiers_says_what_each_memory_moves() -> None:
    from cpplan.memories import Memory, with_memories

    bufs = tuple(Buffer(f"t{i}", 100, i, i + 2, traffic=100 * (1 + i % 3)) for i in range(8))
    problem = with_memories(Problem(bufs, name="tiers"), [Memory("sram", 150, 1),
                                                          Memory("dram", None, 4)])
    plan = get("tiers-greedy")(problem)
    assert {pl.pool for pl in plan.placements.values()} == {"sram", "dram"}
    fig = plot_plan(problem, plan, color_by="traffic")
    panels = [ax for ax in fig.get_axes() if ax.get_ylabel().endswith("offset")]
    for ax, name in zip(panels, ["sram", "dram"], strict=True):
        labels = ax.get_legend_handles_labels()[1]
        moved = plan.traffic[name]
        share = 100 * moved / sum(plan.traffic.values())
        assert f"moves {moved} B ({share:.1f}%), cost {plan.traffic_cost[name]:,}" in labels
    assert "% of the traffic served by the fastest memory" in fig._suptitle.get_text()
    # colour by passes: the colour bar runs over traffic / size, 1 to 3 here
    (cbar,) = [ax for ax in fig.get_axes() if ax.get_ylabel() == "passes (traffic / size)"]
    assert cbar.get_ylim() == (1.0, 3.0)
    with pytest.raises(CpplanError, match="no buffer of this problem moves bytes"):
        plot_plan(two_pools_with_aliases(), get("naive")(two_pools_with_aliases()),
                  color_by="traffic")
