"""Real PyTorch programs to plan, made on the spot with no download: torchvision's models with
random weights, and transformers built from a configuration (``transformers``): a BERT encoder
and a Llama-style decoder with a static KV cache.

Random weights are fine for memory planning (shapes decide everything), but not for comparing
outputs: a freshly built network in eval mode has batch-norm running statistics of 0 and 1, and
its outputs come out near 1e-15, where any two programs agree. :func:`torchvision_model` fills
the running statistics from a few random batches in train mode first, so that outputs are of
order one and a wrong plan shows. Used by the tests, ``benchmarks/executorch.py`` and the
notebook ``04-executorch``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["torchvision_model", "transformer_model", "llama_decoder", "export"]


def torchvision_model(name: str, size: int = 224, *, seed: int = 0,
                      batches: int = 3) -> tuple[Any, tuple[Any, ...]]:
    """``(model in eval mode, example inputs)`` for torchvision's ``name`` (``weights=None``)
    at ``size`` x ``size`` pixels, batch 1, with batch-norm statistics from ``batches`` random
    batches of 2."""
    import torch
    import torchvision

    torch.manual_seed(seed)
    model = torchvision.models.get_model(name, weights=None)
    if any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        model.train()
        with torch.no_grad():
            for _ in range(batches):
                model(torch.randn(2, 3, size, size))
    model.eval()
    return model, (torch.randn(1, 3, size, size),)


def transformer_model(*, layers: int = 2, hidden: int = 64, heads: int = 4, tokens: int = 16,
                      vocab: int = 256, seed: int = 0) -> tuple[Any, tuple[Any, ...]]:
    """``(model, example inputs)``: a small BERT encoder built from a configuration (random
    weights, nothing downloaded), returning its last hidden state for ``tokens`` token ids."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    # (attn_implementation goes through PretrainedConfig's **kwargs, which the typed signature
    # of BertConfig in transformers 5 leaves out)
    config = BertConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,  # type: ignore[call-arg]
                        num_attention_heads=heads, intermediate_size=4 * hidden,
                        max_position_embeddings=max(64, tokens), attn_implementation="eager")
    bert = BertModel(config).eval()

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.bert(input_ids=ids).last_hidden_state

    ids = torch.randint(0, vocab, (1, tokens), generator=torch.Generator().manual_seed(seed))
    return LastHidden().eval(), (ids,)


def export(model: Any, inputs: tuple[Any, ...], *, strict: bool = False) -> Any:
    """``torch.export.export`` of ``model`` on ``inputs`` (an ExportedProgram); ``strict``
    traces with TorchDynamo (what :func:`llama_decoder` needs)."""
    import torch

    with torch.no_grad():
        return torch.export.export(model, inputs, strict=strict)


def llama_decoder(*, layers: int = 24, hidden: int = 64, heads: int = 4, kv_heads: int = 2,
                  intermediate: int | None = None, tokens: int = 8, max_cache_len: int = 64,
                  vocab: int = 512, seed: int = 0) -> tuple[Any, tuple[Any, ...]]:
    """``(model, example inputs)``: a Llama-style decoder built from ``transformers``'
    ``LlamaConfig`` (random weights, nothing downloaded; grouped-query attention with
    ``kv_heads``, RMSNorm, rotary embeddings, SwiGLU) with a static KV cache of
    ``max_cache_len`` positions (``transformers.integrations.executorch``'s
    ``TorchExportableModuleWithStaticCache``: the cache is the program's mutable state). The
    model takes ``(input_ids, cache_position)`` for ``tokens`` tokens and returns the logits.
    Export it with :func:`export` and ``strict=True`` (the non-strict export of the cache does
    not lower). 24 layers give a memory-planning problem of about 2000 tensors."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,  # type: ignore[call-arg]
                         num_attention_heads=heads, num_key_value_heads=kv_heads,
                         intermediate_size=intermediate or 8 * hidden // 3 + 2,
                         max_position_embeddings=max(256, max_cache_len),
                         attn_implementation="sdpa")
    llama = LlamaForCausalLM(config).eval()
    llama.generation_config = GenerationConfig(
        use_cache=True, cache_implementation="static",
        cache_config={"batch_size": 1, "max_cache_len": max_cache_len})
    cached = TorchExportableModuleWithStaticCache(llama, batch_size=1,
                                                  max_cache_len=max_cache_len)

    class Decoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cached = cached

        def forward(self, input_ids: torch.Tensor, cache_position: torch.Tensor
                    ) -> torch.Tensor:
            return self.cached(input_ids=input_ids, cache_position=cache_position)

    ids = torch.randint(0, vocab, (1, tokens), generator=torch.Generator().manual_seed(seed))
    return Decoder().eval(), (ids, torch.arange(tokens))
