#!/usr/bin/env python3
"""Trains a small Llama (transformers' LlamaForCausalLM) on copy-heavy text, so that speculative
decoding can be measured on first-time requests whose answers really quote their context: a
random-weight model does not copy, a trained one learns to (induction heads). Hugging Face's own
code end to end: a byte-level BPE tokenizer trained with `tokenizers`, the model trained with
torch on the CPU, `save_pretrained` (safetensors), so radixserve serves the directory as is.

Training text, in the two formats bench/speculative/workloads.py asks in:
- summarise-with-quotes: a prose document (Vim's help files, the licences under
  /usr/share/common-licenses), the workload's instruction, then an answer that quotes 2-4 spans
  of the document ("The text says that "..."...");
- code edit: a slice of a Python standard-library file, the workload's instruction with a name
  from that slice, then the same slice with that name renamed, in a fence.
The texts the workloads measure on (pydoc_data's topics, textwrap.py) are never trained on.

Writes OUT/config.json, OUT/model.safetensors, OUT/tokenizer.json (+ tokenizer_config.json) and
OUT/train.json (data, steps, loss curve, and "heldout_loss" per format: the loss on examples
drawn with seeds of their own from the last files, whose text the training also reads).

usage: train_copy_llama.py OUT [--minutes M] [--threads T] [--layers L] [--width W] [--seq S]
       [--batch B] [--vocab V]
The defaults (2 layers, width 128, 384-token windows, vocabulary 2,048) are sized so that about
a thousand steps fit 14 minutes of two shared CPU cores: two layers are the fewest with which a
transformer forms induction heads (the copying circuit), and the copy signal is dense here.
"""
import argparse
import glob
import json
import math
import os
import random
import re
import sysconfig
import time

import torch
from tokenizers import ByteLevelBPETokenizer
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

EOS = "<|endoftext|>"
ASK = "\n\nSummarise the text above in a few sentences, quoting it where you can:\n"
EDIT = "Rewrite this file with `{old}` renamed to `{new}`; change nothing else.\n```python\n"
OPENERS = ["The text says that \"", "It says \"", "According to the text, \"", "In short: \""]
LINKS = ["\". It also says \"", "\". Then: \"", "\". Later it notes \"", "\", and \""]
NAMES = ["columns", "count", "value", "result", "items", "limit", "name", "buffer", "offset",
         "total", "entry", "parts", "index", "size", "text", "data", "node", "key"]


def prose_files():
    files = sorted(glob.glob("/usr/share/vim/vim*/doc/*.txt"))
    files += sorted(glob.glob("/usr/share/common-licenses/*"))
    return [f for f in files if os.path.isfile(f)]


def code_files():
    lib = sysconfig.get_paths()["stdlib"]
    files = sorted(glob.glob(os.path.join(lib, "*.py")))
    # the code-edit workload's file is held out
    return [f for f in files if os.path.basename(f) != "textwrap.py"]


def read(files):
    return [open(f, encoding="utf-8", errors="replace").read() for f in files]


def summary_example(rng, text):
    """A document of 250-700 characters and an answer quoting 2-4 of its spans."""
    n = rng.randint(250, 700)
    start = rng.randrange(0, max(1, len(text) - n))
    doc = text[start:start + n]
    words = doc.split()
    if len(words) < 40:
        return None
    quotes = []
    for _ in range(rng.randint(2, 4)):
        length = rng.randint(6, 20)
        at = rng.randrange(0, len(words) - length)
        quotes.append(" ".join(words[at:at + length]))
    answer = rng.choice(OPENERS) + quotes[0]
    for q in quotes[1:]:
        answer += rng.choice(LINKS) + q
    return doc + ASK + answer + "\".\n"


def edit_example(rng, code):
    """A slice of 6-16 lines, the same slice with one of its names renamed, in fences."""
    lines = code.splitlines(keepends=True)
    if len(lines) < 50:
        return None
    start = rng.randrange(0, len(lines) - 40)
    body = "".join(lines[start:start + rng.randint(6, 16)])
    names = sorted(set(re.findall(r"\b[a-z_][a-z0-9_]{2,}\b", body)))
    if not names:
        return None
    old = rng.choice(names)
    new = rng.choice([n for n in NAMES if n != old])
    edited = re.sub(r"\b" + re.escape(old) + r"\b", new, body)
    return EDIT.format(old=old, new=new) + body + "```\n\n```python\n" + edited + "```\n"


