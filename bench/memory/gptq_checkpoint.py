#!/usr/bin/env python3
"""A Llama-family Hugging Face checkpoint rewritten as a GPTQ one (round to nearest per group,
no calibration), for measuring what serving such a checkpoint costs at a real model's shape:
memory depends on the format and the shapes, not on how well the codes were chosen.

usage: gptq_checkpoint.py SRC_DIR OUT_DIR [--group-size 128] [--sym]

Each projection (model.layers.*.{self_attn,mlp}.*_proj.weight) is rounded per group by
make_fixtures.py's gptq_rtn_fasterquant (AutoGPTQ's Quantizer.find_params and quantize, its
group bookkeeping, without the Hessian's error feedback) and packed by its gptqmodel_pack_v2
(GPTQModel's pack_original: checkpoint_format gptq_v2, zero points stored as they are, so a zero
point of 0 is fine). Those are the numpy transliterations the repacker's tests check against
(model-runtime/src/test/resources/prequantized/). Every other tensor is written in F16. 4 bits.
bench/quant-accuracy/gptq_quantize.py does GPTQ proper, for GPT-2 models only.
"""
import argparse
import json
import os
import shutil
import sys
import time

import numpy as np
import torch
from safetensors import safe_open
from safetensors.numpy import save_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "model-runtime", "src", "test", "resources", "prequantized"))
import make_fixtures as upstream  # noqa: E402

PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--group-size", type=int, default=128)
    ap.add_argument("--sym", action="store_true")
    a = ap.parse_args()
    bits = 4
    os.makedirs(a.out, exist_ok=True)
    files = sorted(f for f in os.listdir(a.src) if f.endswith(".safetensors"))
    out = {}
    t0 = time.time()
    for f in files:
        with safe_open(os.path.join(a.src, f), framework="pt") as st:
            for name in st.keys():
                t = st.get_tensor(name)
                module = name[:-len(".weight")]
                if name.endswith(".weight") and module.rsplit(".", 1)[-1] in PROJECTIONS:
                    w = t.to(torch.float16).to(torch.float32).numpy()  # [N, K]
                    q, scale, zero, g_idx, _, _ = upstream.gptq_rtn_fasterquant(
                        w, bits, a.group_size, a.sym)
                    qweight, qzeros, scales16, _ = upstream.gptqmodel_pack_v2(
                        q.astype(np.float16), scale, zero, g_idx, bits)
                    out[module + ".qweight"] = qweight
                    out[module + ".qzeros"] = qzeros
                    out[module + ".scales"] = scales16
                    out[module + ".g_idx"] = g_idx.astype(np.int32)
                    print(f"{module}: [{w.shape[0]}, {w.shape[1]}] {time.time() - t0:.0f} s",
                          flush=True)
                else:
                    out[name] = t.to(torch.float16).numpy()
    save_file(out, os.path.join(a.out, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(a.src, "config.json")) as fh:
        config = json.load(fh)
    config["quantization_config"] = {
        "quant_method": "gptq", "bits": bits, "group_size": a.group_size, "desc_act": False,
        "sym": a.sym, "checkpoint_format": "gptq_v2", "damp_percent": 0.01,
        "true_sequential": True}
    config["dtype"] = "float16"
    with open(os.path.join(a.out, "config.json"), "w") as fh:
        json.dump(config, fh, indent=2)
    for f in os.listdir(a.src):
        if f.startswith(("tokenizer", "generation_config", "special_tokens")):
            shutil.copy(os.path.join(a.src, f), a.out)
    print(f"wrote {a.out} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
