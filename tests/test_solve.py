"""solve(): certificates, pools and costs, alignment, capacities, determinism, Ctrl-C.

Brute force is the reference for small problems: for one pool and single-rectangle blocks, the
best first-fit over all block orders is optimal (push every block of an optimal plan down, lowest
first: first-fit in that order lands each block at or below where it was).
"""

from __future__ import annotations

import itertools
import json
import math
import signal
import subprocess
import sys
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpplan import Alias, Buffer, CapacityError, Plan, Pool, Problem, check, objective_lower_bound
from cpplan.deadline import Budget, PlanOptions
from cpplan.perfect import FAMILIES, perfect_packing, regroup_packing, stack_packing, thinned
from cpplan.planners import get
from cpplan.random_problems import random_problem
from cpplan.solve import Progress, SolverParams, solve
from tests.bruteforce import brute_force
from tests.shared import benchmark
from tests.strategies import problems


def _lcm(a: int, b: int) -> int:
    return a * b // math.gcd(a, b)


def brute_force_height(problem: Problem) -> int:
    """Optimal height of a one-pool problem without aliases (first-fit over every order)."""
    pool = problem.pools[0]
    fixed = [b for b in problem.buffers if b.offset is not None]
    free = [b for b in problem.buffers if b.offset is None]
    best = None
    for order in itertools.permutations(free):
        placed = [(b, b.offset) for b in fixed]
        for b in order:
            a = _lcm(b.alignment, pool.alignment)
            off = 0
            while True:
                clash = [o + c.size for c, o in placed
                         if c.start < b.end and b.start < c.end and c.size and b.size
                         and o < off + b.size and off < o + c.size]
                if not clash:
                    break
                off = -(-max(clash) // a) * a
            placed.append((b, off))
        h = max((o + b.size for b, o in placed), default=0)
        best = h if best is None else min(best, h)
    return best if best is not None else 0


small_one_pool = problems(max_buffers=6, max_pools=1, aliases=False, capacities=False,
                          max_size=24, max_time=8)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_one_pool)
def test_solve_proves_the_brute_force_optimum(problem):
    plan = solve(problem, time_limit=20, deterministic=True)
    assert not check(problem, plan)
    assert plan.status == "optimal"
    assert plan.height == brute_force_height(problem)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_buffers=8))
def test_never_worse_than_the_portfolio_never_below_the_bound(problem):
    plan = solve(problem, time_limit=10, deterministic=True)
    if plan.status in ("infeasible", "unknown"):
        return
    assert not check(problem, plan)
    bound = objective_lower_bound(problem)
    assert plan.objective >= bound and plan.lower_bound >= bound
    assert plan.objective >= plan.lower_bound
    try:
        # The portfolio alone (deterministic, a second): solve runs the same planners.
        heuristic = get("portfolio")(problem, time_limit=1.0, seed=0, deterministic=True)
    except CapacityError:  # the portfolio may fail a capacity the exact search meets
        return
    assert plan.objective <= heuristic.objective


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_buffers=10, gaps=True), st.sampled_from([0.05, 0.3, 1.0]))
def test_the_answer_is_never_worse_than_a_heuristic_that_finished(problem, limit):
    # The anytime floor: every stage starts from the best plan so far and can only improve it,
    # at any limit. The first plan is best-fit in size order; run alone, it finishes here.
    plan = solve(problem, time_limit=limit, deterministic=True)
    if not plan.placements:
        return
    assert not check(problem, plan)
    offered = plan.stats["offered"]
    assert offered and plan.objective <= min(offered.values())
    try:
        alone = get("best-fit")(problem, order="size")
    except CapacityError:
        return
    assert plan.objective <= alone.objective


def test_first_fit_runs_however_long_the_first_plan_took():
    # A tiling of 2000 small buffers where first-fit beats best-fit (1.23 x L against 1.30):
    # at a limit whose heuristics' share (0.2 s) best-fit's six orders overrun, first-fit still
    # gets as long as best-fit took, and the answer is no worse than first-fit's.
    problem = regroup_packing(2000, seed=1)
    plan = solve(problem, time_limit=3)
    assert not check(problem, plan)
    assert "first-fit" in plan.stats["offered"]
    assert plan.objective <= plan.stats["offered"]["first-fit"] < plan.stats["offered"]["best-fit"]


several_pools = problems(min_buffers=2, max_buffers=6, max_pools=3, max_size=24, max_time=6,
                         hints=False)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(several_pools)
