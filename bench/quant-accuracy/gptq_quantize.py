#!/usr/bin/env python3
"""GPTQ-quantize a GPT-2 (Hugging Face layout, GPT2LMHeadModel, Conv1D weights [in, out]) into
an AutoGPTQ "gptq" (v1) checkpoint, by a line-by-line transliteration of AutoGPTQ's own code.

Upstream: AutoGPTQ/AutoGPTQ @ 9f7d370 (9f7d37072917ab3a7545835f23e808294a542153), read from the
local mirror /work/.mirror/AutoGPTQ+AutoGPTQ/repo:
  auto_gptq/quantization/quantizer.py   quantize(), Quantizer.configure/find_params/quantize/ready
  auto_gptq/quantization/gptq.py        GPTQ.__init__, add_batch, fasterquant
  auto_gptq/modeling/_base.py           BaseGPTQForCausalLM.quantize (lines 176-398),
                                        _prepare_examples_for_quantization (131-174),
                                        save_quantized (502-577)
  auto_gptq/modeling/gpt2.py            GPT2GPTQForCausalLM.inside_layer_modules
  auto_gptq/modeling/_utils.py          find_layers, pack_model, make_quant
  auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py / qlinear_cuda.py   QuantLinear.pack
The packing is radixserve's own
  model-runtime/src/test/resources/prequantized/make_fixtures.py  autogptq_pack_v1
(a numpy transliteration of qlinear_cuda.py QuantLinear.pack), imported, so the word layout is
the one radixserve's tests already check.

usage: gptq_quantize.py SRC_DIR OUT_DIR [--group-size 128] [--bits 4] [--act-order] [--rtn]
                        [--samples 128] [--dtype float32|float16] [--seed 0] [--no-check]

Writes OUT_DIR/{config.json (+ quantization_config), model.safetensors, quantize_config.json,
tokenizer.json, tokenizer_config.json, generation_config.json, heldout.txt, train.json,
gptq_report.json} and, NEXT TO OUT_DIR (not inside it, so that nothing else in the model
directory looks like weights), OUT_DIR.loop.safetensors: what the quantization loop itself
produced (integer codes, true zero points, fp32 scales, g_idx, fake-quantized weight Q), which
check_gptq.py compares the checkpoint against.  Unless --no-check, check_gptq.py's check is run
at the end and its result is put into gptq_report.json.
"""
import argparse
import json
import math
import os
import shutil
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import transformers
from safetensors import safe_open
from safetensors.torch import save_file as safe_save
from tokenizers import Tokenizer
from transformers import GPT2LMHeadModel

UPSTREAM = "AutoGPTQ/AutoGPTQ@9f7d37072917ab3a7545835f23e808294a542153"


# ---------------------------------------------------------------------------
# auto_gptq/quantization/quantizer.py  (verbatim, torch; CUDA-free already)
# ---------------------------------------------------------------------------

def quantize(x, scale, zero, maxq):
    """quantizer.py quantize()."""
    if maxq < 0:
        return (x > scale / 2).float() * scale + (x < zero / 2).float() * zero
    q = torch.clamp(torch.round(x / scale) + zero, 0, maxq)
    return scale * (q - zero)


