#!/usr/bin/env python3
"""Makes a copy of the jar's ONNX Runtime library that sees no AVX-512 state, to measure on an
AVX-512 host what an AVX2 machine without VNNI runs.

MLAS (ONNX Runtime's CPU kernels) and ONNX Runtime's CPUIDInfo pick their kernels from CPUID
and from XCR0, the register the OS sets to say which vector state it saves (read by `xgetbv`).
AVX-512 kernels need XCR0's opmask/ZMM bits (0xE0). Every `xgetbv` in the library's code is
replaced by an instruction of the same length that reads XCR0 = 0x7 (x87, SSE, AVX): MLAS then
takes its AVX2 kernels (int8 products by vpmaddubsw, no VNNI), as on an AVX2-only CPU. Run the
server with

    RADIXSERVE_ORT_LIBRARY=OUT/libonnxruntime.so JAVA_TOOL_OPTIONS=-XX:UseAVX=2 java ... serve ...

so that the JVM's own vector code (the attention kernel) is AVX2 too. The memory system stays the
host's: compute per step is an AVX2 machine's, bandwidth is not. Nested KVM (a guest CPU without
AVX-512) would be the cleaner way; on the 2026-12-01 VM a guest kernel hung before its first line.

Usage: ort_without_avx512.py RADIXSERVE_JAR OUT_DIR
"""
import re
import subprocess
import sys
import zipfile
from pathlib import Path

MEMBER = "ai/onnxruntime/native/linux-x64/libonnxruntime.so"
XGETBV = bytes.fromhex("0f01d0")
# xgetbv; mov eax,eax (the zero-extension GCC emits after it) -> xor edx,edx; lea eax,[rcx+7]
WITH_MOV = (XGETBV + bytes.fromhex("89c0"), bytes.fromhex("31d28d4107"))
# a lone xgetbv -> lea eax,[rcx+7] (ecx is the XCR index, 0 for XCR0; edx left as it was)
ALONE = (XGETBV, bytes.fromhex("8d4107"))


def xgetbv_sites(library):
    """Addresses of xgetbv in the library's code, from objdump (file offset = address there)."""
    listing = subprocess.run(["objdump", "-d", "--section=.text", str(library)], check=True,
                             capture_output=True, text=True).stdout
    sites = [int(m.group(1), 16) for m in re.finditer(r"^\s*([0-9a-f]+):\s+0f 01 d0\s+xgetbv",
                                                       listing, re.M)]
    headers = subprocess.run(["objdump", "-h", str(library)], check=True, capture_output=True,
                             text=True).stdout
    text = re.search(r"\.text\s+[0-9a-f]+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", headers)
    if text is None or int(text.group(1), 16) != int(text.group(2), 16):
        raise SystemExit(".text's address and file offset differ; patch by offset not supported")
    return sites


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    library = out / "libonnxruntime.so"
    with zipfile.ZipFile(sys.argv[1]) as jar:
        library.write_bytes(jar.read(MEMBER))
    code = bytearray(library.read_bytes())
    sites = xgetbv_sites(library)
    if not sites:
        raise SystemExit("no xgetbv found: nothing to patch")
    for at in sites:
        for old, new in (WITH_MOV, ALONE):
            if code[at:at + len(old)] == old:
                code[at:at + len(new)] = new
                break
        else:
            raise SystemExit(f"unexpected bytes at {at:#x}")
    library.write_bytes(bytes(code))
    if xgetbv_sites(library):
        raise SystemExit("an xgetbv survived the patch")
    print(f"{library}: {len(sites)} xgetbv replaced (XCR0 reads 0x7)")


if __name__ == "__main__":
    main()
