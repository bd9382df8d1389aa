#!/usr/bin/env python3
"""Batch-1 decode with and without speculative decoding, on three workloads, against one
OpenAI-compatible server; the client measures (token-id prompts, so every server sees the same
ids whatever its tokenizer; r50k_base ids, which radixserve uses for a checkpoint without
tokenizer files and bench/speculative/run.sh puts into the GGUF for llama.cpp).

Workloads (one request each per round, streamed, max_tokens DECODE):
- summarise-with-quotes: a 1,500-token context (Python's pydoc topics, English prose) and an
  instruction to summarise it quoting it; greedy.
- code-edit: a ~1,500-token Python file (textwrap.py from this Python's standard library, cut at
  a line) and an instruction to rewrite it with one name changed, the file's opening fence
  repeated; greedy.
- control: the summarise prompt with another context, sampled (temperature 1, a seed): a sampled
  continuation of a random-weight model does not repeat itself, so drafts are almost never
  accepted; this is the cost of drafting at ~0 % acceptance.
Each round uses contexts no earlier round used (offsets in the texts move), so no server reuses
a cached prompt or drafts from an earlier round's output.

With REASK=1 the two greedy workloads are each sent twice and only the second is measured: the
same question asked again (a regenerated answer, a second user asking the same thing). Greedy
decoding is deterministic, so its answer is the first one's token for token: the copy is forced
by the model itself, whatever its weights, which is what makes this honest on random weights
(a random-weight model does not quote its context, so the fresh workloads above draft little).
radixserve drafts it from its prefix cache (the first answer is in the radix tree); llama.cpp's
n-gram modes look only at the request's own tokens, and its prompt cache reuses the prompt.

With WARM=N each greedy workload is first sent, unmeasured, with the contexts of N other rounds
(rounds 50 + N·ROUND + i: documents no measured round uses): the request measured is still
first-time (its document was never served), but the server has answered others like it, as a
server in use has. radixserve's radix-tree drafts can then propose what its earlier answers
share (a summary's opening words and the glue between quotes); llama.cpp's n-gram modes look
only at the request's own tokens.

- shared-prompt xN (N from CONCURRENCY, default 8): N sampled requests at once that share the
  control's context and differ in their last line; more than 4 run, so radixserve drafts
  nothing (Speculation.DEFAULT_MAX_BATCH) and the figure is the cost of having it on.

With ENDS=1 the greedy workloads (summarise-with-quotes, code-edit) stop where the model ends its
answer (its end-of-text token, as a user's request does) instead of being forced on to DECODE
tokens with ignore_eos: what a small model writes after its summary has ended is a new,
unprompted text that quotes nothing, so forcing it on measures that text, not the answer. Both
variants of a server give the same greedy tokens, so their ratio is over the same answer. The
control and shared-prompt stay forced to DECODE tokens (the cost of drafting at ~0 % acceptance
needs a fixed length).

Before the measured requests each server answers one unrelated greedy request of WARMUP tokens
(default 64; 8 until 2026-11-30), unmeasured, so that a young server's first steps (the JIT
compiling the attention kernel) fall outside the measurement.

decode tok/s: completion tokens after the first / time from the first streamed chunk to the last
(shared-prompt: all requests' completion tokens / wall time from the first request sent to the
last one done). With SERVER_PID set, cpu_ms_per_token is the server process's CPU time (user +
system, /proc/PID/stat) over the measured request(s) per completion token: under load it moves
less than wall time does. WORKLOADS (comma-separated names, default all) picks workloads.

usage: workloads.py URL ROUND DECODE  -> one JSON line per workload on stdout
"""
import inspect
import json
import os
import sys
import textwrap
import threading
import time
import urllib.request

import pydoc_data.topics
from transformers import PreTrainedTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
CONTEXT = int(os.environ.get("CONTEXT", 1500))  # tokens of each context


def tokenizer():
    # r50k_base (GPT-2) ids: the vocabulary radixserve serves a tokenizer-less checkpoint with
    return PreTrainedTokenizerFast.from_pretrained(os.environ.get("TOKENIZER_DIR", "/tmp/spec1b/src"))


def prompts(tok, rnd):
    prose = tok.encode(" ".join(pydoc_data.topics.topics[k] for k in sorted(pydoc_data.topics.topics)))
    code = inspect.getsource(textwrap)
    lines = code.splitlines(keepends=True)
    start = (rnd * 40) % max(1, len(lines) - 200)
    body, n = "", 0
    for line in lines[start:]:
        if n + len(tok.encode(line)) > CONTEXT:
            break
        body += line
        n += len(tok.encode(line))
    ask = tok.encode("\n\nSummarise the text above in a few sentences, quoting it where you can:\n")
    summary = prose[rnd * 2 * CONTEXT:rnd * 2 * CONTEXT + CONTEXT] + ask
    control = prose[(rnd * 2 + 1) * CONTEXT:(rnd * 2 + 2) * CONTEXT] + ask
    edit = tok.encode("Rewrite this file with `width` renamed to `columns`; change nothing else.\n"
                      "```python\n" + body + "```\n\n```python\n")
    return {"summarise-with-quotes": (summary, {}), "code-edit": (edit, {}),
            "control": (control, {"temperature": 1.0, "seed": 1000 + rnd})}


