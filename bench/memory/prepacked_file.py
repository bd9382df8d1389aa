#!/usr/bin/env python3
"""What ONNX Runtime's pre-packed weights saved to a file would buy a cached start: the 1B shape's
layer matmuls as MatMulNBits (int4, blocks of 128, zero points, accuracy_level 4, as radixserve's
int4 default packs them; 16 layers x q, k, v, o, gate, up, down; random codes), one session made
from the model with its external data as radixserve makes it, one that saves the optimized model
with `session.save_external_prepacked_constant_initializers`, and sessions made from that saved
model. Prints, per session: the time to create it, a one-row run's time, and VmRSS split into
anonymous and file-backed pages, and a digest of its outputs for one random row; then, output
by output, where the saved model's differ from the source's (with onnxruntime 1.30 they do: see
docs/benchmarks/journal/2026-12-02-start-time.md).

    python3 bench/memory/prepacked_file.py WORK_DIR     (onnx, onnxruntime and numpy installed;
                                                         ~1.6 GB written under WORK_DIR)

Each session runs in a process of its own, so its RSS is its own.
"""
import hashlib
import os
import subprocess
import sys

import numpy as np

BLOCK = 128
LAYERS = 16
# Llama-3.2-1B's projections, as (K, N)
SHAPES = [(2048, 2048), (2048, 512), (2048, 512), (2048, 2048), (2048, 8192), (2048, 8192),
          (8192, 2048)]


def make(work):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnx.external_data_helper import convert_model_to_external_data
    rng = np.random.default_rng(0)
    nodes, inits, outs = [], [], []
    n = 0
    for _ in range(LAYERS):
        for k, cols in SHAPES:
            blocks = k // BLOCK
            inits += [
                numpy_helper.from_array(rng.integers(0, 256, (cols, blocks, BLOCK // 2), np.uint8), f"q{n}"),
                numpy_helper.from_array(rng.random(cols * blocks, np.float32) * 0.01 + 0.001, f"s{n}"),
                numpy_helper.from_array(rng.integers(0, 256, cols * ((blocks + 1) // 2), np.uint8), f"z{n}")]
            nodes.append(helper.make_node("MatMulNBits", [f"x{k}", f"q{n}", f"s{n}", f"z{n}"], [f"h{n}"],
                                          domain="com.microsoft", K=k, N=cols, bits=4,
                                          block_size=BLOCK, accuracy_level=4))
            outs.append(helper.make_tensor_value_info(f"h{n}", TensorProto.FLOAT, ["T", cols]))
            n += 1
    inputs = [helper.make_tensor_value_info(f"x{k}", TensorProto.FLOAT, ["T", k]) for k in (2048, 8192)]
    model = helper.make_model(helper.make_graph(nodes, "layers", inputs, outs, inits), ir_version=10,
                              opset_imports=[helper.make_opsetid("", 17),
                                             helper.make_opsetid("com.microsoft", 1)])
    convert_model_to_external_data(model, all_tensors_to_one_file=True, location="src.data",
                                   size_threshold=1024)
    onnx.save(model, os.path.join(work, "src.onnx"))


def session(work, mode):
    import time
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    path = os.path.join(work, "opt.onnx" if mode.startswith("saved") else "src.onnx")
    if mode == "save":
        options.optimized_model_filepath = os.path.join(work, "opt.onnx")
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", "opt.data")
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
        options.add_session_config_entry("session.save_external_prepacked_constant_initializers", "1")
    if mode == "saved-unoptimized":
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    start = time.time()
    s = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    made = time.time() - start
    rng = np.random.default_rng(1)
    feeds = {f"x{k}": rng.standard_normal((1, k), dtype=np.float32) for k in (2048, 8192)}
    outputs = s.run(None, feeds)
    digest = hashlib.sha256(b"".join(o.tobytes() for o in outputs)).hexdigest()[:16]
    np.savez(os.path.join(work, f"out-{mode}.npz"), *outputs)
    start = time.time()
    for _ in range(20):
        s.run(None, feeds)
    run = (time.time() - start) / 20
    status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    mib = lambda key: int(status[key].split()[0]) // 1024
    print(f"{mode:18s} session {made:5.2f} s  run {run * 1000:5.1f} ms  VmRSS {mib('VmRSS')} MiB"
          f" (anon {mib('RssAnon')}, file {mib('RssFile')})  VmHWM {mib('VmHWM')} MiB"
          f"  outputs {digest}", flush=True)


def main():
    if len(sys.argv) == 3:  # a child: one session
        session(sys.argv[1], sys.argv[2])
        return
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    if not os.path.exists(os.path.join(work, "src.onnx")):
        make(work)
    for mode in ["source", "save", "source", "saved", "saved-unoptimized", "saved"]:
        subprocess.run([sys.executable, __file__, work, mode], check=True,
                       stderr=subprocess.DEVNULL)
    for f in ("src.data", "opt.data"):
        print(f, os.path.getsize(os.path.join(work, f)) >> 20, "MiB")
    # each output of the saved model against the source's: which projections differ, by how much
    source = np.load(os.path.join(work, "out-source.npz"))
    saved = np.load(os.path.join(work, "out-saved.npz"))
    wrong = []
    for i, key in enumerate(source.files):
        a, b = source[key], saved[key]
        diff = float(np.nanmax(np.abs(a - b))) if not np.isnan(b).any() else float("nan")
        if not diff <= 1e-5 * float(np.abs(a).max()):
            k, cols = SHAPES[i % len(SHAPES)]
            wrong.append(f"layer {i // len(SHAPES)} K={k} N={cols}: max |diff| {diff:.3g}")
    print(f"saved model against the source: {len(wrong)} of {len(source.files)} outputs differ")
    for line in wrong:
        print("  " + line)


if __name__ == "__main__":
    main()
