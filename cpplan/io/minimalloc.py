"""MiniMalloc's CSV format, for problems and for plans.

MiniMalloc (google/minimalloc, ``src/csv_io.cc``) reads a header line and then one buffer per
line: ``id,lower,upper,size`` with the half-open lifetime ``[lower, upper)`` and the size in
bytes, plus optional ``alignment`` and ``hint`` columns. Its solutions are the same CSV with an
``offset`` column (google/minimalloc ``src/converter.cc``, ``FromCsv``/``ToCsv``). cpplan reads and
writes exactly that, so plans pass between the two tools. Like MiniMalloc, an ``end`` column
(instead of ``upper``) is inclusive, so 1 is added to it; ``begin``/``start`` stand for ``lower``
and ``buffer``/``buffer_id`` for ``id``. MiniMalloc's ``gaps`` column holds a buffer's gaps
(:class:`cpplan.problem.Gap`), separated by spaces: ``lower-upper`` (the buffer occupies nothing
then) or ``lower-upper@lo:hi`` (only bytes ``[lo, hi)`` of it), lifetimes as the buffer's (with an
``end`` column the gap's upper is inclusive too); an empty cell means no gaps. cpplan writes the
column when some buffer has gaps, after ``alignment`` and ``hint``, as MiniMalloc's ``ToCsv``
does. Other unknown columns are ignored, as MiniMalloc does. cpplan also reads an optional
``hint`` column, and a ``traffic`` column (the bytes a buffer moves per run,
:attr:`cpplan.Buffer.traffic`; written when some buffer has traffic).

An ``offset`` column in a *problem* file fixes those buffers' offsets, as MiniMalloc's
``FromCsv`` does (google/minimalloc ``tests/converter_test.cc``, ``FromCsvWithSolution``); an
empty cell leaves that buffer free (MiniMalloc refuses empty cells). Read as a *plan*
(:func:`read_plan`), the same column is the plan.

What CSV cannot hold: several pools with capacities, aliases. A problem read from CSV has one
unbounded pool (or the pools its ``pool`` column names); the capacity MiniMalloc is asked for is
given separately (``--capacity``). cpplan adds a ``pool`` column to a plan only when the problem
has more than one pool. Column names are matched without regard to case.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

from ..errors import FormatError, PlanError, ProblemError
from ..plan import Placement, Plan
from ..problem import Buffer, Gap, Pool, Problem
from .atomic import write_text_atomic
from .text import read_text

__all__ = ["read_problem", "read_plan", "write_problem", "write_plan", "problem_to_csv",
           "plan_to_csv", "parse_problem"]

_SYNONYMS = {"begin": "lower", "start": "lower", "end": "upper", "buffer": "id",
             "buffer_id": "id"}
_REQUIRED = ("id", "lower", "upper", "size")
_KNOWN = (*_REQUIRED, "alignment", "hint", "offset", "pool", "gaps", "traffic")


def _table(text: str, source: str) -> tuple[dict[str, int], bool, Iterator[tuple[int, list[str]]]]:
    """The known columns' positions, whether ``upper`` is an inclusive ``end``, and the rows:
    ``(line number, stripped cells)``, blank lines skipped, widths checked."""
    lines = text.splitlines()
    # The first non-empty line is the header.
    k = 0
    while k < len(lines) and not lines[k].strip():
        k += 1
    if k == len(lines):
        raise FormatError("empty file: expected a header line id,lower,upper,size", source=source,
                          line=1)
    header = [c.strip().lower() for c in lines[k].split(",")]
    inclusive_end = "end" in header and "upper" not in header
    header = [_SYNONYMS.get(c, c) for c in header]
    for c in _REQUIRED:
        if c not in header:
            raise FormatError(f"header has no {c!r} column (got {lines[k].strip()!r}); "
                              "expected id,lower,upper,size", source=source, line=k + 1,
                              field="header")
    if len(set(header)) != len(header):
        raise FormatError("a column appears twice", source=source, line=k + 1, field="header")
    col = {c: i for i, c in enumerate(header) if c in _KNOWN}
    return col, inclusive_end, _cells(lines, k + 1, len(header), source)


def _cells(lines: list[str], first: int, width: int, source: str
           ) -> Iterator[tuple[int, list[str]]]:
    for n, raw in enumerate(lines[first:], start=first + 1):
        cells = raw.split(",")
        if len(cells) != width:
            if not raw.strip():  # (a blank line has one cell; a header has at least four)
                continue
            raise FormatError(f"expected {width} fields, got {len(cells)}", source=source, line=n)
        yield n, [c.strip() for c in cells]


# Plain decimal integers only: Python's int() also takes "1_000", non-ASCII digits and
# thousands of digits, none of which a CSV of sizes and steps means.
_INTEGER = re.compile(r"[+-]?[0-9]{1,30}")


def _plus_one(cell: str) -> str:
    return str(int(cell) + 1) if _INTEGER.fullmatch(cell.strip()) else cell  # else reported


def _int(cell: str, field: str, source: str, line: int, buffer: str | None) -> int:
    if cell.isdigit() and cell.isascii() and len(cell) <= 30:  # the common case, fast
        return int(cell)
    if not _INTEGER.fullmatch(cell.strip()):
        digits = cell.strip().isascii() and cell.strip().isdigit()
        what = "too many digits" if digits else "not an integer"
        raise FormatError(f"{what}: {cell[:40]!r}", source=source, line=line, field=field,
                          buffer=buffer)
    return int(cell)


_GAP = re.compile(r"([0-9]{1,30})-([0-9]{1,30})(?:@([0-9]{1,30}):([0-9]{1,30}))?")


def _gaps(cell: str, inclusive_end: bool, lifetime: tuple[int, int], source: str, line: int,
          buffer: str) -> tuple[Gap, ...]:
    """A ``gaps`` cell: ``lower-upper`` or ``lower-upper@lo:hi``, separated by spaces (checked
    against the buffer when it is built).

    MiniMalloc accepts gaps reaching beyond the buffer's lifetime (its converter test
    ``FromCsvWithGaps`` has one) and they mean nothing there, the buffer being dead: they are
    clipped to the lifetime (dropped when wholly outside). cpplan's own model refuses them.
    """
    out = []
    for text in cell.split():
        m = _GAP.fullmatch(text)
        if m is None:
            raise FormatError(f"{text[:40]!r} is not a gap: expected lower-upper or "
                              "lower-upper@lo:hi, separated by spaces", source=source, line=line,
                              field="gaps", buffer=buffer)
        lo, up, wlo, whi = m.groups()
        window = None if wlo is None else (int(wlo), int(whi))
        start, end = max(int(lo), lifetime[0]), min(int(up) + inclusive_end, lifetime[1])
        if start < end or int(lo) >= int(up) + inclusive_end:  # (an empty gap is reported)
            out.append(Gap(start, end, window))
    return tuple(out)


_PLAIN_CELL = {"id": r"[^,\s]+", "lower": "[0-9]{1,18}", "upper": "[0-9]{1,18}",
               "size": "[0-9]{1,18}", "alignment": "[0-9]{1,18}", "traffic": "[0-9]{1,18}"}


def _plain(text: str, name: str) -> Problem | None:
    """The problem of a plain file read at C speed, or ``None`` to take the line-by-line path.

    Plain: only the columns id, lower/upper (or end), size, alignment and traffic; ids without
    blanks;
    numbers of at most 18 digits (below 2**62); no blank lines. One regular expression checks
    the whole body, then the columns are sliced out of one split. Anything else (including every
    input that is an error) goes the line-by-line way, which names the line and field.
    """
    lines = text.splitlines()
    k = 0
    while k < len(lines) and not lines[k].strip():
        k += 1
    if k == len(lines):
        return None
    header = [c.strip().lower() for c in lines[k].split(",")]
    inclusive = "end" in header and "upper" not in header
    header = [_SYNONYMS.get(c, c) for c in header]
    if len(set(header)) != len(header) or not set(_REQUIRED) <= set(header) or \
            not set(header) <= set(_PLAIN_CELL):
        return None
    body = lines[k + 1:]
    if not body:
        return None
    row = ",".join(_PLAIN_CELL[c] for c in header)
    joined = "\n".join(body)
    if re.fullmatch(f"(?:{row}\n)*{row}", joined) is None:
        return None
    flat = joined.replace("\n", ",").split(",")
    width = len(header)
    col = {c: i for i, c in enumerate(header)}
    ids = flat[col["id"]::width]
    lower = list(map(int, flat[col["lower"]::width]))
    upper = list(map(int, flat[col["upper"]::width]))
    if inclusive:
        upper = [u + 1 for u in upper]
    size = list(map(int, flat[col["size"]::width]))
    align = list(map(int, flat[col["alignment"]::width])) if "alignment" in col else \
        [1] * len(ids)
    if len(set(ids)) != len(ids) or min(align) < 1 or \
            any(u <= lo for lo, u in zip(lower, upper, strict=True)):
        return None
    try:
        if "traffic" not in col:
            return Problem(tuple(map(Buffer, ids, size, lower, upper, align)), name=name)
        moved = list(map(int, flat[col["traffic"]::width]))
        return Problem(tuple(Buffer(i, s, lo, up, a, traffic=t) for i, s, lo, up, a, t in zip(
            ids, size, lower, upper, align, moved, strict=True)), name=name)
    except ProblemError:
        return None


class _Fixed(TypedDict, total=False):
    """A buffer's optional fields as a CSV row gives them."""

    offset: int
    pools: tuple[str, ...]
    gaps: tuple[Gap, ...]
    traffic: int