def test_verdicts_and_bounds_agree_with_brute_force_on_several_pools(problem):
    # CI runs the default profile's examples; before a release run the thorough profile:
    # python -m pytest tests/test_solve.py -k brute --hypothesis-profile=thorough
    # Pools with capacities, costs (0 included) and base alignments; alignments, fixed offsets,
    # aliases, zero-size buffers. Nothing solve proves may contradict the exhaustive search.
    truth = brute_force(problem)
    plan = solve(problem, time_limit=10, deterministic=True)
    if truth.objective is None:
        assert plan.status in ("infeasible", "unknown")
        return
    assert plan.status != "infeasible", plan.explanation
    assert plan.status != "unknown"
    assert not check(problem, plan)
    assert plan.lower_bound is not None and plan.lower_bound <= truth.objective
    # These problems are tiny: the exact search must reach the optimum and prove it.
    assert plan.objective == truth.objective and plan.status == "optimal"
    assert plan.gap == 0.0


def test_alignment_padding_in_an_uncapped_pool_is_no_proof_of_infeasibility():
    # Found by an audit: the several-pool model capped pool A at the sum of the sizes (18),
    # forgetting that y needs 8 bytes of padding in A; a valid plan exists (x, y in A; z in B).
    problem = Problem(
        (Buffer("x", 8, 0, 1, pools=("B", "A")), Buffer("y", 8, 0, 1, pools=("B", "A")),
         Buffer("z", 2, 0, 1, pools=("B",))),
        pools=(Pool("A", alignment=16), Pool("B", capacity=13, alignment=16)),
    )
    plan = solve(problem, time_limit=5, deterministic=True)
    assert plan.status == "optimal" and plan.objective == brute_force(problem).objective == 26


def test_a_fixed_offset_above_the_sum_of_the_sizes_is_no_cap():
    # The cheap pool must hold a block above a fixed one at 12; the sum of the sizes (49) is
    # below the optimum's height (54), so a model capped there proved a wrong "optimal" 66.
    problem = Problem(
        (Buffer("b0", 9, 2, 6, alignment=16, pools=("p2", "p0", "p1")), Buffer("b1", 8, 3, 8),
         Buffer("b2", 22, 6, 10, alignment=16), Buffer("b3", 10, 6, 10, alignment=12,
                                                       offset=12)),
        pools=(Pool("p0"), Pool("p1", capacity=45, alignment=4, cost=2),
               Pool("p2", capacity=54, cost=2)),
        aliases=(Alias("b1", "b0", 0),),
    )
    plan = solve(problem, time_limit=5, deterministic=True)
    assert plan.status == "optimal" and plan.objective == brute_force(problem).objective == 54


def test_pools_of_different_base_alignments_are_solved_exactly():
    # x may go to either pool; aligning it to the lcm (64) of both would forbid the optimum.
    problem = Problem(
        (Buffer("w", 24, 0, 2, pools=("fast",)), Buffer("x", 8, 0, 2, pools=("fast", "slow"))),
        pools=(Pool("fast", capacity=32, alignment=8, cost=1),
               Pool("slow", alignment=64, cost=100)),
    )
    plan = solve(problem, time_limit=5, deterministic=True)
    assert plan.placements["x"] == ("fast", 24)
    assert plan.status == "optimal" and plan.objective == 32 and plan.gap == 0.0


def test_costly_pools_optimal_means_no_gap():
    # Costs 1 and 100: the gap is measured on the objective, so a proven optimum has none.
    problem = Problem(
        tuple(Buffer(f"b{i}", 10 + i, 0, 3, pools=("sram", "dram")) for i in range(4)),
        pools=(Pool("sram", capacity=30, cost=1), Pool("dram", cost=100)),
    )
    plan = solve(problem, time_limit=10, deterministic=True)
    truth = brute_force(problem)
    assert plan.status == "optimal" and plan.objective == truth.objective
    assert plan.gap == 0.0 and plan.lower_bound == plan.objective


