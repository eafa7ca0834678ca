"""Real ONNX exports the project makes itself: ``python -m cpplan.graph.exports [DIR]``.

``python -m cpplan.graph.exports DIR NAME...`` makes only the models named.

Builds networks with torchvision and transformers from configs (nothing is downloaded): small
ones, and Whisper-tiny's encoder at its real size,
exports each with both of torch's exporters (``dynamo`` and the older ``torchscript`` one) where
they succeed, quantises two (static QDQ and dynamic, with onnxruntime's tools), saves one as
ONNX Runtime optimises it (contrib operators), and keeps one with dynamic axes. Then writes
**graph-only** files into ``DIR`` (default ``tests/data/onnx``): every initializer above 1 KiB
points at ``<name>.onnx.data``, as real exports do, and that file is not written, so the tests
see real exports whose weights are absent.

Needs ``pip install 'cpplan[exports]'`` (torch, torchvision, transformers, onnxscript,
onnxruntime); :data:`MODELS` (names and input shapes) needs nothing. :func:`build` writes the
models with their weights, for the ONNX Runtime benchmark (``benchmarks/onnx_runtime.py``).
A model an exporter cannot handle is skipped with a line saying why.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import onnx
    import torch

__all__ = ["Export", "MODELS", "build", "graph_only", "main"]

EXPORTERS = ("dynamo", "torchscript")
_EXTERNAL_ABOVE = 1024  # bytes: torch's own threshold for external data


@dataclass(frozen=True)
class Export:
    """One file of the suite: ``name`` (file stem), the network it comes from (``arch``),
    how it was made (``exporter``: dynamo, torchscript; ``variant``: plain, qdq, int8,
    ort-extended, dynamic), the graph inputs' shapes and dtypes, and the ``dims`` a user must
    give (dynamic axes)."""

    name: str
    arch: str
    exporter: str
    variant: str
    inputs: dict[str, tuple[tuple[int, ...], str]]
    dims: dict[str, int] = field(default_factory=dict)


# arch -> (inputs, family)
_ARCHS: dict[str, dict[str, tuple[tuple[int, ...], str]]] = {
    "resnet18": {"x": ((1, 3, 64, 64), "float32")},
    "mobilenet_v3_small": {"x": ((1, 3, 64, 64), "float32")},
    "squeezenet1_1": {"x": ((1, 3, 64, 64), "float32")},
    "shufflenet_v2_x0_5": {"x": ((1, 3, 64, 64), "float32")},
    "densenet121": {"x": ((1, 3, 64, 64), "float32")},
    "vit": {"x": ((1, 3, 32, 32), "float32")},
    "swin": {"x": ((1, 3, 64, 64), "float32")},
    "bert": {"input_ids": ((1, 32), "int64"), "attention_mask": ((1, 32), "int64")},
    "gpt2": {"input_ids": ((1, 32), "int64")},
    "whisper-encoder": {"input_features": ((1, 16, 100), "float32")},
    # Whisper-tiny's encoder at its real size (random weights), on 30 s of audio
    "whisper-tiny-encoder": {"input_features": ((1, 80, 3000), "float32")},
    "lstm": {"x": ((1, 16, 32), "float32")},
}


def _suite() -> list[Export]:
    out = [Export(f"{arch}.{ex}", arch, ex, "plain", inputs)
           for arch, inputs in _ARCHS.items() for ex in EXPORTERS]
    bert = _ARCHS["bert"]
    out += [
        Export("bert-dynamic.dynamo", "bert", "dynamo", "dynamic", bert),
        Export("bert-dynamic.torchscript", "bert", "torchscript", "dynamic", bert,
               {"batch": 1, "sequence": 32}),
        Export("resnet18-qdq.torchscript", "resnet18", "torchscript", "qdq",
               _ARCHS["resnet18"]),
        Export("bert-int8.torchscript", "bert", "torchscript", "int8", bert),
        Export("bert-ort-extended.torchscript", "bert", "torchscript", "ort-extended", bert),
        Export("resnet18-ort-extended.dynamo", "resnet18", "dynamo", "ort-extended",
               _ARCHS["resnet18"]),
    ]
    return out


MODELS: tuple[Export, ...] = tuple(_suite())


def _network(arch: str) -> torch.nn.Module:
    """The torch module of ``arch``, small, in eval mode, with seeded random weights."""
    import torch

    torch.manual_seed(0)
    if arch in ("resnet18", "mobilenet_v3_small", "squeezenet1_1", "shufflenet_v2_x0_5",
                "densenet121"):
        import torchvision

        return getattr(torchvision.models, arch)(weights=None, num_classes=10).eval()
    if arch == "vit":
        from torchvision.models.vision_transformer import VisionTransformer

        return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                 hidden_dim=64, mlp_dim=128, num_classes=10).eval()
    if arch == "swin":
        from torchvision.models.swin_transformer import SwinTransformer

        return SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2],
                               num_heads=[2, 4], window_size=[4, 4], num_classes=10).eval()
    if arch == "bert":
        from transformers import BertConfig, BertModel

        bert = BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=128,
                          max_position_embeddings=128)
        return _outputs(BertModel(bert).eval(), "last_hidden_state")
    if arch == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        gpt2 = GPT2Config(vocab_size=1000, n_positions=128, n_embd=64, n_layer=2, n_head=2,
                          use_cache=False)
        return _outputs(GPT2LMHeadModel(gpt2).eval(), "logits")
    if arch == "whisper-encoder":
        from transformers import WhisperConfig
        from transformers.models.whisper.modeling_whisper import WhisperEncoder

        whisper = WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=2,
                                encoder_ffn_dim=128, num_mel_bins=16, max_source_positions=50)
        return _outputs(WhisperEncoder(whisper).eval(), "last_hidden_state")
    if arch == "whisper-tiny-encoder":
        from transformers import WhisperConfig
        from transformers.models.whisper.modeling_whisper import WhisperEncoder

        tiny = WhisperConfig(d_model=384, encoder_layers=4, encoder_attention_heads=6,
                             encoder_ffn_dim=1536, num_mel_bins=80, max_source_positions=1500)
        return _outputs(WhisperEncoder(tiny).eval(), "last_hidden_state")
    if arch == "lstm":
        return _lstm().eval()
    raise KeyError(arch)


def _outputs(model: torch.nn.Module, key: str) -> torch.nn.Module:
    """``model`` (transformers) as a module of positional inputs returning one tensor."""
    import torch

    class Outputs(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *args: torch.Tensor) -> Any:
            if not hasattr(self.model, "embeddings") and not hasattr(self.model, "transformer"):
                return getattr(self.model(args[0]), key)  # whisper's encoder: one input
            names = ("input_ids", "attention_mask")
            return getattr(self.model(**dict(zip(names, args, strict=False))), key)

    return Outputs().eval()


def _lstm() -> torch.nn.Module:
    """A two-layer LSTM over a sequence, then a linear head."""
    import torch

    class Lstm(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = torch.nn.LSTM(32, 64, num_layers=2, batch_first=True)
            self.head = torch.nn.Linear(64, 10)

        def forward(self, x: torch.Tensor) -> Any:
            y, _ = self.lstm(x)
            return self.head(y)

    return Lstm()


def _example(e: Export) -> tuple[torch.Tensor, ...]:
    import torch

    out = []
    for shape, dtype in e.inputs.values():
        if dtype == "int64":
            out.append(torch.ones(shape, dtype=torch.int64))
        else:
            out.append(torch.randn(shape, generator=torch.Generator().manual_seed(1)))
    return tuple(out)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Standard output silenced at the file descriptor (torch prints from C++ too)."""
    sys.stdout.flush()
    saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _export(e: Export, path: Path) -> None:
    """Export ``e`` with its weights to ``path`` (+ ``path.data`` for dynamo)."""
    import warnings

    import torch

    dynamic = e.variant == "dynamic"
    # a dynamic axis needs an example of size >= 2, or torch.export specialises it
    inputs = ({n: ((2, *s[1:]), d) for n, (s, d) in e.inputs.items()} if dynamic
              else e.inputs)
    net, args = _network(e.arch), _example(Export(e.name, e.arch, e.exporter, "plain", inputs))
    names = list(e.inputs)
    # the exporters print progress, and the TorchScript one its whole graph when it fails
    with warnings.catch_warnings(), _quiet():
        warnings.simplefilter("ignore")
        if e.exporter == "dynamo":
            shapes = None
            if dynamic:
                auto = torch.export.Dim.DYNAMIC  # torch names them (s0, s1...) as users see
                shapes = (tuple({0: auto, 1: auto} for _ in names),)  # forward(*args)
            torch.onnx.export(net, args, str(path), dynamo=True, input_names=names,
                              dynamic_shapes=shapes, external_data=True, verbose=False)
        else:
            axes = ({n: {0: "batch", 1: "sequence"} for n in names} if dynamic else None)
            torch.onnx.export(net, args, str(path), dynamo=False, input_names=names,
                              output_names=["output"], dynamic_axes=axes, opset_version=17)


