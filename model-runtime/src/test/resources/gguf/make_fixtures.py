"""Tiny GGUF files written by llama.cpp's own tools, and what the references compute on them.

Run from this directory (python3 with torch 2.13 CPU and transformers 5.18, as
../transformers-checkpoints/make_fixtures.py needs; llama.cpp's source at /work/llamacpp/src, the
tree node-llama-cpp 3.22.1 ships, or LLAMACPP_SRC):

    python make_fixtures.py               # everything
    python make_fixtures.py rope-window   # only the yarn / sliding-window files (rope_window)
    python make_fixtures.py phi3          # only the Phi-3 files (phi3)
    python make_fixtures.py gemma         # only the Gemma 2 / Gemma 3 files (gemma)
    python make_fixtures.py k-wide        # only the Phi-3 and Gemma 3 Q4_K_M files (k_wide)
    python make_fixtures.py pres          # only the smollm / gpt-4o pre-tokenizer files (pres)
    python make_fixtures.py tool-use      # only llama3-tool-use-vocab.gguf (tool_use)
    python make_fixtures.py wide          # only blocks.gguf and the llama3-wide K-quant/IQ4 files
    python make_fixtures.py gpt2-q4_0     # only gpt2-q4_0.gguf and its references, from the
                                          # gpt2-f32.gguf here (the checkpoint made again must
                                          # give gpt2-expected.json as it is)

Per case NAME:
  1. transformers writes a tiny checkpoint (../transformers-checkpoints/make_fixtures.py's
     write_case: random seeded weights stored in bfloat16, the trained tiny tokenizer and the
     family's chat template), in a temporary folder, at a shape whose projections' inputs are
     multiples of 32 (GGUF's Q8_0/Q4_0 blocks; the 48-wide checkpoints beside would fall back to
     F16).
  2. llama.cpp's convert_hf_to_gguf.py converts it: NAME-f32.gguf, NAME-f16.gguf, NAME-q8_0.gguf.
     The converter names a BPE pre-tokenizer by hashing the tokenizer's output on a fixed text,
     which a tiny trained vocabulary cannot match; PRE names the family's (the same regex as the
     checkpoint's tokenizer.json), and nothing else of the converter is changed.
  3. NAME-q4_0.gguf: the F32 file rewritten by llama.cpp's gguf-py (GGUFReader / GGUFWriter,
     gguf.quants.quantize Q4_0: every 2-D .weight whose rows are whole blocks), metadata copied,
     general.file_type MOSTLY_Q4_0 (llama-quantize, which would pick Q6_K for output.weight, is
     not built here).
  4. NAME-expected.json: transformers on the checkpoint (make_fixtures.expected: token ids of fixed
     texts, greedy steps with top-5 logprobs, chat token counts). The F32 file holds the same
     numbers (bfloat16 widened exactly), so these are the F32 file's references.
  Also: llama3-split-0000N-of-00003.gguf (the converter's --split-max-tensors 8 of the F32 file);
  value-types.gguf / .json (gguf-py's GGUFWriter: every value type, alignment 64, an F32 and a Q8_0
  tensor; the values as GGUFReader reads them); blocks.gguf / .json (tensors of every type
  dequantized at load, and gguf-py's dequantization of each); spm-vocab.gguf / spm-expected.json
  (a SentencePiece vocabulary converted --vocab-only, and sentencepiece's ids, see spm_vocab);
  gguf-py-tables.json (gguf-py's ggml types with
  block sizes, metadata key names (and llama-arch.cpp's LLM_KV_NAMES), and the served
  architectures' tensor names).
  5. NAME-TYPE-dequantized.json: for each quantized file, gguf-py's dequantize of two of its
     tensors (KEPT) (llama.cpp's layout [rows, K], as stored: q/k rows still permuted), float32 values
     as hex bits; and NAME-TYPE-expected.json: transformers on the checkpoint with every weight
     replaced by the file's dequantized weights (unpermuted as llama.cpp's reverse permutation),
     the reference for the quantized files.
"""
import copy
import math
import json
import os
import runpy
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
LLAMACPP = os.environ.get("LLAMACPP_SRC", "/work/llamacpp/src")
sys.path.insert(0, os.path.join(LLAMACPP, "gguf-py"))
sys.path.insert(0, LLAMACPP)
sys.path.insert(0, os.path.join(HERE, "..", "transformers-checkpoints"))

import gguf  # noqa: E402  llama.cpp's own gguf-py
import make_fixtures as hf  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402

assert os.path.dirname(gguf.__file__).startswith(os.path.join(LLAMACPP, "gguf-py")), gguf.__file__

SHAPE = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-5)

# name -> (model_type, extra config (transformers 5 form), tie, tokenizer.ggml.pre, seed)
CASES = {
    "llama3": ("llama", dict(rope_parameters=dict(
        rope_type="llama3", rope_theta=500000.0, factor=8.0, low_freq_factor=1.0,
        high_freq_factor=4.0, original_max_position_embeddings=16)), True, "llama-bpe", 400),
    "qwen2": ("qwen2", dict(rope_parameters=dict(rope_type="default", rope_theta=1000000.0)),
              False, "qwen2", 401),
    # head_dim 16 with hidden 64 / 4 heads: key_length in the metadata; q/k norms as tensors
    "qwen3": ("qwen3", dict(head_dim=16, rope_parameters=dict(rope_type="default",
                                                             rope_theta=1000000.0)),
              True, "qwen2", 402),
    # GPT-2: Conv1D weights (the converter transposes them), a fused c_attn, learned positions
    "gpt2": ("gpt2", {}, True, "gpt-2", 403),
}
# K-quants need rows of 256: a wider one-layer Llama 3, quantized by llama.cpp's llama-quantize
# (Q4_K_M: Q4_K with Q6_K for some tensors; Q6_K; IQ4_NL and IQ4_XS, which llama-quantize makes
# without an importance matrix) from an F32 file that is not kept
WIDE = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=1, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-5)
QUANTIZE = os.environ.get("LLAMA_QUANTIZE", "/work/llamacpp/src/build/bin/llama-quantize")
CASES["llama3-wide"] = ("llama", CASES["llama3"][1], True, "llama-bpe", 404)

