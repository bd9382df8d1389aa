#!/usr/bin/env python3
"""The transport form of a CUDA library whose fatbin entries are LZ4-compressed, and back.

    fatbin-lz.py split LIBLZ4 LIB OUT   writes LIB's transport form to OUT (on the build machine)
    fatbin-lz.py join LIBLZ4 IN OUT     writes the library back from its transport form

nvcc's fatbinary compresses each cubin with LZ4 (an entry's flag 0x2000; the header keeps the
compressed and the uncompressed size). LZ4 leaves the SASS about 3.5 times smaller, xz on top of
it only 1.2 times more; xz on the uncompressed cubins does far better (cuBLASLt's sm_90 kernels:
128 MiB as shipped through xz, about half that uncompressed through xz). So the transport form
carries every entry uncompressed and the host compresses it again, with the LZ4 the entries were
made with: liblz4's high-compression level 2 (lz4 1.9.4, Debian's liblz4.so.1, which the payload
carries) gives the same bytes for every entry of cuBLAS 12.6, cuBLASLt 12.6 and ONNX Runtime
1.29's CUDA provider. `split` moves out only the entries it has just seen come back byte for byte
through that same call; any other entry stays as it was, compressed, in place. `join` checks the
whole library's SHA-256 against the one `split` recorded, so the host ends with exactly the bytes
of the cut library, or stops.

The transport form: b"RSLZR1\\n", a u64 length and a JSON header (size, sha256, level, and the
entries moved out as [offset, compressed size, uncompressed size]), the library with those
entries' bytes zeroed, then the uncompressed entries back to back.
"""
import ctypes
import hashlib
import importlib.util
import json
import os
import struct
import sys

MAGIC = b"RSLZR1\n"
LEVEL = 2
FLAG_COMPRESSED = 0x2000


class Lz4:
    """The two calls of liblz4 this needs, through ctypes (python3's standard library)."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.LZ4_compress_HC.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self.lib.LZ4_decompress_safe.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        self.lib.LZ4_compressBound.argtypes = [ctypes.c_int]

    def compress(self, raw, level=LEVEL):
        out = ctypes.create_string_buffer(self.lib.LZ4_compressBound(len(raw)))
        n = self.lib.LZ4_compress_HC(raw, out, len(raw), len(out), level)
        if n <= 0:
            sys.exit("fatbin-lz: LZ4_compress_HC failed")
        return out.raw[:n]

    def decompress(self, data, size):
        out = ctypes.create_string_buffer(size)
        n = self.lib.LZ4_decompress_safe(data, out, len(data), size)
        return out.raw[:n] if n == size else None


def compressed_entries(data):
    """(payload offset, compressed size, uncompressed size) of each LZ4-compressed fatbin entry."""
    spec = importlib.util.spec_from_file_location("fatbin_cut", os.path.join(os.path.dirname(__file__), "fatbin-cut.py"))
    cut = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cut)
    for start, size in cut.fatbin_sections(data):
        for _, _, _, entries in cut.containers(data, start, size):
            for e, _, _, _ in entries:
                _, _, hsize, _ = struct.unpack_from("<HHIQ", data, e)
                csize, = struct.unpack_from("<I", data, e + 16)
                flags, = struct.unpack_from("<Q", data, e + 40)
                dsize, = struct.unpack_from("<Q", data, e + 56)
                if hsize >= 64 and flags & FLAG_COMPRESSED:
                    yield e + hsize, csize, dsize


def split(lz4, lib, out):
    data = open(lib, "rb").read()
    rest, moved, raws, kept = bytearray(data), [], [], 0
    for offset, csize, dsize in compressed_entries(data):
        packed = data[offset:offset + csize]
        raw = lz4.decompress(packed, dsize)
        if raw is None or lz4.compress(raw) != packed:
            kept += 1
            continue
        rest[offset:offset + csize] = bytes(csize)
        moved.append([offset, csize, dsize])
        raws.append(raw)
    header = json.dumps({"size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "level": LEVEL,
                         "entries": moved}).encode()
    with open(out, "wb") as f:
        f.write(MAGIC + struct.pack("<Q", len(header)) + header)
        f.write(rest)
        for raw in raws:
            f.write(raw)
    print(f"fatbin-lz: {os.path.basename(lib)}: {len(moved)} entries travel uncompressed "
          f"({sum(d for _, _, d in moved) / 2**20:.1f} MiB), {kept} stay compressed", file=sys.stderr)


def read_exactly(f, n):
    data = f.read(n)
    if len(data) != n:
        sys.exit("fatbin-lz: the transport form ends early")
    return data


def join(lz4, f, out):
    """Reads the transport form from the binary file object f and writes the library to out."""
    if read_exactly(f, len(MAGIC)) != MAGIC:
        sys.exit("fatbin-lz: not a transport form")
    header = json.loads(read_exactly(f, struct.unpack("<Q", read_exactly(f, 8))[0]))
    data = bytearray(read_exactly(f, header["size"]))
    for offset, csize, dsize in header["entries"]:
        packed = lz4.compress(read_exactly(f, dsize), header["level"])
        if len(packed) != csize:
            sys.exit(f"fatbin-lz: the entry at {offset:#x} compressed to {len(packed)} bytes, not {csize}")
        data[offset:offset + csize] = packed
    if hashlib.sha256(data).hexdigest() != header["sha256"]:
        sys.exit(f"fatbin-lz: {out} differs from the library that was packed (SHA-256)")
    with open(out, "wb") as dst:
        dst.write(data)
    return len(header["entries"])


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] not in ("split", "join"):
        sys.exit(__doc__)
    lz4 = Lz4(sys.argv[2])
    if sys.argv[1] == "split":
        split(lz4, sys.argv[3], sys.argv[4])
    else:
        with open(sys.argv[3], "rb") as src:
            join(lz4, src, sys.argv[4])
