#!/usr/bin/env python3
"""Does the copy model copy? Teacher-forced next-token accuracy on the answers of fresh
examples in train_copy_llama.py's two formats (quoting summaries, renaming edits), drawn with
seeds of their own from the last of the training's files (so the text may have been seen, the
examples not; copying is what is asked, which seen text cannot answer): the share of answer
tokens where the model's argmax is the reference's, over whole answers and over the summaries'
quoted spans alone. An answer quotes or repeats its context, so a model with an induction
(copying) circuit scores ~90 % on the edits; a plain language model of this size ~20-30 %.

usage: copy_check.py MODEL_DIR   (train_copy_llama.py also calls accuracy() when it finishes)
"""
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_copy_llama as t  # noqa: E402


def quoted(answer, offsets):
    """Indices (into the answer's tokens) of the tokens inside a summary's quotes, less each
    quote's first token: which span a quote picks is the example's random choice, what follows
    its first token is a copy of the document. The quotes are found by the answer's own frame
    (an opener, links between quotes, a closing '".'), since a document may hold quotes too."""
    opener = next(o for o in t.OPENERS if answer.startswith(o))
    spans, at = [], len(opener)
    end = answer.rindex('".')
    while at < end:
        nxt = min(((answer.find(link, at), link) for link in t.LINKS
                   if 0 <= answer.find(link, at) < end), default=(end, ""))
        spans.append((at, nxt[0]))
        at = nxt[0] + len(nxt[1]) if nxt[1] else end
    picked = []
    for lo, hi in spans:
        inside = [i for i, (a, b) in enumerate(offsets) if a >= lo and b <= hi]
        picked += inside[1:]
    return picked


def accuracy(model, tok, rounds=12):
    """Share of answer tokens the model's argmax predicts, teacher-forced: "summary" and "edit"
    over whole answers (a summary's answer also holds its opener and links, which no copy
    predicts), and "quoted" over the copied spans of the summaries (quoted())."""
    code = t.read(t.code_files()[-5:])
    prose = t.read(t.prose_files()[-5:])
    hits = {"summary": [0, 0], "edit": [0, 0], "quoted": [0, 0]}
    for i in range(rounds):
        rng = random.Random(100 + i)
        for kind, ex in (("summary", t.summary_example(rng, prose[i % 5])),
                         ("edit", t.edit_example(rng, code[i % 5]))):
            if not ex:
                continue
            split = (ex.index(t.ASK) + len(t.ASK) if kind == "summary"
                     else ex.index("```\n\n```python\n") + 14)
            enc = tok(ex, return_offsets_mapping=True)
            ids = enc["input_ids"]
            pre = len(tok(ex[:split])["input_ids"])
            with torch.no_grad():
                logits = model(torch.tensor([ids])).logits[0]
            right = [p == q for p, q in zip(logits[pre - 1:len(ids) - 1].argmax(-1).tolist(),
                                            ids[pre:])]
            hits[kind][0] += sum(right)
            hits[kind][1] += len(right)
            if kind == "summary":
                offsets = [(a - split, b - split) for a, b in enc["offset_mapping"][pre:]]
                picked = quoted(ex[split:], offsets)
                hits["quoted"][0] += sum(right[i] for i in picked)
                hits["quoted"][1] += len(picked)
    return {k: round(a / b, 3) for k, (a, b) in hits.items()}


if __name__ == "__main__":
    from transformers import LlamaForCausalLM, PreTrainedTokenizerFast
    d = sys.argv[1]
    print(accuracy(LlamaForCausalLM.from_pretrained(d).eval(),
                   PreTrainedTokenizerFast.from_pretrained(d)))
