#!/usr/bin/env python3
"""Where a server's CPU time goes during 512-token prefills or batch-1 decodes, by perf sampling.

Samples the whole server process (every thread) with `perf record` while it serves N requests
one at a time, then prints the share of samples per shared object, the hottest symbols, and for a
stripped library (ONNX Runtime's release build has no symbols) its hottest 4 KiB code pages, so a
kernel still shows up as one place. The same command works on radixserve and on llama-server, so
the two engines' shares are measured the same way (ONNX Runtime's own profiler times nodes, and
inflates short ones; llama.cpp has no per-op timer in its server).

  prefill: N distinct 512-token prompts, max_tokens 1 (nothing to reuse from any cache)
  decode:  N requests of a 16-token prompt and 128 greedy tokens (ignore_eos)

The ms columns are a share of samples times the median request (or token): with one compute
thread they are that thread's time; with more, or with other threads busy (a JIT compiler), read
the shares, which count CPU time on every core.

usage: where_time_goes.py URL PID [prefill|decode] [N] [SEED]
needs: perf (linux-perf), permission to attach to PID; for a JVM, jcmd on the PATH (it writes
the map that names compiled Java methods)
"""
import collections
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

VOCAB = 50256  # GPT-2's ids below <|endoftext|>


def complete(url, model, prompt, max_tokens):
    body = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
            "ignore_eos": True}
    req = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    start = time.perf_counter()
    with urllib.request.urlopen(req, timeout=600) as r:
        json.load(r)
    return time.perf_counter() - start


def by_thread(data):
    """Share of samples per thread name (trailing digits kept: GC and compiler threads differ)."""
    out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "comm",
                          "--stdio"], capture_output=True, text=True, check=True).stdout
    shares = collections.Counter()
    for line in out.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[0].endswith("%"):
            shares[parts[1].strip()] += float(parts[0].rstrip("%"))
    return shares


def report(data):
    out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso,symbol",
                          "--stdio"], capture_output=True, text=True, check=True).stdout
    by_dso = collections.Counter()
    by_symbol = collections.Counter()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 4 or not parts[0].endswith("%"):
            continue
        share = float(parts[0].rstrip("%"))
        dso = parts[1]
        symbol = " ".join(parts[3:])
        if dso.startswith("[JIT]"):
            dso = "[JIT]"
            symbol = " ".join(parts[5:]) if len(parts) > 5 and parts[4] == "[.]" else symbol
        by_dso[dso] += share
        if symbol.startswith("0x"):
            # a stripped library: group its addresses by 4 KiB page (one kernel, one place)
            symbol = "page " + hex(int(symbol.split()[0], 16) >> 12 << 12)
        by_symbol[(dso, symbol[:90])] += share
    return by_dso, by_symbol


def main():
    url = sys.argv[1].rstrip("/")
    pid = int(sys.argv[2])
    mode = sys.argv[3] if len(sys.argv) > 3 else "prefill"
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 0)
    with urllib.request.urlopen(url + "/v1/models", timeout=30) as r:
        model = json.load(r)["data"][0]["id"]
    ids = lambda k: [rng.randrange(VOCAB) for _ in range(k)]
    prompt_len, max_tokens = (512, 1) if mode == "prefill" else (16, 128)
    complete(url, model, ids(prompt_len), max_tokens)  # warm-up, unsampled
    data = os.path.join(tempfile.mkdtemp(), "perf.data")
    perf = subprocess.Popen(["perf", "record", "-q", "-F", "2999", "-p", str(pid), "-o", data],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    walls = [complete(url, model, ids(prompt_len), max_tokens) for _ in range(n)]
    perf.send_signal(signal.SIGINT)
    perf.wait()
    # a JVM names its compiled methods for perf only in /tmp/perf-PID.map, written on request
    # (jcmd signals the process: only ever a JVM's)
    if "java" in os.path.basename(os.readlink(f"/proc/{pid}/exe")):
        subprocess.run(["jcmd", str(pid), "Compiler.perfmap"], capture_output=True)
    by_dso, by_symbol = report(data)
    wall = statistics.median(walls)
    unit = "request" if mode == "prefill" else "token"
    per = wall if mode == "prefill" else wall / max_tokens
    print(f"{mode}: {n} requests, median {wall * 1000:.1f} ms a request"
          + ("" if mode == "prefill" else f", {per * 1000:.2f} ms a token (its prefill included)"))
    print("share of samples, and of the median " + unit + " (ms):")
    for dso, share in by_dso.most_common(6):
        print(f"  {share:5.1f}%  {share / 100 * per * 1000:7.2f}  {dso}")
    print("by thread:")
    for thread, share in by_thread(data).most_common(5):
        print(f"  {share:5.1f}%  {share / 100 * per * 1000:7.2f}  {thread}")
    print("hottest symbols (or code pages of a stripped library):")
    for (dso, symbol), share in by_symbol.most_common(12):
        print(f"  {share:5.1f}%  {share / 100 * per * 1000:7.2f}  {dso}  {symbol}")


if __name__ == "__main__":
    main()
