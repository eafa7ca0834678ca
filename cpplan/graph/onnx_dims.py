"""Symbolic dimensions of an ONNX model: give every graph input a static shape, and every
dimension written as an expression of them (``Min(512, s50)``, ``2*s0 + 1``, as torch's dynamo
exporter writes them) its value.

Values come from ``dims`` (symbol -> value) and ``input_shapes`` (input -> whole shape; its
symbolic dimensions then take their values from it). Every input dimension still unknown is
named in one error, with the flags that give it.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ProblemError

if TYPE_CHECKING:
    from onnx import ModelProto, ValueInfoProto

__all__ = ["apply_dims", "evaluate_dim"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.Div: operator.truediv}
# The functions sympy prints in torch's symbolic shapes.
_CALLS: dict[str, Callable[..., Any]] = {
    "Min": min, "Max": max, "floor": math.floor, "ceiling": math.ceil,
    "FloorToInt": math.floor, "CeilToInt": math.ceil, "FloorDiv": operator.floordiv,
    "CeilDiv": lambda a, b: -(-a // b), "Mod": operator.mod,
    "PythonMod": operator.mod, "TruncToInt": math.trunc, "Abs": abs}


def evaluate_dim(text: str, symbols: Mapping[str, int]) -> int | None:
    """The value of the dimension ``text`` (a symbol or an expression of symbols) given
    ``symbols``, or ``None`` when a symbol is unknown, the expression is not arithmetic, or the
    value is not a non-negative integer."""
    if text in symbols:
        return symbols[text]
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None

    def ev(n: ast.AST) -> Any:  # (an int or a float)
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int | float):
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in symbols:
                raise KeyError(n.id)
            return symbols[n.id]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub | ast.UAdd):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
            return _BINOPS[type(n.op)](ev(n.left), ev(n.right))
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _CALLS
                and not n.keywords):
            return _CALLS[n.func.id](*(ev(a) for a in n.args))
        raise ValueError(ast.dump(n))

    try:
        value = ev(tree)
    except (KeyError, ValueError, TypeError, ZeroDivisionError, OverflowError):
        return None
    if isinstance(value, float):
        if not value.is_integer():
            return None
        value = int(value)
    return value if isinstance(value, int) and value >= 0 else None


def _names(text: str) -> set[str]:
    return {m for m in _IDENT.findall(text) if m not in _CALLS}


def apply_dims(model: ModelProto, dims: Mapping[str, int],
               input_shapes: Mapping[str, tuple[int, ...]], skip: set[str],
               consumers: Mapping[str, str], source: str) -> dict[str, int]:
    """Give the graph inputs of ``model`` (those not in ``skip``: weights) static shapes, in
    place, and every symbolic dimension of the graph's inputs, outputs and value_info whose value
    follows from them. Returns the symbols' values.

    Raises :class:`ProblemError` for a shape given for an unknown input or of the wrong rank, a
    value that contradicts the model or another value, a ``dims`` entry the model does not use,
    and (all at once) the input dimensions that stay unknown.
    """
    graph = model.graph
    symbols = dict(dims)
    inputs = [vi for vi in graph.input if vi.name not in skip]
    by_name = {vi.name: vi for vi in inputs}
    for name in input_shapes:
        if name not in by_name:
            known = ", ".join(sorted(by_name)) or "none"
            raise ProblemError(f"input shape given for {name!r}, but the model has no graph "
                               f"input of that name (its inputs: {known})", source=source,
                               field="input_shapes")
    used: set[str] = set()
    for vi in inputs:
        if not vi.type.HasField("tensor_type"):
            who = consumers.get(vi.name, "no node")
            raise ProblemError(f"graph input {vi.name!r} (read by {who}) is not a tensor",
                               source=source, field="inputs")
        tt = vi.type.tensor_type
        given = input_shapes.get(vi.name)
        if given is None:
            continue
        if not tt.HasField("shape"):
            for _ in given:
                tt.shape.dim.add()
        if len(tt.shape.dim) != len(given):
            raise ProblemError(f"input shape for {vi.name!r} has {len(given)} dimensions, the "
                               f"model's has {len(tt.shape.dim)}", source=source,
                               field="input_shapes")
        for k, (dim, v) in enumerate(zip(tt.shape.dim, given, strict=True)):
            if dim.HasField("dim_value") and dim.dim_value != v:
                raise ProblemError(f"input shape for {vi.name!r}: dimension {k} is "
                                   f"{dim.dim_value} in the model, {v} given", source=source,
                                   field="input_shapes")
            if dim.dim_param:
                old = symbols.setdefault(dim.dim_param, v)
                used.add(dim.dim_param)
                if old != v:
                    raise ProblemError(f"dimension {dim.dim_param!r} given as {old} and as {v} "
                                       f"(by the shape of {vi.name!r})", source=source,
                                       field="input_shapes")
            dim.ClearField("dim_param")
            dim.dim_value = v
    # every dimension of the inputs, outputs and value_info that the symbols now fix
    mentioned: set[str] = set()
    for vi in [*graph.input, *graph.output, *graph.value_info]:
        if vi.name in skip or not vi.type.HasField("tensor_type"):
            continue
        for dim in vi.type.tensor_type.shape.dim:
            if not dim.dim_param:
                continue
            mentioned |= _names(dim.dim_param)
            value = evaluate_dim(dim.dim_param, symbols)
            if value is not None:
                used |= _names(dim.dim_param)
                dim.ClearField("dim_param")
                dim.dim_value = value
    unused = sorted(set(dims) - used - mentioned)
    if unused:
        raise ProblemError(f"dimension {unused[0]!r} given, but the model has no symbolic "
                           "dimension of that name", source=source, field="dims")
    _missing(inputs, consumers, source)
    return symbols


def _missing(inputs: Iterable[ValueInfoProto], consumers: Mapping[str, str], source: str) -> None:
    """One error naming every input dimension still unknown, and how to give them."""
    parts: list[str] = []
    symbols: list[str] = []
    shapes: list[str] = []
    for vi in inputs:
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            who = consumers.get(vi.name, "no node")
            parts.append(f"{vi.name!r} (read by {who}) has no shape")
            shapes.append(f"--input-shape {vi.name}=D0,D1,...")
            continue
        unknown = [(k, d.dim_param) for k, d in enumerate(tt.shape.dim)
                   if not d.HasField("dim_value")]
        if not unknown:
            continue
        where = ", ".join(f"{k} ({p!r})" if p else f"{k} (unnamed)" for k, p in unknown)
        parts.append(f"{vi.name!r} dimension{'s' if len(unknown) > 1 else ''} {where}")
        for _, p in unknown:
            if p and _IDENT.fullmatch(p) and p not in symbols:
                symbols.append(p)
        if any(not p or not _IDENT.fullmatch(p) for _, p in unknown):
            shape = ",".join(str(d.dim_value) if d.HasField("dim_value") else "N"
                             for d in tt.shape.dim)
            shapes.append(f"--input-shape {vi.name}={shape}")
    if not parts:
        return
    how = [f"--dim {s}=N" for s in symbols] + shapes
    dims_py = ", ".join(f"{s!r}: N" for s in symbols)
    also = f" (from Python: dims={{{dims_py}}})" if symbols else ""
    raise ProblemError(f"graph input shapes unknown: {'; '.join(parts)}; give them with "
                       f"{' '.join(how)}{also}", source=source, field="shape")