def test_fast_and_slow_pools_the_right_buffers_move_to_the_fast_one():
    # All three live together. SRAM holds 100 bytes at cost 1, DRAM is unbounded at cost 10:
    # the best split keeps 60 + 40 in SRAM and 50 in DRAM (100 + 10 * 50 = 600).
    problem = Problem(
        (Buffer("x", 60, 0, 3), Buffer("y", 50, 1, 4), Buffer("z", 40, 0, 4)),
        pools=(Pool("sram", capacity=100, cost=1), Pool("dram", cost=10)),
    )
    plan = solve(problem, time_limit=20, deterministic=True)
    assert plan.status == "optimal"
    assert plan.objective == 600
    assert {b for b, p in plan.placements.items() if p.pool == "sram"} == {"x", "z"}


def test_alignment_64_and_4096_are_honoured():
    problem = Problem((
        Buffer("weights", 5000, 0, 10, alignment=4096),
        Buffer("a", 100, 0, 5, alignment=64),
        Buffer("b", 100, 3, 8, alignment=64),
        Buffer("c", 30, 5, 10, alignment=64),
    ))
    plan = solve(problem, time_limit=20, deterministic=True)
    assert not check(problem, plan)
    assert plan.offset("weights") % 4096 == 0
    assert all(plan.offset(b) % 64 == 0 for b in "abc")
    assert plan.status == "optimal"
    assert plan.height == brute_force_height(problem)


def test_capacity_below_the_max_load_is_infeasible_and_says_where():
    problem = Problem((Buffer("a", 60, 0, 3), Buffer("b", 50, 2, 5)),
                      pools=(Pool("sram", capacity=100),))
    plan = solve(problem, time_limit=5)
    assert plan.status == "infeasible"
    assert "sram" in plan.explanation and "step 2" in plan.explanation
    assert "110" in plan.explanation


def _fragmented() -> Problem:
    # Max-load 10 at every step, yet no plan fits in 10 bytes (found by a random search over
    # tight instances; CP-SAT proves it).
    rows = [(5, 0, 1), (1, 0, 3), (4, 0, 2), (1, 1, 8), (3, 1, 5), (1, 1, 3), (1, 2, 5),
            (2, 2, 8), (1, 2, 5), (2, 3, 7), (4, 5, 7), (1, 5, 8), (3, 7, 8), (3, 7, 8)]
    return Problem(tuple(Buffer(f"b{i}", *r) for i, r in enumerate(rows)))


def test_capacity_met_by_the_max_load_but_not_by_any_plan_is_proved_infeasible():
    problem = _fragmented()
    assert objective_lower_bound(problem) == 10
    capped = problem.with_capacity({"default": 10})
    plan = solve(capped, time_limit=20, deterministic=True)
    assert plan.status == "infeasible"
    assert "proved" in plan.explanation


def test_an_infeasible_probe_raises_the_lower_bound():
    problem = _fragmented()
    plan = solve(problem, time_limit=20, deterministic=True)
    assert plan.status == "optimal" and plan.height == 11
    assert plan.lower_bound == 11  # above the max-load: the probe at 10 was refuted


def test_deterministic_mode_gives_the_same_plan():
    problem = Problem(tuple(Buffer(f"b{i}", 3 + (i * 7) % 11, i % 5, i % 5 + 2 + i % 3)
                            for i in range(30)))
    one = solve(problem, time_limit=5, deterministic=True)
    two = solve(problem, time_limit=5, deterministic=True)
    assert one.placements == two.placements


def test_deterministic_mode_is_byte_identical_when_time_runs_out():
    # D is not solved in 2 s: the search is cut by its deterministic clock, at the same point of
    # the same search every time, whatever the machine's load; the time reported is that clock.
    from cpplan.io import read_problem
    from cpplan.io.native import plan_to_dict

    problem = read_problem(benchmark("minimalloc-challenging", "D.1048576.csv"))
    runs = [json.dumps(plan_to_dict(solve(problem, time_limit=2, deterministic=True)))
            for _ in range(2)]
    assert runs[0] == runs[1]
    assert json.loads(runs[0])["seconds"] <= 2.0


def _solve_interrupted(problem: Problem, at: str, time_limit: float
                       ) -> tuple[Plan, Budget, list[Progress], float]:
    """solve() on the deterministic clock, with Ctrl-C (SIGINT) pressed as the first progress
    of phase ``at`` comes in: the plan, its budget, the progress seen until then, and the
    budget's clock then. (The wall-clock figure, how long a solve takes to end after Ctrl-C,
    is benchmarks/time_limits.py --ctrl-c S.)"""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    budget = PlanOptions(time_limit, deterministic=True).budget()
    seen: list[Progress] = []
    pressed: list[float] = []

    def progress(p: Progress) -> None:
        if pressed:
            return
        seen.append(p)
        if p.phase == at:
            pressed.append(budget.elapsed())
            signal.raise_signal(signal.SIGINT)  # (handled here, in the main thread)

    plan = solve(problem, budget, progress=progress)
    assert pressed, "the solve ended before Ctrl-C"
    return plan, budget, seen, pressed[0]