# the files written per case (qwen3 only F32 and Q8_0: the rest is the code paths above)
OUTTYPES = {"llama3": ("f32", "f16", "q8_0", "q4_0"), "qwen2": ("f32", "f16", "q8_0", "q4_0"),
            "qwen3": ("f32", "q8_0"), "gpt2": ("f32", "q8_0", "q4_0"),
            "llama3-wide": ("q4_k_m", "q6_k", "iq4_nl", "iq4_xs")}


def write_gpt2(out, seed):
    """A GPT-2 checkpoint written by transformers (GPT2LMHeadModel.save_pretrained), with a tiny
    byte-level BPE trained here by Hugging Face's tokenizers as GPT-2's is built (ByteLevel
    pre-tokenizer with its own regex, <|endoftext|> its only special token, nothing added)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GenerationConfig, PreTrainedTokenizerFast
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    corpus = (hf.TEXTS + hf.PROMPTS) * 20
    backend.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=420, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<|endoftext|>",
                                  eos_token="<|endoftext|>")
    config = GPT2Config(vocab_size=len(tok), n_positions=64, n_ctx=64, n_embd=64, n_layer=2,
                        n_head=4, activation_function="gelu_new", bos_token_id=0, eos_token_id=0)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1 and ".ln_" in name or name.endswith("ln_f.weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            elif p.dim() == 1:
                p.copy_(0.2 * torch.randn(p.shape, generator=g))
            elif "wte" in name or "wpe" in name:
                p.copy_(torch.randn(p.shape, generator=g))
            else:  # Conv1D [in, out]
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p.shape[0]) * 1.5)
    model = model.to(torch.bfloat16)
    model.generation_config = GenerationConfig(bos_token_id=0, eos_token_id=0)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def convert(hf_dir, out, outtype, pre, *extra):
    import conversion.base as base
    base.TextModel.get_vocab_base_pre = lambda self, tokenizer: pre
    argv = sys.argv
    sys.argv = ["convert_hf_to_gguf.py", hf_dir, "--outtype", outtype, "--outfile", out, *extra]
    try:
        runpy.run_path(os.path.join(LLAMACPP, "convert_hf_to_gguf.py"), run_name="__main__")
    finally:
        sys.argv = argv


def requantize(src, dst, qtype, file_type, metadata=None):
    """src's metadata (with metadata's values in place of its own) and tensors, with every 2-D
    .weight whose rows are whole blocks in qtype (none: qtype None)."""
    reader = gguf.GGUFReader(src)
    arch = reader.get_field(gguf.Keys.General.ARCHITECTURE).contents()
    writer = gguf.GGUFWriter(dst, arch)
    for field in reader.fields.values():
        if field.name.startswith("GGUF.") or field.name in (gguf.Keys.General.ARCHITECTURE,
                                                             gguf.Keys.General.FILE_TYPE):
            continue
        sub = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
        value = (metadata or {}).get(field.name, field.contents())
        writer.add_key_value(field.name, value, field.types[0], sub_type=sub)
    writer.add_file_type(file_type)
    block = gguf.GGML_QUANT_SIZES[qtype][0] if qtype is not None else 0
    for t in reader.tensors:
        data = np.array(t.data)
        if (qtype is not None and t.tensor_type == gguf.GGMLQuantizationType.F32
                and data.ndim == 2 and t.name.endswith(".weight") and data.shape[-1] % block == 0):
            q = gguf.quants.quantize(data, qtype)
            writer.add_tensor(t.name, q, raw_shape=q.shape, raw_dtype=qtype)
        else:
            writer.add_tensor(t.name, data, raw_dtype=t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def unpermute(w, n_head):
    """The inverse of the converter's LlamaModel.permute (rows of each head: halves interleaved)."""
    return (w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


# llama.cpp's names of the tensors a Llama-family layer holds -> transformers' (after model.)
LAYER = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
         "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
         "ffn_down": "mlp.down_proj", "attn_norm": "input_layernorm",
         "ffn_norm": "post_attention_layernorm", "attn_q_norm": "self_attn.q_norm",
         "attn_k_norm": "self_attn.k_norm"}


# Gemma's (the rest as LAYER)
GEMMA_LAYER = {**LAYER, "post_attention_norm": "post_attention_layernorm",
               "ffn_norm": "pre_feedforward_layernorm",
               "post_ffw_norm": "post_feedforward_layernorm"}

# Phi-3's fused tensors (the rest as LAYER)
PHI3_LAYER = {**LAYER, "attn_qkv": "self_attn.qkv_proj", "ffn_up": "mlp.gate_up_proj"}

GPT2 = {"attn_norm": "ln_1", "attn_qkv": "attn.c_attn", "attn_output": "attn.c_proj",
        "ffn_norm": "ln_2", "ffn_up": "mlp.c_fc", "ffn_down": "mlp.c_proj"}


def hf_name(name, model_type="llama"):
    if model_type == "gpt2":
        if name == "token_embd.weight":
            return "transformer.wte.weight"
        if name == "position_embd.weight":
            return "transformer.wpe.weight"
        if name.startswith("output_norm."):
            return "transformer.ln_f." + name.split(".")[-1]
        _, layer, part, kind = name.split(".")
        return f"transformer.h.{layer}.{GPT2[part]}.{kind}"
    if name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if name == "output.weight":
        return "lm_head.weight"
    if name == "output_norm.weight":
        return "model.norm.weight"
    _, layer, part, kind = name.split(".")
    table = {"phi3": PHI3_LAYER, "gemma": GEMMA_LAYER}.get(model_type, LAYER)
    return f"model.layers.{layer}.{table[part]}.{kind}"


