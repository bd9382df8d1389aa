#!/usr/bin/env python3
"""Does the copy model copy? Teacher-forced next-token accuracy on the answers of fresh
examples in train_copy_llama.py's two formats (quoting summaries, renaming edits), drawn with
seeds of their own from the last of the training's files (so the text may have been seen, the
examples not; copying is what is asked, which seen text cannot answer): the share of answer
tokens where the model's argmax is the reference's. An answer quotes or repeats its context, so
a model with an induction (copying) circuit scores ~90 % on the edits; a plain language model of
this size ~20-30 %.

usage: copy_check.py MODEL_DIR   (train_copy_llama.py also calls accuracy() when it finishes)
"""
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_copy_llama as t  # noqa: E402


def accuracy(model, tok, rounds=12):
    """{"summary": share, "edit": share} of answer tokens predicted right, teacher-forced."""
    code = t.read(t.code_files()[-5:])
    prose = t.read(t.prose_files()[-5:])
    hits = {"summary": [0, 0], "edit": [0, 0]}
    for i in range(rounds):
        rng = random.Random(100 + i)
        for kind, ex in (("summary", t.summary_example(rng, prose[i % 5])),
                         ("edit", t.edit_example(rng, code[i % 5]))):
            if not ex:
                continue
            split = (ex.index(t.ASK) + len(t.ASK) if kind == "summary"
                     else ex.index("```\n\n```python\n") + 14)
            ids = tok(ex)["input_ids"]
            pre = len(tok(ex[:split])["input_ids"])
            with torch.no_grad():
                logits = model(torch.tensor([ids])).logits[0]
            pred = logits[pre - 1:len(ids) - 1].argmax(-1).tolist()
            tgt = ids[pre:]
            hits[kind][0] += sum(p == q for p, q in zip(pred, tgt))
            hits[kind][1] += len(tgt)
    return {k: round(a / b, 3) for k, (a, b) in hits.items()}


if __name__ == "__main__":
    from transformers import LlamaForCausalLM, PreTrainedTokenizerFast
    d = sys.argv[1]
    print(accuracy(LlamaForCausalLM.from_pretrained(d).eval(),
                   PreTrainedTokenizerFast.from_pretrained(d)))