def test_ctrl_c_while_the_heuristics_run_returns_a_checked_plan_at_once():
    # Ctrl-C as the first plan comes in: no planner runs after it, the search does not start,
    # and no work is charged to the clock after it (not the 120 s limit).
    rng = __import__("random").Random(5)
    problem = Problem(tuple(Buffer(f"b{i}", rng.randrange(1, 5000), s, s + rng.randrange(1, 300))
                            for i, s in enumerate(rng.randrange(0, 20000) for _ in range(30000))))
    plan, budget, seen, pressed = _solve_interrupted(problem, "heuristic", time_limit=120)
    assert plan.stats["interrupted"] is True and "interrupted" in plan.summary()
    assert not check(problem, plan)
    assert list(plan.stats["offered"]) == ["best-fit"]
    assert plan.objective == seen[-1].best
    assert budget.elapsed() == pytest.approx(pressed, abs=1e-9) and pressed < 120


def test_ctrl_c_returns_the_best_plan_so_far():
    # Ctrl-C as the exact search's first plan comes in (J: better than every heuristic's, far
    # from the end of the search): that plan is the answer, checked, and the clock stops where
    # Ctrl-C found it.
    from cpplan.io import read_problem

    problem = read_problem(benchmark("minimalloc-challenging", "J.1048576.csv"))
    plan, budget, seen, pressed = _solve_interrupted(problem, "probe", time_limit=10)
    heuristics = [v for k, v in plan.stats["offered"].items() if k != "probe"]
    assert seen[-1].best is not None and seen[-1].best < min(heuristics)
    assert plan.objective == seen[-1].best == plan.stats["offered"]["probe"]
    assert plan.stats["interrupted"] is True
    assert not check(problem, plan)
    assert plan.status == "feasible"
    assert budget.elapsed() == pytest.approx(pressed, abs=1e-9) and pressed < 10


@given(st.integers(0, 3))
@settings(max_examples=4, deadline=None)
def test_zero_size_buffers_are_placed(k):
    problem = Problem((Buffer("z", 0, 0, 2), *(Buffer(f"b{i}", 4, i, i + 2) for i in range(k))))
    plan = solve(problem, time_limit=5, deterministic=True)
    assert not check(problem, plan) and plan.status == "optimal"


def test_hints_are_a_warm_start():
    optimum = solve(_fragmented(), time_limit=20, deterministic=True)
    hinted = Problem(tuple(Buffer(b.id, b.size, b.start, b.end, hint=optimum.offset(b.id))
                           for b in _fragmented().buffers))
    # With only the naive planner and no exact search, the hints are the best plan there is.
    plan = solve(hinted, deterministic=True, exact=False, planners=["naive"])
    assert plan.stats["best_planner"] == "hints" and plan.height == optimum.height
    # Hints that break the problem are ignored, never trusted.
    broken = Problem(tuple(Buffer(b.id, b.size, b.start, b.end, hint=0)
                           for b in _fragmented().buffers))
    plan = solve(broken, deterministic=True, exact=False, planners=["naive"])
    assert plan.stats["best_planner"] == "naive" and not check(broken, plan)


def test_a_component_brought_down_is_kept_while_another_sets_the_height():
    # An aligned perfect packing of 120 buffers falls into independent components in time; the
    # first probes bring some of them down to the optimum while another is still above it.
    # Each must be kept (the height only falls when the last one comes down), so that the
    # solve ends proven optimal instead of probing the same component again.
    problem = perfect_packing(120, seed=8, aligned=True)
    plan = solve(problem, time_limit=10)
    assert plan.status == "optimal"
    assert plan.height == problem.meta["optimum"]


def spy_on_stage(monkeypatch, name: str) -> list[tuple[int, float]]:
    """Record ``(blocks, seconds left)`` of each call of the component stage ``name`` of
    :mod:`cpplan.solve.components`, which still runs."""
    import cpplan.solve.components as components

    given: list[tuple[int, float]] = []
    stage = getattr(components, name)

    def spy(ctx, comp, budget):
        given.append((len(comp), budget.remaining()))
        stage(ctx, comp, budget)

    monkeypatch.setattr(components, name, spy)
    return given


