#!/usr/bin/env python3
"""Where a model run's time goes, from ONNX Runtime's own per-node profile.

Reads the JSON that a server started with `-Dradixserve.ortProfile=PREFIX` writes when it stops
(PREFIX_<date>.json), takes the runs shorter than MAX_MS (batch-1 decode runs, leaving out the
prefills and the warm-up), and prints their median length, the median gap from one run's end to
the next run's start (the engine's own work between steps: sampling, scheduling), and per op type
the median over runs of that op's summed node time, with its share of the run. ONNX Runtime's
profiler adds a little to every node, so short nodes read long: compare op types within one
profile, not against a run without the profiler.

usage: ort_profile.py PROFILE.json [MAX_MS=120] [TOP=16]
"""
import bisect
import collections
import json
import statistics
import sys


def main():
    path = sys.argv[1]
    max_us = float(sys.argv[2] if len(sys.argv) > 2 else 120) * 1000
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    events = json.load(open(path))
    runs = sorted((e for e in events if e.get("cat") == "Session" and e["name"] == "model_run"),
                  key=lambda e: e["ts"])
    starts = [r["ts"] for r in runs]
    short = [i for i, r in enumerate(runs) if r["dur"] < max_us]
    if not short:
        sys.exit(f"no run shorter than {max_us / 1000} ms among {len(runs)}")
    kept = set(short)
    per_run = collections.defaultdict(lambda: collections.defaultdict(float))
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        i = bisect.bisect_right(starts, e["ts"]) - 1
        if i in kept:
            per_run[i][e["args"].get("op_name", "?")] += e["dur"]
    run_ms = statistics.median(runs[i]["dur"] for i in short) / 1000
    gaps = [runs[i + 1]["ts"] - runs[i]["ts"] - runs[i]["dur"] for i in short
            if i + 1 in kept]
    print(f"{len(short)} runs under {max_us / 1000:g} ms of {len(runs)}: median {run_ms:.1f} ms,"
          f" gap to the next run {statistics.median(gaps) / 1000 if gaps else float('nan'):.2f} ms")
    ops = {op for i in short for op in per_run[i]}
    medians = {op: statistics.median(per_run[i].get(op, 0.0) for i in short) / 1000 for op in ops}
    nodes = statistics.median(sum(per_run[i].values()) for i in short) / 1000
    print(f"{'op type':36s} {'ms':>8s} {'of run':>7s}")
    for op in sorted(medians, key=medians.get, reverse=True)[:top]:
        print(f"{op:36s} {medians[op]:8.2f} {medians[op] / run_ms:7.1%}")
    print(f"{'all nodes':36s} {nodes:8.2f} {nodes / run_ms:7.1%}")


if __name__ == "__main__":
    main()
