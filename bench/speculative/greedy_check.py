#!/usr/bin/env python3
"""The copy model's greedy answers to the benchmark's own prompts (workloads.py, round ROUND),
as transformers computes them: how much of each answer copies its prompt (the share of the
answer's 4-token runs that occur in the prompt) and how much repeats the answer itself (runs
that occur only earlier in the answer: a loop), and the text. With server URLs, each server's
greedy answer (token-id prompt, ignore_eos) against transformers', token for token: where
they first differ. This is the check that radixserve and llama.cpp (on the GGUF the converter
wrote) run the same model as the reference implementation.

usage: greedy_check.py MODEL_DIR [ROUND] [URL...]   env: CONTEXT (150), DECODE (96)
"""
import json
import os
import sys
import urllib.request

import torch
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("CONTEXT", "150")
import workloads  # noqa: E402  (reads CONTEXT)


def greedy(model, prompt, n):
    """n argmax tokens, EOS included (as ignore_eos does), with the KV cache."""
    out, past, ids = [], None, torch.tensor([prompt])
    with torch.no_grad():
        for _ in range(n):
            r = model(input_ids=ids, past_key_values=past, use_cache=True)
            past = r.past_key_values
            out.append(int(r.logits[0, -1].argmax()))
            ids = torch.tensor([[out[-1]]])
    return out


def served(url, prompt, n):
    body = {"model": "m", "prompt": prompt, "max_tokens": n, "temperature": 0,
            "ignore_eos": True, "logprobs": 1}
    with urllib.request.urlopen(url.rstrip("/") + "/v1/models", timeout=30) as r:
        body["model"] = json.load(r)["data"][0]["id"]
    req = urllib.request.Request(url.rstrip("/") + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)["choices"][0]["text"]


def shares(prompt, answer):
    runs = lambda s: {tuple(s[i:i + 4]) for i in range(len(s) - 3)}
    in_prompt = runs(prompt)
    copied = looped = 0
    for i in range(len(answer) - 3):
        run = tuple(answer[i:i + 4])
        if run in in_prompt:
            copied += 1
        elif run in runs(answer[:i + 3]):
            looped += 1
    total = max(1, len(answer) - 3)
    return round(copied / total, 2), round(looped / total, 2)


def main():
    model_dir = sys.argv[1]
    rnd = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    urls = sys.argv[3:]
    n = int(os.environ.get("DECODE", 96))
    tok = PreTrainedTokenizerFast.from_pretrained(model_dir)
    model = LlamaForCausalLM.from_pretrained(model_dir).eval()
    for name, (prompt, extra) in workloads.prompts(tok, rnd).items():
        if extra:  # the sampled control has no single answer to compare
            continue
        answer = greedy(model, prompt, n)
        copied, looped = shares(prompt, answer)
        print(f"== {name}: {len(prompt)}-token prompt, {n} tokens; runs copied from the prompt "
              f"{copied:.0%}, repeating the answer only {looped:.0%}")
        print(tok.decode(answer))
        for url in urls:
            text = served(url, prompt, n)
            mine = tok.decode(answer)
            same = next((i for i, (a, b) in enumerate(zip(text, mine)) if a != b),
                        min(len(text), len(mine)))
            verdict = "identical" if text == mine else (
                f"first differs at character {same}: {text[same - 10:same + 20]!r} against "
                f"{mine[same - 10:same + 20]!r}")
            print(f"-- {url}: {verdict} ({len(text)} vs {len(mine)} characters)")


if __name__ == "__main__":
    main()