def test_components_go_smallest_first_and_leave_their_time_to_the_larger(monkeypatch):
    # Components of a perfect packing cut in time: each gets a fair share of the time left,
    # the smallest first; what those that answer at once leave goes to the largest, last,
    # which then has nearly all of the limit (not a share fixed before the others ran).
    problem = perfect_packing(400, seed=1)
    given = spy_on_stage(monkeypatch, "_probe_and_bisect")
    plan = solve(problem, time_limit=20)
    assert plan.status == "optimal" and not check(problem, plan)
    sizes = [n for n, _ in given]
    assert len(sizes) >= 2 and sizes == sorted(sizes)
    assert given[-1][1] > 0.8 * 20


def test_the_time_left_goes_to_lns_on_the_largest_component_first(monkeypatch):
    # The components are solved the smallest first; the time they leave, when it is short of
    # LNS on each, goes to the largest one still above the bound.
    import time
    from types import SimpleNamespace

    import numpy as np

    import cpplan.solve.components as components

    class Comp:
        def __init__(self, n: int) -> None:
            self.n, self.proven = n, False

        def __len__(self) -> int:
            return self.n

    got: list[int] = []
    monkeypatch.setattr(components, "_lns",
                        lambda ctx, comp, budget: (got.append(len(comp)), time.sleep(0.2)))
    ctx = SimpleNamespace(budget=Budget(0.6), params=SolverParams(),
                          incumbent=SimpleNamespace(offsets=np.zeros(1)),
                          above_target=lambda comp: True)
    components._lns_the_rest(ctx, [Comp(10), Comp(40), Comp(300)])  # (as solve passes them)
    assert got == [300]


#: Every problem of several pools goes the way of the large ones: no model of all the pools.
POOL_BY_POOL = SolverParams(max_exact_blocks=0)


def test_several_pools_beyond_one_model_are_improved_pool_by_pool():
    # Above max_exact_blocks no model of all the pools is built: the heuristics choose the
    # pools, then each pool is solved on its own from its offsets until the time limit.
    import random

    rng = random.Random(3)
    buffers = []
    for i in range(400):
        start = rng.randrange(0, 300)
        buffers.append(Buffer(f"b{i}", 16 * rng.randrange(1, 400), start,
                              start + rng.randrange(1, 40), alignment=16))
    problem = Problem(tuple(buffers), (Pool("fast", capacity=20_000, cost=3), Pool("slow")))
    greedy = get("portfolio")(problem)
    phases = []
    plan = solve(problem, time_limit=6, progress=lambda p: phases.append(p.phase),
                 params=POOL_BY_POOL)
    assert not check(problem, plan)
    assert "pools" in phases
    assert plan.objective < greedy.objective
    # (optimal when it reaches the total load in the cheapest pool, as it does here in time)
    assert plan.status in ("optimal", "feasible") and plan.lower_bound <= plan.objective


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(problems(max_buffers=7, gaps=True))
def test_pool_by_pool_agrees_with_brute_force(problem):
    # Every problem goes the way of the large ones (the pools' choice from a weak heuristic,
    # then each pool on its own): plans stay valid, never below the optimum, bounds hold.
    from hypothesis import assume

    assume(len(problem.pools) > 1)
    plan = solve(problem, time_limit=1, planners=["naive"], explain=False, params=POOL_BY_POOL)
    best = brute_force(problem).objective
    if plan.status == "infeasible":
        assert best is None
        return
    if plan.status == "unknown":
        return
    assert not check(problem, plan)
    assert best is not None and plan.lower_bound <= best <= plan.objective
    if plan.status == "optimal":
        assert plan.objective == best


def test_a_large_tight_component_goes_to_lns_after_its_first_probe_proper():
    # (aligned regroup packings of 250 blocks are not rebuilt at their optimum within seconds:
    # as a component of first_look_from blocks or more, after the first look, the gap fill and
    # the first probe proper, the time left goes to LNS from the best packing)
    problem = regroup_packing(250, seed=0, aligned=True)
    phases: list[str] = []
    plan = solve(problem, time_limit=4, deterministic=True,
                 params=SolverParams(first_look_from=200),
                 progress=lambda p: phases.append(p.phase))
    assert check(problem, plan) == []
    assert "lns" in phases and phases[-1] == "done"
    assert plan.objective <= get("best-fit")(problem).objective