def examples(rng, prose, code, count):
    out = []
    while len(out) < count:
        e = (summary_example(rng, rng.choice(prose)) if rng.random() < 0.5
             else edit_example(rng, rng.choice(code)))
        if e:
            out.append(e)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--minutes", type=float, default=14)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--width", type=int, default=128, help="hidden size; heads of 64")
    p.add_argument("--seq", type=int, default=384)
    p.add_argument("--batch", type=int, default=12)
    p.add_argument("--vocab", type=int, default=2048)
    p.add_argument("--resume", action="store_true",
                   help="go on training the model and tokenizer OUT holds (a second session)")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    rng = random.Random(0)
    prose, code = read(prose_files()), read(code_files())

    SEQ, BATCH = a.seq, a.batch
    if a.resume:
        fast = PreTrainedTokenizerFast.from_pretrained(a.out)
        rng = random.Random(int(time.time()))  # examples the first session did not see
    else:
        bpe = ByteLevelBPETokenizer()
        bpe.train_from_iterator(prose + code, vocab_size=a.vocab, min_frequency=2,
                                special_tokens=[EOS])
        fast = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token=EOS, bos_token=EOS,
                                       unk_token=EOS)
        fast.save_pretrained(a.out)
    eos = fast.eos_token_id

    def stream(texts):
        ids, starts = [], []
        for enc in fast(texts)["input_ids"]:
            starts.append(len(ids))
            ids += enc + [eos]
        return torch.tensor(ids, dtype=torch.long), starts

    train_ids, train_starts = stream(examples(rng, prose, code, 12000))
    held = {"summary": [summary_example(random.Random(i), t) for i, t in
                        enumerate(prose[-8:] * 4)],
            "edit": [edit_example(random.Random(i), t) for i, t in enumerate(code[-16:] * 2)]}
    held = {k: [e for e in v if e] for k, v in held.items()}

    heads = max(2, a.width // 64)
    config = LlamaConfig(vocab_size=len(fast), hidden_size=a.width,
                         intermediate_size=a.width * 2, num_hidden_layers=a.layers,
                         num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
                         max_position_embeddings=2048, rope_theta=10000.0, rms_norm_eps=1e-5,
                         tie_word_embeddings=True, bos_token_id=eos, eos_token_id=eos)
    model = LlamaForCausalLM.from_pretrained(a.out) if a.resume else LlamaForCausalLM(config)
    before = {}
    if a.resume:
        with open(os.path.join(a.out, "train.json")) as f:
            before = json.load(f)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.1)
    deadline = time.time() + a.minutes * 60
    began = time.time()
    losses, step = [], 0
    g = torch.Generator().manual_seed(0)
    limit = len(train_ids) - SEQ - 1
    usable = torch.tensor([s for s in train_starts if s < limit])
    model.train()
    while time.time() < deadline:
        # warm-up, then a linear decay over the last 30 % of the time
        left = (deadline - time.time()) / (a.minutes * 60)
        lr = 2e-3 * min(1.0, (step + 1) / 100) * min(1.0, left / 0.3)
        for group in opt.param_groups:
            group["lr"] = max(lr, 1e-5)
        picks = usable[torch.randint(0, len(usable), (BATCH,), generator=g)]
        batch = torch.stack([train_ids[s:s + SEQ] for s in picks])
        loss = model(input_ids=batch, labels=batch).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            losses.append([step, round(time.time() - began), round(loss.item(), 4)])
            print(f"step {step} {time.time() - began:.0f}s loss {loss.item():.3f}", flush=True)
        step += 1

    model.eval()
    held_loss = {}
    with torch.no_grad():
        for kind, texts in held.items():
            nll, n = 0.0, 0
            for t in texts:
                ids = torch.tensor([fast(t)["input_ids"][:SEQ]])
                nll += model(input_ids=ids, labels=ids).loss.item() * (ids.shape[1] - 1)
                n += ids.shape[1] - 1
            held_loss[kind] = round(nll / n, 4)
    model.save_pretrained(a.out, safe_serialization=True)
    if before:
        step += before["steps"]
        losses = before["losses"] + [[s + before["steps"], t + round(before["minutes"] * 60), l]
                                     for s, t, l in losses]
        a.minutes += before["minutes"]
    info = {"prose_files": len(prose), "code_files": len(code), "train_tokens": len(train_ids),
            "steps": step, "batch": BATCH, "seq": SEQ, "minutes": a.minutes,
            "threads": a.threads, "config": {"layers": a.layers, "hidden": a.width,
                                             "heads": heads, "vocab": len(fast)},
            "heldout_loss": held_loss, "losses": losses}
    with open(os.path.join(a.out, "train.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps({k: v for k, v in info.items() if k != "losses"}))


if __name__ == "__main__":
    main()
