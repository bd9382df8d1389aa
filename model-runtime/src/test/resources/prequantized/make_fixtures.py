#!/usr/bin/env python3
"""Reference fixtures for loading pre-quantized GPTQ / AWQ checkpoints.

Every packing and unpacking step below is a numpy transliteration of the
ORIGINAL projects' code (never of radixserve's Java), so that the Java
repacker into ONNX Runtime MatMulNBits can be checked against the upstream
definitions.  Each function names the repository, file and function it follows.

Upstream snapshots read (HEAD of each stored GitHub snapshot):
  AutoGPTQ/AutoGPTQ        9f7d37072917ab3a7545835f23e808294a542153
      auto_gptq/quantization/quantizer.py      Quantizer.find_params, quantize
      auto_gptq/quantization/gptq.py           GPTQ.fasterquant (act-order g_idx)
      auto_gptq/nn_modules/qlinear/qlinear_cuda.py     QuantLinear.pack, forward
      auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py QuantLinear.forward
      (all four files last changed in 7c691ed3ec00fb83f75e35bd1b1d9c09114d818f)
  ModelCloud/GPTQModel     f4c327a17eb3e24524d5a97a3d682e3696ae6a28
      gptqmodel/nn_modules/qlinear/__init__.py  PackableQuantLinear.pack_original,
                                                dequantize_weight
      gptqmodel/utils/model.py                  convert_gptq_v1_to_v2_format_module,
                                                convert_gptq_v2_to_v1_format_module
  casper-hansen/AutoAWQ    88e4c76b20755db275574e6a03c83c84ba3bece5
      awq/quantize/quantizer.py     AwqQuantizer.pseudo_quantize_tensor, _apply_quant
      awq/modules/linear/gemm.py    WQLinear_GEMM.from_linear
      awq/utils/packing_utils.py    unpack_awq, reverse_awq_order, dequantize_gemm

The weights are quantized with plain round-to-nearest per group (no GPTQ error
compensation, no AWQ activation-aware scaling or clipping): we test the
storage format, not the quantization algorithms.  GPTQ cases use AutoGPTQ's
Quantizer.find_params rules (float32); AWQ cases use AutoAWQ's
pseudo_quantize_tensor rules evaluated in float16, as AutoAWQ casts the layer to
half before quantizing.

How to run (offline is fine, torch is not needed):
    pip install numpy safetensors
    python3 make_fixtures.py
It rewrites the *.safetensors files next to this script; the output is
byte-identical from run to run (fixed seeds, sorted header), and the script
asserts, for every case, that the
upstream unpack logic applied to qweight/qzeros gives back `codes`/`zeros`,
that `dequantized` is the upstream formula, and that it lies within half a
scale step of `weight`.

Tensors in every file (all little-endian):
  qweight, qzeros  int32, exactly as the upstream checkpoint stores them
  scales           float16 [G, N]
  g_idx            int32 [K]                  (GPTQ only)
  codes            int32 [N, K]  integer weight code of output n, input k
  zeros            int32 [G, N]  TRUE zero point (v1's -1 undone)
  dequantized      float32 [N, K] float32(scale) * (float32(q) - float32(zero))
  weight           float32 [N, K] the float weight that was quantized
"""

import json
import os
import struct

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file

HERE = os.path.dirname(os.path.abspath(__file__))

UPSTREAM = {
    "autogptq": "AutoGPTQ/AutoGPTQ@9f7d37072917ab3a7545835f23e808294a542153",
    "gptqmodel": "ModelCloud/GPTQModel@f4c327a17eb3e24524d5a97a3d682e3696ae6a28",
    "autoawq": "casper-hansen/AutoAWQ@88e4c76b20755db275574e6a03c83c84ba3bece5",
}


# ---------------------------------------------------------------------------
# Float weights
# ---------------------------------------------------------------------------

