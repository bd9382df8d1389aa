#!/usr/bin/env python3
"""The table for docs/benchmarks/journal/2026-11-21-to-28.md from compare.sh's OUT: medians over rounds per server, wall clock
and per CPU-second of the server process, and the radixserve / llama-server ratio per pair
(none/F32, int8/Q8_0, int4/Q4_0).

usage: summarize.py OUT [OUT...]   (several: their rounds pooled)
"""
import json
import os
import statistics
import sys

PAIRS = [("rs-none", "lc-f32"), ("rs-int8", "lc-q8_0"), ("rs-int4", "lc-q4_0"),
         ("rs-int4-head", "lc-q4_0")]
NAMES = {"rs-none": "radixserve none (fp32)", "rs-int8": "radixserve int8",
         "rs-int4": "radixserve int4", "rs-int4-head": "radixserve int4 + LM head int4",
         "lc-f32": "llama-server F32",
         "lc-q8_0": "llama-server Q8_0", "lc-q4_0": "llama-server Q4_0"}
KEYS = ["decode", "decode_cpu", "prefill", "prefill_cpu", "c4", "c4_cpu", "c16", "c16_cpu",
        "c4_ttft", "c16_ttft"]
TICK = os.sysconf("SC_CLK_TCK")


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def main(outs):
    rows, loads = {}, []
    lines = [(out, line) for out in outs for line in open(f"{out}/results.jsonl")]
    for out, line in lines:
        r = json.loads(line)
        if r.get("error") or not r.get("measure"):
            continue
        v, rnd, m = r["variant"], r["round"], r["measure"]
        row = rows.setdefault(v, {k: [] for k in KEYS})
        row["decode"].append(m["decode_tok_s"])
        row["decode_cpu"].append(m.get("decode_tok_cpu_s"))
        row["prefill"].append(m["prefill512_tok_s"])
        row["prefill_cpu"].append(m.get("prefill512_tok_cpu_s"))
        loads += r["load"]
        for c in (4, 16):
            try:
                s = json.load(open(f"{out}/bench-{v}-{rnd}-c{c}.json"))["runs"][0]["summary"]
            except (OSError, ValueError, KeyError):
                continue
            if s["failed"] == 0:
                row[f"c{c}"].append(s["outputThroughput"])
                row[f"c{c}_ttft"].append(s["ttftMs"]["p50"])
                ticks = r.get("bench_cpu_ticks", {}).get(f"c{c}")
                row[f"c{c}_cpu"].append(s["outputTokens"] / (ticks / TICK) if ticks else None)
    m = {v: {k: med(x) for k, x in row.items()} for v, row in rows.items()}
    print("| server | rounds (clean c=4, c=16 runs) | batch-1 decode tok/s: wall / per CPU-s | prefill 512 tok/s: wall /"
          " per CPU-s | c=4 output tok/s: wall / per CPU-s (TTFT p50 ms) | c=16 the same |")
    print("|---|---:|---:|---:|---:|---:|")
    shown = []
    for pair in PAIRS:
        for v in pair:
            if v in m and v not in shown:
                shown.append(v)
                x = m[v]
                n = rows[v]
                print(f"| {NAMES[v]} | {len(n['decode'])} ({len(n['c4'])}, {len(n['c16'])}) | "
                      f"{x['decode']:.1f} / "
                      f"{x['decode_cpu']:.1f} | {x['prefill']:.0f} / {x['prefill_cpu']:.0f} | "
                      f"{x['c4']:.1f} / {x['c4_cpu']:.1f} ({x['c4_ttft']:.0f}) | "
                      f"{x['c16']:.1f} / {x['c16_cpu']:.1f} ({x['c16_ttft']:.0f}) |")
    print()
    print("| radixserve / llama-server | decode wall / CPU | prefill 512 wall / CPU |"
          " c=4 wall / CPU | c=16 wall / CPU |")
    print("|---|---:|---:|---:|---:|")
    for a, b in PAIRS:
        if a in m and b in m:
            q = lambda k: m[a][k] / m[b][k]
            print(f"| {NAMES[a]} / {NAMES[b]} | {q('decode'):.2f}x / {q('decode_cpu'):.2f}x | "
                  f"{q('prefill'):.2f}x / {q('prefill_cpu'):.2f}x | {q('c4'):.2f}x / "
                  f"{q('c4_cpu'):.2f}x | {q('c16'):.2f}x / {q('c16_cpu'):.2f}x |")
    print()
    print("per-round values, wall (per CPU-s):")
    for v, row in rows.items():
        parts = []
        for k in ("decode", "prefill", "c4", "c16"):
            parts.append(k + " " + ", ".join(
                f"{w:.1f}" + (f" ({c:.1f})" if c else "") for w, c in zip(row[k], row[k + "_cpu"])))
        print(f"  {v}: " + "; ".join(parts))
    if loads:
        print(f"load average (1 min) at the starts and ends of the server runs: {min(loads)}.."
              f"{max(loads)}, median {statistics.median(loads)}")


if __name__ == "__main__":
    main(sys.argv[1:])
