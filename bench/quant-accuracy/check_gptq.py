#!/usr/bin/env python3
"""Independent check of a GPTQ v1 checkpoint written by gptq_quantize.py.

1. Unpacks every quantized layer of OUT_DIR/model.safetensors with AutoGPTQ's own unpack
   formulas (numpy transliterations copied from radixserve's
   model-runtime/src/test/resources/prequantized/make_fixtures.py: autogptq_unpack_v1 =
   AutoGPTQ qlinear_cuda.py QuantLinear.forward torch fallback; autogptq_unpack_v1_old =
   qlinear_cuda_old.py QuantLinear.forward torch fallback; gptq_dequantize), i.e.
   weight[k, n] = scale16[g_idx[k], n] * (code[k, n] - (stored_zero[g_idx[k], n] + 1)),
   and asserts that it equals, bit for bit, what the quantization loop itself produced
   (OUT_DIR.loop.safetensors: codes, true zero points, fp32 scales; evaluated as
   float32(float16(scale)) * (code - zero)).
2. Puts the dequantized weights (and the checkpoint's biases and unquantized tensors) into a
   GPT2LMHeadModel built from the source directory (fp32), and compares it with the source fp32
   model on the held-out text: 300 consecutive windows of train.json's seq (128) tokens, scoring
   the tokens at positions seq/2+1 .. seq-1 of each window (65..127: llama-perplexity's second
   half; logits at j predict token j+1) -- mean ln(PPL(quant)/PPL(fp32)), RMS delta p of the
   true next token, top-1 agreement (argmax equal).

usage: check_gptq.py OUT_DIR [OUT_DIR ...]     (prints a table; updates gptq_report.json)
"""
import json
import math
import os
import sys
import time

import numpy as np
import torch
from safetensors import safe_open
from safetensors.numpy import load_file as np_load
from tokenizers import Tokenizer
from transformers import GPT2LMHeadModel

WINDOWS = 300
QUANT_MODULES = ["attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"]


# --- copied from make_fixtures.py (AutoGPTQ 9f7d370 unpack, numpy) --------------------------

# AutoGPTQ's unpack and dequantize, as radixserve's fixtures transliterate them (the file cites
# the upstream lines): one copy, shared with CheckpointRepackerTest's fixtures.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "model-runtime", "src", "test", "resources", "prequantized"))
from make_fixtures import (autogptq_unpack_v1, autogptq_unpack_v1_old,  # noqa: E402
                           gptq_dequantize)


# --- held-out evaluation --------------------------------------------------------------------

def heldout_windows(model_dir, ctx):
    """As bench/quant-accuracy/accuracy.py windows(): tokenizer.json, add_special_tokens=False,
    WINDOWS consecutive windows of ctx tokens."""
    text = open(os.path.join(model_dir, "heldout.txt"), encoding="utf-8").read()
    ids = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json")).encode(
        text, add_special_tokens=False).ids
    out = [ids[i * ctx:(i + 1) * ctx] for i in range(WINDOWS)]
    assert len(out[-1]) == ctx, "held-out text too short"
    return torch.tensor(out, dtype=torch.long)


@torch.inference_mode()
def score(model, windows, batch=25):
    """Per scored position: log p(true next token), p(true), argmax token.  Logits at j
    (ctx/2 .. ctx-2) predict token j+1 (ctx/2+1 .. ctx-1)."""
    ctx = windows.shape[1]
    first = ctx // 2
    lps, tops = [], []
    for s in range(0, windows.shape[0], batch):
        w = windows[s:s + batch]
        logits = model(w).logits[:, first:ctx - 1, :].float()
        lp = torch.log_softmax(logits, dim=-1)
        tgt = w[:, first + 1:ctx]
        lps.append(lp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1).reshape(-1).double())
        tops.append(logits.argmax(-1).reshape(-1))
    return torch.cat(lps), torch.cat(tops)


_REF_CACHE = {}


def reference(src, windows):
    if src not in _REF_CACHE:
        m = GPT2LMHeadModel.from_pretrained(src, dtype=torch.float32).eval()
        _REF_CACHE[src] = score(m, windows)
    return _REF_CACHE[src]