def dequantized(path, model_type, config):
    """Every quantized tensor of the file as gguf-py dequantizes it: {name: float32 [rows, K]}."""
    out = {}
    for t in gguf.GGUFReader(path).tensors:
        if t.tensor_type in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
            continue
        out[t.name] = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
    return out


# the tensors whose dequantized values are kept (a q rows still permuted, a down projection;
# GPT-2's fused qkv and its up projection)
KEPT = ("blk.0.attn_q.weight", "blk.1.ffn_down.weight", "blk.0.attn_qkv.weight",
        "blk.1.ffn_up.weight")


def write_dequantized(values, path):
    with open(path, "w") as f:
        json.dump({name: {"shape": list(values[name].shape),
                          "f32_bits": values[name].reshape(-1).view(np.uint32).tolist()}
                   for name in KEPT if name in values}, f)


def expected_with(hf_dir, values, model_type, config, out_json):
    """transformers on the checkpoint with the file's dequantized weights in place."""
    work = tempfile.mkdtemp()
    try:
        shutil.copytree(hf_dir, work, dirs_exist_ok=True)
        model = AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.float32)
        state = model.state_dict()
        for name, v in values.items():
            w = v
            if model_type == "llama" and ".attn_q." in name:
                w = unpermute(w, config["num_attention_heads"])
            elif model_type == "llama" and ".attn_k." in name:
                w = unpermute(w, config["num_key_value_heads"])
            key = hf_name(name, model_type)
            if model_type == "gpt2" and w.ndim == 2 and "embd" not in name:
                w = w.T  # Conv1D keeps [in, out]; the converter transposed it
            assert state[key].shape == tuple(w.shape), (key, state[key].shape, w.shape)
            state[key].copy_(torch.from_numpy(w.copy()))
        if config.get("tie_word_embeddings") and "token_embd.weight" in values:
            assert "output.weight" not in values
        model.save_pretrained(work)  # float32, so nothing is rounded on the way back
        hf.expected(work)
        shutil.move(os.path.join(work, "expected.json"), out_json)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def value_types(path):
    """Every GGUF value type and an alignment of 64, written by gguf-py's GGUFWriter; the values
    as gguf-py's GGUFReader reads them back, in value-types.json."""
    T = gguf.GGUFValueType
    kv = [("test.uint8", 200, T.UINT8), ("test.int8", -100, T.INT8), ("test.uint16", 60000, T.UINT16),
          ("test.int16", -30000, T.INT16), ("test.uint32", 4000000000, T.UINT32),
          ("test.int32", -2000000000, T.INT32), ("test.float32", 0.1, T.FLOAT32),
          ("test.bool", True, T.BOOL), ("test.string", "h\u00e9llo \U0001F642", T.STRING),
          ("test.uint64", 2 ** 63 + 5, T.UINT64), ("test.int64", -(2 ** 62), T.INT64),
          ("test.float64", 0.1, T.FLOAT64)]
    writer = gguf.GGUFWriter(path, "test")
    writer.add_uint32(gguf.Keys.General.ALIGNMENT, 64)
    for key, value, vtype in kv:
        writer.add_key_value(key, value, vtype)
    writer.add_array("test.array.int32", [1, -2, 3])
    writer.add_array("test.array.string", ["a", "", "b c"])
    writer.add_array("test.array.float32", [0.5, -1.25])
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((2, 64)).astype(np.float32)
    writer.add_tensor("a", a)
    q = gguf.quants.quantize(b, gguf.GGMLQuantizationType.Q8_0)
    writer.add_tensor("b", q, raw_shape=q.shape, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    reader = gguf.GGUFReader(path)
    fields = {}
    for f in reader.fields.values():
        if f.name.startswith("GGUF."):
            continue
        v = f.contents()
        fields[f.name] = {"type": f.types[0].name, "value": v if not isinstance(v, float) else
                          struct.unpack("<d", struct.pack("<d", v))[0]}
    tensors = [{"name": t.name, "type": t.tensor_type.name, "ne": [int(x) for x in t.shape],
                "offset": int(t.data_offset), "n_bytes": int(t.n_bytes)} for t in reader.tensors]
    with open(os.path.join(HERE, "value-types.json"), "w") as f:
        json.dump({"fields": fields, "tensors": tensors}, f, indent=1)


def blocks(path):
    """Tensors of the types dequantized at load, written by gguf-py: Q4_1/Q5_0/Q5_1 quantized by
    gguf-py from random floats; Q4_K/Q5_K/Q6_K/IQ4_NL/IQ4_XS (which gguf-py cannot quantize) as
    random block bytes with sane fp16 (super-)block scales. What gguf-py's dequantize makes of
    each, as float32 bits, in blocks.json."""
    Q = gguf.GGMLQuantizationType
    rng = np.random.default_rng(11)
    writer = gguf.GGUFWriter(path, "test")
    for qtype in (Q.Q4_1, Q.Q5_0, Q.Q5_1):
        x = rng.standard_normal((3, 64)).astype(np.float32)
        q = gguf.quants.quantize(x, qtype)
        writer.add_tensor(qtype.name, q, raw_shape=q.shape, raw_dtype=qtype)
    # (IQ4 last: the types before draw the same random numbers as when they were the last)
    for qtype, scale_at in ((Q.Q4_K, (0, 2)), (Q.Q5_K, (0, 2)), (Q.Q6_K, (208,)),
                            (Q.IQ4_NL, (0,)), (Q.IQ4_XS, (0,))):
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        raw = rng.integers(0, 256, size=(2, 2 * size), dtype=np.uint8)  # 2 rows of 2 blocks
        for row in raw:
            for b in range(2):
                for at in scale_at:
                    d = np.float16(rng.standard_normal() * 0.01)
                    row[b * size + at:b * size + at + 2] = np.frombuffer(d.tobytes(), np.uint8)
        writer.add_tensor(qtype.name, raw, raw_shape=raw.shape, raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    out = {}
    for t in gguf.GGUFReader(path).tensors:
        v = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        out[t.name] = {"shape": list(v.shape), "f32_bits": v.reshape(-1).view(np.uint32).tolist()}
    with open(os.path.join(HERE, "blocks.json"), "w") as f:
        json.dump(out, f)


SPM_TEXTS = hf.TEXTS + ["  leading spaces", "trailing  ", "a\n\n b", "ünïcödé ß 東京 🙂",
                        "12345 + 67 = 12412", ""]


def train_spm(vocab_size=520):
    """A SentencePiece BPE model trained as Llama 2's was (identity normalization, dummy prefix,
    whitespace kept, digits split, byte fallback): the serialized model."""
    import io
    import sentencepiece as spm
    corpus = [line for t in (hf.TEXTS + hf.PROMPTS) * 20 for line in t.split("\n") if line]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus), model_writer=model, model_type="bpe",
        vocab_size=vocab_size, byte_fallback=True, normalization_rule_name="identity",
        remove_extra_whitespaces=False, add_dummy_prefix=True, split_digits=True,
        character_coverage=0.995, allow_whitespace_only_pieces=True, unk_id=0, bos_id=1, eos_id=2,
        pad_id=-1, num_threads=1, minloglevel=2)
    return model.getvalue()