def parse_problem(text: str, *, source: str = "<csv>", name: str = "",
                  fixed_offsets: bool = False) -> tuple[Problem, dict]:
    """Problem from CSV text, and the per-buffer ``offset``/``pool`` cells if the file had them.

    With ``fixed_offsets`` the ``offset`` cells become the buffers' fixed offsets (in the pool of
    their ``pool`` cell, if any), as MiniMalloc reads a problem; otherwise they are only returned.

    Args:
        text: The CSV text.
        source: The file named in errors.
        name: The problem's name.
        fixed_offsets: Whether ``offset`` cells fix the buffers' offsets.

    Returns:
        The problem, and buffer id -> ``(pool cell or None, offset)`` for the lines with an
        offset cell (empty when the file has none).

    Raises:
        FormatError: A missing or duplicate column, a line with more cells than the header, a
            cell that is not an integer, a malformed gap, naming the line and the field.
        ProblemError: A problem that is not valid, naming the line and the field.
    """
    fast = _plain(text, name)
    if fast is not None:
        return fast, {}
    buffers: list[Buffer] = []
    seen: dict[str, int] = {}
    solution: dict[str, tuple[str | None, int]] = {}
    pools: list[str] = []
    col, inclusive, rows = _table(text, source)
    ci, cl, cu, cs = col["id"], col["lower"], col["upper"], col["size"]
    ca, ch, cp, co, cg, ct = (col.get(c, -1) for c in ("alignment", "hint", "pool", "offset",
                                                       "gaps", "traffic"))
    for line, cells in rows:
        bid = cells[ci]
        if not bid:
            raise FormatError("empty id", source=source, line=line, field="id")
        if bid in seen:
            raise FormatError(f"duplicate id (first on line {seen[bid]})", source=source,
                              line=line, field="id", buffer=bid)
        seen[bid] = line
        lower = _int(cells[cl], "lower", source, line, bid)
        upper = _int(_plus_one(cells[cu]) if inclusive else cells[cu], "upper", source, line,
                     bid)
        size = _int(cells[cs], "size", source, line, bid)
        align = _int(cells[ca], "alignment", source, line, bid) if ca >= 0 and cells[ca] else 1
        hint = None
        if ch >= 0 and cells[ch] not in ("", "-1"):
            hint = _int(cells[ch], "hint", source, line, bid)
        pool = cells[cp] or None if cp >= 0 else None
        if pool and pool not in pools:
            pools.append(pool)
        offset = None
        if co >= 0 and cells[co]:
            offset = _int(cells[co], "offset", source, line, bid)
            solution[bid] = (pool, offset)
        fixed: _Fixed = {} if not fixed_offsets or offset is None else {
            "offset": offset, "pools": (pool,) if pool else ()}
        if cg >= 0 and cells[cg]:
            fixed["gaps"] = _gaps(cells[cg], inclusive, (lower, upper), source, line, bid)
        if ct >= 0 and cells[ct]:
            fixed["traffic"] = _int(cells[ct], "traffic", source, line, bid)
        try:
            buffers.append(Buffer(bid, size, lower, upper, align, hint=hint, **fixed))
        except ProblemError as e:
            field = {"start": "lower", "end": "upper"}.get(e.field or "", e.field)
            raise FormatError(e.reason, source=source, line=line, field=field,
                              buffer=bid) from None
    problem_pools = tuple(Pool(p) for p in pools) if pools else (Pool(),)
    try:
        problem = Problem(tuple(buffers), problem_pools, name=name)
    except ProblemError as e:
        if e.buffer in seen:
            raise e.located(source=source, line=seen[e.buffer]) from None
        raise
    return problem, solution


