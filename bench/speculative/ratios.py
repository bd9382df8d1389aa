#!/usr/bin/env python3
"""Per-round and median ratios of a bench/speculative/run.sh results file: for each workload and
each variant against the base (rs-off, or lc-off for lc-* variants), the decode tok/s ratio of
the same round (and the CPU-ms-per-token ratio where measured: lower is better), then the median
over rounds. Rounds interleave the variants, so a ratio compares servers that ran minutes apart.

Then, from the radixserve servers' /metrics (OUT/rs-*.metrics and rs2-*, summed over rounds), the draft
tokens verified and accepted by position in the draft; and llama-server's own count of draft
tokens accepted and drafted (OUT/lc-*.log, summed over rounds; it has no per-position figure).

usage: ratios.py OUT/results.jsonl
"""
import collections
import glob
import json
import os
import re
import statistics
import sys


def acceptance(out):
    """Per variant: position -> [drafted, accepted], over OUT/rs-*-ROUND.metrics."""
    by = collections.defaultdict(lambda: collections.defaultdict(lambda: [0.0, 0.0]))
    for f in glob.glob(os.path.join(out, "rs*-*.metrics")):
        variant = os.path.basename(f).rsplit("-", 1)[0]
        for line in open(f):
            m = re.match(r'radixserve_spec_(draft|accepted)_tokens_total\{position="(\d+)".*\} (\S+)',
                         line)
            if m:
                by[variant][int(m.group(2))][m.group(1) == "accepted"] += float(m.group(3))
    return by


def llamacpp_acceptance(out):
    """Per lc-* variant: [accepted, drafted] from llama-server's logs (its per-request
    "draft acceptance" line; the warm-up request's few tokens included)."""
    by = collections.defaultdict(lambda: [0, 0])
    for f in glob.glob(os.path.join(out, "lc-*.log")):
        variant = os.path.basename(f).rsplit("-", 1)[0]
        for line in open(f, errors="replace"):
            m = re.search(r"draft acceptance = \S+ \(\s*(\d+) accepted /\s*(\d+) generated\)", line)
            if m:
                by[variant][0] += int(m.group(1))
                by[variant][1] += int(m.group(2))
    return by


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
    for variant, positions in sorted(acceptance(os.path.dirname(sys.argv[1])).items()):
        cells = [f"{k}: {int(a)}/{int(d)}" for k, (d, a) in sorted(positions.items()) if d]
        if cells:
            print(f"{variant} accepted/drafted by draft position: " + ", ".join(cells))
    for variant, (accepted, drafted) in sorted(llamacpp_acceptance(os.path.dirname(sys.argv[1])).items()):
        print(f"{variant} accepted/drafted (llama-server's log): {accepted}/{drafted}")


if __name__ == "__main__":
    main()