def spm_vocab(path):
    """A SentencePiece BPE model trained here as Llama 2's was (identity normalization, dummy
    prefix, whitespace kept, digits split, byte fallback), written into a Llama checkpoint folder
    as tokenizer.model and converted --vocab-only by llama.cpp's converter (its
    _set_vocab_sentencepiece: pieces, scores, types). spm-expected.json: sentencepiece's own ids
    of SPM_TEXTS (the converter's source of the vocabulary; llama.cpp's SPM tokenizer is written
    to match it), BOS first as llama.cpp's add_bos_token default puts it."""
    import sentencepiece as spm
    from transformers import LlamaConfig
    model = train_spm()
    sp = spm.SentencePieceProcessor(model_proto=model)
    work = tempfile.mkdtemp()
    try:
        with open(os.path.join(work, "tokenizer.model"), "wb") as f:
            f.write(model)
        config = LlamaConfig(vocab_size=sp.get_piece_size(), bos_token_id=1, eos_token_id=2,
                             **SHAPE)
        torch.manual_seed(0)
        AutoModelForCausalLM.from_config(config).save_pretrained(work)
        convert(work, path, "f32", "default", "--vocab-only")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(os.path.join(HERE, "spm-expected.json"), "w") as f:
        json.dump({"sentencepiece": spm.__version__, "bos": 1,
                   "texts": [{"text": t, "ids": sp.encode(t)} for t in SPM_TEXTS]}, f, indent=1)


def tables():
    """gguf-py's own tables the Java ones are held against: ggml types and their block sizes, the
    metadata key names, and the tensor names of the served architectures."""
    keys = []
    for group in ("General", "LLM", "Attention", "Rope", "Split", "Tokenizer"):
        cls = getattr(gguf.Keys, group)
        keys += [v for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, str)]
    archs = {}
    for arch in ("llama", "qwen2", "qwen3", "phi3", "gemma2", "gemma3", "gpt2"):
        a = next(m for m, n in gguf.MODEL_ARCH_NAMES.items() if n == arch)
        archs[arch] = sorted(gguf.TENSOR_NAMES[t] for t in gguf.MODEL_TENSORS[a])
    # llama.cpp's own LLM_KV_NAMES (llama-arch.cpp), which still names keys gguf-py dropped
    import re
    with open(os.path.join(LLAMACPP, "src", "llama-arch.cpp")) as f:
        arch_cpp = f.read()
    kv_names = sorted(set(k.replace("%s", "{arch}") for k in
                          re.findall(r'\{\s*LLM_KV_[A-Z0-9_]+\s*,\s*"([^"]+)"\s*\}', arch_cpp)))
    # llama.cpp's tokenizer.ggml.pre names (llama-vocab.cpp's tokenizer_pre == "...")
    with open(os.path.join(LLAMACPP, "src", "llama-vocab.cpp")) as f:
        pres = sorted(set(re.findall(r'tokenizer_pre == "([^"]+)"', f.read())))
    with open(os.path.join(HERE, "gguf-py-tables.json"), "w") as f:
        json.dump({"ggml_types": {t.name: [t.value, *gguf.GGML_QUANT_SIZES[t]]
                                  for t in gguf.GGMLQuantizationType},
                   "keys": sorted(set(keys)), "llama_arch_keys": kv_names,
                   "llama_vocab_pres": pres,
                   "tensor_names": archs}, f, indent=1)


# transformers-written checkpoints beside (../transformers-checkpoints) with yarn rope or a
# sliding window, converted as they are by the converter: name -> tokenizer.ggml.pre. --outtype
# bf16 holds their bfloat16 weights exactly at half F32's bytes.
ROPE_WINDOW = {"qwen3-yarn": "qwen2", "llama-yarn": "llama-bpe", "qwen2-window": "qwen2",
               "qwen3-window": "qwen2"}


def rope_window():
    """NAME-bf16.gguf for each ROPE_WINDOW checkpoint, the converter's output as it is; the
    references are the checkpoints' own expected.json (transformers) and llama-server's answers
    on the F32 conversion (NAME-f32.llama-server.json, llama_server_reference.py; the F32 file
    holds the same numbers and is not kept: llama.cpp computes a BF16 file's products with bf16
    activations, which moves its greedy tokens). The converter writes yarn's type, factor and
    original context (and beta_fast/beta_slow/attention_factor when the config has them; never
    mscale), and no sliding window for llama/qwen2/qwen3 (whose llama.cpp loaders read none)."""
    ckpts = os.path.join(HERE, "..", "transformers-checkpoints")
    for name, pre in ROPE_WINDOW.items():
        convert(os.path.join(ckpts, name), os.path.join(HERE, f"{name}-bf16.gguf"), "bf16", pre)
        tmp = tempfile.mkdtemp()
        try:
            f32 = os.path.join(tmp, f"{name}-f32.gguf")
            convert(os.path.join(ckpts, name), f32, "f32", pre)
            subprocess.run([sys.executable, os.path.join(HERE, "llama_server_reference.py"), f32],
                           check=True)
            shutil.move(f32[:-len(".gguf")] + ".llama-server.json",
                        os.path.join(HERE, f"{name}-f32.llama-server.json"))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print("wrote", name)