def read_problem(path: str | Path) -> Problem:
    """Problem from a MiniMalloc CSV file; an ``offset`` column fixes those offsets.

    Raises:
        FormatError: A missing file, or a line that is not MiniMalloc's CSV (see
            :func:`parse_problem`).
        ProblemError: A problem that is not valid, naming the line and the field.
    """
    path = Path(path)
    text = read_text(path)
    return parse_problem(text, source=str(path), name=path.stem, fixed_offsets=True)[0]


def read_plan(path: str | Path, problem: Problem) -> Plan:
    """The plan in a MiniMalloc solution CSV (its ``offset`` column), for ``problem``.

    Lines must name the problem's buffers; the plan is not checked here (see ``cpplan.check``).

    Raises:
        FormatError: No ``offset`` column, an empty offset cell, a duplicate id or one the
            problem does not have, naming the line.
    """
    path = Path(path)
    text = read_text(path)
    placements: dict[str, Placement] = {}
    saw_offset = False
    col, _, rows = _table(text, str(path))
    for line, cells in rows:
        if "offset" not in col:
            raise FormatError("a plan needs an 'offset' column", source=str(path), line=1,
                              field="header")
        saw_offset = True
        bid = cells[col["id"]]
        if bid in placements:
            raise FormatError("duplicate id", source=str(path), line=line, field="id", buffer=bid)
        if bid not in problem.index:
            raise FormatError("not a buffer of the problem (is this the plan of another "
                              "problem?)", source=str(path), line=line, field="id", buffer=bid)
        if not cells[col["offset"]]:
            raise FormatError("missing: a plan gives every buffer an offset", source=str(path),
                              line=line, field="offset", buffer=bid)
        off = _int(cells[col["offset"]], "offset", str(path), line, bid)
        pool = ("pool" in col and cells[col["pool"]]) or problem.candidates(bid)[0]
        placements[bid] = Placement(pool, off)
    if not saw_offset and problem.buffers:  # (the plan of a problem with no buffers is empty)
        raise FormatError("no buffers in plan", source=str(path), line=1)
    return Plan.build(problem, placements, planner=f"file:{path.name}", status="feasible")


