#!/usr/bin/env python3
"""Per-round and median ratios of a bench/speculative/run.sh results file: for each workload and
each variant against the base (rs-off, or lc-off for lc-* variants), the decode tok/s ratio of
the same round (and the CPU-ms-per-token ratio where measured: lower is better), then the median
over rounds. Rounds interleave the variants, so a ratio compares servers that ran minutes apart.

usage: ratios.py OUT/results.jsonl
"""
import collections
import json
import statistics
import sys


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    by = collections.defaultdict(dict)  # (workload, round) -> variant -> row
    for r in rows:
        by[(r["workload"], r["round"])][r["variant"]] = r
    workloads = sorted({w for w, _ in by}, key=lambda w: [r["workload"] for r in rows].index(w))
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    for w in workloads:
        rounds = sorted(rnd for ww, rnd in by if ww == w)
        for v in variants:
            base = "lc-off" if v.startswith("lc-") else "rs-off"
            if v == base:
                continue
            speed, cpu = [], []
            cells = []
            for rnd in rounds:
                got = by[(w, rnd)]
                if v not in got or base not in got:
                    continue
                a, b = got[v], got[base]
                speed.append(a["decode_tok_s"] / b["decode_tok_s"])
                cell = f"r{rnd} {a['decode_tok_s']:.2f}/{b['decode_tok_s']:.2f}={speed[-1]:.3f}x"
                if "cpu_ms_per_token" in a and "cpu_ms_per_token" in b:
                    cpu.append(a["cpu_ms_per_token"] / b["cpu_ms_per_token"])
                    cell += f" cpu {cpu[-1]:.3f}x"
                cells.append(cell)
            if not speed:
                continue
            line = f"{w:32s} {v}/{base}: median tok/s {statistics.median(speed):.3f}x"
            if cpu:
                line += f", median cpu/token {statistics.median(cpu):.3f}x"
            print(line + f" over {len(speed)} rounds")
            for c in cells:
                print("    " + c)


if __name__ == "__main__":
    main()
