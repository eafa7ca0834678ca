"""cpplan's native JSON format: everything the model can express, for problems and plans.

A problem file::

    {"format": "cpplan-problem", "version": 1, "name": "...", "meta": {...},
     "pools": [{"name": "sram", "capacity": 262144, "alignment": 64, "cost": 1,
                "traffic_cost": 1}, ...],
     "buffers": [{"id": "x", "size": 1024, "start": 0, "end": 3, "alignment": 64,
                  "pools": ["sram", "dram"], "offset": 0, "hint": 0, "traffic": 3072,
                  "gaps": [{"start": 1, "end": 2}, {"start": 2, "end": 3, "window": [0, 512]}]},
                 ...],
     "aliases": [{"buffer": "y", "root": "x", "displacement": 512}, ...]}

Fields at their defaults may be left out (``alignment`` 1, ``pools`` any, no ``offset``,
``hint`` or ``gaps``, ``traffic`` and ``traffic_cost`` 0; a gap without ``window`` frees all
the buffer's bytes; a missing ``pools``
list at the top means one unbounded pool named ``default``).
A plan file::

    {"format": "cpplan-plan", "version": 1, "planner": "...", "status": "optimal",
     "seconds": 1.2, "lower_bound": 1024, "objective": 1024, "gap": 0.0,
     "heights": {"default": 1024}, "explanation": "", "stats": {...},
     "placements": [{"id": "x", "pool": "default", "offset": 0}, ...]}

An infeasible plan has no placements and may carry ``"conflict": {"buffers": [...],
"irreducible": true, "how": "exact"}``: buffers that cannot fit together. A plan's ``heights``
are what a runtime allocates: they are kept as stated and checked against the offsets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import FormatError, ProblemError
from ..plan import STATUSES, Conflict, Placement, Plan, objective_of
from ..problem import Alias, Buffer, Gap, Pool, Problem
from .atomic import write_text_atomic
from .text import read_text

__all__ = ["problem_to_dict", "problem_from_dict", "plan_to_dict", "plan_from_dict",
           "read_problem", "write_problem", "read_plan", "write_plan"]

VERSION = 1
_BUFFER_FIELDS = {"id", "size", "start", "end", "alignment", "pools", "offset", "hint", "gaps",
                  "traffic"}
_GAP_FIELDS = {"start", "end", "window"}
_POOL_FIELDS = {"name", "capacity", "alignment", "cost", "traffic_cost"}
_ALIAS_FIELDS = {"buffer", "root", "displacement"}


def problem_to_dict(problem: Problem) -> dict[str, Any]:
    """``problem`` as the JSON object of a problem file (fields at their defaults left out)."""
    bufs = []
    for b in problem.buffers:
        d: dict[str, Any] = {"id": b.id, "size": b.size, "start": b.start, "end": b.end}
        if b.alignment != 1:
            d["alignment"] = b.alignment
        if b.pools:
            d["pools"] = list(b.pools)
        if b.offset is not None:
            d["offset"] = b.offset
        if b.hint is not None:
            d["hint"] = b.hint
        if b.traffic:
            d["traffic"] = b.traffic
        if b.gaps:
            d["gaps"] = [{"start": g.start, "end": g.end} if g.window is None else
                         {"start": g.start, "end": g.end, "window": list(g.window)}
                         for g in b.gaps]
        bufs.append(d)
    out: dict[str, Any] = {"format": "cpplan-problem", "version": VERSION, "name": problem.name}
    if problem.meta:
        out["meta"] = problem.meta
    out["pools"] = [_pool_dict(p) for p in problem.pools]
    out["buffers"] = bufs
    if problem.aliases:
        out["aliases"] = [{"buffer": a.buffer, "root": a.root, "displacement": a.displacement}
                          for a in problem.aliases]
    return out


def _pool_dict(p: Pool) -> dict[str, Any]:
    d: dict[str, Any] = {"name": p.name, "capacity": p.capacity, "alignment": p.alignment,
                         "cost": p.cost}
    if p.traffic_cost:
        d["traffic_cost"] = p.traffic_cost
    return d


def _expect(obj: Any, kind: type, what: str, source: str) -> Any:
    if not isinstance(obj, kind):
        raise FormatError(f"expected {kind.__name__}, got {type(obj).__name__}", source=source,
                          field=what)
    return obj


def _fields(d: Any, allowed: set[str], what: str, source: str, **where: Any) -> dict:
    if not isinstance(d, dict):
        raise FormatError(f"expected an object, got {type(d).__name__}", source=source,
                          field=what, **where)
    extra = set(d) - allowed
    if extra:
        raise FormatError(f"unknown field {sorted(extra)[0]!r}", source=source, field=what,
                          **where)
    return d


def _header(data: Any, kind: str, source: str) -> dict:
    """``data`` as a dict, once its ``format`` is ``cpplan-<kind>`` and its version this one."""
    data = _expect(data, dict, "top level", source)
    fmt = data.get("format")
    if fmt != f"cpplan-{kind}":
        raise FormatError(f"not a cpplan {kind} (format is {fmt!r}, expected 'cpplan-{kind}')",
                          source=source, field="format")
    if type(data.get("version")) is not int or data.get("version") != VERSION:
        raise FormatError(f"unsupported version {data.get('version')!r} (this cpplan reads "
                          f"{VERSION})", source=source, field="version")
    return data


def _gaps(data: Any, buffer: str, source: str) -> tuple[Gap, ...]:
    """A buffer's ``gaps``: objects ``{"start", "end"[, "window": [lo, hi]]}`` (checked against
    the buffer when it is built)."""
    if not isinstance(data, list):
        raise FormatError(f"must be a list of gaps, got {type(data).__name__}", source=source,
                          field="gaps", buffer=buffer)
    out = []
    for k, g in enumerate(data):
        g = _fields(g, _GAP_FIELDS, f"gaps[{k}]", source, buffer=buffer)
        for req in ("start", "end"):
            if req not in g:
                raise FormatError("missing", source=source, field=f"gaps[{k}].{req}",
                                  buffer=buffer)
        window = g.get("window")
        if window is not None and (not isinstance(window, list) or len(window) != 2):
            raise FormatError(f"window must be [lo, hi], got {window!r}", source=source,
                              field=f"gaps[{k}].window", buffer=buffer)
        out.append(Gap(g["start"], g["end"], None if window is None else (window[0], window[1])))
    return tuple(out)


def problem_from_dict(data: Any, *, source: str = "<json>") -> Problem:
    """The problem in ``data``, a problem file's JSON object.

    Args:
        data: The parsed JSON.
        source: The file named in errors.

    Returns:
        The validated problem.

    Raises:
        FormatError: Not a problem file (``format``, ``version``), an unknown field or a value
            of the wrong type.
        ProblemError: A problem that is not valid, naming the buffer or pool and the field.
    """
    data = _header(data, "problem", source)
    try:
        pools = []
        for k, p in enumerate(_expect(data.get("pools", [{"name": "default"}]), list, "pools",
                                      source)):
            p = _fields(p, _POOL_FIELDS, f"pools[{k}]", source)
            if "name" not in p:
                raise FormatError("missing", source=source, field=f"pools[{k}].name")
            pools.append(Pool(p["name"], p.get("capacity"), p.get("alignment", 1),
                              p.get("cost", 1), p.get("traffic_cost", 0)))
        buffers = []
        for k, b in enumerate(_expect(data.get("buffers"), list, "buffers", source)):
            b = _fields(b, _BUFFER_FIELDS, f"buffers[{k}]", source)
            for req in ("id", "size", "start", "end"):
                if req not in b:
                    raise FormatError("missing", source=source, field=f"buffers[{k}].{req}",
                                      buffer=str(b.get("id")) if "id" in b else None)
            pl = b.get("pools", ())
            if not isinstance(pl, list | tuple):
                raise FormatError("must be a list of pool names", source=source, field="pools",
                                  buffer=str(b["id"]))
            buffers.append(Buffer(b["id"], b["size"], b["start"], b["end"],
                                  b.get("alignment", 1), tuple(pl), b.get("offset"),
                                  b.get("hint"), _gaps(b.get("gaps", []), str(b["id"]), source),
                                  b.get("traffic", 0)))
        aliases = []
        for k, a in enumerate(_expect(data.get("aliases", []), list, "aliases", source)):
            a = _fields(a, _ALIAS_FIELDS, f"aliases[{k}]", source)
            for req in ("buffer", "root"):
                if req not in a:
                    raise FormatError("missing", source=source, field=f"aliases[{k}].{req}")
            aliases.append(Alias(a["buffer"], a["root"], a.get("displacement", 0)))
        meta = _expect(data.get("meta", {}), dict, "meta", source)
        name = data.get("name", "")
        return Problem(tuple(buffers), tuple(pools), tuple(aliases), str(name or ""), meta)
    except ProblemError as e:
        if isinstance(e, FormatError):
            raise
        raise e.located(source=source) from None


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """``plan`` as the JSON object of a plan file (placements, heights and the record)."""
    out = {
        "format": "cpplan-plan", "version": VERSION, "planner": plan.planner,
        "status": plan.status, "seconds": round(plan.seconds, 6),
        "lower_bound": plan.lower_bound, "objective": plan.objective, "gap": plan.gap,
        "heights": dict(plan.heights), "explanation": plan.explanation, "stats": plan.stats,
        "placements": [{"id": k, "pool": v.pool, "offset": v.offset}
                       for k, v in plan.placements.items()],
    }
    if plan.traffic:  # (recomputed from the placements when read back)
        out.update(traffic=dict(plan.traffic), traffic_cost=dict(plan.traffic_cost),
                   fast_share=plan.fast_share)
    if plan.conflict is not None:
        c = plan.conflict
        out["conflict"] = {"buffers": list(c.buffers), "irreducible": c.irreducible,
                           "how": c.how}
    return out


def plan_from_dict(data: Any, problem: Problem, *, source: str = "<json>") -> Plan:
    """The plan in ``data`` for ``problem``, not checked.

    The file's ``heights`` are kept as stated (a runtime allocates what the plan says), so that
    :func:`cpplan.check` reports a stated height that disagrees with the offsets; without a
    ``heights`` field they are computed from the offsets.

    Args:
        data: The parsed JSON.
        problem: The problem the plan is for.
        source: The file named in errors.

    Returns:
        The plan, not checked.

    Raises:
        FormatError: Not a plan file, an unknown status, a buffer the problem does not have,
            or a value of the wrong type.
    """
    data = _header(data, "plan", source)
    status = data.get("status", "feasible")
    if status not in STATUSES:
        raise FormatError(f"unknown status {status!r}", source=source, field="status")
    placements: dict[str, Placement] = {}
    for k, p in enumerate(_expect(data.get("placements", []), list, "placements", source)):
        p = _fields(p, {"id", "pool", "offset"}, f"placements[{k}]", source)
        if "id" not in p or "offset" not in p:
            raise FormatError("needs 'id' and 'offset'", source=source, field=f"placements[{k}]")
        bid = str(p["id"])
        if bid in placements:
            raise FormatError("placed twice", source=source, buffer=bid, field="placements")
        if bid not in problem.index:
            raise FormatError("not a buffer of the problem (is this the plan of another "
                              "problem?)", source=source, buffer=bid, field=f"placements[{k}]")
        off = p["offset"]
        if isinstance(off, bool) or not isinstance(off, int):
            raise FormatError(f"must be an integer, got {off!r}", source=source, buffer=bid,
                              field="offset")
        pool = p.get("pool") or problem.candidates(bid)[0]
        placements[bid] = Placement(str(pool), off)
    if status == "infeasible":
        return Plan.infeasible(problem, str(data.get("explanation", "")),
                               planner=str(data.get("planner", "")),
                               conflict=_conflict(data.get("conflict"), problem, source))
    lb = data.get("lower_bound")
    if lb is not None and (isinstance(lb, bool) or not isinstance(lb, int)):
        raise FormatError(f"must be an integer or null, got {lb!r}", source=source,
                          field="lower_bound")
    seconds = data.get("seconds", 0.0)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise FormatError(f"must be a number, got {seconds!r}", source=source, field="seconds")
    stats = _expect(data.get("stats") or {}, dict, "stats", source)
    plan = Plan.build(problem, placements, planner=str(data.get("planner", "")),
                      seconds=float(seconds), lower_bound=lb,
                      status="feasible" if status == "optimal" else status,
                      explanation=str(data.get("explanation", "")), stats=stats)
    if "heights" in data:
        plan = _stated_heights(plan, problem, data["heights"], source)
    # A file's claim of optimality is kept only when its own numbers support it.
    if status == "optimal" and lb is not None and plan.objective <= lb:
        plan = plan.with_record(status="optimal")
    return plan


def _conflict(data: Any, problem: Problem, source: str) -> Conflict | None:
    if data is None:
        return None
    data = _fields(data, {"buffers", "irreducible", "how"}, "conflict", source)
    ids = _expect(data.get("buffers", []), list, "conflict.buffers", source)
    for bid in ids:
        if str(bid) not in problem.index:
            raise FormatError("not a buffer of the problem", source=source, buffer=str(bid),
                              field="conflict")
    return Conflict(tuple(map(str, ids)), bool(data.get("irreducible", False)),
                    str(data.get("how", "")))


def _stated_heights(plan: Plan, problem: Problem, heights: Any, source: str) -> Plan:
    """``plan`` with the heights its file states (every pool of the problem, integers)."""
    heights = _expect(heights, dict, "heights", source)
    for name, h in heights.items():
        if name not in problem.pool_index:
            raise FormatError(f"no pool {name!r} in the problem (a plan made with --memory is "
                              "read with the same --memory)", source=source,
                              field="heights")
        if isinstance(h, bool) or not isinstance(h, int):
            raise FormatError(f"must be an integer, got {h!r}", source=source, pool=name,
                              field="heights")
    stated = {p.name: heights.get(p.name, 0) for p in problem.pools}
    objective = objective_of(problem, stated, plan.placements)
    return plan.with_record(heights=stated, objective=objective)


def _load(path: Path) -> Any:
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise FormatError(f"malformed JSON: {e.msg} (column {e.colno})", source=str(path),
                          line=e.lineno) from None
    except RecursionError:
        raise FormatError("malformed JSON: nested too deeply", source=str(path)) from None
    except ValueError as e:  # an integer of thousands of digits
        raise FormatError(f"malformed JSON: {str(e).split(';')[0]}", source=str(path)) from None


def read_problem(path: str | Path) -> Problem:
    """The problem in a JSON file (named after the file unless it names itself); see
    :func:`cpplan.io.read_problem`."""
    path = Path(path)
    p = problem_from_dict(_load(path), source=str(path))
    return p if p.name else p.replace(name=path.stem)


def read_plan(path: str | Path, problem: Problem) -> Plan:
    """The plan in a JSON file for ``problem``, not checked; see :func:`cpplan.io.read_plan`."""
    path = Path(path)
    return plan_from_dict(_load(path), problem, source=str(path))


def write_problem(problem: Problem, path: str | Path) -> None:
    """Write ``problem`` as a JSON file, all at once."""
    write_text_atomic(path, json.dumps(problem_to_dict(problem), indent=None,
                                       separators=(",", ":")) + "\n")


def write_plan(problem: Problem, plan: Plan, path: str | Path) -> None:
    """Write ``plan`` as it is, valid or not (:func:`cpplan.io.write_plan` checks it first).

    The record is indented; the placements come one per line, written by string formatting
    rather than by ``json.dumps(indent=...)``, whose pure-Python encoder took 0.2 s on 62185
    placements (the C encoder runs only without an indent).
    """
    data = plan_to_dict(plan)
    placements = data.pop("placements")
    text = json.dumps(data, indent=1)
    esc = json.encoder.encode_basestring_ascii
    rows = ",\n  ".join(f'{{"id": {esc(p["id"])}, "pool": {esc(p["pool"])}, '
                         f'"offset": {int(p["offset"])}}}' for p in placements)
    body = f"[\n  {rows}\n ]" if rows else "[]"
    write_text_atomic(path, f'{text[:-2]},\n "placements": {body}\n}}\n')