class Quantizer(nn.Module):
    """quantizer.py class Quantizer (verbatim)."""

    def __init__(self, shape=1):
        super(Quantizer, self).__init__()
        self.register_buffer("maxq", torch.tensor(0))
        self.register_buffer("scale", torch.zeros(shape))
        self.register_buffer("zero", torch.zeros(shape))

    def configure(self, bits, perchannel=False, sym=True, mse=False, norm=2.4, grid=100,
                  maxshrink=0.8, trits=False):
        self.maxq = torch.tensor(2**bits - 1)
        self.perchannel = perchannel
        self.sym = sym
        self.mse = mse
        self.norm = norm
        self.grid = grid
        self.maxshrink = maxshrink
        if trits:
            self.maxq = torch.tensor(-1)

    def find_params(self, x, weight=False):
        dev = x.device
        self.maxq = self.maxq.to(dev)

        shape = x.shape
        if self.perchannel:
            if weight:
                x = x.flatten(1)
            else:
                if len(shape) == 4:
                    x = x.permute([1, 0, 2, 3])
                    x = x.flatten(1)
                if len(shape) == 3:
                    x = x.reshape((-1, shape[-1])).t()
                if len(shape) == 2:
                    x = x.t()
        else:
            x = x.flatten().unsqueeze(0)

        tmp = torch.zeros(x.shape[0], device=dev)
        xmin = torch.minimum(x.min(1)[0], tmp)
        xmax = torch.maximum(x.max(1)[0], tmp)

        if self.sym:
            xmax = torch.maximum(torch.abs(xmin), xmax)
            tmp = xmin < 0
            if torch.any(tmp):
                xmin[tmp] = -xmax[tmp]
        tmp = (xmin == 0) & (xmax == 0)
        xmin[tmp] = -1
        xmax[tmp] = +1

        if self.maxq < 0:
            self.scale = xmax
            self.zero = xmin
        else:
            self.scale = (xmax - xmin) / self.maxq
            if self.sym:
                self.zero = torch.full_like(self.scale, (self.maxq + 1) / 2)
            else:
                self.zero = torch.round(-xmin / self.scale)

        if self.mse:
            best = torch.full([x.shape[0]], float("inf"), device=dev)
            for i in range(int(self.maxshrink * self.grid)):
                p = 1 - i / self.grid
                xmin1 = p * xmin
                xmax1 = p * xmax
                scale1 = (xmax1 - xmin1) / self.maxq
                zero1 = torch.round(-xmin1 / scale1) if not self.sym else self.zero
                q = quantize(x, scale1.unsqueeze(1), zero1.unsqueeze(1), self.maxq)
                q -= x
                q.abs_()
                q.pow_(self.norm)
                err = torch.sum(q, 1)
                tmp = err < best
                if torch.any(tmp):
                    best[tmp] = err[tmp]
                    self.scale[tmp] = scale1[tmp]
                    self.zero[tmp] = zero1[tmp]
        if not self.perchannel:
            if weight:
                tmp = shape[0]
            else:
                tmp = shape[1] if len(shape) != 3 else shape[2]
            self.scale = self.scale.repeat(tmp)
            self.zero = self.zero.repeat(tmp)

        if weight:
            shape = [-1] + [1] * (len(shape) - 1)
            self.scale = self.scale.reshape(shape)
            self.zero = self.zero.reshape(shape)
            return
        if len(shape) == 4:
            self.scale = self.scale.reshape((1, -1, 1, 1))
            self.zero = self.zero.reshape((1, -1, 1, 1))
        if len(shape) == 3:
            self.scale = self.scale.reshape((1, 1, -1))
            self.zero = self.zero.reshape((1, 1, -1))
        if len(shape) == 2:
            self.scale = self.scale.unsqueeze(0)
            self.zero = self.zero.unsqueeze(0)

    def quantize(self, x):
        if self.ready():
            return quantize(x, self.scale, self.zero, self.maxq)
        return x

    def enabled(self):
        return self.maxq > 0

    def ready(self):
        return torch.all(self.scale != 0)


def quantize_codes(x, scale, zero, maxq):
    """NOT upstream: the integer code q of quantizer.py quantize(), by the same ops
    (clamp(round(x / scale) + zero, 0, maxq)); kept beside the loop so that the checkpoint can be
    checked against the loop's own integers.  quantize() returns scale * (this - zero)."""
    return torch.clamp(torch.round(x / scale) + zero, 0, maxq)


# ---------------------------------------------------------------------------
# auto_gptq/quantization/gptq.py  class GPTQ
# ---------------------------------------------------------------------------