def make_weight(seed, n, k, group_size, zero_targets=None):
    """Random [N, K] weight, rounded to float16 values (HF checkpoints are
    fp16/bf16), with two outlier output rows and two outlier input columns.

    zero_targets: optional list; row r (r < len) of group 0 is rebuilt so that
    the min/max rule gives zero point zero_targets[r] exactly, so that every
    nibble value appears in qzeros.  For t = 0 the group is all >= 0 and for
    t = maxq all <= 0 (both rules then give exactly 0 / maxq)."""
    rng = np.random.default_rng(seed)
    w = rng.normal(0.0, 0.02, size=(n, k)).astype(np.float32)
    w[[3, n // 2 + 1], :] *= 8.0          # outlier output channels
    w[:, [5, k - 11]] *= 6.0              # outlier input channels
    if zero_targets is not None:
        maxq = 15
        for r, t in enumerate(zero_targets):
            u = rng.uniform(0.0, 1.0, size=group_size)
            u[np.argmin(u)] = 0.0
            u[np.argmax(u)] = 1.0
            rng_ = 0.03 + 0.01 * r
            w[r, :group_size] = rng_ * (u - t / maxq)
    return w.astype(np.float16).astype(np.float32)


# ---------------------------------------------------------------------------
# GPTQ quantization (AutoGPTQ)
# ---------------------------------------------------------------------------

def gptq_find_params(x, bits, sym):
    """AutoGPTQ auto_gptq/quantization/quantizer.py Quantizer.find_params with
    perchannel=True, weight=True, mse=False (AutoGPTQ's defaults for weights).
    x: float32 [rows, cols]; returns scale, zero float32 [rows]."""
    maxq = np.float32(2 ** bits - 1)
    tmp = np.zeros(x.shape[0], dtype=np.float32)
    xmin = np.minimum(x.min(1), tmp)          # xmin = min(x.min(1), 0)
    xmax = np.maximum(x.max(1), tmp)          # xmax = max(x.max(1), 0)
    if sym:
        xmax = np.maximum(np.abs(xmin), xmax)
        neg = xmin < 0
        xmin[neg] = -xmax[neg]
    both0 = (xmin == 0) & (xmax == 0)
    xmin[both0] = -1
    xmax[both0] = +1
    scale = ((xmax - xmin) / maxq).astype(np.float32)
    if sym:
        zero = np.full_like(scale, (maxq + 1) / 2)       # (maxq + 1) / 2
    else:
        zero = np.round(-xmin / scale).astype(np.float32)  # no clamp upstream:
        # 0 <= -xmin/scale <= maxq holds because xmin <= 0 <= xmax.
    return scale, zero


def gptq_quantize_codes(x, scale, zero, maxq):
    """auto_gptq/quantization/quantizer.py quantize():
    q = clamp(round(x / scale) + zero, 0, maxq); upstream returns
    scale * (q - zero) (the fake-quantized value), we keep q as well.
    np.round and torch.round both round half to even."""
    q = np.clip(np.round(x / scale) + zero, 0, maxq).astype(np.float32)
    return q, (scale * (q - zero)).astype(np.float32)


def gptq_rtn_fasterquant(W, bits, group_size, sym, actorder=False, hdiag=None):
    """AutoGPTQ auto_gptq/quantization/gptq.py GPTQ.fasterquant with
    static_groups=False, minus the Hessian error feedback (W1[:, i:] -= ...),
    i.e. plain RTN per group, keeping its column order, group bookkeeping and
    g_idx construction.  W: float32 [N, K].
    Returns Q (fake-quantized, [N, K]), scale [N, G], zero [N, G], g_idx [K],
    codes [N, K] (float32 integers)."""
    n, k = W.shape
    maxq = 2 ** bits - 1
    W = W.astype(np.float32).copy()
    perm = invperm = None
    if actorder:
        # perm = torch.argsort(torch.diag(H), descending=True)
        perm = np.argsort(-hdiag, kind="stable")
        W = W[:, perm]
        invperm = np.argsort(perm)           # torch.argsort(perm)
    Q = np.zeros_like(W)
    codes = np.zeros_like(W)
    scale, zero = [], []
    now_idx = 1
    s = z = None
    for i in range(k):
        w = W[:, i]
        if (i % group_size) == 0:
            s, z = gptq_find_params(W[:, i:i + group_size], bits, sym)
        if (i // group_size) - now_idx == -1:
            scale.append(s[:, None])
            zero.append(z[:, None])
            now_idx += 1
        q, fq = gptq_quantize_codes(w, s, z, maxq)
        codes[:, i] = q
        Q[:, i] = fq
    g_idx = np.array([i // group_size for i in range(k)], dtype=np.int32)
    if actorder:
        Q = Q[:, invperm]
        codes = codes[:, invperm]
        g_idx = g_idx[invperm]              # => g_idx[perm[i]] = i // group_size
    scale = np.concatenate(scale, axis=1)   # torch.cat(scale, dim=1): [N, G]
    zero = np.concatenate(zero, axis=1)
    return Q, scale, zero, g_idx, codes, perm


# ---------------------------------------------------------------------------
# GPTQ packing
# ---------------------------------------------------------------------------

def autogptq_pack_v1(Wlayer, scales, zeros, g_idx, bits):
    """AutoGPTQ auto_gptq/nn_modules/qlinear/qlinear_cuda.py QuantLinear.pack
    (bits 2/4/8 branch; identical layout to qlinear_cuda_old.py pack, which
    uses idx // group_size instead of g_idx).
    Wlayer: the layer weight after fasterquant (= Q cast to the layer dtype,
    fp16), [N, K]; scales/zeros: [N, G] float32 as returned by fasterquant.
    Returns qweight int32 [K*bits/32, N], qzeros int32 [G, N*bits/32],
    scales fp16 [G, N], and the intweight [K, N] pack() recomputed."""
    K = Wlayer.shape[1]
    scales = scales.T.copy()                     # scales.t().contiguous()
    zeros = zeros.T.copy()
    scale_zeros = zeros * scales                 # float32
    scales16 = scales.astype(np.float16)         # .to(dtype=linear.weight.dtype)
    intweight = []
    for idx in range(K):
        g = g_idx[idx]
        # torch: fp16 W + fp32 scale_zeros -> fp32; / fp16 scales -> fp32
        intweight.append(
            np.round((Wlayer[:, idx].astype(np.float32) + scale_zeros[g])
                     / scales16[g].astype(np.float32)).astype(np.int32)[:, None])
    intweight = np.concatenate(intweight, axis=1)
    intweight = intweight.T.copy()
    intweight_u = intweight.astype(np.uint32)
    # NB: no clamp here upstream; a code outside 0..maxq would spill into the
    # neighbouring field.  Our codes come from quantize() and are in range.

    i = 0
    row = 0
    qweight = np.zeros((intweight_u.shape[0] // 32 * bits, intweight_u.shape[1]), dtype=np.uint32)
    while row < qweight.shape[0]:
        assert bits in (2, 4, 8)
        for j in range(i, i + (32 // bits)):
            qweight[row] |= intweight_u[j] << np.uint32(bits * (j - i))
        i += 32 // bits
        row += 1
    qweight = qweight.astype(np.int32)   # same bits (uint32 -> int32 wraps)

    zeros = zeros - 1                    # zeros -= 1   (the v1 "-1")
    # zeros.numpy().astype(np.uint32): zero 0 becomes -1 -> 0xFFFFFFFF, which
    # ORed in below sets every bit from its field up to bit 31 and corrupts
    # the fields of the columns after it in the same word.  We therefore never
    # produce zero point 0 in v1 cases (asserted).
    assert (zeros >= 0).all(), "v1 pack with zero point 0 is corrupt upstream"
    zeros = zeros.astype(np.uint32)
    qzeros = np.zeros((zeros.shape[0], zeros.shape[1] // 32 * bits), dtype=np.uint32)
    i = 0
    col = 0
    while col < qzeros.shape[1]:
        for j in range(i, i + (32 // bits)):
            qzeros[:, col] |= zeros[:, j] << np.uint32(bits * (j - i))
        i += 32 // bits
        col += 1
    qzeros = qzeros.astype(np.int32)
    return qweight, qzeros, scales16, intweight


def gptqmodel_pack_v2(Wlayer, scales, zeros, g_idx, bits):
    """GPTQModel gptqmodel/nn_modules/qlinear/__init__.py
    PackableQuantLinear.pack_original (bits 2/4/8 branch, pack_dtype int32).
    This is GPTQModel's internal "v2" layout: zeros packed WITHOUT the -1.
    It is what a checkpoint with checkpoint_format/format "gptq_v2" stores
    (a "gptq" v1 export would then subtract 0x11111111 word-wise:
    gptqmodel/utils/model.py convert_gptq_v2_to_v1_format_module)."""
    maxq = 2 ** bits - 1
    pack_factor = 32 // bits
    scales = scales.T.copy()
    zeros = zeros.T.copy()
    scale_zeros = zeros * scales
    scales16 = scales.astype(np.float16)         # scales.to(dtype=t.float16)
    # int_weight = round((W + scale_zeros[g_idx].T) / scales[g_idx].T)
    # (here the fp32 scales, not the fp16 copy, are the divisor)
    int_weight = np.round((Wlayer.astype(np.float32) + scale_zeros[g_idx].T) / scales[g_idx].T)
    int_weight = np.clip(int_weight, 0, maxq)    # int_weight.clamp_(0, self.maxq)
    int_weight = int_weight.astype(np.int32).T.copy().astype(np.uint32)  # pack_np_math_dtype
    qweight = np.zeros((int(np.ceil(int_weight.shape[0] * bits / 32)), int_weight.shape[1]), dtype=np.uint32)
    for row in range(qweight.shape[0]):
        for j in range(pack_factor):
            qweight[row] |= int_weight[row * pack_factor + j] << np.uint32(bits * j)
    qweight = qweight.astype(np.int32)
    zeros = zeros.astype(np.uint32)
    qzeros = np.zeros((zeros.shape[0], int(np.ceil(zeros.shape[1] * bits / 32))), dtype=np.uint32)
    for col in range(qzeros.shape[1]):
        for j in range(pack_factor):
            qzeros[:, col] |= zeros[:, col * pack_factor + j] << np.uint32(bits * j)
    qzeros = qzeros.astype(np.int32)
    return qweight, qzeros, scales16, int_weight.astype(np.int32)


# ---------------------------------------------------------------------------
# GPTQ unpacking / dequantization
# ---------------------------------------------------------------------------

def _torch_cast(a, bits):
    """`.to(torch.int16 if self.bits == 8 else torch.int8)`: keep the low
    8/16 bits, two's complement (numpy astype wraps the same way)."""
    return a.astype(np.int16 if bits == 8 else np.int8)


def autogptq_unpack_v1(qweight, qzeros, scales16, bits):
    """AutoGPTQ qlinear_cuda.py QuantLinear.forward, torch fallback, bits 2/4/8.
    wf = [0, bits, 2*bits, ...]; torch.bitwise_right_shift on int32 is an
    arithmetic shift (sign-extending), the cast keeps the low bits, then
    & maxq.  Returns weight codes [K, N] and zeros [G, N] (after the +1)."""
    maxq = 2 ** bits - 1
    wf = np.arange(0, 32, bits, dtype=np.int32)[None, :]
    zeros = np.right_shift(qzeros[:, :, None], wf[None, :, :].reshape(1, 1, -1))
    zeros = _torch_cast(zeros, bits)
    zeros = np.bitwise_and(zeros, maxq)
    zeros = zeros + 1                                   # the v1 "+1"
    zeros = zeros.reshape(scales16.shape)
    weight = np.right_shift(qweight[:, None, :], wf.reshape(1, -1, 1))
    weight = _torch_cast(weight, bits)
    weight = np.bitwise_and(weight, maxq)
    weight = weight.reshape(weight.shape[0] * weight.shape[1], weight.shape[2])
    return weight.astype(np.int32), zeros.astype(np.int32)


def autogptq_unpack_v1_old(qweight, qzeros, scales16, bits, group_size):
    """AutoGPTQ qlinear_cuda_old.py QuantLinear.forward, torch fallback,
    bits 2/4/8: here the +1 comes BEFORE the mask (zeros + 1, then & maxq).
    It ignores g_idx (reshape(-1, group_size, N)), so it is only valid for
    desc_act=False.  Returns the dequantized [K, N] float32."""
    maxq = 2 ** bits - 1
    wf = np.arange(0, 32, bits, dtype=np.int32)
    zeros = _torch_cast(np.right_shift(qzeros[:, :, None], wf.reshape(1, 1, -1)), bits)
    zeros = zeros + 1
    zeros = np.bitwise_and(zeros, maxq)
    zeros = zeros.reshape(-1, 1, zeros.shape[1] * zeros.shape[2])
    scales = scales16.astype(np.float32).reshape(-1, 1, scales16.shape[-1])
    weight = _torch_cast(np.right_shift(qweight[:, None, :], wf.reshape(1, -1, 1)), bits)
    weight = np.bitwise_and(weight, maxq)
    weight = weight.reshape(-1, group_size, weight.shape[2])
    weight = scales * (weight.astype(np.float32) - zeros.astype(np.float32))
    return weight.reshape(weight.shape[0] * weight.shape[1], weight.shape[2])


def gptqmodel_unpack_v2(qweight, qzeros, scales16, bits):
    """GPTQModel gptqmodel/nn_modules/qlinear/__init__.py
    PackableQuantLinear.dequantize_weight (bits 2/4/8, non-planar): same
    shifts and masks as AutoGPTQ but NO +1 on the zeros (format v2)."""
    maxq = 2 ** bits - 1
    pack_factor = 32 // bits
    wf = np.arange(0, 32, bits, dtype=np.int32)[None, :]
    zeros = np.right_shift(np.broadcast_to(qzeros[:, :, None], qzeros.shape + (pack_factor,)),
                           wf[None, :, :].reshape(1, 1, -1))
    zeros = _torch_cast(zeros, bits)                    # .to(self.dequant_dtype)
    zeros = np.bitwise_and(zeros, maxq).reshape(scales16.shape)
    weight = np.bitwise_and(_torch_cast(np.right_shift(qweight[:, None, :], wf.reshape(1, -1, 1)), bits), maxq)
    weight = weight.reshape(weight.shape[0] * weight.shape[1], weight.shape[2])
    return weight.astype(np.int32), zeros.astype(np.int32)


def gptq_dequantize(weight_kn, zeros_gn, scales16, g_idx):
    """qlinear_cuda.py forward (num_itr == 1) and GPTQModel
    _dequantize_from_codes: weights = scales[g_idx] * (weight - zeros[g_idx]),
    evaluated in float32 instead of fp16.  Returns [K, N]."""
    s = scales16.astype(np.float32)[g_idx]
    return s * (weight_kn.astype(np.float32) - zeros_gn.astype(np.float32)[g_idx])


# ---------------------------------------------------------------------------
# AWQ (AutoAWQ, GEMM version)
# ---------------------------------------------------------------------------

AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]           # awq/utils/packing_utils.py
AWQ_REVERSE_ORDER = [0, 4, 1, 5, 2, 6, 3, 7]


def awq_pseudo_quantize(w32, bits, group_size):
    """AutoAWQ awq/quantize/quantizer.py AwqQuantizer.pseudo_quantize_tensor,
    zero_point=True, in float16 (AwqQuantizer._apply_quant does
    linear_layer.half() first).  numpy fp16 arithmetic rounds every op to fp16,
    as torch half ops do.  Returns fake-quantized w (fp16 [N, K]), scales and
    zeros [N, G] (fp16) and codes [N, K] (float32)."""
    org_shape = w32.shape
    w = w32.astype(np.float16).reshape(-1, group_size)
    max_val = w.max(axis=1, keepdims=True)
    min_val = w.min(axis=1, keepdims=True)
    max_int = 2 ** bits - 1
    min_int = 0
    scales = (np.maximum(max_val - min_val, np.float16(1e-5)) / np.float16(max_int)).astype(np.float16)
    zeros = np.clip(-np.round(min_val / scales), min_int, max_int).astype(np.float16)
    q = np.clip(np.round(w / scales) + zeros, min_int, max_int).astype(np.float16)
    wq = ((q - zeros) * scales).astype(np.float16)
    zeros = zeros.reshape(org_shape[0], -1)
    scales = scales.reshape(org_shape[0], -1)
    return wq.reshape(org_shape), scales, zeros, q.reshape(org_shape).astype(np.float32)


def awq_from_linear(wq16, scales, zeros, bits, group_size):
    """AutoAWQ awq/modules/linear/gemm.py WQLinear_GEMM.from_linear, after
    _apply_quant's scales.t() / zeros.t() (so scales, zeros: [G, N] fp16).
    Returns qweight int32 [K, N/8], qzeros int32 [G, N/8], scales fp16 [G, N]
    and the intweight [K, N] from_linear recomputed."""
    assert bits == 4, "Only 4-bit are supported for now."  # as upstream
    in_features = wq16.shape[1]
    scale_zeros = (zeros * scales).astype(np.float16)
    scales16 = scales.astype(np.float16)                   # scales.clone().half()
    pack_num = 32 // bits
    intweight = []
    for idx in range(in_features):
        intweight.append(
            np.round(((wq16[:, idx] + scale_zeros[idx // group_size]).astype(np.float16)
                      / scales16[idx // group_size]).astype(np.float16)).astype(np.int32)[:, None])
    intweight = np.concatenate(intweight, axis=1)
    intweight = intweight.T.copy().astype(np.int32)        # [K, N]
    # torch int32 `<<` wraps like uint32; compute in uint32 and reinterpret.
    iw = intweight.astype(np.uint32)
    qweight = np.zeros((iw.shape[0], iw.shape[1] // 32 * bits), dtype=np.uint32)
    for col in range(iw.shape[1] // pack_num):
        order_map = [0, 2, 4, 6, 1, 3, 5, 7]
        for i in range(pack_num):
            qweight_col = iw[:, col * pack_num + order_map[i]]
            qweight[:, col] |= qweight_col << np.uint32(i * bits)
    z = zeros.astype(np.int32).astype(np.uint32)           # zeros.to(torch.int32)
    qzeros = np.zeros((z.shape[0], z.shape[1] // 32 * bits), dtype=np.uint32)
    for col in range(z.shape[1] // pack_num):
        order_map = [0, 2, 4, 6, 1, 3, 5, 7]
        for i in range(pack_num):
            qzero_col = z[:, col * pack_num + order_map[i]]
            qzeros[:, col] |= qzero_col << np.uint32(i * bits)
    return qweight.view(np.int32), qzeros.view(np.int32), scales16, intweight


def unpack_awq(qweight, qzeros, bits):
    """awq/utils/packing_utils.py unpack_awq: shift by 0,4,..,28 (arithmetic on
    int32), .to(torch.int8), view [rows, N]."""
    shifts = np.arange(0, 32, bits, dtype=np.int32)
    iweights = np.right_shift(qweight[:, :, None], shifts[None, None, :]).astype(np.int8)
    iweights = iweights.reshape(iweights.shape[0], -1)
    izeros = np.right_shift(qzeros[:, :, None], shifts[None, None, :]).astype(np.int8)
    izeros = izeros.reshape(izeros.shape[0], -1)
    return iweights, izeros


def reverse_awq_order(iweights, izeros, bits):
    """awq/utils/packing_utils.py reverse_awq_order."""
    rev = np.arange(iweights.shape[-1], dtype=np.int32)
    rev = rev.reshape(-1, 32 // bits)
    rev = rev[:, AWQ_REVERSE_ORDER]
    rev = rev.reshape(-1)
    return iweights[:, rev], izeros[:, rev]


def dequantize_gemm_codes(qweight, qzeros, bits):
    """First half of awq/utils/packing_utils.py dequantize_gemm: unpack,
    reorder, `& (2**bits - 1)`.  Returns codes [K, N], zeros [G, N]."""
    iweight, izeros = unpack_awq(qweight, qzeros, bits)
    iweight, izeros = reverse_awq_order(iweight, izeros, bits)
    iweight = np.bitwise_and(iweight, (2 ** bits) - 1)
    izeros = np.bitwise_and(izeros, (2 ** bits) - 1)
    return iweight.astype(np.int32), izeros.astype(np.int32)


def dequantize_gemm(qweight, qzeros, scales16, bits, group_size):
    """awq/utils/packing_utils.py dequantize_gemm, in float32:
    (iweight - izeros.repeat_interleave(gs)) * scales.repeat_interleave(gs).
    Returns [K, N]."""
    iweight, izeros = dequantize_gemm_codes(qweight, qzeros, bits)
    scales = np.repeat(scales16.astype(np.float32), group_size, axis=0)
    izeros = np.repeat(izeros, group_size, axis=0)
    return (iweight.astype(np.float32) - izeros.astype(np.float32)) * scales


# ---------------------------------------------------------------------------
# Case builders
# ---------------------------------------------------------------------------

def build_gptq(name, seed, bits, group_size, sym, fmt, desc_act, note,
               k=128, n=32, zero_targets=None):
    maxq = 2 ** bits - 1
    W = make_weight(seed, n, k, group_size, zero_targets)
    hdiag = None
    if desc_act:
        # Synthetic calibration activations with very unequal channel
        # magnitudes; GPTQ.add_batch accumulates H = 2/nsamples * X^T X.
        rng = np.random.default_rng(seed + 1000)
        X = rng.normal(size=(256, k)) * np.exp(rng.normal(0.0, 1.0, size=k))
        hdiag = (2.0 / X.shape[0]) * np.einsum("ij,ij->j", X, X)
    Q, scale, zero, g_idx, codes_f, perm = gptq_rtn_fasterquant(
        W, bits, group_size, sym, actorder=desc_act, hdiag=hdiag)
    Wlayer = Q.astype(np.float16)    # layer.weight.data = Q.type_as(fp16 weight)

    if fmt == "gptq":
        qweight, qzeros, scales16, intweight = autogptq_pack_v1(Wlayer, scale, zero, g_idx, bits)
        wcodes, zcodes = autogptq_unpack_v1(qweight, qzeros, scales16, bits)
    else:
        qweight, qzeros, scales16, intweight = gptqmodel_pack_v2(Wlayer, scale, zero, g_idx, bits)
        wcodes, zcodes = gptqmodel_unpack_v2(qweight, qzeros, scales16, bits)

    codes = codes_f.astype(np.int32)                 # [N, K]
    zeros = zero.T.astype(np.int32)                  # [G, N], true zero points
    # pack()'s re-rounding of the fake-quantized layer weight recovers the codes
    assert np.array_equal(intweight, codes.T), name
    # upstream unpack gives back codes and true zeros
    assert np.array_equal(wcodes, codes.T), name
    assert np.array_equal(zcodes, zeros), name
    assert codes.min() >= 0 and codes.max() <= maxq

    deq_kn = gptq_dequantize(wcodes, zcodes, scales16, g_idx)
    if fmt == "gptq" and not desc_act:
        # qlinear_cuda_old.py's variant (+1 before the mask, no g_idx) agrees
        old = autogptq_unpack_v1_old(qweight, qzeros, scales16, bits, group_size)
        assert np.array_equal(old, deq_kn), name
    if fmt == "gptq":
        # GPTQModel's loader turns a v1 checkpoint into v2 by adding 0x11..1
        # (bits 4) / 0x01010101 (bits 8) word-wise
        # (gptqmodel/utils/model.py convert_gptq_v1_to_v2_format_module);
        # that must then decode with the v2 rule to the same zeros.
        add = {4: 0x11111111, 8: 0x01010101}[bits]
        q2 = (qzeros.astype(np.int64) + add).astype(np.uint32).view(np.int32)
        _, z2 = gptqmodel_unpack_v2(qweight, q2, scales16, bits)
        assert np.array_equal(z2, zeros), name
    dequantized = deq_kn.T.copy()                    # [N, K]

    s32 = scale[:, g_idx]                            # [N, K] float32 scales
    s16 = scales16.astype(np.float32).T[:, g_idx]
    qz = np.abs(codes - zeros.T[:, g_idx]).astype(np.float32)
    # |w - s32 (q - z)| <= s32/2 (RTN), plus the fp16 rounding of the scale
    bound = 0.5 * s32 * (1 + 1e-5) + np.abs(s16 - s32) * qz + 1e-7
    err = np.abs(W - dequantized)
    assert (err <= bound).all(), (name, float((err / s16).max()))

    if desc_act:
        sizes = np.bincount(g_idx, minlength=k // group_size)
        assert (sizes == group_size).all()
        assert (g_idx[perm] == np.arange(k) // group_size).all()
        assert not np.array_equal(g_idx, np.arange(k, dtype=np.int32) // group_size)
        # groups are not contiguous blocks
        assert any(len(set(g_idx[i:i + group_size])) > 1 for i in range(0, k, group_size))
    else:
        assert np.array_equal(g_idx, np.arange(k, dtype=np.int32) // group_size)

    tensors = {
        "qweight": qweight, "qzeros": qzeros, "scales": scales16, "g_idx": g_idx,
        "codes": codes, "zeros": zeros, "dequantized": dequantized, "weight": W,
    }
    meta = {
        "quant_method": "gptq", "bits": str(bits), "group_size": str(group_size),
        "checkpoint_format": fmt, "desc_act": "true" if desc_act else "false",
        "sym": "true" if sym else "false", "in_features": str(k), "out_features": str(n),
        "note": note,
    }
    return tensors, meta, float((err / s16).max())


def build_awq(name, seed, bits, group_size, note, k=128, n=32, zero_targets=None):
    W = make_weight(seed, n, k, group_size, zero_targets)
    wq16, scales_ng, zeros_ng, codes_f = awq_pseudo_quantize(W, bits, group_size)
    # _apply_quant (version == "gemm"): scales.t().contiguous(), zeros.t()
    scales_gn = scales_ng.T.copy()
    zeros_gn = zeros_ng.T.copy()
    qweight, qzeros, scales16, intweight = awq_from_linear(wq16, scales_gn, zeros_gn, bits, group_size)
    codes = codes_f.astype(np.int32)
    zeros = zeros_gn.astype(np.int32)
    assert np.array_equal(intweight, codes.T), name
    wcodes, zcodes = dequantize_gemm_codes(qweight, qzeros, bits)
    assert np.array_equal(wcodes, codes.T), name
    assert np.array_equal(zcodes, zeros), name
    deq_kn = dequantize_gemm(qweight, qzeros, scales16, bits, group_size)
    # the fp16 upstream result is our float32 value rounded to fp16
    assert np.array_equal(deq_kn.astype(np.float16), wq16.T), name
    dequantized = deq_kn.T.copy()
    s = scales16.astype(np.float32).T[:, np.arange(k) // group_size]
    err = np.abs(W - dequantized)
    # RTN bound s/2, plus the fp16 rounding of w/s (2^-11 relative) and of
    # the scale itself ((max-min)/15 in fp16) that AWQ computes in.
    bound = 0.5 * s + np.abs(W) * 2.0 ** -10 + s * 2.0 ** -5
    assert (err <= bound).all(), (name, float((err / s).max()))
    tensors = {
        "qweight": qweight, "qzeros": qzeros, "scales": scales16,
        "codes": codes, "zeros": zeros, "dequantized": dequantized, "weight": W,
    }
    meta = {
        "quant_method": "awq", "bits": str(bits), "group_size": str(group_size),
        "version": "gemm", "zero_point": "true", "desc_act": "false", "sym": "false",
        "in_features": str(k), "out_features": str(n), "note": note,
    }
    return tensors, meta, float((err / s).max())


_ST_DTYPE = {np.dtype("<i4"): "I32", np.dtype("<f2"): "F16", np.dtype("<f4"): "F32"}


def save_deterministic(tensors, path, meta):
    """Write a safetensors file byte-for-byte reproducibly.
    safetensors.numpy.save_file keeps __metadata__ in a hash map, so its key
    order (and so the file bytes) changes from run to run.  This writes the
    same format (u64 little-endian header length, JSON header padded with
    spaces to a multiple of 8, then the raw little-endian tensor bytes) with
    sorted keys; write() reads every file back with safetensors.load_file."""
    header = {"__metadata__": dict(sorted(meta.items()))}
    blobs = []
    offset = 0
    for key in sorted(tensors):
        a = np.ascontiguousarray(tensors[key])
        raw = a.tobytes()
        header[key] = {"dtype": _ST_DTYPE[a.dtype], "shape": list(a.shape),
                       "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * (-len(hjson) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for raw in blobs:
            f.write(raw)


def write(name, tensors, meta):
    le = {}
    for key, a in tensors.items():
        if key == "weight":
            continue  # checked against `dequantized` in the builders; not needed by the tests
        a = np.ascontiguousarray(a)
        le[key] = a.astype(a.dtype.newbyteorder("<"))
    path = os.path.join(HERE, name)
    save_deterministic(le, path, meta)
    # read back: same arrays, expected dtypes, little-endian, small file
    back = load_file(path)
    for key, a in le.items():
        assert back[key].dtype == a.dtype and np.array_equal(back[key], a), (name, key)
    with open(path, "rb") as f:
        hlen = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(hlen))
    want = {"qweight": "I32", "qzeros": "I32", "scales": "F16", "g_idx": "I32",
            "codes": "I32", "zeros": "I32", "dequantized": "F32", "weight": "F32"}
    for key in le:
        assert header[key]["dtype"] == want[key], (name, key)
    with safe_open(path, "np") as f:
        assert f.metadata() == meta, name
    return os.path.getsize(path)


def main():
    maxq4 = 15
    cases = []
    cases.append(("gptq_v1_int4_g32_asym.safetensors", build_gptq(
        "gptq_v1_int4_g32_asym", 1, 4, 32, sym=False, fmt="gptq", desc_act=False,
        note=("AutoGPTQ v1 asym: qzeros store zero-1; zero points are kept in 1..15 "
              "because AutoGPTQ's pack() corrupts the word for zero 0 (-1 cast to "
              "uint32 ORs ones into the higher fields). Rows 0..14 of group 0 use "
              "zeros 1..15."),
        zero_targets=list(range(1, maxq4 + 1)))))
    cases.append(("gptq_v1_int4_g32_sym.safetensors", build_gptq(
        "gptq_v1_int4_g32_sym", 2, 4, 32, sym=True, fmt="gptq", desc_act=False,
        note="AutoGPTQ v1 sym: every zero point is (maxq+1)/2 = 8, stored as 7 (qzeros words 0x77777777).")))
    cases.append(("gptq_v1_int8_g32_sym.safetensors", build_gptq(
        "gptq_v1_int8_g32_sym", 3, 8, 32, sym=True, fmt="gptq", desc_act=False,
        note="AutoGPTQ v1 8-bit sym: 4 codes per int32; zero points 128, stored as 127 (qzeros words 0x7F7F7F7F).")))
    cases.append(("gptq_v2_int4_g64_asym.safetensors", build_gptq(
        "gptq_v2_int4_g64_asym", 4, 4, 64, sym=False, fmt="gptq_v2", desc_act=False,
        note=("GPTQModel gptq_v2: qzeros store the zero point itself (no -1, no +1 on "
              "unpack); zero 0 is present (rows 0..15 of group 0 use zeros 0..15)."),
        zero_targets=list(range(0, maxq4 + 1)))))
    cases.append(("gptq_v1_int4_g32_actorder.safetensors", build_gptq(
        "gptq_v1_int4_g32_actorder", 5, 4, 32, sym=False, fmt="gptq", desc_act=True,
        note=("AutoGPTQ v1 asym, desc_act (act-order, static_groups false): perm = argsort(diag H) "
              "descending, g_idx[perm[i]] = i // 32; qweight stays in the original input order; "
              "each group has 32 non-contiguous members. Zero points in 1..15."))))
    cases.append(("awq_gemm_int4_g32.safetensors", build_awq(
        "awq_gemm_int4_g32", 6, 4, 32,
        note=("AutoAWQ GEMM: qweight [K, N/8] and qzeros [G, N/8] packed along N in order "
              "[0,2,4,6,1,3,5,7]; zeros stored as is; rows 0..15 of group 0 use zeros 0..15."),
        zero_targets=list(range(0, maxq4 + 1)))))
    cases.append(("awq_gemm_int4_g128_k256.safetensors", build_awq(
        "awq_gemm_int4_g128_k256", 7, 4, 128, k=256, n=32,
        note="AutoAWQ GEMM, K=256, N=32, group 128 (2 groups); zeros stored as is.",
        zero_targets=[0, 15, 1, 14])))

    for name, (tensors, meta, ratio) in cases:
        size = write(name, tensors, meta)
        z = tensors["zeros"]
        print(f"{name:42s} {size:7d} bytes  zeros {z.min()}..{z.max()}  "
              f"max|w-deq|/scale {ratio:.4f}")


if __name__ == "__main__":
    main()