def problem_to_csv(problem: Problem) -> str:
    """``problem``'s buffers as MiniMalloc CSV: ``id,lower,upper,size``, then ``alignment``,
    ``hint``, ``gaps`` and ``traffic`` where some buffer needs them. Not checked for what CSV
    cannot hold (:func:`write_problem` is)."""
    out = io.StringIO()
    extra = []
    if any(b.alignment != 1 for b in problem.buffers):
        extra.append("alignment")
    if any(b.hint is not None for b in problem.buffers):
        extra.append("hint")
    if any(b.gaps for b in problem.buffers):
        extra.append("gaps")
    if problem.has_traffic:
        extra.append("traffic")
    out.write(",".join(("id", "lower", "upper", "size", *extra)) + "\n")
    for b in problem.buffers:
        row = [b.id, str(b.start), str(b.end), str(b.size)]
        if "alignment" in extra:
            row.append(str(b.alignment))
        if "hint" in extra:
            row.append("-1" if b.hint is None else str(b.hint))
        if "gaps" in extra:
            row.append(" ".join(f"{g.start}-{g.end}" + ("" if g.window is None else
                                                        f"@{g.window[0]}:{g.window[1]}")
                                for g in b.gaps))
        if "traffic" in extra:
            row.append(str(b.traffic))
        out.write(",".join(row) + "\n")
    return out.getvalue()


