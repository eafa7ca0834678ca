"""Hand-built networks in the graph IR: a small UNet, a GPT-2 block, and a long chain with skip
connections (for the liveness benchmark).

Shapes and operator sequences follow the published architectures (Ronneberger et al. 2015 for
the UNet; the GPT-2 block of Radford et al. 2019 as written in Hugging Face's ``GPT2Block``);
only the memory-relevant facts are modelled: tensor shapes and dtypes, which operators can run in
place, which are views, which concatenate, and the scratch workspaces of convolutions (im2col)
and of attention (the softmax's row statistics).
"""

from __future__ import annotations

from typing import Any

from .ir import Graph, element_bytes

__all__ = ["unet", "gpt2_block", "chain_with_skips"]


def unet(levels: int = 3, base: int = 16, size: int = 64, channels: int = 3, classes: int = 2,
         dtype: str = "float32") -> Graph:
    """A UNet with ``levels`` down/up levels, ``base`` channels at the top, batch 1, square
    ``size`` x ``size`` images. Convolutions are 3x3 with an im2col workspace; ReLUs run in place;
    the decoder concatenates the upsampled tensor with the encoder's skip along channels (the
    outermost non-unit axis at batch 1, so the concat can be written without copies)."""
    g = Graph(f"unet{levels}x{base}")
    eb = element_bytes(dtype)
    x = g.add_input("image", (1, channels, size, size), dtype)
    n = 0

    def conv(t: str, cout: int, k: int = 3) -> str:
        nonlocal n
        _, cin, h, w = g.tensors[t].shape
        w_ = g.add_constant(f"w{n}", (cout, cin, k, k), dtype)
        out = f"conv{n}"
        ws = (cin * k * k * h * w * eb,) if k > 1 else ()
        g.add_operator("Conv", [t, w_], [(out, (1, cout, h, w), dtype)], name=out, workspace=ws)
        n += 1
        r = f"relu{n - 1}"
        g.add_operator("Relu", [out], [(r, (1, cout, h, w), dtype)], name=r, inplace=(0,))
        return r

    skips = []
    t, c, s = x, base, size
    for lv in range(levels):
        t = conv(conv(t, c), c)
        skips.append(t)
        s //= 2
        p = f"pool{lv}"
        g.add_operator("MaxPool", [t], [(p, (1, c, s, s), dtype)], name=p)
        t, c = p, c * 2
    t = conv(conv(t, c), c)
    for lv in reversed(range(levels)):
        c //= 2
        s *= 2
        w_ = g.add_constant(f"up_w{lv}", (c * 2, c, 2, 2), dtype)
        up = f"up{lv}"
        g.add_operator("ConvTranspose", [t, w_], [(up, (1, c, s, s), dtype)], name=up)
        cat = f"cat{lv}"
        g.add_operator("Concat", [skips[lv], up], [(cat, (1, 2 * c, s, s), dtype)], name=cat,
                       concat_axis=1)
        t = conv(conv(cat, c), c)
    w_ = g.add_constant("head_w", (classes, c, 1, 1), dtype)
    g.add_operator("Conv", [t, w_], [("logits", (1, classes, size, size), dtype)], name="head")
    g.mark_output("logits")
    return g


