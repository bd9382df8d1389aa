#!/usr/bin/env python3
"""CPU time per decoded token of one server process, split by thread, at batch 1.

WARM unmeasured requests (default 6), then N streamed greedy requests (distinct 16-token
prompts, max_tokens 128, ignore_eos, one at a time, measure.py's decode()); prints the process's
CPU ms per completion token (utime + stime of every thread, /proc/PID/task/*/stat, their 16-token
prefills included) and the same per thread name (trailing digits dropped, so Netty's event loops
or the GC threads add up). Used for docs/benchmarks/journal/2026-11-21-to-28.md's "Where radixserve's decode CPU goes".

usage: WARM=6 decode_cpu.py URL PID [N] [SEED]
"""
import collections
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

TOKENS = 128


def thread_ticks(pid):
    out = collections.Counter()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")].rstrip("0123456789-#")
        fields = stat.rsplit(")", 1)[1].split()
        out[name] += int(fields[11]) + int(fields[12])
    return out


def main():
    url, pid = sys.argv[1].rstrip("/"), int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 0)
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    model = measure.model_of(url)
    prompt = lambda: [rng.randrange(measure.VOCAB) for _ in range(16)]
    for _ in range(int(os.environ.get("WARM", "6"))):
        measure.decode(url, model, prompt(), TOKENS)
    t0 = thread_ticks(pid)
    for _ in range(n):
        measure.decode(url, model, prompt(), TOKENS)
    t1 = thread_ticks(pid)
    tokens = n * TOKENS
    per = {k: round((t1[k] - t0.get(k, 0)) * tick_ms / tokens, 3) for k in t1 if t1[k] > t0.get(k, 0)}
    total = (sum(t1.values()) - sum(t0.values())) * tick_ms / tokens
    print(json.dumps({"cpu_ms_per_token": round(total, 3),
                      "load": round(os.getloadavg()[0], 2), "threads_ms_per_token": per}))


if __name__ == "__main__":
    main()