def cpu_seconds():
    pid = os.environ.get("SERVER_PID")
    if not pid:
        return None
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def with_cpu(measure, tokens=None):
    """measure() with the server's CPU milliseconds per completion token beside it (tokens, or
    the measurement's own completion_tokens)."""
    before = cpu_seconds()
    m = measure()
    if before is not None:
        m["cpu_ms_per_token"] = round(1000 * (cpu_seconds() - before)
                                      / (tokens or m["completion_tokens"]), 2)
    return m


def shared(url, model, prompt, tok, max_tokens, n):
    """n concurrent sampled requests sharing prompt, each with a last line of its own."""
    results, errors = [None] * n, []

    def one(i):
        try:
            own = prompt + tok.encode(f"Reader {i} asks for the gist.\n")
            results[i] = decode(url, model, own, max_tokens, {"temperature": 1.0, "seed": i})
        except Exception as e:  # reported below, after the others finish
            errors.append(e)

    start = time.perf_counter()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return {"decode_tok_s": round(n * max_tokens / (time.perf_counter() - start), 3),
            "ttft_s": max(r["ttft_s"] for r in results), "prompt_tokens": len(prompt)}


def decode(url, model, prompt, max_tokens, extra, ends=False):
    body = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
            "ignore_eos": not ends, "stream": True, "stream_options": {"include_usage": True}}
    body.update(extra)
    req = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    first = last = None
    usage = None
    start = time.perf_counter()
    with urllib.request.urlopen(req, timeout=1800) as r:
        for raw in r:
            line = raw.decode().strip()
            if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                continue
            chunk = json.loads(line[5:])
            if chunk.get("usage"):
                usage = chunk["usage"]
            if chunk.get("choices"):
                now = time.perf_counter()
                first = first or now
                last = now
    tokens = usage["completion_tokens"]
    if tokens != max_tokens and not (ends and 1 < tokens < max_tokens):
        raise RuntimeError(f"asked for {max_tokens} tokens, got {tokens}")
    return {"decode_tok_s": round((tokens - 1) / (last - first), 3),
            "ttft_s": round(first - start, 2), "prompt_tokens": usage["prompt_tokens"],
            "completion_tokens": tokens}


def main():
    url, rnd, max_tokens = sys.argv[1].rstrip("/"), int(sys.argv[2]), int(sys.argv[3])
    with urllib.request.urlopen(url + "/v1/models", timeout=30) as r:
        model = json.load(r)["data"][0]["id"]
    tok = tokenizer()
    # unmeasured: a young server's first steps run while the JIT is still compiling
    decode(url, model, tok.encode("Warm-up: one short request first."),
           int(os.environ.get("WARMUP", 64)), {})
    reask = os.environ.get("REASK") == "1"
    ends = os.environ.get("ENDS") == "1"
    warm = int(os.environ.get("WARM", 0))
    wanted = os.environ.get("WORKLOADS")
    concurrency = int(os.environ.get("CONCURRENCY", 8))
    work = prompts(tok, rnd)
    work[f"shared-prompt x{concurrency}"] = (work["control"][0], None)
    for name, (prompt, extra) in work.items():
        if wanted and name.split(" ")[0] not in wanted.split(","):
            continue
        if extra is None:
            m = with_cpu(lambda: shared(url, model, prompt, tok, max_tokens, concurrency),
                         concurrency * max_tokens)
            m["workload"] = name
            m["load"] = os.getloadavg()[0]
            print(json.dumps(m), flush=True)
            continue
        greedy_ends = ends and not extra
        if reask and not extra:
            decode(url, model, prompt, max_tokens, extra, greedy_ends)  # the first asking, unmeasured
            name += " (re-ask)"
        if warm and not extra:
            for i in range(warm):  # other documents' requests, unmeasured
                decode(url, model, prompts(tok, 50 + warm * rnd + i)[name][0], max_tokens, extra,
                       greedy_ends)
            name += f" (warm {warm})"
        m = with_cpu(lambda: decode(url, model, prompt, max_tokens, extra, greedy_ends))
        m["workload"] = name + (" (to its end)" if greedy_ends else "")
        m["load"] = os.getloadavg()[0]
        print(json.dumps(m), flush=True)


if __name__ == "__main__":
    main()
