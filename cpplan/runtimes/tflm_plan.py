"""``cpplan tflm MODEL.tflite -o PLANNED.tflite``: a model in, the same model with cpplan's plan
as TFLM's offline memory plan out, verified in TFLM's own interpreter.

Steps: measure the kernels' scratch buffers in TFLM, extract the problem TFLM plans
(:func:`cpplan.runtimes.tflm.extract_tflm`), solve it (:func:`cpplan.solve.solve`), check the
plan, write it into the model, then run the original and the planned model in TFLM with the same
random input. The planned model is returned only if the outputs are bit-identical and TFLM's
arena head is not above its default; otherwise :class:`~cpplan.runtimes.tflm_interpreter.TflmError`
says why and nothing is written. The head is predicted too (the plan, with the scratch buffers
TFLM places online, :func:`cpplan.runtimes.tflm.predicted_head`); a measured head that differs
is reported (the tests require them equal on every test model).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..bounds import max_load
from ..errors import CpplanError
from ..plan import Plan, ensure_valid
from ..planners.registry import get
from ..problem import Problem
from ..solve import Progress, solve
from . import tflm, tflm_interpreter

__all__ = ["TflmPlan", "plan_model"]


@dataclass(frozen=True)
class TflmPlan:
    """The planned model and the figures that go with it (bytes of arena head).

    Args:
        model: The planned ``.tflite`` bytes.
        problem: The problem TFLM plans for the model.
        plan: cpplan's checked plan.
        greedy_head: TFLM's default planner's head.
        lower_bound: The problem's max-load.
        predicted_head: The plan's head with the scratch buffers TFLM places online.
        default_run: The original model, run in TFLM.
        planned_run: The planned model, run in TFLM.
    """

    model: bytes
    problem: Problem
    plan: Plan
    greedy_head: int  # TFLM's default planner (the tflm-greedy replica, measured equal in TFLM)
    lower_bound: int  # max-load of the problem; the plan's own proven bound is plan.lower_bound
    predicted_head: int  # the plan plus the scratch buffers TFLM places online
    default_run: tflm_interpreter.Run  # the original model in TFLM
    planned_run: tflm_interpreter.Run  # the planned model in TFLM

    def compared(self) -> dict[str, Plan]:
        """TFLM's default plan (the tflm-greedy replica, whose head TFLM measures the same) and
        cpplan's, by label: what ``cpplan tflm --view`` shows (:func:`cpplan.view.write_view`)."""
        return {"TFLM greedy": get("tflm-greedy")(self.problem), "cpplan": self.plan}

    @property
    def saving(self) -> float:
        """Fraction of the default head saved."""
        return 1 - self.planned_run.head / self.default_run.head if self.default_run.head else 0.0

    def lines(self) -> list[str]:
        """What ``cpplan tflm`` prints: the greedy head, cpplan's, the bound, TFLM's measured
        head with the plan."""
        p = self.plan
        bound = p.lower_bound if p.lower_bound is not None else self.lower_bound
        scratch = self.problem.meta["tflm"]["scratch"]
        surprise = ([] if self.planned_run.head == self.predicted_head else
                    [f"note: TFLM's head differs from the predicted {self.predicted_head} bytes "
                     "(its scratch buffers went elsewhere than the plan left room for)"])
        return [
            f"TFLM greedy head  {self.greedy_head:>10} bytes (tflm-greedy replica; TFLM measured "
            f"{self.default_run.head})",
            f"cpplan head       {p.height:>10} bytes ({p.status}, {p.planner}, {p.seconds:.2f}s)",
            f"lower bound       {bound:>10} bytes (max-load {self.lower_bound})",
            f"TFLM planned head {self.planned_run.head:>10} bytes, outputs identical, "
            f"{100 * self.saving:.1f}% below the default"
            + (f"; {len(scratch)} scratch buffer(s) placed online by TFLM" if scratch else ""),
            *surprise,
        ]