class GPTQ:
    """gptq.py class GPTQ.  Unchanged except: Conv2d branches dropped (GPT-2 has none),
    os.environ DEBUG branches dropped, torch.cuda.synchronize()/empty_cache() dropped (CPU),
    logger.info -> a returned record, and the loop also records the integer codes
    (quantize_codes, side output only).  rtn=True is the control: the same loop with the two
    error-feedback updates (W1[:, i:] -= ..., W[:, i2:] -= ...) removed."""

    def __init__(self, layer):
        # gptq.py GPTQ.__init__
        self.layer = layer
        self.dev = self.layer.weight.device
        W = layer.weight.data.clone()
        if isinstance(self.layer, transformers.pytorch_utils.Conv1D):
            W = W.t()
        self.rows = W.shape[0]
        self.columns = W.shape[1]
        self.H = torch.zeros((self.columns, self.columns), device=self.dev)
        self.nsamples = 0
        self.quantizer = Quantizer()

    def add_batch(self, inp, out):
        # gptq.py GPTQ.add_batch
        if len(inp.shape) == 2:
            inp = inp.unsqueeze(0)
        tmp = inp.shape[0]
        if isinstance(self.layer, nn.Linear) or isinstance(self.layer, transformers.Conv1D):
            if len(inp.shape) == 3:
                inp = inp.reshape((-1, inp.shape[-1]))
            inp = inp.t()
        self.H *= self.nsamples / (self.nsamples + tmp)
        self.nsamples += tmp
        # inp = inp.float()
        inp = math.sqrt(2 / self.nsamples) * inp.float()
        # self.H += 2 / self.nsamples * inp.matmul(inp.t())
        self.H += inp.matmul(inp.t())

    def fasterquant(self, blocksize=128, percdamp=0.01, group_size=-1, actorder=False,
                    static_groups=False, rtn=False):
        # gptq.py GPTQ.fasterquant
        W = self.layer.weight.data.clone()
        if isinstance(self.layer, transformers.Conv1D):
            W = W.t()
        W = W.float()

        tick = time.time()

        if not self.quantizer.ready():
            self.quantizer.find_params(W, weight=True)

        if not rtn:
            H = self.H
            del self.H
            dead = torch.diag(H) == 0
            H[dead, dead] = 1
            W[:, dead] = 0
        else:
            # RTN control: no Hessian was collected; nothing is dead.
            H = None
            dead = torch.zeros(self.columns, dtype=torch.bool)

        g_idx = []
        scale = []
        zero = []
        now_idx = 1

        if static_groups:
            import copy

            groups = []
            for i in range(0, self.columns, group_size):
                quantizer = copy.deepcopy(self.quantizer)
                quantizer.find_params(W[:, i : (i + group_size)], weight=True)
                scale.append(quantizer.scale)
                zero.append(quantizer.zero)
                groups.append(quantizer)

        if actorder:
            assert not rtn, "--rtn with --act-order is not a control this script offers"
            perm = torch.argsort(torch.diag(H), descending=True)
            W = W[:, perm]
            H = H[perm][:, perm]
            invperm = torch.argsort(perm)

        Losses = torch.zeros_like(W)
        Q = torch.zeros_like(W)
        Codes = torch.zeros_like(W)  # side output (not upstream)

        if not rtn:
            damp = percdamp * torch.mean(torch.diag(H))
            diag = torch.arange(self.columns, device=self.dev)
            H[diag, diag] += damp
            H = torch.linalg.cholesky(H)
            H = torch.cholesky_inverse(H)
            H = torch.linalg.cholesky(H, upper=True)
            Hinv = H

        for i1 in range(0, self.columns, blocksize):
            i2 = min(i1 + blocksize, self.columns)
            count = i2 - i1

            W1 = W[:, i1:i2].clone()
            Q1 = torch.zeros_like(W1)
            Err1 = torch.zeros_like(W1)
            Losses1 = torch.zeros_like(W1)
            C1 = torch.zeros_like(W1)  # side output (not upstream)
            if not rtn:
                Hinv1 = Hinv[i1:i2, i1:i2]

            for i in range(count):
                w = W1[:, i]
                if not rtn:
                    d = Hinv1[i, i]

                if group_size != -1:
                    if not static_groups:
                        if (i1 + i) % group_size == 0:
                            # NB upstream reads the block-level W here (not W1), so for a group
                            # starting inside a block (group_size < blocksize) the parameters
                            # are found on weights that lack this block's earlier updates.
                            self.quantizer.find_params(W[:, (i1 + i) : (i1 + i + group_size)], weight=True)

                        if ((i1 + i) // group_size) - now_idx == -1:
                            scale.append(self.quantizer.scale)
                            zero.append(self.quantizer.zero)
                            now_idx += 1
                    else:
                        idx = i1 + i
                        if actorder:
                            idx = perm[idx]
                        self.quantizer = groups[idx // group_size]

                q = self.quantizer.quantize(w.unsqueeze(1)).flatten()
                C1[:, i] = quantize_codes(w.unsqueeze(1), self.quantizer.scale, self.quantizer.zero,
                                          self.quantizer.maxq).flatten()
                Q1[:, i] = q
                if not rtn:
                    Losses1[:, i] = (w - q) ** 2 / d**2

                    err1 = (w - q) / d
                    W1[:, i:] -= err1.unsqueeze(1).matmul(Hinv1[i, i:].unsqueeze(0))
                    Err1[:, i] = err1

            Q[:, i1:i2] = Q1
            Codes[:, i1:i2] = C1
            Losses[:, i1:i2] = Losses1 / 2

            if not rtn:
                W[:, i2:] -= Err1.matmul(Hinv[i1:i2, i2:])

        duration = time.time() - tick
        # logger.info(f"duration: ...") / logger.info(f"avg loss: ...")
        avg_loss = (torch.sum(Losses).item() / self.nsamples) if not rtn else None

        group_size = group_size if group_size != -1 else self.columns
        if static_groups and actorder:
            g_idx = [perm[i] // group_size for i in range(self.columns)]
        else:
            g_idx = [i // group_size for i in range(self.columns)]
        g_idx = torch.tensor(g_idx, dtype=torch.int32, device=Q.device)
        if actorder:
            Q = Q[:, invperm]
            Codes = Codes[:, invperm]
            g_idx = g_idx[invperm]

        Qn = Q  # [out, in], for the loop record
        if isinstance(self.layer, transformers.Conv1D):
            Q = Q.t()
        self.layer.weight.data = Q.reshape(self.layer.weight.shape).type_as(self.layer.weight.data)

        if scale == []:
            scale.append(self.quantizer.scale)
            zero.append(self.quantizer.zero)
        scale = torch.cat(scale, dim=1)
        zero = torch.cat(zero, dim=1)
        record = {"duration_s": duration, "avg_loss": avg_loss, "dead_columns": int(dead.sum())}
        return scale, zero, g_idx, Codes, Qn, record

    def free(self):
        self.H = None
        self.Losses = None
        self.Trace = None


# ---------------------------------------------------------------------------
# Packing: radixserve's make_fixtures.py autogptq_pack_v1, a numpy transliteration of AutoGPTQ
# qlinear_cuda.py QuantLinear.pack (the same word layout as qlinear_cuda_old.py's pack, which
# uses idx // group_size where qlinear_cuda.py uses g_idx[idx]); one copy, shared with the
# fixtures CheckpointRepackerTest checks.
# ---------------------------------------------------------------------------

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "model-runtime", "src", "test", "resources", "prequantized"))
import make_fixtures  # noqa: E402


def autogptq_pack_v1(Wlayer, scales, zeros, g_idx, bits):
    """make_fixtures.autogptq_pack_v1 (Wlayer [N, K] after fasterquant; scales/zeros [N, G]
    float32), with the number of zero points 0. Upstream packs a zero point 0 as −1 cast to
    uint32, which corrupts the later fields of its word; make_fixtures refuses it (an assert),
    and so does this: none occurred in any run recorded in docs/benchmarks/journal/2026-11-21-to-28.md."""
    n_zero0 = int((zeros < 1).sum())
    if n_zero0:
        raise SystemExit(f"{n_zero0} zero points are 0: AutoGPTQ's v1 packing corrupts them")
    return (*make_fixtures.autogptq_pack_v1(Wlayer, scales, zeros, g_idx, bits), n_zero0)


# ---------------------------------------------------------------------------
# Calibration data
# ---------------------------------------------------------------------------

def training_text(src):
    """bench/quant-accuracy/train_tiny_gpt2.py main(): the joined files, cut at 95 % to the next
    newline; the part BEFORE the cut is the training text (the rest is heldout.txt)."""
    info = json.load(open(os.path.join(src, "train.json")))
    files = info["files"]
    text = "\n".join(open(f, encoding="utf-8", errors="replace").read() for f in files)
    cut = int(len(text) * 0.95)
    cut = text.index("\n", cut) + 1
    train_text, held = text[:cut], text[cut:]
    assert len(text) == info["characters"], "the training files differ from train.json's"
    with open(os.path.join(src, "heldout.txt"), encoding="utf-8") as f:
        assert held == f.read(), "the rebuilt text does not end in SRC/heldout.txt"
    return train_text, info


def calibration_examples(src, samples, seed):
    """`samples` random windows of train.json's seq tokens from the training text, as
    AutoGPTQ's quantize() takes them: a list of {"input_ids", "attention_mask"}; with
    batch_size 1 _prepare_examples_for_quantization/collate_data gives each as [1, seq]."""
    train_text, info = training_text(src)
    seq = int(info["seq"])
    tok = Tokenizer.from_file(os.path.join(src, "tokenizer.json"))
    ids = tok.encode(train_text, add_special_tokens=False).ids
    ids_check = {"train_tokens_rebuilt": len(ids), "train_tokens_train_json": info.get("train_tokens")}
    ids = torch.tensor(ids, dtype=torch.long)
    g = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, len(ids) - seq - 1, (samples,), generator=g)
    examples = [{"input_ids": ids[s:s + seq].unsqueeze(0),
                 "attention_mask": torch.ones((1, seq), dtype=torch.long)} for s in starts]
    return examples, seq, starts.tolist(), ids_check


# ---------------------------------------------------------------------------
# auto_gptq/modeling/_base.py BaseGPTQForCausalLM.quantize, GPT-2 (modeling/gpt2.py)
# ---------------------------------------------------------------------------

LAYERS_BLOCK_NAME = "transformer.h"                       # gpt2.py layers_block_name
INSIDE_LAYER_MODULES = [["attn.c_attn"], ["attn.c_proj"], ["mlp.c_fc"], ["mlp.c_proj"]]  # gpt2.py


def find_layers(module, layers=None, name=""):
    """_utils.py find_layers."""
    if not layers:
        layers = [transformers.pytorch_utils.Conv1D, nn.Conv2d, nn.Linear]
    for layer in layers:
        if isinstance(module, layer):
            return {name: module}
    res = {}
    for name1, child in module.named_children():
        res.update(find_layers(child, layers=layers, name=name + "." + name1 if name != "" else name1))
    return res


@torch.inference_mode()
def run_quantize(model, examples, bits, group_size, desc_act, sym, damp_percent, static_groups,
                 true_sequential, rtn, log):
    """_base.py quantize() lines 205-377, on the CPU (the move_to_device/cuda steps are no-ops).

    Adaptation to transformers 5.x (the upstream hook was written for 4.x, where GPT2Model called
    each block as block(hidden_states, layer_past=..., attention_mask=..., ...)):
      - transformers 5.18 passes the causal mask POSITIONALLY (block(hidden_states,
        past_key_values, causal_mask, encoder_hidden_states, encoder_attention_mask=...,
        use_cache=..., position_ids=...)), so upstream's store_input_hook (kwargs["attention_mask"])
        would raise KeyError, and upstream's replacement of layer_inputs by [[layer_output]] after
        layer 0 (line 376) would drop that mask for layers 1..L-1.  Here the whole call (args and
        kwargs) captured at layer 0 is replayed for every layer, with args[0] (hidden_states)
        replaced by the previous layer's output: what upstream does under 4.x.
      - a 5.x GPT2Block returns the hidden states tensor, not a tuple, so layer(...)[0] (line
        367) is taken only when the block returns a tuple.
    """
    forward_pass_use_cache = model.config.use_cache
    model.config.use_cache = False                                       # line 213-214

    num_batches = len(examples)
    layers = model.transformer.h                                         # get_module_by_name_prefix

    layer_args = []
    layer_kwargs = []

    def store_input_hook(_, args, kwargs):                               # lines 221-245
        layer_args.append(list(args))
        layer_kwargs.append(dict(kwargs))
        raise ValueError

    handle = layers[0].register_forward_pre_hook(store_input_hook, with_kwargs=True)  # line 264
    for example in examples:                                             # lines 265-273
        try:
            model(**example)
        except ValueError:
            pass
    handle.remove()
    assert len(layer_args) == num_batches

    layer_inputs = [a[0] for a in layer_args]

    def call_layer(layer, j, hidden):
        args = list(layer_args[j])
        args[0] = hidden
        out = layer(*args, **layer_kwargs[j])
        return out[0] if isinstance(out, tuple) else out

    inside_layer_modules = INSIDE_LAYER_MODULES
    if not true_sequential:                                              # lines 284-286
        inside_layer_modules = [sum(inside_layer_modules, [])]
    quantizers = {}
    records = []
    for i in range(len(layers)):                                         # line 288
        log(f"Start quantizing layer {i + 1}/{len(layers)}")
        layer = layers[i]
        full = find_layers(layer)                                        # line 297
        for names in inside_layer_modules:                               # line 298
            subset = {n: full[n] for n in names if n in full}
            gptq = {}
            for name in subset:
                gptq[name] = GPTQ(subset[name])
                gptq[name].quantizer.configure(bits, perchannel=True, sym=sym, mse=False)

            if not rtn:
                def add_batch(name):                                     # lines 310-315
                    def tmp(_, inp, out):
                        gptq[name].add_batch(inp[0].data, out.data)
                    return tmp

                handles = []
                for name in subset:
                    handles.append(subset[name].register_forward_hook(add_batch(name)))
                for j in range(num_batches):                             # lines 320-334
                    call_layer(layer, j, layer_inputs[j])
                for h in handles:
                    h.remove()

            for name in subset:                                          # lines 338-352
                log(f"Quantizing {name} in layer {i + 1}/{len(layers)}...")
                scale, zero, g_idx, codes, Qn, rec = gptq[name].fasterquant(
                    percdamp=damp_percent, group_size=group_size, actorder=desc_act,
                    static_groups=static_groups, rtn=rtn)
                log(f"duration: {rec['duration_s']}")
                log(f"avg loss: {rec['avg_loss']}")
                full_name = f"{LAYERS_BLOCK_NAME}.{i}.{name}"
                quantizers[full_name] = (gptq[name].quantizer, scale, zero, g_idx, codes, Qn)
                records.append({"layer": i, "module": name, **rec})
                gptq[name].free()

        layer_outputs = []
        if not rtn:
            for j in range(num_batches):                                 # lines 354-370
                layer_outputs.append(call_layer(layer, j, layer_inputs[j]))
        layer_inputs = layer_outputs                                     # line 376
    model.config.use_cache = forward_pass_use_cache                      # line 394
    return quantizers, records


# ---------------------------------------------------------------------------
# Saving (_base.py save_quantized; pack_model in _utils.py)
# ---------------------------------------------------------------------------

def write_checkpoint(src, out, model, quantizers, args, records, calib):
    os.makedirs(out, exist_ok=True)
    dt = {"float32": torch.float32, "float16": torch.float16}[args.dtype]
    # source tensor names (with or without "transformer.")
    with safe_open(os.path.join(src, "model.safetensors"), "pt") as f:
        src_names = list(f.keys())
        src_tensors = {k: f.get_tensor(k) for k in src_names}
    prefixed = all(k.startswith("transformer.") or k.startswith("lm_head.") for k in src_names)

    def canon(k):
        return k if (prefixed or k.startswith("lm_head.")) else "transformer." + k

    state = {}
    loop = {}
    zero0 = {}
    qnames = set()
    for name, (_, scale, zero, g_idx, codes, Qn) in quantizers.items():
        qnames.add(name)
        # pack_model -> QuantLinear.pack(linear, scale, zero, g_idx): W = linear.weight (the
        # fake-quantized Q that fasterquant wrote, fp32 here), Conv1D -> W.t()
        Wlayer = Qn.numpy().astype(np.float32)                             # [N, K]
        qweight, qzeros, scales16, intweight, n0 = autogptq_pack_v1(
            Wlayer, scale.numpy().astype(np.float32), zero.numpy().astype(np.float32),
            g_idx.numpy().astype(np.int64), args.bits)
        # pack()'s re-rounding of the fake-quantized weight gives back the loop's codes
        assert np.array_equal(intweight, codes.numpy().T.astype(np.int32)), name
        zero0[name] = n0
        bias = dict(model.named_modules())[name].bias.data
        state[name + ".qweight"] = torch.from_numpy(qweight)
        state[name + ".qzeros"] = torch.from_numpy(qzeros)
        state[name + ".scales"] = torch.from_numpy(scales16)
        state[name + ".g_idx"] = g_idx.to(torch.int32).contiguous()
        state[name + ".bias"] = bias.clone().to(dt).contiguous()
        # what the loop itself produced, for check_gptq.py
        loop[name + ".codes"] = codes.t().to(torch.int32).contiguous()      # [K, N]
        loop[name + ".zeros"] = zero.t().to(torch.int32).contiguous()       # [G, N] true zeros
        loop[name + ".scale32"] = scale.t().contiguous().float()            # [G, N] fp32
        loop[name + ".g_idx"] = g_idx.to(torch.int32).contiguous()
        loop[name + ".Q"] = Qn.t().contiguous().float()                      # [K, N] = Conv1D layout
    # untouched tensors, as in the source file (AutoGPTQ would save model.state_dict())
    for k, v in src_tensors.items():
        ck = canon(k)
        mod = ck.rsplit(".", 1)[0]
        if mod in qnames:
            continue
        state[ck] = v.clone().to(dt).contiguous() if v.is_floating_point() else v.clone()
    meta = {"format": "pt",                                       # save_quantized lines 553-566
            "gptq_bits": str(args.bits), "gptq_group_size": str(args.group_size),
            "gptq_desc_act": str(bool(args.act_order)), "gptq_damp_percent": str(0.01),
            "gptq_checkpoint_format": "gptq", "gptq_quant_method": "gptq",
            "quantized_by": "gptq_quantize.py (transliteration of " + UPSTREAM + ")"
                            + (" RTN control" if args.rtn else "")}
    safe_save(state, os.path.join(out, "model.safetensors"), meta)
    safe_save(loop, out.rstrip("/") + ".loop.safetensors", {"format": "pt"})

    qc = {"quant_method": "gptq", "bits": args.bits, "group_size": args.group_size,
          "desc_act": bool(args.act_order), "sym": False, "damp_percent": 0.01,
          "static_groups": False, "true_sequential": True, "checkpoint_format": "gptq"}
    cfg = json.load(open(os.path.join(src, "config.json")))
    cfg["quantization_config"] = qc
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    # quantize_config.json as BaseQuantizeConfig.save_pretrained writes it (to_dict)
    qc_file = {"bits": args.bits, "group_size": args.group_size, "damp_percent": 0.01,
               "desc_act": bool(args.act_order), "static_groups": False, "sym": False,
               "true_sequential": True, "model_name_or_path": None,
               "model_file_base_name": "model", "quant_method": "gptq", "checkpoint_format": "gptq"}
    with open(os.path.join(out, "quantize_config.json"), "w") as f:
        json.dump(qc_file, f, indent=2)
    for fn in ["tokenizer.json", "tokenizer_config.json", "generation_config.json", "heldout.txt",
               "train.json"]:
        p = os.path.join(src, fn)
        if os.path.exists(p):
            shutil.copyfile(p, os.path.join(out, fn))
    return qc, zero0, prefixed


def main():
    p = argparse.ArgumentParser()
    p.add_argument("src")
    p.add_argument("out")
    p.add_argument("--group-size", type=int, default=128)
    p.add_argument("--bits", type=int, default=4)
    p.add_argument("--act-order", action="store_true")
    p.add_argument("--rtn", action="store_true")
    p.add_argument("--samples", type=int, default=128)
    p.add_argument("--dtype", choices=["float32", "float16"], default="float32")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-check", action="store_true")
    args = p.parse_args()
    if args.bits not in (2, 4, 8):
        raise SystemExit("bits 2, 4 or 8 (the pack transliterated here; AutoGPTQ's 3-bit layout is not)")
    if args.rtn and args.act_order:
        raise SystemExit("--rtn and --act-order together are not offered")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    t0 = time.time()
    logs = []

    def log(msg):
        logs.append(msg)
        print(msg, flush=True)

    # from_pretrained: the source as it is (fp32), eval mode (_base.py from_pretrained line 686)
    model = GPT2LMHeadModel.from_pretrained(args.src, dtype=torch.float32)
    model.eval()
    calib = None
    examples = []
    if not args.rtn:
        examples, seq, starts, ids_check = calibration_examples(args.src, args.samples, args.seed)
        calib = {"samples": args.samples, "seq": seq, "seed": args.seed, "starts": starts,
                 **ids_check}
        log(f"calibration: {args.samples} windows of {seq} tokens; {ids_check}")
    t1 = time.time()
    quantizers, records = run_quantize(
        model, examples, args.bits, args.group_size, args.act_order, sym=False,
        damp_percent=0.01, static_groups=False, true_sequential=True, rtn=args.rtn, log=log)
    t2 = time.time()
    qc, zero0, prefixed = write_checkpoint(args.src, args.out, model, quantizers, args, records, calib)
    t3 = time.time()
    report = {
        "upstream": UPSTREAM,
        "source": os.path.abspath(args.src),
        "command": " ".join([sys.executable] + sys.argv),
        "method": "rtn" if args.rtn else "gptq",
        "settings": {**qc, "blocksize": 128, "perchannel": True, "mse": False,
                     "samples": args.samples, "seed": args.seed, "dtype": args.dtype,
                     "inside_layer_modules": INSIDE_LAYER_MODULES},
        "calibration": calib,
        "layers": records,
        "zero_point_0_count": zero0,
        "source_names_prefixed": prefixed,
        "runtime_s": {"calibration_data": round(t1 - t0, 2), "quantize": round(t2 - t1, 2),
                      "pack_and_save": round(t3 - t2, 2), "total": round(t3 - t0, 2)},
        "log": logs,
    }
    rp = os.path.join(args.out, "gptq_report.json")
    with open(rp, "w") as f:
        json.dump(report, f, indent=1)
    print(f"wrote {args.out} in {t3 - t0:.1f} s (quantize {t2 - t1:.1f} s); "
          f"zero points 0: {sum(zero0.values())}", flush=True)
    if not args.no_check:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import check_gptq
        res = check_gptq.check(args.out)
        report["check"] = res
        with open(rp, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