def gpt2_block(seq: int = 128, past: int = 128, d_model: int = 768, heads: int = 12,
               dtype: str = "float16") -> Graph:
    """One GPT-2 decoder block with a key/value cache, batch 1 (GPT-2 small sizes by default).

    Residual adds, the attention scale, the mask and GELU run in place; head reshapes are views;
    the cache concat along the sequence axis keeps its copy (heads come first, so the slices are
    strided), while stacking the new key and value into ``present`` is contiguous (outermost
    axis) and is written without copies. Softmax and layer norms declare row-statistics
    workspaces."""
    g = Graph(f"gpt2-block-s{seq}-p{past}")
    dh = d_model // heads
    total = past + seq

    def op(kind: str, ins: list[str], out: str, shape: tuple[int, ...], **kw: Any) -> str:
        g.add_operator(kind, ins, [(out, shape, dtype)], name=out, **kw)
        return out

    def const(name: str, shape: tuple[int, ...]) -> str:
        return g.add_constant(name, shape, dtype)

    x = g.add_input("hidden", (1, seq, d_model), dtype)
    pk = g.add_input("past_key", (1, heads, past, dh), dtype)
    pv = g.add_input("past_value", (1, heads, past, dh), dtype)
    mask = g.add_input("attention_mask", (1, 1, seq, total), dtype)
    row_stats = (2 * seq * 4,)  # mean and variance (or max and sum) per row, in float32

    ln1 = op("LayerNorm", [x, const("ln1_g", (d_model,)), const("ln1_b", (d_model,))], "ln1",
             (1, seq, d_model), workspace=row_stats)
    qkv = op("Gemm", [ln1, const("c_attn_w", (d_model, 3 * d_model)),
                      const("c_attn_b", (3 * d_model,))], "qkv", (1, seq, 3 * d_model))
    g.add_operator("Split", [qkv], [(n, (1, seq, d_model), dtype) for n in ("q", "k", "v")],
                   name="split")
    heads_of = {}
    for n in ("q", "k", "v"):
        r = op("Reshape", [n], f"{n}_heads", (1, seq, heads, dh), view=True)
        heads_of[n] = op("Transpose", [r], f"{n}_t", (1, heads, seq, dh))
    kc = op("Concat", [pk, heads_of["k"]], "key", (1, heads, total, dh), concat_axis=2)
    vc = op("Concat", [pv, heads_of["v"]], "value", (1, heads, total, dh), concat_axis=2)
    ku = op("Unsqueeze", [kc], "key_u", (1, 1, heads, total, dh), view=True)
    vu = op("Unsqueeze", [vc], "value_u", (1, 1, heads, total, dh), view=True)
    op("Concat", [ku, vu], "present", (2, 1, heads, total, dh), concat_axis=0)
    kt = op("Transpose", [kc], "key_t", (1, heads, dh, total))
    sc = op("MatMul", [heads_of["q"], kt], "scores", (1, heads, seq, total))
    sc = op("Mul", [sc, const("inv_sqrt_dh", ())], "scaled", (1, heads, seq, total), inplace=(0,))
    sc = op("Add", [sc, mask], "masked", (1, heads, seq, total), inplace=(0,))
    pr = op("Softmax", [sc], "probs", (1, heads, seq, total),
            workspace=(2 * heads * seq * 4,))
    ctx = op("MatMul", [pr, vc], "context", (1, heads, seq, dh))
    ctx = op("Transpose", [ctx], "context_t", (1, seq, heads, dh))
    ctx = op("Reshape", [ctx], "context_merged", (1, seq, d_model), view=True)
    att = op("Gemm", [ctx, const("c_proj_w", (d_model, d_model)), const("c_proj_b", (d_model,))],
             "attn_out", (1, seq, d_model))
    h = op("Add", [att, x], "residual1", (1, seq, d_model), inplace=(0, 1))
    ln2 = op("LayerNorm", [h, const("ln2_g", (d_model,)), const("ln2_b", (d_model,))], "ln2",
             (1, seq, d_model), workspace=row_stats)
    fc = op("Gemm", [ln2, const("c_fc_w", (d_model, 4 * d_model)),
                     const("c_fc_b", (4 * d_model,))], "fc", (1, seq, 4 * d_model))
    act = op("Gelu", [fc], "gelu", (1, seq, 4 * d_model), inplace=(0,))
    mlp = op("Gemm", [act, const("mlp_proj_w", (4 * d_model, d_model)),
                      const("mlp_proj_b", (d_model,))], "mlp_out", (1, seq, d_model))
    op("Add", [mlp, h], "output", (1, seq, d_model), inplace=(0, 1))
    g.mark_output("output", "present")
    return g


def chain_with_skips(n: int, skip: int = 8, width: int = 4096, dtype: str = "float32") -> Graph:
    """``n`` operators in a chain; every ``skip``-th operator also reads the tensor made
    ``skip`` steps earlier (a residual connection). Sizes vary a little so buffers differ."""
    g = Graph(f"chain{n}-skip{skip}")
    prev = g.add_input("x", (width,), dtype)
    made = [prev]
    for i in range(n):
        ins = [prev]
        if skip and i % skip == skip - 1 and len(made) > skip:
            ins.append(made[-skip])
        out = f"t{i}"
        g.add_operator("Add" if len(ins) > 1 else "Op", ins,
                       [(out, (width + 64 * (i % 7),), dtype)], name=f"op{i}",
                       inplace=(0,) if len(ins) == 1 else ())
        made.append(out)
        prev = out
    g.mark_output(prev)
    return g
