#!/usr/bin/env python3
"""Splits a JFR recording's CPU-time samples (jdk.CPUTimeSample, JDK 25) of one thread into:
inside the runner (OnnxModelRunner.forward on the stack: ONNX Runtime's native code, or our Java
custom ops called back from it) and everything else, by the innermost radixserve/Netty frames.

  jfr print --json --stack-depth 80 --events jdk.CPUTimeSample REC.jfr > rec.json
  jfr_split.py rec.json [THREAD_SUBSTRING]   (default: radixserve-engine)
"""
import collections
import json
import sys


def main():
    events = json.load(open(sys.argv[1]))["recording"]["events"]
    want = sys.argv[2] if len(sys.argv) > 2 else "radixserve-engine"
    split = collections.Counter()
    for e in events:
        v = e["values"]
        thread = (v.get("eventThread") or {}).get("javaName") or ""
        if want not in thread or not v.get("stackTrace"):
            continue
        frames = v["stackTrace"]["frames"]
        names = [f["method"]["type"]["name"].split("/")[-1] + "." + f["method"]["name"] for f in frames]
        own = [n for n, f in zip(names, frames)
               if f["method"]["type"]["name"].startswith(("dev/", "io/netty"))]
        if any("OnnxModelRunner.forward" in n for n in own):
            key = "runner: Java custom op" if any("CustomOp" in n for n in own) else "runner: ORT native"
        else:
            key = " > ".join(reversed(own[:3])) + " | " + (names[0] if names else "?")
        split[key] += 1
    total = sum(split.values())
    print(f"{total} samples of {want}")
    for key, count in split.most_common(25):
        print(f"{100 * count / total:6.2f} %  {key}")


if __name__ == "__main__":
    main()
