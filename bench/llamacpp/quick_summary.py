#!/usr/bin/env python3
"""Medians per server of quick.sh's results.jsonl, and the radixserve / llama-server ratios
(wall and per CPU-second), as docs/benchmarks/journal/2026-11-21-to-28.md's tables give them; a variant with serve flags
after colons (rs-int4:--quantization-block-size:64) is set against its mode's llama-server, and
a checkpoint served from another directory (rs-none@DIR: a 4-bit GPTQ/AWQ one) against Q4_0.

usage: quick_summary.py OUT/results.jsonl
"""
import json,sys,statistics as st,collections
rows=collections.defaultdict(list)
for l in open(sys.argv[1]):
    d=json.loads(l); rows[d['variant']].append(d)
keys=['decode_tok_s','decode_tok_cpu_s','prefill512_tok_s','prefill512_tok_cpu_s']
med={}
for v,ds in rows.items():
    med[v]={k:st.median([d['m'][k] for d in ds]) for k in keys}
    print(f"| {v} | {len(ds)} | {med[v]['decode_tok_s']:.1f} / {med[v]['decode_tok_cpu_s']:.1f} | {med[v]['prefill512_tok_s']:.0f} / {med[v]['prefill512_tok_cpu_s']:.0f} | loads {[d['load'] for d in ds]}")
# every radixserve variant (flags after colons included) against llama-server's same mode
partner={'rs-none':'lc-f32','rs-int8':'lc-q8_0','rs-int4':'lc-q4_0','rs-int4-head':'lc-q4_0'}
for a in med:
    b='lc-q4_0' if '@' in a.split(':')[0] else partner.get(a.split(':')[0])
    if b in med:
        r=[med[a][k]/med[b][k] for k in keys]
        print(f"| {a} / {b} | {r[0]:.2f}x / **{r[1]:.2f}x** | {r[2]:.2f}x / **{r[3]:.2f}x** |")