# Phi-3 as its hub checkpoints are, which is what the converter's phi3 vocabulary reads: Llama 2's
# kind of SentencePiece vocabulary in tokenizer.model, the chat markers added after it, fused
# qkv_proj and gate_up_proj, longrope. name -> (config keys (transformers 5 form), tie, seed,
# llama-server's -c). llama.cpp applies the long factors whenever its context per sequence, -c
# rounded up to a multiple of 256, exceeds the original context; transformers (and radixserve)
# when the sequence does: "phi3" keeps every prompt and its steps within 256 (short factors;
# llama-server at -c 256), "phi3-long" has every prompt past 8 (long factors from the first
# token; -c 64, which is 256), over 3/4 of each head and tied, as Phi-4-mini.
# "phi3-window": Phi-3-mini-4k's window on every layer, which the converter writes and llama.cpp
# ignores ("Phi SWA is currently disabled"); its reference is transformers only.
PHI3 = {
    "phi3": (dict(max_position_embeddings=512, original_max_position_embeddings=256,
                  rope_parameters=dict(rope_type="longrope", rope_theta=10000.0,
                                       short_factor=[1.0 + 0.05 * i for i in range(8)],
                                       long_factor=[1.0 + 0.9 * i for i in range(8)])),
             False, 405, "256"),
    "phi3-long": (dict(original_max_position_embeddings=8, rope_parameters=dict(
        rope_type="longrope", rope_theta=10000.0, partial_rotary_factor=0.75,
        short_factor=[1.0 + 0.1 * i for i in range(6)],
        long_factor=[1.5 + 2.5 * i for i in range(6)])), True, 406, "64"),
    "phi3-window": (dict(sliding_window=6, rope_parameters=dict(
        rope_type="default", rope_theta=10000.0)), False, 407, None),
}
PHI3_TYPES = {"phi3": ("f32", "q8_0", "q4_0"), "phi3-long": ("f32",), "phi3-window": ("f32",)}


def save_random(config, tok, eos, seed, out, randomize):
    """A model of config with seeded random weights (randomize), saved by transformers in
    bfloat16 as the hubs store them, with tok and a generation config ending at eos."""
    from transformers import GenerationConfig
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    randomize(model, seed)
    model = model.to(torch.bfloat16)
    model.generation_config = GenerationConfig(bos_token_id=tok.bos_token_id, eos_token_id=eos)
    model.save_pretrained(out)
    tok.save_pretrained(out)


def write_phi3(out, extra, tie, seed):
    """A Phi3ForCausalLM checkpoint written by transformers, with tokenizer.model (train_spm) and
    the tokenizer transformers builds from it plus Phi-3's five chat markers, its chat template
    (Phi-3.5-mini's), <s> / <|end|>."""
    from transformers import AutoTokenizer, Phi3Config
    os.makedirs(out)
    spm_path = os.path.join(out, "tokenizer.model")
    with open(spm_path, "wb") as f:
        f.write(train_spm())
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "LlamaTokenizer", "legacy": False, "add_bos_token": True,
                   "add_eos_token": False, "bos_token": "<s>", "eos_token": "<|end|>",
                   "unk_token": "<unk>"}, f)
    tok = AutoTokenizer.from_pretrained(out)  # transformers' own conversion of tokenizer.model
    tok.add_special_tokens({"additional_special_tokens": hf.PHI_SPECIALS})
    with open(os.path.join(hf.HERE, "templates", "phi3_5.jinja")) as f:
        tok.chat_template = f.read()
    eos = [tok.convert_tokens_to_ids("<|end|>")]
    config = Phi3Config(vocab_size=len(tok), tie_word_embeddings=tie, bos_token_id=tok.bos_token_id,
                        eos_token_id=eos, pad_token_id=eos[0], **{**SHAPE, **extra})
    save_random(config, tok, eos, seed, out, hf.randomize)
    if not os.path.exists(spm_path):  # the converter reads the vocabulary from it
        with open(spm_path, "wb") as f:
            f.write(train_spm())
    return out


def phi3():
    """NAME-TYPE.gguf for each PHI3 case (the converter's F32 and Q8_0, gguf-py's Q4_0), the
    checkpoint's transformers outputs (NAME-expected.json; the quantized files' with their
    dequantized weights, NAME-TYPE-expected.json), llama-server's on the F32 file at the case's
    context (NAME-f32.llama-server.json)."""
    for name, (extra, tie, seed, context) in PHI3.items():
        tmp = tempfile.mkdtemp()
        try:
            hf_dir = write_phi3(os.path.join(tmp, name), extra, tie, seed)
            hf.expected(hf_dir)
            with open(os.path.join(hf_dir, "expected.json")) as f:
                runs = json.load(f)["runs"]
            original = extra["original_max_position_embeddings"] if "rope_parameters" in extra \
                and extra["rope_parameters"]["rope_type"] == "longrope" else None
            for r in runs:  # each run stays on one side of the original context, as described
                first, last = len(r["prompt_ids"]), len(r["prompt_ids"]) + hf.STEPS
                assert original is None or (last <= original if int(context) <= original
                                            else first > original), (name, first, last)
            shutil.copy(os.path.join(hf_dir, "expected.json"),
                        os.path.join(HERE, name + "-expected.json"))
            with open(os.path.join(hf_dir, "config.json")) as f:
                config = json.load(f)
            for outtype in ("f32", "q8_0"):
                if outtype in PHI3_TYPES[name]:
                    convert(hf_dir, os.path.join(HERE, f"{name}-{outtype}.gguf"), outtype,
                            "default")
            if "q4_0" in PHI3_TYPES[name]:
                requantize(os.path.join(HERE, f"{name}-f32.gguf"),
                           os.path.join(HERE, f"{name}-q4_0.gguf"),
                           gguf.GGMLQuantizationType.Q4_0, gguf.LlamaFileType.MOSTLY_Q4_0)
            for qtype in (t for t in PHI3_TYPES[name] if t.startswith("q")):
                values = dequantized(os.path.join(HERE, f"{name}-{qtype}.gguf"), "phi3", config)
                expected_with(hf_dir, values, "phi3", config,
                              os.path.join(HERE, f"{name}-{qtype}-expected.json"))
            if context:
                env = dict(os.environ, LLAMA_CTX=context)
                subprocess.run([sys.executable, os.path.join(HERE, "llama_server_reference.py"),
                                os.path.join(HERE, f"{name}-f32.gguf")], check=True, env=env)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print("wrote", name)