def plan_model(source: str | Path | bytes, *, time_limit: float = 10.0,
               deterministic: bool = False, command: str | None = None,
               progress: Callable[[Progress], None] | None = None,
               plan_file: str | Path | None = None) -> TflmPlan:
    """Plan the model's arena with cpplan and return it with the plan as offline metadata.

    ``plan_file`` writes a given plan instead of solving (a plan for the problem that
    ``cpplan extract MODEL.tflite`` writes, in any plan format cpplan reads); it is checked
    like any other.

    Args:
        source: The ``.tflite`` file, or its bytes.
        time_limit: Seconds for :func:`~cpplan.solve.solve`.
        deterministic: Solve on the deterministic clock.
        command: The command, for the problem's ``meta``.
        progress: As for :func:`~cpplan.solve.solve`.
        plan_file: A plan to write instead of solving.

    Returns:
        The planned model and its figures, verified in TFLM.

    Raises:
        CpplanError: The ``tflite`` extra is missing, or the solve found no plan.
        FormatError: Not a ``.tflite`` flatbuffer, or a tensor TFLM cannot plan.
        PlanError: ``plan_file``'s plan does not pass the checker.
        TflmError: TFLM refuses the model, the planned model's outputs differ from the
            original's, or its arena head is above the default (nothing is returned).
    """
    data = bytes(source) if isinstance(source, bytes | bytearray) else Path(source).read_bytes()
    problem = extract_model(source, command=command)
    greedy = get("tflm-greedy")(problem)
    if plan_file is not None:
        from ..io import read_plan

        plan = read_plan(plan_file, problem)
    else:
        plan = solve(problem, time_limit=time_limit, deterministic=deterministic,
                     progress=progress)
        if plan.status in ("infeasible", "unknown"):
            raise CpplanError(f"no plan: {plan.explanation}")
        if plan.height > greedy.height:  # solve never does worse than its portfolio; TFLM's
            plan = greedy  # own greedy is not in it by name, so keep whichever is lower
    ensure_valid(problem, plan)
    planned = tflm.write_offline_plan(data, problem, plan)
    predicted = tflm.predicted_head(problem, plan)

    inputs = tflm_interpreter.random_inputs(data)
    default_run = tflm_interpreter.run(data, inputs)
    planned_run = tflm_interpreter.run(planned, inputs)
    same = len(default_run.outputs) == len(planned_run.outputs) and all(
        np.array_equal(a, b) for a, b in zip(default_run.outputs, planned_run.outputs,
                                             strict=True))
    if not same:
        raise tflm_interpreter.TflmError("the planned model's outputs differ from the "
                                         "original's in TFLM; nothing written")
    if planned_run.head > default_run.head:
        raise tflm_interpreter.TflmError(
            f"TFLM's arena head with the plan is {planned_run.head} bytes, above its default "
            f"{default_run.head} (predicted {predicted}); nothing written")
    return TflmPlan(planned, problem, plan, greedy.height, max_load(problem)[tflm.POOL].bytes,
                    predicted, default_run, planned_run)


def extract_model(source: str | Path | bytes, *, command: str | None = None,
                  traffic: Mapping[str, int] | None = None) -> Problem:
    """The problem TFLM plans for the model, with its kernels' scratch buffers measured in TFLM
    (what ``cpplan extract MODEL.tflite`` writes); ``traffic`` states buffers' traffic (see
    :func:`cpplan.runtimes.tflm.extract_tflm`).

    Raises:
        FormatError: Not a ``.tflite`` flatbuffer, or a tensor TFLM cannot plan.
        TflmError: The model does not run in TFLM.
    """
    tflm.load_model(source)  # a clear FormatError before the interpreter sees a broken file
    data = bytes(source) if isinstance(source, bytes | bytearray) else Path(source).read_bytes()
    tflm_interpreter.ensure_runs(data)
    return tflm.extract_tflm(source, scratch=tflm_interpreter.scratch_bytes(data),
                             command=command, traffic=traffic)


def describe(problem: Problem) -> list[str]:
    """A few lines on a problem extracted from a .tflite model."""
    meta = problem.meta["tflm"]
    skipped = meta["not_planned"]
    n_scratch = len(meta["scratch"])
    moved = sum(b.traffic for b in problem.buffers)
    stated = problem.meta.get("traffic", {}).get("stated", [])
    return [
        f"{len(problem.buffers)} buffers in pool '{tflm.POOL}' ({n_scratch} scratch), "
        f"{meta['last_step'] + 1} steps, {meta['tensor_count']} tensors in "
        f"{meta['subgraphs']} subgraph(s)",
        f"not planned: {skipped['constants']} constants, {skipped['variables']} variable "
        f"tensors (TFLM's tail), {skipped['zero_size']} of size 0"
        + ("; the file's offline plan is kept as fixed offsets"
           if meta["offline_plan_in_file"] else ""),
        f"max-load: {max_load(problem)[tflm.POOL].bytes}",
        *([f"traffic: {moved} bytes moved per run (tensor bytes x (1 + readers))"
           + (f", {len(stated)} buffer(s) as stated" if stated else "")] if moved else []),
    ]