def _quantise(e: Export, src: Path, dst: Path) -> None:
    import numpy as np
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        quantize_dynamic,
        quantize_static,
    )

    if e.variant == "int8":
        quantize_dynamic(str(src), str(dst))
        return

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            rng = np.random.default_rng(0)
            self.feeds = iter([{n: rng.standard_normal(s).astype(np.float32)
                                for n, (s, _) in e.inputs.items()} for _ in range(4)])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.feeds, None)

    quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ)


def _ort_optimise(src: Path, dst: Path) -> None:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = str(dst)
    so.add_session_config_entry("session.optimized_model_external_initializers_file_name",
                                dst.name + ".data")
    ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])


def build(e: Export, folder: Path) -> Path:
    """Write ``e`` with its weights into ``folder``; returns the model's path. Raises whatever
    the exporter or tool raises when it cannot handle the model."""
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"{e.name}.onnx"
    if e.variant in ("plain", "dynamic"):
        _export(e, final)
        return final
    plain = folder / f"{e.name}.base.onnx"
    _export(e, plain)
    if e.variant in ("qdq", "int8"):
        _quantise(e, plain, final)
    elif e.variant == "ort-extended":
        _ort_optimise(plain, final)
    else:
        raise KeyError(e.variant)
    return final


def graph_only(model: onnx.ModelProto, data_name: str) -> onnx.ModelProto:
    """``model`` (an onnx ModelProto, changed in place) with every initializer above 1 KiB
    pointing at ``data_name`` (offsets as if the file were written) and holding no data."""
    import onnx

    # the exporters' per-node stack traces and notes hold no shape: leave them out
    del model.metadata_props[:]
    for n in model.graph.node:
        n.doc_string = ""
        del n.metadata_props[:]
    offset = 0
    for t in model.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            size = int(next((kv.value for kv in t.external_data if kv.key == "length"), 0))
        else:
            if t.ByteSize() <= _EXTERNAL_ABOVE:
                continue
            size = len(onnx.numpy_helper.to_array(t).tobytes())
        for f in ("raw_data", "float_data", "int32_data", "int64_data", "double_data",
                  "uint64_data", "string_data"):
            t.ClearField(f)
        del t.external_data[:]
        t.data_location = onnx.TensorProto.EXTERNAL
        for k, v in (("location", data_name), ("offset", str(offset)), ("length", str(size))):
            entry = t.external_data.add()
            entry.key, entry.value = k, v
        offset += (size + 4095) // 4096 * 4096
    return model


def generate(out: Path, log: Callable[[str], None] = print,
             names: Collection[str] = ()) -> Iterator[tuple[Export, Path]]:
    """Build every model of :data:`MODELS` (or those in ``names``) and write its graph-only
    file into ``out``."""
    import onnx

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for e in MODELS:
            if names and e.name not in names:
                continue
            try:
                full = build(e, Path(tmp) / e.name)
            except Exception as err:  # an exporter's limit: say so and go on
                first = (str(err).strip().splitlines() or [type(err).__name__])[0][:160]
                log(f"{e.name}: skipped ({type(err).__name__}: {first})")
                continue
            model = onnx.load(str(full), load_external_data=True)
            target = out / f"{e.name}.onnx"
            target.write_bytes(graph_only(model, target.name + ".data").SerializeToString())
            log(f"{target}: {len(model.graph.node)} nodes, {target.stat().st_size} bytes "
                "(graph only)")
            yield e, target


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else Path("tests") / "data" / "onnx"
    for _ in generate(out, names=args[1:]):
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