# Gemma 2 and Gemma 3 (text) as their hub checkpoints are, which is what the converter's Gemma
# vocabulary reads: a SentencePiece tokenizer.model (no dummy prefix, byte fallback, <pad> <eos>
# <bos> <unk> first, the turn markers user-defined), every norm an offset (1 + w), tied.
# name -> (config class, config keys (transformers 5 form), seed). What llama.cpp's loaders take
# from the metadata and what they fix: the score scale 1/sqrt(head_dim) but for the 27B layer
# counts (so query_pre_attn_scalar is head_dim here), Gemma 2's window on every other layer and
# Gemma 3's on five layers in six (the converter writes no pattern), Gemma 3's sliding layers at
# rope.freq_base_swa without scaling.
GEMMA = {
    "gemma2": ("Gemma2Config", dict(
        num_hidden_layers=2, head_dim=16, query_pre_attn_scalar=16, attn_logit_softcapping=3.0,
        final_logit_softcapping=10.0, sliding_window=8,
        layer_types=["sliding_attention", "full_attention"],
        rope_parameters=dict(rope_type="default", rope_theta=10000.0)), 420),
    "gemma3": ("Gemma3TextConfig", dict(
        num_hidden_layers=6, head_dim=16, query_pre_attn_scalar=16, sliding_window=6,
        final_logit_softcapping=None, attn_logit_softcapping=None,
        layer_types=["sliding_attention"] * 5 + ["full_attention"],
        rope_parameters=dict(
            full_attention=dict(rope_type="linear", rope_theta=1000000.0, factor=2.0),
            sliding_attention=dict(rope_type="default", rope_theta=10000.0))), 408),
}
GEMMA_TYPES = ("f32", "q8_0", "q4_0")
GEMMA_SPECIALS = ["<mask>", "<start_of_turn>", "<end_of_turn>"]


def train_gemma_spm():
    """A SentencePiece BPE model shaped as Gemma's tokenizer.model: ids 0-3 <pad> <eos> <bos>
    <unk>, the turn markers user-defined, no dummy prefix, whitespace kept, digits split, byte
    fallback."""
    import io
    import sentencepiece as spm
    corpus = [line for t in (hf.TEXTS + hf.PROMPTS) * 20 for line in t.split("\n") if line]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus), model_writer=model, model_type="bpe", vocab_size=520,
        byte_fallback=True, normalization_rule_name="identity", remove_extra_whitespaces=False,
        add_dummy_prefix=False, split_digits=True, character_coverage=0.995,
        allow_whitespace_only_pieces=True, pad_id=0, eos_id=1, bos_id=2, unk_id=3,
        pad_piece="<pad>", eos_piece="<eos>", bos_piece="<bos>", unk_piece="<unk>",
        user_defined_symbols=GEMMA_SPECIALS, num_threads=1, minloglevel=2)
    return model.getvalue()


def gemma_fixtures():
    """../gemma/make_fixtures.py, the Gemma checkpoints' script, as a module."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "gemma_fixtures", os.path.join(HERE, "..", "gemma", "make_fixtures.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_gemma(out, config_class, extra, seed, template, embed_scale=1.0):
    """A Gemma checkpoint written by transformers (bfloat16, tied), tokenizer.model and the
    tokenizer transformers builds from it (GemmaTokenizer: <bos> added), the model's chat
    template; the embedding's spread times embed_scale (a wider model scales it up by more)."""
    import transformers
    from transformers import AutoTokenizer
    os.makedirs(out)
    with open(os.path.join(out, "tokenizer.model"), "wb") as f:
        f.write(train_gemma_spm())
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "GemmaTokenizer", "add_bos_token": True,
                   "add_eos_token": False, "bos_token": "<bos>", "eos_token": "<eos>",
                   "pad_token": "<pad>", "unk_token": "<unk>"}, f)
    tok = AutoTokenizer.from_pretrained(out)
    with open(os.path.join(HERE, "..", "gemma", template)) as f:
        tok.chat_template = f.read()
    eos = [tok.convert_tokens_to_ids("<eos>"), tok.convert_tokens_to_ids("<end_of_turn>")]
    shape = {k: v for k, v in SHAPE.items() if k != "max_position_embeddings"}
    config = getattr(transformers, config_class)(
        vocab_size=len(tok), tie_word_embeddings=True, bos_token_id=tok.bos_token_id,
        eos_token_id=eos, pad_token_id=tok.pad_token_id, max_position_embeddings=128,
        **{**shape, **extra})
    # the Gemma checkpoints' spread, so that greedy decoding varies
    spread = gemma_fixtures().randomize

    def randomize(model, seed):
        spread(model, seed)
        with torch.no_grad():
            model.model.embed_tokens.weight.mul_(embed_scale)
    save_random(config, tok, eos, seed, out, randomize)
    assert os.path.exists(os.path.join(out, "tokenizer.model"))
    # the hubs' tokenizer_config.json lists the special tokens (transformers 5 no longer writes
    # them there); the converter's SentencePiece vocabulary types them CONTROL from it
    path = os.path.join(out, "tokenizer_config.json")
    with open(path) as f:
        tc = json.load(f)
    tc["added_tokens_decoder"] = {
        str(tok.convert_tokens_to_ids(t)): {"content": t, "lstrip": False, "normalized": False,
                                             "rstrip": False, "single_word": False, "special": True}
        for t in ["<pad>", "<eos>", "<bos>", "<unk>"] + GEMMA_SPECIALS}
    with open(path, "w") as f:
        json.dump(tc, f, indent=2)
    return out