def plan_to_csv(problem: Problem, plan: Plan) -> str:
    """The problem's CSV with an ``offset`` column (and ``pool`` with several pools).

    Raises:
        PlanError: A buffer has no placement.
    """
    lines = problem_to_csv(problem).splitlines()
    with_pool = len(problem.pools) > 1
    head = lines[0] + (",pool" if with_pool else "") + ",offset"
    body = []
    for b, line in zip(problem.buffers, lines[1:], strict=True):
        pl = plan.placements.get(b.id)
        if pl is None:
            raise PlanError(f"buffer {b.id!r} has no placement; a CSV plan places every buffer")
        body.append(line + (f",{pl.pool}" if with_pool else "") + f",{pl.offset}")
    return "\n".join([head, *body]) + "\n"


def write_problem(problem: Problem, path: str | Path) -> None:
    """Write ``problem`` as a MiniMalloc CSV file, all at once.

    Raises:
        ProblemError: What CSV cannot hold: several pools, a capacity or base alignment,
            aliases, fixed offsets, an id with a comma, blanks around it or a line break.
    """
    _check_csv_can_hold(problem)
    write_text_atomic(path, problem_to_csv(problem))


def write_plan(problem: Problem, plan: Plan, path: str | Path) -> None:
    """Write ``plan`` as it is, valid or not (:func:`cpplan.io.write_plan` checks it first)."""
    _check_ids(problem)
    write_text_atomic(path, plan_to_csv(problem, plan))


def _check_ids(problem: Problem) -> None:
    # The reader splits lines (str.splitlines: also on \x85, \u2028, ...), then cells on
    # commas, and strips blanks around cells; an id must survive all three.
    for b in problem.buffers:
        if "," in b.id:
            raise ProblemError("contains a comma, which CSV cannot hold", buffer=b.id, field="id")
        if b.id != b.id.strip() or len(f"{b.id}x".splitlines()) != 1:
            raise ProblemError("has blanks around it or a line break, which CSV cannot hold",
                               buffer=b.id, field="id")


def _check_csv_can_hold(problem: Problem) -> None:
    _check_ids(problem)
    for b in problem.buffers:
        if b.offset is not None:
            raise ProblemError("MiniMalloc CSV cannot hold fixed offsets; write JSON instead",
                               buffer=b.id, field="offset")
    if problem.aliases:
        raise ProblemError("MiniMalloc CSV cannot hold aliases; write JSON instead",
                           field="aliases")
    if len(problem.pools) > 1 or problem.pools[0].capacity is not None or \
            problem.pools[0].alignment != 1:
        raise ProblemError("MiniMalloc CSV holds one plain pool; write JSON instead",
                           pool=problem.pools[0].name, field="pools")

