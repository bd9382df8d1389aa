#!/usr/bin/env python3
"""What the draft sources could save on a served model's own greedy outputs, by replay.

Asks a running radixserve server (best with --speculative off) for the greedy completion of each
round's summarise-with-quotes and code-edit request (workloads.py's prompts), then replays the
drafting policy over those tokens in Python: prompt lookup by the last 3 tokens (or the longest of
5/4/3, as PromptLookup since 2026-12-03), the prefix cache's index by 3 (other rounds' prompts and
outputs when --warm: a server in use), optionally the sequence's own last 2 tokens (latest, or only
where they occurred exactly once before: the pair source since 2026-12-03), DraftLength's adaptive length (2, doubling, pauses after two
misses), and a step cost per verified length T from VerifyStepBench (the 1B shape at int8,
journal 2026-11-29-speculative-quiet.md). Prints the predicted speed-up per round, per source
order. A replay on the fp32 small model's outputs had predicted 2.19x for first-time summarise
where the server measured 1.41x: the served model's own outputs are what drafting sees
(journal 2026-11-29b-speculative-short-key.md).

usage: TOKENIZER_DIR=MODEL CONTEXT=150 replay.py URL [--rounds 6] [--decode 96] [--ends]
  --ends: the greedy answers stop at the model's end of text (workloads.py's ENDS=1)
  --cost C1,C2,...: the step costs for T = 1, 2, ... (decode steps) measured on the machine at
    hand, instead of COST (e.g. the engine's own StepTimes, journal 2026-11-30i)
"""
import argparse
import json
import os
import statistics
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402

# decode steps a verification of T tokens costs (T = 1..9), VerifyStepBench, every logits row
COST = [1.00, 1.06, 1.20, 1.39, 1.53, 1.63, 1.85, 1.95, 2.19]


def cost(t):
    return COST[t - 1] if t <= len(COST) else COST[-1] + 0.15 * (t - len(COST))


def latest(doc, key, end):
    """Position right after the latest occurrence of key in doc[:end] that has a continuation."""
    n = len(key)
    for e in range(end - 1, n - 1, -1):
        if tuple(doc[e - n:e]) == key:
            return e
    return None


def draft(seq, source, n, k, others):
    key = tuple(seq[-n:])
    if len(seq) <= n:
        return []
    if source == "pair":  # ShortKeyLookup.proposeByUniquePair: the key occurred exactly once
        ends = [e for e in range(n, len(seq)) if tuple(seq[e - n:e]) == key]
        if len(ends) != 1:
            return []
        source = "own"
    if source == "own":
        e = latest(seq, key, len(seq))  # the suffix itself ends at len(seq): never found
        if e is None:
            return []
        out = []
        for i in range(k):  # LZ77-style: a copy that runs into the end goes on with itself
            out.append(seq[e + i] if e + i < len(seq) else out[e + i - len(seq)])
        return out
    for doc in others:
        e = latest(doc, key, len(doc))
        if e is not None and doc[e:e + k]:
            return doc[e:e + k]
    return []


class Length:
    """DraftLength (server/.../spec/DraftLength.java)."""

    def __init__(self, mx):
        self.mx, self.next_k, self.misses, self.pause, self.pausing = mx, min(2, mx), 0, 0, 0

    def next(self):
        if self.pausing:
            self.pausing -= 1
            return 0
        return self.next_k

    def verified(self, d, a):
        if a == 0:
            self.next_k, self.misses = 1, self.misses + 1
            if self.misses >= 2:
                self.misses, self.pause = 0, min(64, max(4, self.pause * 2))
                self.pausing = self.pause
            return
        self.misses = self.pause = 0
        self.next_k = min(self.mx, 2 * d if a == d else a + 1)


def speedup(prompt, out, others, order, mx=8):
    seq, length, i, steps = list(prompt), Length(mx), 0, 0.0
    while i < len(out):
        k = min(length.next(), len(out) - i - 1)
        d = []
        for source, n in (order if k > 0 else []):
            d = draft(seq, source, n, k, others)
            if d:
                break
        a = 0
        while a < len(d) and d[a] == out[i + a]:
            a += 1
        if d:
            length.verified(len(d), a)
        steps += cost(1 + len(d))
        seq += out[i:i + a + 1]
        i += a + 1
    return len(out) / steps


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--decode", type=int, default=96)
    p.add_argument("--ends", action="store_true")
    p.add_argument("--cost", help="comma-separated step costs for T = 1, 2, ...")
    args = p.parse_args()
    if args.cost:
        COST[:] = [float(c) for c in args.cost.split(",")]
    url = args.url.rstrip("/")
    tok = workloads.tokenizer()
    with urllib.request.urlopen(url + "/v1/models") as r:
        model = json.load(r)["data"][0]["id"]
    orders = {"own 3, cache 3": [("own", 3), ("cache", 3)],
              "own 3, cache 3, own 2": [("own", 3), ("cache", 3), ("own", 2)],
              # PromptLookup since 2026-12-03, then the pair held once (Speculator.strongDraft)
              "own 5/4/3, cache 3": [("own", 5), ("own", 4), ("own", 3), ("cache", 3)],
              "own 5/4/3, cache 3, pair": [("own", 5), ("own", 4), ("own", 3), ("cache", 3),
                                           ("pair", 2)]}
    for name in ("summarise-with-quotes", "code-edit"):
        runs = []
        for rnd in range(1, args.rounds + 1):
            prompt = workloads.prompts(tok, rnd)[name][0]
            body = {"model": model, "prompt": prompt, "max_tokens": args.decode,
                    "temperature": 0, "ignore_eos": not args.ends}
            req = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req) as r:
                text = json.load(r)["choices"][0]["text"]
            runs.append((rnd, prompt, tok.encode(text)))
            print(f"{name} round {rnd}: {len(runs[-1][2])} tokens: {text!r}", flush=True)
        for label, order in orders.items():
            for warm in (False, True):
                got = [speedup(p_, o, [p2 + o2 for r2, p2, o2 in runs if r2 != r] if warm else [],
                               order) for r, p_, o in runs]
                print(f"{name:22s} {label:22s} {'warm' if warm else 'fresh':5s} "
                      + " ".join(f"{x:.2f}" for x in got) + f"  median {statistics.median(got):.2f}x", flush=True)


if __name__ == "__main__":
    main()