def gemma():
    """NAME-TYPE.gguf for each GEMMA case (the converter's F32 and Q8_0, gguf-py's Q4_0), the
    checkpoint's transformers outputs (NAME-expected.json; the quantized files' on their
    dequantized weights, NAME-TYPE-expected.json), llama-server's on each file
    (NAME-TYPE.llama-server.json)."""
    for name, (config_class, extra, seed) in GEMMA.items():
        tmp = tempfile.mkdtemp()
        try:
            hf_dir = write_gemma(os.path.join(tmp, name), config_class, extra, seed,
                                 name + ".jinja")
            hf.expected(hf_dir)
            with open(os.path.join(hf_dir, "expected.json")) as f:
                gaps = [s["top_logprobs"][0] - s["top_logprobs"][1]
                        for r in json.load(f)["runs"] for s in r["steps"]]
            # no near-tie, so that llama-server's greedy tokens (its own kernels) are comparable
            assert min(gaps) > 0.02, (name, "seed", seed, "top-2 gap", min(gaps))
            shutil.copy(os.path.join(hf_dir, "expected.json"),
                        os.path.join(HERE, name + "-expected.json"))
            with open(os.path.join(hf_dir, "config.json")) as f:
                config = json.load(f)
            for outtype in ("f32", "q8_0"):
                convert(hf_dir, os.path.join(HERE, f"{name}-{outtype}.gguf"), outtype, "default")
            requantize(os.path.join(HERE, f"{name}-f32.gguf"), os.path.join(HERE, f"{name}-q4_0.gguf"),
                       gguf.GGMLQuantizationType.Q4_0, gguf.LlamaFileType.MOSTLY_Q4_0)
            for qtype in ("q8_0", "q4_0"):
                values = dequantized(os.path.join(HERE, f"{name}-{qtype}.gguf"), "gemma", config)
                expected_with(hf_dir, values, "gemma", config,
                              os.path.join(HERE, f"{name}-{qtype}-expected.json"))
            subprocess.run([sys.executable, os.path.join(HERE, "llama_server_reference.py")]
                           + [os.path.join(HERE, f"{name}-{t}.gguf") for t in GEMMA_TYPES],
                           check=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print("wrote", name)


# K-quant files of the families whose layout or graph differs from Llama's, at WIDE's 256-wide
# rows (Q4_K's super-blocks): Phi-3's fused attn_qkv / ffn_up in Q4_K_M's blocks, cut into parts
# by rows; Gemma 3 (its norms, score scale and windows on the Gemma graph). Gemma multiplies its
# embedding by sqrt(hidden): at 256 wide, with the 64-wide checkpoints' spread, the residual is
# the input token's own row and greedy decoding repeats the prompt's last token whatever the seed
# (as the one-layer Gemma 3 tried on 2026-12-03 did); a tenth of the spread varies. Both layers
# slide: llama.cpp reads Gemma 3's windows as five layers in six (the converter writes no
# pattern), so a [sliding, full] checkpoint would be another model in its file. Seed 421: the
# first near-tie (top-2 gap < 0.05) of the bf16 checkpoint's greedy runs at steps 7 and 6.
# name -> (model_type, seed, writer(out, seed) -> checkpoint folder)
K_WIDE = {
    "phi3-wide": ("phi3", 410, lambda out, seed: write_phi3(out, {**WIDE, **dict(
        rope_parameters=dict(rope_type="default", rope_theta=10000.0))}, False, seed)),
    "gemma3-wide": ("gemma", 421, lambda out, seed: write_gemma(out, "Gemma3TextConfig", {
        **{k: v for k, v in WIDE.items() if k != "max_position_embeddings"},
        **dict(num_hidden_layers=2, head_dim=64, query_pre_attn_scalar=64, sliding_window=6,
               final_logit_softcapping=None, attn_logit_softcapping=None,
               layer_types=["sliding_attention", "sliding_attention"],
               rope_parameters=dict(
                   full_attention=dict(rope_type="default", rope_theta=1000000.0),
                   sliding_attention=dict(rope_type="default", rope_theta=10000.0)))},
        seed, "gemma3.jinja", embed_scale=0.1)),
}


def k_wide():
    """NAME-q4_k_m.gguf for each K_WIDE case (llama-quantize from the converter's F32, which is
    not kept), transformers on its dequantized weights (NAME-q4_k_m-expected.json) and
    llama-server's answers on it."""
    for name, (model_type, seed, write) in K_WIDE.items():
        tmp = tempfile.mkdtemp()
        try:
            hf_dir = write(os.path.join(tmp, name), seed)
            with open(os.path.join(hf_dir, "config.json")) as f:
                config = json.load(f)
            f32 = os.path.join(tmp, name + "-f32.gguf")
            convert(hf_dir, f32, "f32", "default")
            out = os.path.join(HERE, f"{name}-q4_k_m.gguf")
            subprocess.run([QUANTIZE, f32, out, "Q4_K_M", "1"], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            expected_with(hf_dir, dequantized(out, model_type, config), model_type, config,
                          os.path.join(HERE, f"{name}-q4_k_m-expected.json"))
            subprocess.run([sys.executable, os.path.join(HERE, "llama_server_reference.py"), out],
                           check=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print("wrote", name)


# BPE pre-tokenizers beyond the families' own: tokenizer.ggml.pre NAME on llama3-f32.gguf's
# vocabulary (llama3-pre-NAME.gguf, the F32 file with that one key changed). llama.cpp tokenizes
# by the name, so the reference is llama-server's /tokenize of the same file.
PRES = ("smollm", "gpt-4o")


def pres():
    for pre in PRES:
        out = os.path.join(HERE, f"llama3-pre-{pre}.gguf")
        requantize(os.path.join(HERE, "llama3-f32.gguf"), out, None,
                   gguf.LlamaFileType.ALL_F32, {gguf.Keys.Tokenizer.PRE: pre})
        subprocess.run([sys.executable, os.path.join(HERE, "llama_server_reference.py"), out],
                       check=True)
        print("wrote", out)


def tool_use():
    """llama3-tool-use-vocab.gguf: the Llama 3 checkpoint beside (transformers-checkpoints/
    llama-llama3) with a default template and one named tool_use, as transformers 5's
    save_pretrained writes the pair (chat-templates/named-files: chat_template.jinja and
    additional_chat_templates/tool_use.jinja), converted --vocab-only by llama.cpp's converter,
    whose gguf-py writes tokenizer.chat_template and tokenizer.chat_template.tool_use. The
    references are transformers' renders of that pair (chat-templates/expected.json)."""
    src = os.path.join(HERE, "..", "transformers-checkpoints", "llama-llama3")
    named = os.path.join(HERE, "..", "chat-templates", "named-files")
    work = tempfile.mkdtemp()
    try:
        for f in ("config.json", "tokenizer.json", "tokenizer_config.json"):
            shutil.copy(os.path.join(src, f), work)
        shutil.copy(os.path.join(named, "chat_template.jinja"), work)
        shutil.copytree(os.path.join(named, "additional_chat_templates"),
                        os.path.join(work, "additional_chat_templates"))
        out = os.path.join(HERE, "llama3-tool-use-vocab.gguf")
        convert(work, out, "f32", "llama-bpe", "--vocab-only")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("wrote", out)


def wide():
    blocks(os.path.join(HERE, "blocks.gguf"))
    write_case("llama3-wide")


# the parts that can be made alone (the module's docstring), by their argument
PARTS = {"rope-window": rope_window, "phi3": phi3, "gemma": gemma, "k-wide": k_wide,
         "pres": pres, "tool-use": tool_use, "wide": wide, "gpt2-q4_0": lambda: write_case("gpt2", only=("q4_0",))}


def main():
    if sys.argv[1:]:
        PARTS[sys.argv[1]]()
        return
    value_types(os.path.join(HERE, "value-types.gguf"))
    blocks(os.path.join(HERE, "blocks.gguf"))
    spm_vocab(os.path.join(HERE, "spm-vocab.gguf"))
    tables()
    for name in CASES:
        write_case(name)


def write_case(name, only=None):
    """Case NAME's files (steps 1-5 of the module's docstring); with ONLY, just those types of
    OUTTYPES, the files already here left as they are."""
    model_type, extra, tie, pre, seed = CASES[name]
    outtypes = only or OUTTYPES[name]
    tmp = tempfile.mkdtemp()
    try:
        hf.HERE = tmp  # write_case puts the checkpoint in HERE/NAME
        hf.SHAPE = WIDE if name == "llama3-wide" else SHAPE
        hf_dir = (write_gpt2(os.path.join(tmp, name), seed) if model_type == "gpt2"
                  else hf.write_case(name, model_type, extra, tie, seed))
        hf.expected(hf_dir)
        if only:  # the files here must have come from this very checkpoint
            with open(os.path.join(hf_dir, "expected.json")) as a, \
                    open(os.path.join(HERE, name + "-expected.json")) as b:
                assert json.load(a) == json.load(b), name + ": not the checkpoint of the files here"
        else:
            shutil.copy(os.path.join(hf_dir, "expected.json"),
                        os.path.join(HERE, name + "-expected.json"))
        with open(os.path.join(hf_dir, "config.json")) as f:
            config = json.load(f)
        for outtype in ("f32", "f16", "q8_0"):
            if outtype in outtypes:
                convert(hf_dir, os.path.join(HERE, f"{name}-{outtype}.gguf"), outtype, pre)
        if name == "llama3" and not only:
            # the converter's own sharding: NAME-split-0000N-of-00003.gguf
            convert(hf_dir, os.path.join(HERE, f"{name}-split.gguf"), "f32", pre,
                    "--split-max-tensors", "8")
        for ktype in (t for t in outtypes if "_k" in t or t.startswith("iq")):
            f32 = os.path.join(tmp, name + "-f32.gguf")
            if not os.path.exists(f32):
                convert(hf_dir, f32, "f32", pre)
            subprocess.run([QUANTIZE, f32, os.path.join(HERE, f"{name}-{ktype}.gguf"),
                            ktype.upper(), "1"], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if "q4_0" in outtypes:
            requantize(os.path.join(HERE, f"{name}-f32.gguf"),
                       os.path.join(HERE, f"{name}-q4_0.gguf"),
                       gguf.GGMLQuantizationType.Q4_0, gguf.LlamaFileType.MOSTLY_Q4_0)
        for qtype in (t for t in outtypes if t.startswith(("q", "iq"))):
            values = dequantized(os.path.join(HERE, f"{name}-{qtype}.gguf"), model_type, config)
            if name != "llama3-wide":  # K-quant blocks are checked on blocks.gguf
                write_dequantized(values,
                                  os.path.join(HERE, f"{name}-{qtype}-dequantized.json"))
            expected_with(hf_dir, values, model_type, config,
                          os.path.join(HERE, f"{name}-{qtype}-expected.json"))
        print("wrote", name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
