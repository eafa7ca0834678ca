"""torch.fx front end: an aten-level ``GraphModule`` to a :class:`cpplan.graph.Graph`, and one
training step of a torchvision network traced into a :class:`cpplan.Problem` (needs
``pip install ".[exports]"`` or ``".[executorch]"``; torch is imported only when used).

:func:`graph_from_fx` reads a graph traced by ``torch.fx.experimental.proxy_tensor.make_fx``
(every node carries its value, real or fake, in ``node.meta["val"]``) and keeps what memory
planning needs:

* **Buffers are storages, not tensors.** The first node whose value holds a storage makes it
  (an activation of the size of the whole storage, in bytes). A view (``view``, ``t``,
  ``expand``, ``permute``, ``alias``, ``detach``, ``slice``, ``select``, ``split``...) or an
  in-place result (``relu_``, ``add_``) shares its base's storage and is **folded into the
  base**: it makes no buffer, and every use of it is a use of the base, so the base lives until
  the view's last use. Which return shares which argument's storage comes from the operator's
  alias annotations (``Tensor(a)``, ``Tensor(a!)``, ``Tensor(a)[]``, read with torch's
  ``torch.utils._python_dispatch.get_alias_info``), which holds in every tracing mode; the
  storages themselves (``StorageWeakRef``, shared between a fake tensor and its views) cover
  the rest. Real-mode traces keep a separate snapshot per node, so there only the annotations
  can tell.
* **Operators** are the ``call_function`` nodes in graph order (the order ``make_fx`` recorded
  them in, the order they run in). A node that makes no new storage and reads only the storages
  it returns (a pure view, ``relu_``) takes no step; one that also reads others (``x.add_(y)``)
  is an operator with no output, so ``y`` lives until it. ``getitem`` selects from a tuple and
  takes no step; tuple outputs are the tensors inside. Tensors of zero bytes take no memory and
  are left out.
* **Roles.** Placeholders named in ``constants`` (the module's parameters and buffers) and
  ``get_attr`` tensors are constants, never planned; the other placeholders are graph inputs.
  The tensors returned by the graph's ``output`` node (the loss, the gradients) are graph
  outputs, alive to the end of the run.

:func:`training_problem` traces one training step (forward, cross-entropy loss, backward to the
gradients of every parameter, with ``torch.autograd.grad`` inside ``make_fx`` in fake mode: no
arithmetic runs, a network traces in about a second) of a torchvision network built with
``weights=None`` and returns its problem: the images and labels are planned in the arena until
their last use (the first convolution's weight gradient reads the images at the very end), the
parameters and batch-norm statistics are constants, the loss and the parameter gradients live to
the end.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Collection, Iterator
from typing import Any

from ..errors import CpplanError, ProblemError, missing_extra
from ..problem import Problem
from .ir import Graph, element_bytes
from .to_problem import to_problem

__all__ = ["graph_from_fx", "trace_training_step", "training_graph", "training_problem",
           "training_settings", "TRAINING_MODELS"]

#: The torchvision networks of the training family, with the batch and square resolution their
#: training step is traced at (weights=None; each traces in seconds). Buffer counts do not depend
#: on batch or resolution: 167 (squeezenet1_1) to 2950 (densenet169).
TRAINING_MODELS: dict[str, tuple[int, int]] = {
    "resnet18": (8, 224),
    "resnet50": (2, 224),
    "mobilenet_v2": (4, 224),
    "densenet121": (2, 224),
    "densenet169": (4, 128),
    "efficientnet_b0": (4, 224),
    "regnet_y_400mf": (4, 224),
    "squeezenet1_1": (8, 224),
}


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise missing_extra("tracing a torch graph", "torch", "exports") from None
    return torch


def _dtype(t: Any) -> str:
    return str(t.dtype).removeprefix("torch.")


def _tensors(value: Any) -> Iterator[Any]:
    """The tensors inside a node's value (a tensor, or tuples/lists of them), in order."""
    torch = _torch()
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)


