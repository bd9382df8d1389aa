#!/usr/bin/env python3
"""The table of bench/gguf/compare.sh's results.jsonl: per file, each server's figures and the
radixserve / llama-server ratios (>1: radixserve faster, or for memory and ready time, more).
Per CPU-second rates (the server process's utime + stime) count only the time the server ran, so
on a machine shared with other work they move less than the wall-clock rates.

usage: summary.py OUT/results.jsonl
"""
import json
import sys

every = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
rows = [r for r in every if r.get("kind") != "shared"]
shared = [r for r in every if r.get("kind") == "shared"]
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

if shared:
    print("\nShared system prompt (radixserve bench --workload shared-system-prompt), output tok/s"
          " wall / per server CPU-s, and TTFT p50:")
    print("| file | concurrency | radixserve | llama-server | ratio wall | ratio per CPU-s |")
    print("|---|---:|---|---|---:|---:|")
    sb = {(r["file"], r["concurrency"], r["server"]): r for r in shared}
    for f, c in dict.fromkeys((r["file"], r["concurrency"]) for r in shared):
        rs, lc = sb.get((f, c, "radixserve")), sb.get((f, c, "llama-server"))
        cell = lambda r: ("-" if r is None else f"{r['output_tok_s']:.1f} / "
                          f"{r['output_tok_cpu_s'] or 0:.1f} ({r['ttft_p50_ms']:.0f} ms"
                          + (f", {r['failed']} failed" if r["failed"] else "") + ")")
        ratio = lambda k: (f"**{rs[k] / lc[k]:.2f}x**" if rs and lc and rs.get(k) and lc.get(k)
                           else "-")
        print(f"| {f} | {c} | {cell(rs)} | {cell(lc)} | {ratio('output_tok_s')} |"
              f" {ratio('output_tok_cpu_s')} |")
