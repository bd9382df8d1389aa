#!/usr/bin/env python3
"""ONNX Runtime's MatMulNBits (MLAS) on the shapes of a Llama-3.2-1B layer, as radixserve serves a
Q4_0 file: 4-bit, blocks of 32, symmetric (no zero points), accuracy_level 4 (int8 activations),
M rows of activations. The number beside bench/kernels/Q40Gemv.java's (journal 2026-12-02b).

One graph holds R independent MatMulNBits nodes of the same shape (each its own random weights)
on the same input, so a run reads R matrices and the caches hold none of them between runs; the
time of a run divided by R is one matmul. M = 2 is what a batch-1 decode step runs since the even
rows (journal 2026-11-29e): the one-row kernel's bits differ from the pair kernel's.

    python3 bench/kernels/mlas_q4_bench.py [THREADS] [RUNS]      (needs onnxruntime, onnx, numpy)
    SAVE=DIR python3 bench/kernels/mlas_q4_bench.py               (writes the graphs, runs nothing)

The local pip index has onnxruntime 1.30 only, and radixserve runs 1.29 (Maven Central's newest
Java build): SAVE writes the graphs as DIR/NAME_mM_K_N_COPIES.onnx for
bench/kernels/MatMulNBitsRun.java, which times them with radixserve's own ONNX Runtime.

Prints, per shape and M, the median time of one matmul, and the read rate in Q4_0's bytes (18 per
32 weights) and in MLAS's packed bytes (24 per 32 at 4 bits: codes, a float scale, a float block
sum). The LM head last: int8 in blocks of 256, as radixserve serves a Q4_0 file's tied table.
"""
import os
import statistics
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

SHAPES = [  # (name, K, N, bits, block size) of Llama-3.2-1B's layer projections, then its LM head
    ("q_proj/o_proj", 2048, 2048, 4, 32),
    ("k_proj/v_proj", 2048, 512, 4, 32),
    ("gate_proj/up_proj", 2048, 8192, 4, 32),
    ("down_proj", 8192, 2048, 4, 32),
    # the tied 128k-row table as radixserve serves a Q4_0 file's head: int8 in blocks of 256
    ("lm_head", 2048, 128256, 8, 256),
]


def graph(k, n, m, bits, block, copies, rng):
    blocks = k // block
    nodes, inits, outputs = [], [], []
    for i in range(copies):
        codes = rng.integers(0, 256, size=(n, blocks, block * bits // 8), dtype=np.uint8)
        scales = (0.01 * (0.5 + rng.random(n * blocks))).astype(np.float32)
        inits += [helper.make_tensor(f"b{i}", TensorProto.UINT8, codes.shape, codes.tobytes(), raw=True),
                  helper.make_tensor(f"s{i}", TensorProto.FLOAT, scales.shape, scales.tobytes(), raw=True)]
        nodes.append(helper.make_node("MatMulNBits", ["a", f"b{i}", f"s{i}"], [f"y{i}"], domain="com.microsoft",
                                      K=k, N=n, bits=bits, block_size=block, accuracy_level=4))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [m, n]))
    g = helper.make_graph(nodes, "q4", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
                          outputs, inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    return model.SerializeToString()


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    save = os.environ.get("SAVE")
    rng = np.random.default_rng(0)
    if not save:
        print(f"onnxruntime {ort.__version__}, {threads} threads")
    for name, k, n, bits, block in SHAPES:
        packed = bits / 8 + 8 / block  # the codes, a float scale and a float block sum per block
        copies = max(1, int(np.ceil(256e6 / (n * k * packed))))
        for m in (1, 2):
            if save:
                os.makedirs(save, exist_ok=True)
                with open(os.path.join(save, f"{name.replace('/', '-')}_m{m}_{k}_{n}_{copies}.onnx"), "wb") as f:
                    f.write(graph(k, n, m, bits, block, copies, rng))
                continue
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            session = ort.InferenceSession(graph(k, n, m, bits, block, copies, rng), opts, providers=["CPUExecutionProvider"])
            a = rng.standard_normal((m, k)).astype(np.float32)
            for _ in range(3):
                session.run(None, {"a": a})
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                session.run(None, {"a": a})
                times.append((time.perf_counter() - start) / copies)
            us = statistics.median(times) * 1e6
            weights = k * n
            q40 = f"{weights * 18 / 32 / us / 1e3:5.1f} GB/s of Q4_0 bytes, " if bits == 4 else ""
            print(f"{name:18s} K={k:5d} N={n:6d} M={m}: {us:7.1f} us a matmul ({copies} per run), "
                  f"{q40}{weights * packed / us / 1e3:5.1f} GB/s packed", flush=True)
            del session


if __name__ == "__main__":
    main()
