"""How far re-rounding a GGUF file's blocks moves its weights: for the first tensor of each kind
and type (e.g. Q4_K attn_q, Q6_K ffn_down), dequantized with gguf-py exactly as ggml does, then
rounded again as radixserve's BlockQuantizer would (int4 with zero points, int4 symmetric, int8
symmetric; blocks of 32), the relative RMS change against the file's own weights.

    python3 bench/gguf/requant_error.py FILE.gguf [ROWS=512]

Why it matters: it says whether a mode per tensor (Q6_K layers to int8, Q4_K to int4) could keep
a Q4_K_M file's accuracy at int4: only if re-rounding Q4_K onto int4 were cheap.
"""
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize


def requant(w, bits, zero_points):
    n, k = w.shape
    b = w.reshape(n, k // 32, 32)
    if zero_points:  # BlockQuantizer.asymmetric: the range includes 0
        qmax = (1 << bits) - 1
        lo = np.minimum(b.min(-1, keepdims=True), 0)
        hi = np.maximum(b.max(-1, keepdims=True), 0)
        s = (hi - lo) / qmax
        s[s == 0] = 1
        z = np.clip(np.round(-lo / s), 0, qmax)
        q = np.clip(np.round(b / s) + z, 0, qmax)
        return ((q - z) * s).reshape(n, k)
    mid = 1 << (bits - 1)  # BlockQuantizer.symmetric: scale = the extreme / -mid
    mx, mn = b.max(-1, keepdims=True), b.min(-1, keepdims=True)
    s = np.where(np.abs(mx) > np.abs(mn), mx, mn) / -mid
    s[s == 0] = 1
    q = np.clip(np.round(b / s) + mid, 0, 2 * mid - 1)
    return ((q - mid) * s).reshape(n, k)


def rel(a, b):
    return float(np.sqrt(((a - b) ** 2).mean() / (b ** 2).mean()))


def main():
    path = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    seen = set()
    print("| type | tensor | int4, zero points | int4, symmetric | int8 |")
    print("|---|---|---:|---:|---:|")
    for t in GGUFReader(path).tensors:
        kind = t.name.split(".")[-2]
        key = (t.tensor_type.name, kind)
        if t.tensor_type.name in ("F32", "F16", "BF16") or key in seen:
            continue
        seen.add(key)
        w = dequantize(t.data, t.tensor_type).astype(np.float32)[:rows]
        print(f"| {t.tensor_type.name} | {t.name} | {rel(requant(w, 4, True), w):.4f} |"
              f" {rel(requant(w, 4, False), w):.4f} | {rel(requant(w, 8, False), w):.4f} |")


if __name__ == "__main__":
    main()
