#!/usr/bin/env python3
"""Trains a small Llama (transformers' LlamaForCausalLM) on copy-heavy text, so that speculative
decoding can be measured on first-time requests whose answers really quote their context: a
random-weight model does not copy, a trained one learns to (induction heads). Hugging Face's own
code end to end: a byte-level BPE tokenizer trained with `tokenizers`, the model trained with
torch on the CPU, `save_pretrained` (safetensors), so radixserve serves the directory as is.

Training rows, in the two formats bench/speculative/workloads.py asks in:
- summarise-with-quotes: a prose document (Vim's help files, the licences under
  /usr/share/common-licenses), the workload's instruction, then an answer that quotes 2-4 spans
  of the document ("The text says that "..."...");
- code edit: a slice of a Python standard-library file, the workload's instruction with a name
  from that slice, then the same slice with that name renamed, in a fence;
- and a curriculum of synthetic rows (`repeats`): random token spans, each repeated, with the
  loss on the repeats only. They start at 60 % of each batch and fall to 20 % by the end.
The texts the workloads measure on (pydoc_data's topics, textwrap.py) are never trained on.

Why this recipe: the first version (356 steps of a 2-head model on text alone) reached 23-28 %
on the copied spans and looped when greedy. Copying needs an induction circuit (a
previous-token head feeding a head that attends to what followed the last occurrence), and
random-token repeats are the signal that forms it fastest, since nothing but copying predicts
them; a 1,024-token vocabulary and 256-token windows make each step cheap enough for thousands
of steps on one thread; the learning rate warms up over 100 steps and decays by a cosine.

Writes OUT/config.json, OUT/model.safetensors, OUT/tokenizer.json (+ tokenizer_config.json) and
OUT/train.json (data, steps, minutes, loss curve, "heldout_loss" per format: the loss on
examples drawn with seeds of their own from the last files, whose text the training also reads;
and "copy_accuracy": copy_check.py's teacher-forced accuracy on the copied answers).

usage: train_copy_llama.py OUT [--minutes M] [--threads T] [--layers L] [--width W] [--heads H]
       [--seq S] [--batch B] [--vocab V] [--lr LR] [--synthetic START END]
       [--init DIR] [--doc-chars MIN MAX] [--edit-lines MIN MAX] [--fake-quant int8]
The defaults (2 layers, width 128, 4 heads of 32, 256-token windows, batch 16) make ~0.3-0.7 s
steps on one thread (quiet to loaded), so 2,000-5,000 steps fit the default 25 minutes.

Long contexts (issue 43's summarise-with-quotes has a 1,500-token context): a model trained on
256-token windows quotes a 200-500-character document (73.6 % of quoted tokens, teacher-forced)
but not a 1,500-2,500-character one (16.3 %). --init DIR continues from a trained model (its
weights and its tokenizer, so token ids stay the same) on longer rows, e.g.
  train_copy_llama.py OUT --init /work/spec-copy-model2 --seq 1792 --batch 4 --threads 2 \
    --doc-chars 2000 3600 --edit-lines 10 80 --lr 1e-3 --synthetic 0.3 0.1 --minutes 35
(documents of ~900-1,700 tokens of this 1,024-token vocabulary; copy_check.py then measures at
the same lengths).

Served at int8 (issue 43's goal setting) a model this small copies less than at fp32: its greedy
answers diverge from the fp32 ones within a few tokens (journal 2026-11-29b), since its logits
are near-ties that int8 weights and int8 activations (MatMulNBits at accuracy level 4) flip.
--fake-quant int8 continues a trained model (--init) with every projection, the LM head and the
tied embedding computed as radixserve serves them at int8 (fake_quant.py: BlockQuantizer's
symmetric int8 blocks of 64 along the input, MLAS's int8 activation blocks of 64) and gradients
passed straight through, then saves the weights on that grid, so that the server's int8 reads
the trained weights back exactly and what was trained is what is served (served at int8, the
base copier's summaries ended in a loop in 4 of 6 rounds, the continued one's in 1; journal
2026-11-30i-speculative-int8-copier.md):
  train_copy_llama.py OUT --init /work/spec-copy-model2 --fake-quant int8 --lr 1e-3 \
    --threads 2 --minutes 10
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

import fake_quant

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


DOC_CHARS = (200, 500)  # a summary's document, characters (--doc-chars)


def summary_example(rng, text):
    """A document of DOC_CHARS characters and an answer quoting 2-4 of its spans."""
    n = rng.randint(*DOC_CHARS)
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


EDIT_LINES = (4, 12)  # an edit's slice, lines (--edit-lines)


def edit_example(rng, code):
    """A slice of EDIT_LINES lines, the same slice with one of its names renamed, in fences."""
    lines = code.splitlines(keepends=True)
    if len(lines) < max(50, EDIT_LINES[1] + 10):
        return None
    start = rng.randrange(0, len(lines) - max(40, EDIT_LINES[1]))
    body = "".join(lines[start:start + rng.randint(*EDIT_LINES)])
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


def repeats(rng, vocab, eos, seq):
    """A synthetic row: spans of 4-48 random tokens, each followed by 1-3 copies of itself (the
    copies sometimes cut short), separated by EOS. Labels mask each span's first occurrence (it
    cannot be predicted), so all the row teaches is "continue what followed the last time":
    the task that forms induction heads, without text statistics to learn first."""
    ids, labels = [], []
    while len(ids) < seq + 1:
        span = [rng.randrange(vocab) for _ in range(rng.randint(4, 48))]
        span = [eos + 1 if t == eos else t for t in span]
        ids += span
        labels += [-100] * len(span)
        for _ in range(rng.randint(1, 3)):
            copy = span[:rng.randint(len(span) // 2, len(span))]
            ids += copy
            labels += copy
        ids.append(eos)
        labels.append(-100)
    return ids[:seq], labels[:seq]


def main():
    global DOC_CHARS, EDIT_LINES
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--minutes", type=float, default=25)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--lr", type=float, default=3e-3, help="peak, after 100 warm-up steps")
    p.add_argument("--synthetic", type=float, nargs=2, default=[0.6, 0.2],
                   help="share of synthetic repeat rows at the start and at the end (linear)")
    p.add_argument("--init", help="a trained model's directory to continue from")
    p.add_argument("--doc-chars", type=int, nargs=2, default=list(DOC_CHARS))
    p.add_argument("--edit-lines", type=int, nargs=2, default=list(EDIT_LINES))
    p.add_argument("--fake-quant", choices=["int8"],
                   help="train (continue, with --init) as radixserve serves it at int8")
    a = p.parse_args()
    DOC_CHARS, EDIT_LINES = tuple(a.doc_chars), tuple(a.edit_lines)
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    rng = random.Random(0)
    prose, code = read(prose_files()), read(code_files())

    SEQ, BATCH = a.seq, a.batch
    if a.init:
        fast = PreTrainedTokenizerFast.from_pretrained(a.init)
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

    # ~10 M tokens of examples whatever their length (40,000 at the default lengths)
    train_ids, train_starts = stream(examples(rng, prose, code, max(4000, 40000 * 256 // SEQ)))
    held = {"summary": [summary_example(random.Random(i), t) for i, t in
                        enumerate(prose[-8:] * 4)],
            "edit": [edit_example(random.Random(i), t) for i, t in enumerate(code[-16:] * 2)]}
    held = {k: [e for e in v if e] for k, v in held.items()}

    # Four heads of 32 and no grouping: more heads give a previous-token head and an induction
    # head room to form side by side; width matters less for copying than attention does.
    config = LlamaConfig(vocab_size=len(fast), hidden_size=a.width,
                         intermediate_size=a.width * 2, num_hidden_layers=a.layers,
                         num_attention_heads=a.heads, num_key_value_heads=a.heads,
                         max_position_embeddings=2048, rope_theta=10000.0, rms_norm_eps=1e-5,
                         tie_word_embeddings=True, bos_token_id=eos, eos_token_id=eos)
    model = LlamaForCausalLM.from_pretrained(a.init) if a.init else LlamaForCausalLM(config)
    config = model.config
    if a.fake_quant:
        fake_quant.install(model)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.1)
    deadline = time.time() + a.minutes * 60
    began = time.time()
    losses, step = [], 0
    g = torch.Generator().manual_seed(0)
    limit = len(train_ids) - SEQ - 1
    usable = torch.tensor([s for s in train_starts if s < limit])
    model.train()
    while time.time() < deadline:
        # the schedule runs on the clock (steps per second depend on the machine's load):
        # 100 warm-up steps, then a cosine decay to 5 % of the peak at the deadline
        done = (time.time() - began) / (a.minutes * 60)
        lr = a.lr * min(1.0, (step + 1) / 100) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * done)))
        for group in opt.param_groups:
            group["lr"] = lr
        share = a.synthetic[0] + (a.synthetic[1] - a.synthetic[0]) * done
        n_syn = sum(rng.random() < share for _ in range(BATCH))
        picks = usable[torch.randint(0, len(usable), (BATCH - n_syn,), generator=g)]
        rows = [train_ids[s:s + SEQ] for s in picks]
        labels = [r.clone() for r in rows]
        for _ in range(n_syn):
            ids, lab = repeats(rng, len(fast), eos, SEQ)
            rows.append(torch.tensor(ids))
            labels.append(torch.tensor(lab))
        loss = model(input_ids=torch.stack(rows), labels=torch.stack(labels)).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            losses.append([step, round(time.time() - began), round(loss.item(), 4)])
            print(f"step {step} {time.time() - began:.0f}s loss {loss.item():.3f} "
                  f"lr {lr:.5f} synthetic {n_syn}/{BATCH}", flush=True)
        step += 1
    minutes = (time.time() - began) / 60

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
    if a.fake_quant:
        fake_quant.snap(model)  # the saved weights on the served grid; forwards still fake-quant
    model.save_pretrained(a.out, safe_serialization=True)
    import copy_check  # here: it imports this module, as a module of its own (not __main__)
    copy_check.t.DOC_CHARS, copy_check.t.EDIT_LINES = DOC_CHARS, EDIT_LINES
    accuracy = copy_check.accuracy(model, fast)
    info = {"prose_files": len(prose), "code_files": len(code), "train_tokens": len(train_ids),
            "steps": step, "batch": BATCH, "seq": SEQ, "minutes": round(minutes, 1),
            "threads": a.threads, "lr": a.lr, "synthetic": a.synthetic, "init": a.init,
            "fake_quant": a.fake_quant,
            "doc_chars": DOC_CHARS, "edit_lines": EDIT_LINES,
            "config": {"layers": config.num_hidden_layers, "hidden": config.hidden_size,
                       "heads": config.num_attention_heads,
                       "vocab": len(fast)},
            "heldout_loss": held_loss, "copy_accuracy": accuracy, "losses": losses}
    with open(os.path.join(a.out, "train.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps({k: v for k, v in info.items() if k != "losses"}))


if __name__ == "__main__":
    main()
