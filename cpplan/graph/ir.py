"""The graph IR: operators in a schedule, the tensors they read and write.

A :class:`Graph` is built in schedule order: :meth:`Graph.add_operator` appends an operator
whose inputs must already exist (graph inputs, constants, or outputs of earlier operators), so
the order of insertion *is* the schedule and is topological by construction. Front ends whose
node order is not topological reorder first with :func:`topological_order` (networkx).

Each tensor records its shape, dtype and byte size, which operator makes it
(:attr:`Graph.producer`) and which operators read it (:attr:`Graph.users`); :meth:`Graph.dag`
gives the operator graph as a ``networkx.MultiDiGraph`` for analyses. Tensors have a *role*:

* ``activation``: made by an operator; planned in the arena.
* ``input``: a graph input (the caller fills it before the run).
* ``constant``: weights and other read-only data; never planned (they live in the model's
  constant section, outside the arena).

Byte sizes follow TVM (``runtime::GetDataSize``): each element takes
``ceil(bits * lanes / 8)`` bytes, so an ``int4`` tensor of 10 elements takes 10 bytes and a
``float16x4`` element takes 8. Operators carry what the rewrites need: ``inplace`` (indices of
inputs whose bytes output 0 may overwrite), ``view`` (output 0 is input 0 under another shape, no
copy), ``concat_axis`` (a concatenation along that axis) and ``workspace`` (byte sizes of scratch
buffers the operator needs during its own step).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import ProblemError

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["Graph", "Operator", "Tensor", "dtype_bits", "element_bytes", "tensor_bytes",
           "topological_order", "ROLES"]

ROLES = ("activation", "input", "constant")

# Bits per lane of the scalar types cpplan knows (names as numpy/TVM spell them).
_BITS = {
    "bool": 8,  # one byte per element, as ONNX and numpy store it (TVM's 1-bit bool rounds to 1)
    "float64": 64, "float32": 32, "float16": 16, "bfloat16": 16,
    "float8_e4m3fn": 8, "float8_e4m3fnuz": 8, "float8_e5m2": 8, "float8_e5m2fnuz": 8,
    "float8_e8m0fnu": 8, "float4_e2m1": 4, "float6_e2m3": 6, "float6_e3m2": 6,
    "complex64": 64, "complex128": 128,
}
_GENERIC = re.compile(r"(u?int|float|bfloat)(\d+)")
_LANES = re.compile(r"(.+)x(\d+)")


def dtype_bits(dtype: str) -> tuple[int, int]:
    """``(bits, lanes)`` of a dtype name: ``float32``, ``int4``, ``uint1``, ``float16x4``...

    Raises :class:`ProblemError` for names it does not know (strings have no fixed size).
    """
    if not isinstance(dtype, str) or not dtype:
        raise ProblemError(f"expected a dtype name, got {dtype!r}", field="dtype")
    name, lanes = dtype, 1
    m = _LANES.fullmatch(dtype)
    if m and (m.group(1) in _BITS or _GENERIC.fullmatch(m.group(1))):
        name, lanes = m.group(1), int(m.group(2))
    if name in _BITS:
        bits = _BITS[name]
    else:
        g = _GENERIC.fullmatch(name)
        if not g or int(g.group(2)) < 1:
            raise ProblemError(f"unknown dtype {dtype!r}", field="dtype")
        bits = int(g.group(2))
    if lanes < 1:
        raise ProblemError(f"lanes must be >= 1 in {dtype!r}", field="dtype")
    return bits, lanes


def element_bytes(dtype: str) -> int:
    """Bytes per element, rounded up per element as TVM does: ``ceil(bits * lanes / 8)``."""
    bits, lanes = dtype_bits(dtype)
    return (bits * lanes + 7) // 8


def tensor_bytes(shape: Sequence[int], dtype: str) -> int:
    """Byte size of a dense tensor: elements times :func:`element_bytes`."""
    return math.prod(shape) * element_bytes(dtype)


@dataclass(frozen=True, slots=True)
class Tensor:
    """A tensor: ``name``, static ``shape``, ``dtype``, ``role``; ``size`` is its byte size."""

    name: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    role: str = "activation"
    size: int = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ProblemError(f"a tensor needs a non-empty name, got {self.name!r}",
                               field="tensor name")
        try:
            shape = tuple(int(d) for d in self.shape)
        except (TypeError, ValueError):
            raise ProblemError(f"tensor {self.name!r}: shape must be integers, got "
                               f"{self.shape!r}", field="shape") from None
        if any(d < 0 for d in shape):
            raise ProblemError(f"tensor {self.name!r}: negative dimension in {shape}",
                               field="shape")
        if self.role not in ROLES:
            raise ProblemError(f"tensor {self.name!r}: role must be one of {ROLES}, got "
                               f"{self.role!r}", field="role")
        try:
            per = element_bytes(self.dtype)
        except ProblemError as e:
            raise ProblemError(f"tensor {self.name!r}: {e.reason}", field="dtype") from None
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "size", math.prod(shape) * per)


@dataclass(frozen=True, slots=True)
class Operator:
    """One step of the schedule.

    ``inplace``: indices of inputs whose bytes output 0 may overwrite (element-wise operators).
    ``view``: output 0 is input 0 reinterpreted (reshape, squeeze, identity): no copy needed.
    ``concat_axis``: the operator concatenates its inputs along this (non-negative) axis.
    ``workspace``: byte sizes of scratch buffers alive during this operator's step only.
    """

    name: str
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    inplace: tuple[int, ...] = ()
    view: bool = False
    concat_axis: int | None = None
    workspace: tuple[int, ...] = ()


class Graph:
    """Operators in schedule order and the tensors between them (see the module docstring).

    Built incrementally; tensors and operators themselves are frozen. Names are unique: a
    tensor is defined once (input, constant or operator output), operator names are unique.
    """

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.tensors: dict[str, Tensor] = {}
        self.operators: list[Operator] = []
        self.outputs: list[str] = []
        self.producer: dict[str, int] = {}  # tensor -> index of the operator that makes it
        self.users: dict[str, list[int]] = {}  # tensor -> indices of operators reading it
        # constant -> the constants it is computed from before the run (folded operators)
        self.derived: dict[str, tuple[str, ...]] = {}
        self._op_names: set[str] = set()

    def __repr__(self) -> str:
        return (f"Graph({self.name!r}: {len(self.operators)} operators, "
                f"{len(self.tensors)} tensors)")

    # -- building -------------------------------------------------------------------------------
    def _define(self, tensor: Tensor) -> str:
        if tensor.name in self.tensors:
            raise ProblemError(f"tensor {tensor.name!r} is defined twice", field="tensor name")
        self.tensors[tensor.name] = tensor
        self.users[tensor.name] = []
        return tensor.name

    def add_input(self, name: str, shape: Sequence[int], dtype: str = "float32") -> str:
        """A graph input (filled by the caller before the run); returns its name.

        Args:
            name: The tensor's name, unique in the graph.
            shape: Its static shape.
            dtype: Its element type (``float32``, ``int8``, ``float16x4``...).

        Returns:
            ``name``.

        Raises:
            ProblemError: A name defined already, a negative dimension or an unknown dtype.
        """
        return self._define(Tensor(name, tuple(shape), dtype, "input"))

    def add_constant(self, name: str, shape: Sequence[int], dtype: str = "float32", *,
                     derived_from: Iterable[str] = ()) -> str:
        """A constant (weights): read-only, never planned; returns its name.

        ``derived_from`` names the constants it is computed from before the run (a folded
        operator): the constants figure then counts those, not it, so weights count once.

        Returns:
            ``name``.

        Raises:
            ProblemError: A name defined already, a ``derived_from`` that is not a constant of
                the graph, a negative dimension or an unknown dtype.
        """
        parents = tuple(derived_from)
        for p in parents:
            if self.tensors.get(p) is None or self.tensors[p].role != "constant":
                raise ProblemError(f"constant {name!r} derived from {p!r}, which is not a "
                                   "constant of the graph", field="derived_from")
        self._define(Tensor(name, tuple(shape), dtype, "constant"))
        if parents:
            self.derived[name] = parents
        return name

    def stored_constants(self) -> list[Tensor]:
        """The constants the operators need, each counted once, in definition order: those
        they read, except that a folded constant made from at least as many elements as it
        holds (a transposed, cast or dequantised weight) counts as the constants it is computed
        from, so weights count once, at their stored size; one made from fewer elements
        (``ConstantOfShape``, an embedding lookup) counts as itself."""
        roots: dict[str, frozenset[str]] = {}

        def roots_of(t: str) -> frozenset[str]:
            if t not in roots:
                if t not in self.derived:
                    roots[t] = frozenset((t,))
                else:
                    r = frozenset().union(*(roots_of(p) for p in self.derived[t]))
                    big = (sum(math.prod(self.tensors[x].shape) for x in r)
                           >= math.prod(self.tensors[t].shape))
                    roots[t] = r if big else frozenset((t,))
            return roots[t]

        need: set[str] = set()
        for op in self.operators:
            for t in op.inputs:
                if self.tensors[t].role == "constant":
                    need |= roots_of(t)
        return [t for t in self.tensors.values() if t.name in need]

    def add_operator(
        self,
        op_type: str,
        inputs: Iterable[str],
        outputs: Iterable[tuple[str, Sequence[int], str] | tuple[str, Sequence[int]] | Tensor],
        *,
        name: str | None = None,
        inplace: Iterable[int] = (),
        view: bool = False,
        concat_axis: int | None = None,
        workspace: Iterable[int] = (),
    ) -> Operator:
        """Append an operator to the schedule; its outputs become activations (an operator may
        have none when it reads some: it writes into one of them in place).

        ``outputs`` are ``(name, shape[, dtype])`` tuples (dtype defaults to float32) or
        :class:`Tensor` objects. Every input must already exist; errors name the operator.

        Args:
            op_type: What it computes (``Conv``, ``Relu``...), for reports.
            inputs: The names of the tensors it reads, each defined already.
            outputs: The tensors it makes.
            name: A unique operator name; default ``<op_type>_<index>``.
            inplace: Indices of inputs whose bytes output 0 may overwrite.
            view: Output 0 is input 0 under another shape (no copy).
            concat_axis: It concatenates its inputs along this axis.
            workspace: Byte sizes of scratch buffers it needs during its step.

        Returns:
            The operator, appended to the schedule.

        Raises:
            ProblemError: A duplicate operator or tensor name, an input not defined yet, no
                inputs and no outputs, an ``inplace`` index out of range, a view without an
                input, a concat axis beyond the output's rank, or a negative workspace.
        """
        name = name or f"{op_type}_{len(self.operators)}"
        if name in self._op_names:
            raise ProblemError(f"operator {name!r} is defined twice", field="operator name")
        ins = tuple(inputs)
        for t in ins:
            if t not in self.tensors:
                raise ProblemError(f"operator {name!r} ({op_type}) reads {t!r}, which no earlier "
                                   "operator makes and which is neither an input nor a constant "
                                   "(operators must be added in schedule order)", field="inputs")
        outs: list[Tensor] = []
        for o in outputs:
            if isinstance(o, Tensor):
                outs.append(Tensor(o.name, o.shape, o.dtype, "activation"))
            else:
                outs.append(Tensor(o[0], tuple(o[1]), o[2] if len(o) > 2 else "float32",
                                   "activation"))
        # An operator without outputs writes into a tensor it reads (a training graph's
        # ``x.add_(y)``): it still needs its inputs at its step. One that reads nothing either
        # is a mistake, and the rewrites need an output 0.
        if not outs and not ins:
            raise ProblemError(f"operator {name!r} ({op_type}) makes no tensor and reads none",
                               field="outputs")
        if not outs and (inplace or view or concat_axis is not None):
            raise ProblemError(f"operator {name!r} ({op_type}) makes no tensor, so it cannot be "
                               "in place, a view or a concatenation", field="outputs")
        inplace = tuple(int(i) for i in inplace)
        if any(not 0 <= i < len(ins) for i in inplace):
            raise ProblemError(f"operator {name!r}: inplace indices {inplace} out of range for "
                               f"{len(ins)} inputs", field="inplace")
        if view and not ins:
            raise ProblemError(f"operator {name!r}: a view needs an input", field="view")
        if concat_axis is not None and not 0 <= concat_axis < max(len(outs[0].shape), 1):
            raise ProblemError(f"operator {name!r}: concat axis {concat_axis} out of range for "
                               f"rank {len(outs[0].shape)}", field="concat_axis")
        ws = tuple(int(w) for w in workspace)
        if any(w < 0 for w in ws):
            raise ProblemError(f"operator {name!r}: workspace sizes must be >= 0, got {ws}",
                               field="workspace")
        index = len(self.operators)
        for tensor in outs:
            self._define(tensor)
            self.producer[tensor.name] = index
        for t in ins:
            users = self.users[t]
            if not users or users[-1] != index:  # an operator reading x twice uses it once
                users.append(index)
        op = Operator(name, op_type, ins, tuple(t.name for t in outs), inplace, bool(view),
                      concat_axis, ws)
        self.operators.append(op)
        self._op_names.add(name)
        return op

    def mark_output(self, *names: str) -> None:
        """Mark tensors as graph outputs (they live until the end of the run).

        Raises:
            ProblemError: A name that is not a tensor of the graph.
        """
        for n in names:
            if n not in self.tensors:
                raise ProblemError(f"graph output {n!r} is not a tensor of the graph",
                                   field="outputs")
            if n not in self.outputs:
                self.outputs.append(n)

    # -- views ----------------------------------------------------------------------------------
    def tensors_with_role(self, role: str) -> list[Tensor]:
        """The tensors of one role (``activation``, ``input``, ``constant``), in definition
        order."""
        return [t for t in self.tensors.values() if t.role == role]

    def dag(self) -> nx.MultiDiGraph:
        """The operator graph as a ``networkx.MultiDiGraph``: nodes are operator indices (with
        ``operator`` attributes), one edge per tensor passed from producer to user."""
        import networkx as nx

        g = nx.MultiDiGraph()
        for i, op in enumerate(self.operators):
            g.add_node(i, operator=op)
        for t, users in self.users.items():
            p = self.producer.get(t)
            if p is not None:
                for u in users:
                    g.add_edge(p, u, tensor=t)
        return g


def topological_order(nodes: Sequence[tuple[Sequence[str], Sequence[str]]],
                      defined: Iterable[str] = ()) -> list[int]:
    """A schedule for ``nodes`` given as ``(inputs, outputs)``: the given order when it is
    already topological, else networkx's topological order that stays closest to it
    (lexicographic by original position). Names in ``defined`` exist before any node.

    Raises :class:`ProblemError` naming a tensor nobody makes, or a cycle.
    """
    import networkx as nx

    known = set(defined)
    made: dict[str, int] = {}
    for i, (_, outs) in enumerate(nodes):
        for o in outs:
            made.setdefault(o, i)
    in_order = True
    for i, (ins, _) in enumerate(nodes):
        for t in ins:
            if t in known:
                continue
            if t not in made:
                raise ProblemError(f"node {i} reads {t!r}, which nothing makes", field="inputs")
            if made[t] >= i:
                in_order = False
    if in_order:
        return list(range(len(nodes)))
    g = nx.DiGraph()
    g.add_nodes_from(range(len(nodes)))
    for i, (ins, _) in enumerate(nodes):
        for t in ins:
            if t not in known and made[t] != i:
                g.add_edge(made[t], i)
    try:
        return list(nx.lexicographical_topological_sort(g))
    except nx.NetworkXUnfeasible:
        cycle = nx.find_cycle(g)
        raise ProblemError(f"the graph has a cycle through node {cycle[0][0]}",
                           field="schedule") from None
