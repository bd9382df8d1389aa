#!/usr/bin/env python3
"""Several servers up at once, measured in turns: paired decode and prefill on a noisy machine.

bench/gguf/compare.sh starts one server at a time, so a minute of slow memory (these VMs have
them: docs/benchmarks/journal/2026-12-02b-java-q4_0-kernel.md) lands on one server's whole
run. Here every server is started first, all are left idle but one, and each round measures
each server in turn (the order rotated by one every round) with bench/llamacpp/measure.py's
decode (a distinct 16-token prompt, DECODE tokens streamed, greedy, ignore_eos) and 512-token
prefill: the servers of one round are seconds apart. Prints one JSON line per measurement,
then per server the median decode and prefill and, for each, the median over rounds of its
ratio to the first server's in the same round.

    paired.py OUT ROUNDS NAME=COMMAND... (DECODE=64 per request)

COMMAND is a shell command that starts one server listening on the port it names as {port}
(e.g. "java ... serve --model F.gguf --port {port} --threads 2"); its output goes to
OUT/NAME.log. The servers are stopped when the script ends. They share the machine's memory
(radixserve's default KV pool is 4 GiB: give --kv-cache-memory) and, while measured, its cores.
"""
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "llamacpp"))
import measure  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url, proc, limit=600):
    deadline = time.time() + limit
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1)
    raise RuntimeError(f"{url}: not ready in {limit} s")


def main():
    out, rounds = sys.argv[1], int(sys.argv[2])
    specs = [a.split("=", 1) for a in sys.argv[3:]]
    decode_tokens = int(os.environ.get("DECODE", "64"))
    os.makedirs(out, exist_ok=True)
    servers = []
    procs = []
    try:
        for name, command in specs:
            port = free_port()
            log = open(os.path.join(out, name + ".log"), "w")
            # exec: the shell becomes the server, so its pid is the server's
            proc = subprocess.Popen("exec " + command.replace("{port}", str(port)), shell=True,
                                    stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            procs.append(proc)
            url = f"http://127.0.0.1:{port}"
            wait_ready(url, proc)  # one at a time: starts do not overlap
            model = measure.model_of(url)
            measure.decode(url, model, [1, 2, 3, 4], 8, timed=False)  # warm-up, unmeasured
            servers.append((name, url, model, proc))
        rng = random.Random(0)
        rows = []
        with open(os.path.join(out, "paired.jsonl"), "w") as jl:
            for r in range(rounds):
                order = servers[r % len(servers):] + servers[:r % len(servers)]
                prompts = ([rng.randrange(measure.VOCAB) for _ in range(16)],
                           [rng.randrange(measure.VOCAB) for _ in range(512)])
                for name, url, model, proc in order:
                    dec = measure.decode(url, model, prompts[0], decode_tokens, proc.pid)[0]
                    pre = measure.prefill(url, model, prompts[1], proc.pid)[0]
                    row = {"round": r, "server": name, "decode_tok_s": round(dec, 2),
                           "prefill512_tok_s": round(pre, 2), "at": time.strftime("%H:%M:%S")}
                    jl.write(json.dumps(row) + "\n")
                    jl.flush()
                    print(json.dumps(row), flush=True)
                    rows.append(row)
        first = servers[0][0]
        by = {(x["round"], x["server"]): x for x in rows}
        for name, *_ in servers:
            mine = [x for x in rows if x["server"] == name]
            summary = {"server": name}
            for key in ("decode_tok_s", "prefill512_tok_s"):
                summary[key] = statistics.median(x[key] for x in mine)
                summary[key + "_vs_" + first] = round(statistics.median(
                    x[key] / by[(x["round"], first)][key] for x in mine), 3)
            print(json.dumps(summary), flush=True)
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=60)


if __name__ == "__main__":
    main()