def check(out_dir, verbose=True):
    t0 = time.time()
    report_path = os.path.join(out_dir, "gptq_report.json")
    rep = json.load(open(report_path))
    src = rep["source"]
    cfg = json.load(open(os.path.join(out_dir, "config.json")))
    qc = cfg["quantization_config"]
    bits, gs, desc_act = qc["bits"], qc["group_size"], qc["desc_act"]
    assert qc["checkpoint_format"] == "gptq" and qc["sym"] is False
    ck = np_load(os.path.join(out_dir, "model.safetensors"))
    loop = np_load(out_dir.rstrip("/") + ".loop.safetensors")
    n_layer = cfg["n_layer"]

    res = {"layers_bit_exact": 0, "layers": n_layer * len(QUANT_MODULES), "mismatch": {},
           "old_forward_agrees": None, "max_abs_deq_minus_Q": 0.0, "max_deq_minus_Q_over_scale": 0.0}
    deq = {}
    old_ok = True
    for i in range(n_layer):
        for mname in QUANT_MODULES:
            p = f"transformer.h.{i}.{mname}"
            qweight, qzeros, scales16, g_idx = (ck[p + ".qweight"], ck[p + ".qzeros"],
                                                ck[p + ".scales"], ck[p + ".g_idx"])
            assert qweight.dtype == np.int32 and qzeros.dtype == np.int32
            assert scales16.dtype == np.float16 and g_idx.dtype == np.int32
            K, N = qweight.shape[0] * 32 // bits, qweight.shape[1]
            G = K // gs
            assert scales16.shape == (G, N) and qzeros.shape == (G, N * bits // 32)
            assert g_idx.shape == (K,)
            assert np.array_equal(np.bincount(g_idx, minlength=G), np.full(G, gs))
            if not desc_act:
                assert np.array_equal(g_idx, np.arange(K) // gs)
            codes, zeros = autogptq_unpack_v1(qweight, qzeros, scales16, bits)
            w = gptq_dequantize(codes, zeros, scales16, g_idx)            # [K, N]
            if not desc_act:
                old = autogptq_unpack_v1_old(qweight, qzeros, scales16, bits, gs)
                old_ok &= bool(np.array_equal(old.view(np.int32), w.view(np.int32)))
            # what the loop produced: float32(float16(scale)) * (code - zero)
            lc, lz, ls, lg = (loop[p + ".codes"], loop[p + ".zeros"], loop[p + ".scale32"],
                              loop[p + ".g_idx"])
            assert np.array_equal(lg, g_idx)
            expect = (ls.astype(np.float16).astype(np.float32)[lg]
                      * (lc.astype(np.float32) - lz.astype(np.float32)[lg]))
            same = np.array_equal(expect.view(np.int32), w.view(np.int32))
            if same:
                res["layers_bit_exact"] += 1
            else:
                bad = expect.view(np.int32) != w.view(np.int32)
                res["mismatch"][p] = {"elements": int(bad.sum()),
                                      "code_mismatch": int((codes != lc).sum()),
                                      "zero_mismatch": int((zeros != lz).sum()),
                                      "true_zero_0": int((lz == 0).sum())}
            Q = loop[p + ".Q"]
            d = np.abs(w - Q)
            res["max_abs_deq_minus_Q"] = max(res["max_abs_deq_minus_Q"], float(d.max()))
            res["max_deq_minus_Q_over_scale"] = max(
                res["max_deq_minus_Q_over_scale"], float((d / ls[lg]).max()))
            deq[p] = w
    if not desc_act:
        res["old_forward_agrees"] = old_ok

    info = json.load(open(os.path.join(src, "train.json")))
    ctx = int(info["seq"])
    windows = heldout_windows(out_dir, ctx)
    ref_lp, ref_top = reference(src, windows)

    model = GPT2LMHeadModel.from_pretrained(src, dtype=torch.float32).eval()
    sd = model.state_dict()
    untouched_equal = True
    with torch.no_grad():
        for name, t in sd.items():
            mod = name.rsplit(".", 1)[0]
            if mod in deq and name.endswith(".weight"):
                t.copy_(torch.from_numpy(deq[mod]))                     # Conv1D weight [in, out]
            elif name in ck:
                v = torch.from_numpy(ck[name].astype(np.float32))
                if not (mod in deq) and not torch.equal(v, t):
                    untouched_equal = False
                t.copy_(v)
            elif name == "lm_head.weight":
                pass                                                    # tied to wte
            else:
                raise KeyError(name)
    model.tie_weights()
    assert model.lm_head.weight.data_ptr() == model.transformer.wte.weight.data_ptr()
    lp, top = score(model, windows)
    n = lp.numel()
    res["untouched_tensors_equal_source"] = untouched_equal
    res["positions"] = n
    res["ppl_fp32"] = math.exp(-ref_lp.mean().item())
    res["ppl_quant"] = math.exp(-lp.mean().item())
    res["mean_ln_ppl_ratio"] = (ref_lp - lp).mean().item()
    res["rms_dp"] = math.sqrt(((lp.exp() - ref_lp.exp()) ** 2).mean().item())
    res["top1_agreement"] = (top == ref_top).double().mean().item()
    res["check_s"] = round(time.time() - t0, 1)
    if verbose:
        print(json.dumps({k: v for k, v in res.items()}, indent=None), flush=True)
    assert res["layers_bit_exact"] == res["layers"], res["mismatch"]
    return res


def main():
    torch.set_num_threads(1)
    rows = []
    for d in sys.argv[1:]:
        res = check(d)
        rp = os.path.join(d, "gptq_report.json")
        rep = json.load(open(rp))
        rep["check"] = res
        with open(rp, "w") as f:
            json.dump(rep, f, indent=1)
        rows.append((os.path.basename(d.rstrip("/")), rep["runtime_s"]["quantize"], res))
    print(f"\n{'variant':24s} {'quant_s':>8s} {'ppl':>8s} {'ln(PPLq/PPL)':>13s} {'RMS dp':>8s} "
          f"{'top-1':>7s} {'bit-exact':>10s}")
    for name, qs, r in rows:
        print(f"{name:24s} {qs:8.1f} {r['ppl_quant']:8.4f} {r['mean_ln_ppl_ratio']:13.5f} "
              f"{r['rms_dp']:8.5f} {r['top1_agreement']:7.4f} "
              f"{r['layers_bit_exact']}/{r['layers']:<8d}")


if __name__ == "__main__":
    main()
