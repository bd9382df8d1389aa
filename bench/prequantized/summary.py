#!/usr/bin/env python3
"""Medians per server of compare.sh's OUT/results.jsonl: usage: summary.py OUT/results.jsonl"""
import json
import statistics
import sys

rows = [json.loads(line) for line in open(sys.argv[1])]
names = list(dict.fromkeys(r["name"] for r in rows))
print("| server | rounds | start s | resident MB | decode tok/s (per CPU-s) | prefill 512 tok/s (per CPU-s) | decode by round |")
print("|---|---:|---:|---:|---:|---:|---|")
for n in names:
    rs = [r for r in rows if r["name"] == n]
    med = lambda k: statistics.median(r[k] for r in rs)
    print(f"| {n} | {len(rs)} | {med('start_s'):.2f} | {med('rss_kb') / 1024:.0f} | "
          f"{med('decode_tok_s'):.1f} ({med('decode_tok_cpu_s'):.0f}) | "
          f"{med('prefill512_tok_s'):.0f} ({med('prefill512_tok_cpu_s'):.0f}) | "
          f"{', '.join(str(round(r['decode_tok_s'])) for r in rs)} |")