def _names(value: Any) -> Iterator[str]:
    """The buffer names inside a node's bases (a name, ``None``, or tuples/lists of them)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _names(v)


@functools.cache
def _returns_alias(op: Any) -> tuple[str | None, ...]:
    """For each return of an aten operator, the argument it shares storage with (a view, an
    in-place result) per its schema's alias annotations (``Tensor(a)``, ``Tensor(a!)``,
    ``Tensor(a)[]``), or ``None`` when it is new."""
    from torch.utils._python_dispatch import get_alias_info

    try:
        info = get_alias_info(op)
    except Exception:  # a schema torchgen cannot parse: no alias known, storages decide
        return ()
    out: list[str | None] = []
    for r in info.outs:
        out.append(next((a.name for a in info.args if r.alias_set & a.alias_set), None))
    return tuple(out)


def _argument(node: Any, name: str | None) -> Any:
    """The value of argument ``name`` of an operator node (positional or keyword); None for
    no name (a return that shares no argument's storage)."""
    for i, a in enumerate(node.target._schema.arguments):
        if a.name == name:
            return node.args[i] if i < len(node.args) else node.kwargs.get(name)
    return None


def _base_name(bases: dict[str, Any], arg: Any) -> str | None:
    """The buffer holding an argument that is one tensor node, else ``None``."""
    key = getattr(arg, "name", None) if arg is not None else None
    held = bases.get(key) if isinstance(key, str) else None
    return held if isinstance(held, str) else None


def graph_from_fx(gm: Any, *, constants: Collection[str] = (), name: str = "") -> Graph:
    """The graph of an aten-level ``torch.fx.GraphModule`` whose nodes carry
    ``node.meta["val"]`` (as ``make_fx`` traces them, in any tracing mode); semantics in the
    module docstring.

    ``constants``: names of the placeholders that are constants (parameters, buffers).
    Raises :class:`ProblemError` naming the node when a node whose result is used has no
    value, or a name in ``constants`` is not a placeholder.
    """
    torch = _torch()
    from torch.multiprocessing.reductions import StorageWeakRef

    graph = Graph(name)
    nodes = list(gm.graph.nodes)
    placeholders = {n.name for n in nodes if n.op == "placeholder"}
    unknown = sorted(set(constants) - placeholders)
    if unknown:
        raise ProblemError(f"constants {unknown} are not placeholders of the graph",
                           field="constants")
    # Where each node's tensors live: its value with every tensor replaced by the name of the
    # buffer holding its storage (None: no memory); see the module docstring for how.
    bases: dict[str, Any] = {}
    by_storage: dict[Any, str] = {}

    def value(n: Any) -> Any:
        if "val" not in n.meta:
            raise ProblemError(f"node {n.name!r} ({n.op} {n.target}) carries no meta['val']: "
                               "trace with torch.fx.experimental.proxy_tensor.make_fx",
                               field="meta")
        return n.meta["val"]

    def place(n: Any, val: Any, aliases: Any, kind: str, made: list) -> Any:
        """The bases of ``val`` (made by node ``n``): each tensor takes the base ``aliases``
        gives it (the same structure, None where new), or its storage's, or a new buffer."""
        count = [0]

        def walk(v: Any, alias: Any) -> Any:
            if isinstance(v, (tuple, list)):
                items = alias if isinstance(alias, (tuple, list)) else [alias] * len(v)
                return [walk(x, a) for x, a in zip(v, items, strict=True)]
            if not isinstance(v, torch.Tensor):
                return None
            k = count[0]
            count[0] += 1
            key = StorageWeakRef(v.untyped_storage())
            b = alias if isinstance(alias, str) else by_storage.get(key)
            if b is None and v.untyped_storage().nbytes():
                b = f"{n.name}.{k}" if k else n.name
                _define(graph, b, v, kind, made)
            if b is not None:
                by_storage.setdefault(key, b)
            return b

        return walk(val, aliases)

    for n in nodes:
        made: list[tuple[str, tuple[int, ...], str]] = []
        if n.op in ("placeholder", "get_attr"):
            kind = "input" if n.op == "placeholder" and n.name not in constants else "constant"
            bases[n.name] = place(n, n.meta.get("val"), None, kind, made)
        elif n.op == "output":
            for a in n.all_input_nodes:
                for b in _names(bases.get(a.name)):
                    if graph.tensors[b].role == "activation":
                        graph.mark_output(b)
        elif n.op == "call_function" and n.target is operator.getitem:
            src, idx = n.args
            held = bases.get(src.name)
            bases[n.name] = held[idx] if isinstance(held, list) else None
        elif n.op == "call_function":
            val = value(n) if n.users else n.meta.get("val")
            aliases: Any = None
            if isinstance(n.target, torch._ops.OpOverload):
                shared = [_base_name(bases, _argument(n, a)) for a in _returns_alias(n.target)]
                if len(shared) == 1:
                    aliases = shared[0]  # one tensor, or a list of views of one argument
                elif isinstance(val, (tuple, list)) and len(shared) == len(val):
                    aliases = shared
            reads: list[str] = []
            for a in n.all_input_nodes:
                for b in _names(bases.get(a.name)):
                    if b not in reads:
                        reads.append(b)
            bases[n.name] = place(n, val, aliases, "activation", made)
            returned = set(_names(bases[n.name]))
            if made or any(r not in returned for r in reads):
                # a pure view or a self-only in-place step takes no step (no memory event)
                graph.add_operator(str(n.target), reads, made, name=n.name)
    return graph


def _define(graph: Graph, name: str, t: Any, kind: str, made: list) -> None:
    """A new buffer for tensor ``t``'s whole storage (what the node allocates), with the
    tensor's shape when the tensor fills its storage exactly."""
    size = t.untyped_storage().nbytes()
    dtype = _dtype(t)
    per = element_bytes(dtype)
    if t.numel() * per == size:
        shape = tuple(t.shape)
    elif size % per == 0:
        shape = (size // per,)
    else:
        shape, dtype = (size,), "uint8"
    if kind == "input":
        graph.add_input(name, shape, dtype)
    elif kind == "constant":
        graph.add_constant(name, shape, dtype)
    else:
        made.append((name, shape, dtype))


def trace_training_step(model: Any, images: Any, labels: Any) -> tuple[Any, list[str]]:
    """``(GraphModule, constant placeholder names)`` of one training step of ``model`` (train
    mode: forward, cross-entropy loss, ``torch.autograd.grad`` of the loss with respect to every
    parameter; returns the loss and the gradients), traced by ``make_fx`` in fake mode.

    The placeholders are the parameters, the buffers (batch-norm statistics), then the images
    and the labels; the first two groups are the constants."""
    torch = _torch()
    from torch.fx.experimental.proxy_tensor import make_fx

    model.train()
    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())
    names = list(params)

    def step(params: dict, buffers: dict, images: Any, labels: Any) -> tuple:
        logits = torch.func.functional_call(model, (params, buffers), (images,))
        loss = torch.nn.functional.cross_entropy(logits, labels)
        grads = torch.autograd.grad(loss, [params[k] for k in names])
        return loss, grads

    gm = make_fx(step, tracing_mode="fake")(params, buffers, images, labels)
    phs = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    n_const = len(params) + len(buffers)
    if len(phs) != n_const + 2:
        raise CpplanError(f"traced {len(phs)} placeholders, expected {n_const + 2} "
                          "(parameters, buffers, images, labels)")
    return gm, phs[:n_const]


def training_settings(arch: str, batch: int | None = None, resolution: int | None = None
                      ) -> tuple[int, int]:
    """The batch and resolution a training step of ``arch`` is traced at: those given, else
    its defaults in :data:`TRAINING_MODELS` (2 images of 224 x 224 for a network not there)."""
    default = TRAINING_MODELS.get(arch, (2, 224))
    return (default[0] if batch is None else batch,
            default[1] if resolution is None else resolution)


def training_graph(arch: str, *, batch: int | None = None, resolution: int | None = None,
                   num_classes: int = 1000) -> Graph:
    """The graph of one training step of torchvision's ``arch`` (``weights=None``), traced at
    ``batch`` images of ``resolution`` x ``resolution`` (defaults: :data:`TRAINING_MODELS`)."""
    torch = _torch()
    try:
        import torchvision
    except ImportError:
        raise missing_extra("tracing a torchvision network", "torchvision", "exports") from None
    batch, resolution = training_settings(arch, batch, resolution)
    if batch < 1 or resolution < 1:
        raise CpplanError(f"batch and resolution must be >= 1, got {batch}, {resolution}")
    try:
        model = torchvision.models.get_model(arch, weights=None, num_classes=num_classes)
    except ValueError as e:
        raise CpplanError(f"unknown torchvision network {arch!r}: {e}") from None
    images = torch.zeros(batch, 3, resolution, resolution)
    labels = torch.zeros(batch, dtype=torch.int64)
    gm, constants = trace_training_step(model, images, labels)
    return graph_from_fx(gm, constants=constants,
                         name=f"{arch}-train-b{batch}-{resolution}")


def training_problem(arch: str, *, batch: int | None = None, resolution: int | None = None,
                     num_classes: int = 1000, alignment: int = 1,
                     command: str | None = None) -> Problem:
    """The problem of one training step of torchvision's ``arch`` (see :func:`training_graph`):
    one pool ``arena`` holding the activations, the gradients and the step's inputs (alive
    until their last use); no aliases (views are folded into their bases), so it can be
    written as MiniMalloc CSV."""
    torch = _torch()
    import torchvision

    batch, resolution = training_settings(arch, batch, resolution)
    graph = training_graph(arch, batch=batch, resolution=resolution, num_classes=num_classes)
    source = {"model": f"torchvision.models.get_model({arch!r}, weights=None, "
                       f"num_classes={num_classes})",
              "step": "forward, cross_entropy, torch.autograd.grad over every parameter; "
                      "make_fx(tracing_mode='fake')",
              "torch_version": torch.__version__, "torchvision_version": torchvision.__version__}
    command = command or (f"cpplan.graph.fx.training_problem({arch!r}, batch={batch}, "
                          f"resolution={resolution}, num_classes={num_classes}, "
                          f"alignment={alignment})")
    return to_problem(graph, inputs_in_arena=True, alignment=alignment, source=source,
                      command=command)

