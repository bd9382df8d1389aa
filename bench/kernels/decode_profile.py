#!/usr/bin/env python3
"""Where a server's CPU goes while it decodes, from `perf record` samples, in a few buckets that
compare across radixserve and llama-server (journal 2026-12-02b): the weights' matmul kernels,
the thread pool's spinning, the rest of the engine.

ONNX Runtime's libonnxruntime.so is stripped, so its samples are grouped by function through the
unwind table (`readelf -wf`: one FDE per compiled function) and each function is named by what it
contains: AVX-512 VNNI (`vpdpbusd`) is MLAS's int8-compute MatMulNBits kernel; `pause`/`tpause`
is the thread pool's spin-wait; code with no unwind entry is MLAS's hand-written assembly (its
SGEMM kernels: here the float block-sum pass of the 4-bit MatMulNBits). JIT-compiled Java needs
`-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit` on the server (names at its exit).

    perf record -F 1999 -p PID -o OUT.data -- sleep 12      (during a long batch-1 decode)
    python3 bench/kernels/decode_profile.py OUT.data [TOKENS_PER_S]

Prints each bucket's share of the samples and, given the decode rate measured over the same
seconds, its CPU milliseconds a token.
"""
import bisect
import collections
import functools
import glob
import os
import re
import subprocess
import sys


def fdes(elf):
    out = subprocess.run(["readelf", "-wf", elf], capture_output=True, text=True).stdout
    ranges = sorted((int(a, 16), int(b, 16)) for a, b in re.findall(r"pc=([0-9a-f]+)\.\.([0-9a-f]+)", out))
    return ranges, [a for a, _ in ranges]


@functools.cache
def kind_of(elf, lo, hi):
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={lo:#x}",
                           f"--stop-address={hi:#x}", elf], capture_output=True, text=True).stdout
    if "vpdpbusd" in text:
        return "ORT: MLAS int8-compute MatMulNBits kernels"
    if re.search(r"\bt?pause\b", text) and hi - lo < 1024:
        return "ORT: thread pool spin-wait"
    return "ORT: other code"


def bucket_of(dso, sym):
    if "ggml-cpu" in dso:
        if re.match(r"(gemv|gemm)_|ggml_vec_dot_q|ggml_gemv|ggml_gemm", sym):
            return "ggml: weights' matmul kernels"
        return "ggml: other ops"
    if "gomp" in dso:
        return "ggml: OpenMP barrier spin-wait"
    if dso.startswith("[JIT]") or dso.endswith(".map"):
        return "Java (JIT code)"
    if "libjvm" in dso:
        return "JVM (GC, compiler)"
    if "kernel" in dso:
        return "Linux kernel"
    return "other libraries (" + dso.split("/")[-1].split(".so")[0] + ")"


def main():
    data = sys.argv[1]
    rate = float(sys.argv[2]) if len(sys.argv) > 2 else None
    # perf report's symbol column gives a stripped library's samples as file offsets
    report = subprocess.run(["perf", "report", "-i", data, "--sort", "dso,sym", "--stdio"],
                            capture_output=True, text=True).stdout
    counts = collections.Counter()
    elf = ranges = starts = None
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S.*?)\s+\[(.)\]\s+(.*)", line)  # pct, dso, [.], symbol
        if not m:
            continue
        pct, dso, sym = float(m.group(1)), m.group(2).strip(), m.group(4).strip()
        if dso == "libonnxruntime.so":
            if elf is None:  # the first ONNX Runtime sample: find the library and its functions once
                elf = buildid_elf(data)
                ranges, starts = fdes(elf)
            addr = int(sym.split()[0], 16) if sym.startswith("0x") else None
            if addr is None:
                counts["ORT: other code"] += pct
                continue
            i = bisect.bisect_right(starts, addr) - 1
            if i >= 0 and ranges[i][0] <= addr < ranges[i][1]:
                counts[kind_of(elf, *ranges[i])] += pct
            else:
                counts["ORT: MLAS assembly (SGEMM: the 4-bit block sums)"] += pct
        else:
            counts[bucket_of(dso, sym)] += pct
    total = sum(counts.values())
    cpu_ms = None
    if rate:
        # both servers' two threads keep both CPUs busy while decoding (they spin between parts)
        print(f"{rate} tokens/s: {2000 / rate:.1f} CPU-ms a token on 2 busy CPUs")
        cpu_ms = 2000 / rate
    for name, pct in counts.most_common():
        share = pct / total
        extra = f"  {share * cpu_ms:6.1f} CPU-ms a token" if cpu_ms else ""
        print(f"{100 * share:6.2f}%  {name}{extra}")


def buildid_elf(data):
    """The copy of ONNX Runtime's library that perf kept in ~/.debug (by build id): the server's
    own copy, unpacked to a temporary directory, is gone once it stops."""
    out = subprocess.run(["perf", "buildid-list", "-i", data], capture_output=True, text=True).stdout
    for line in out.splitlines():
        build_id, _, path = line.partition(" ")
        if path.endswith("libonnxruntime.so"):
            found = glob.glob(os.path.expanduser(f"~/.debug/{path.lstrip('/')}/{build_id}/elf"))
            if found:
                return found[0]
            return path
    raise SystemExit("no libonnxruntime.so among the samples' build ids")


if __name__ == "__main__":
    main()