@pytest.mark.parametrize(("problem", "by"), [
    # (a training step's stack: the tiling search's skyline thrashes on it, the hole search
    # rebuilds it in a second; as a component beyond lns_above it had the tiling search alone,
    # then peak-first packing and LNS, 1.26 x the optimum at 60 s on 10000 blocks)
    (stack_packing(2000, seed=0), "refill"),
    # (straight and pinwheel cuts: the tiling search's glance rebuilds them, before the hole
    # search, which takes seconds on ten thousand blocks to find that it cannot)
    (perfect_packing(2000, seed=0), "tiling"),
], ids=["stack", "cuts"])
def test_a_large_component_at_zero_slack_has_a_glance_of_the_tiling_search_then_the_holes(
        problem, by):
    phases: list[str] = []
    plan = solve(problem, time_limit=8, deterministic=True, params=SolverParams(lns_above=1000),
                 progress=lambda p: phases.append(p.phase))
    assert check(problem, plan) == []
    assert plan.status == "optimal" and plan.objective == problem.meta["optimum"]
    assert by in phases
    if by == "tiling":
        assert "refill" not in phases


def test_a_large_tight_component_with_slack_packed_by_the_tiling_search_needs_no_or_tools():
    # (the hole search, which loads OR-Tools, is for zero slack alone: a perfect packing with
    # one buffer left out has a byte free at some moments, and the tiling search packs it)
    code = ("import sys\n"
            "from cpplan import Problem\n"
            "from cpplan.perfect import perfect_packing\n"
            "from cpplan.solve import SolverParams, solve\n"
            "p = perfect_packing(1000, seed=0)\n"
            "plan = solve(Problem(p.buffers[1:]), time_limit=20, deterministic=True,\n"
            "             params=SolverParams(lns_above=500))\n"
            "print(plan.status, plan.objective == p.meta['optimum'], 'ortools' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["optimal", "True", "False"]


@pytest.mark.parametrize("family", ["serving", "repeated", "regroup"])
def test_a_perfect_packing_thinned_of_a_few_buffers_is_rebuilt_with_its_air(family):
    # (5 % of its buffers taken away: the load is below the optimum at most moments, where the
    # searches at zero slack do not apply as such; with the free bytes as blocks they do)
    problem = thinned(FAMILIES[family](250, seed=0), 0.05, seed=0)
    plan = solve(problem, time_limit=10, deterministic=True)
    assert check(problem, plan) == []
    assert plan.status == "optimal" and plan.height == problem.meta["optimum"]
    assert "air" in plan.stats["offered"]


def test_a_large_component_near_a_tiling_leaves_the_end_to_lns():
    # (480 blocks, thinned: not tight, and its air finds nothing in time; LNS from the best
    # packing has the end, and goes lower than the probes did)
    problem = thinned(FAMILIES["realloc"](500, seed=0), 0.05, seed=0)
    plan = solve(problem, time_limit=4, deterministic=True)
    assert check(problem, plan) == []
    offered = plan.stats["offered"]
    assert offered["lns"] < offered["probe"] and plan.objective == offered["lns"]


def test_importing_the_solver_leaves_or_tools_unloaded():
    # (OR-Tools' cp_model imports pandas: a third to half a second of every command's start-up,
    # which a solve that the heuristics or the tiling search settle never needs; on Y_1 at
    # --time-limit 1 it is the greedy's time: cpplan.exact.lazy)
    code = "import sys, cpplan.solve, cpplan.cli, cpplan.io; print('ortools' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(("problem", "goes"), [
    (random_problem(2000, seed=1), True),  # not tight: the bound need not be the optimum
    (regroup_packing(250, seed=0, aligned=True), False),  # tight: the probes' searches go on
])
def test_a_component_not_tight_goes_to_the_local_search_when_its_first_probe_does_not_answer(
        monkeypatch, problem, goes):
    given = spy_on_stage(monkeypatch, "_local_search")
    plan = solve(problem, time_limit=3, deterministic=True)
    assert check(problem, plan) == []
    assert plan.status != "optimal"  # (the first probe did not answer)
    assert bool(given) == goes
    if goes:
        # Its packing went into the plan, which no heuristic's beats.
        assert "local-search" in plan.stats["offered"]
        assert plan.objective <= min(plan.stats["offered"].values())
