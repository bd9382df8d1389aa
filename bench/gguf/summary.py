#!/usr/bin/env python3
"""The table of bench/gguf/compare.sh's results.jsonl: per file, each server's figures and the
radixserve / llama-server ratios (>1: radixserve faster, or for memory and ready time, more).
Per CPU-second rates (the server process's utime + stime) count only the time the server ran, so
on a machine shared with other work they move less than the wall-clock rates.

usage: summary.py OUT/results.jsonl
"""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
by = {(r["file"], r["server"]): r for r in rows}
cols = [("decode_tok_s", "decode tok/s"), ("prefill512_tok_s", "prefill-512 tok/s"),
        ("decode_tok_cpu_s", "decode tok/CPU-s"), ("prefill512_tok_cpu_s", "prefill tok/CPU-s"),
        ("ready_s", "ready s"), ("rss_mib", "RSS MiB"), ("hwm_mib", "peak RSS MiB")]
print("| file | MiB | server | " + " | ".join(c[1] for c in cols) + " |")
print("|---|---|---|" + "---|" * len(cols))
for f in dict.fromkeys(r["file"] for r in rows):
    rs, lc = by.get((f, "radixserve")), by.get((f, "llama-server"))
    for r in (rs, lc):
        if r:
            print(f"| {f} | {r['bytes'] / 2**20:.0f} | {r['server']} | "
                  + " | ".join(f"{r[c]:.1f}" if isinstance(r[c], float) else str(r[c])
                               for c, _ in cols) + " |")
    if rs and lc:
        print(f"| {f} | | **ratio** | "
              + " | ".join(f"**{rs[c] / lc[c]:.2f}x**" if lc[c] else "-" for c, _ in cols) + " |")
