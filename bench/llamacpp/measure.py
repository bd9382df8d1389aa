#!/usr/bin/env python3
"""Batch-1 decode and 512-token prefill of one OpenAI-compatible server, measured by the client.

Both figures come from /v1/completions with token-id prompts (so the two servers see the same
tokens whatever their tokenizers), temperature 0 and ignore_eos, one request at a time:
- decode tok/s: a distinct 16-token prompt, max_tokens DECODE (default 128), streamed; the
  completion's tokens after the first, divided by the time from the first streamed chunk to the
  last (the prefill and the first token are excluded; a token held back as incomplete UTF-8
  arrives with the next one, which moves an end of the span by at most one step).
- prefill tok/s: a distinct 512-token prompt (nothing to reuse from any cache), max_tokens 1, not
  streamed; 512 / the request's wall time (so it includes one decode step and the HTTP round trip).
Each is repeated REPS times (default 3) after one unmeasured warm-up request; the median is
printed as JSON with every sample. With PID (the server's process) each request's CPU time is
read too (utime + stime of every thread, /proc/PID/stat, 10 ms ticks), giving the same rates per
CPU-second of the server: on a shared machine those do not count the time the neighbours take.
For decode that rate is the request's completion tokens over all its CPU time (its 16-token
prefill included).

usage: measure.py URL [REPS] [DECODE] [SEED] [PID]
"""
import os
import json
import random
import statistics
import sys
import time
import urllib.request

VOCAB = 50256  # GPT-2's ids below <|endoftext|>


def post(url, body, stream):
    req = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    return urllib.request.urlopen(req, timeout=600)


def cpu_seconds(pid):
    if pid is None:
        return 0.0
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def model_of(url):
    with urllib.request.urlopen(url + "/v1/models", timeout=30) as r:
        return json.load(r)["data"][0]["id"]


def decode(url, model, prompt, max_tokens, pid=None, timed=True):
    body = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
            "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}
    first = last = None
    chunks = 0
    cpu0 = cpu_seconds(pid)
    usage = None
    with post(url, body, True) as r:
        for raw in r:
            line = raw.decode().strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            chunk = json.loads(data)
            if chunk.get("usage"):
                usage = chunk["usage"]
            choices = chunk.get("choices") or []
            if choices:
                now = time.perf_counter()
                first = first or now
                last = now
                chunks += 1
    cpu = cpu_seconds(pid) - cpu0
    tokens = usage["completion_tokens"] if usage else chunks
    if tokens != max_tokens:
        raise RuntimeError(f"asked for {max_tokens} tokens, got {tokens} (usage {usage})")
    if timed and chunks < tokens * 0.9:
        # a server that folds many tokens into one chunk would make the span too short (a few
        # held back as incomplete UTF-8 and sent with the next are fine; the untimed warm-up's
        # 8 tokens may hold one such pair)
        raise RuntimeError(f"{tokens} tokens arrived in {chunks} chunks")
    return (tokens - 1) / (last - first), (tokens / cpu if cpu > 0 else None)


def prefill(url, model, prompt, pid=None):
    body = {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0,
            "ignore_eos": True}
    cpu0 = cpu_seconds(pid)
    start = time.perf_counter()
    with post(url, body, False) as r:
        out = json.load(r)
    wall = time.perf_counter() - start
    cpu = cpu_seconds(pid) - cpu0
    got = out["usage"]["prompt_tokens"]
    if got != len(prompt):
        raise RuntimeError(f"sent {len(prompt)} prompt tokens, the server counted {got}")
    return len(prompt) / wall, (len(prompt) / cpu if cpu > 0 else None)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    url = sys.argv[1].rstrip("/")
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    max_tokens = int(sys.argv[3]) if len(sys.argv) > 3 else 128
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 0)
    pid = int(sys.argv[5]) if len(sys.argv) > 5 else None
    model = model_of(url)
    ids = lambda n: [rng.randrange(VOCAB) for _ in range(n)]
    decode(url, model, ids(16), 8, timed=False)  # warm-up, unmeasured
    prefill(url, model, ids(512))
    dec = [decode(url, model, ids(16), max_tokens, pid) for _ in range(reps)]
    pre = [prefill(url, model, ids(512), pid) for _ in range(reps)]
    r = lambda x: None if x is None else round(x, 2)
    print(json.dumps({"url": url, "model": model,
                      "decode_tok_s": median(d[0] for d in dec),
                      "prefill512_tok_s": median(p[0] for p in pre),
                      "decode_tok_cpu_s": median(d[1] for d in dec),
                      "prefill512_tok_cpu_s": median(p[1] for p in pre),
                      "decode_samples": [[r(x) for x in d] for d in dec],
                      "prefill_samples": [[r(x) for x in p] for p in pre]}))


if __name__ == "__main__":
    main()
