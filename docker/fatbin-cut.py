#!/usr/bin/env python3
"""Cuts the CUDA device code of a shared library down to the GPUs it will run on.

    fatbin-cut.py list LIB                         the fatbins' entries by kind and architecture
    fatbin-cut.py cut --keep 80,89,90 LIB OUT      a copy of LIB that keeps, in every fatbin, the
                                                   entries a device of those architectures loads

A library built by nvcc carries its kernels in the ELF section .nv_fatbin: back-to-back fatbin
containers (one per translation unit), each a 16-byte header and entries, each entry a cubin for
one sm_XY (or PTX for one compute_XY). The CUDA runtime registers a container by its address
(the wrapper in .nvFatBinSegment points at it) and, when a kernel of it first runs, picks one
entry for the device: the cubin of the highest architecture of the device's major version not
above the device's, else the PTX of the highest architecture not above it, which the driver
compiles. `cut` keeps, per container and per architecture to keep, exactly that entry (all the
entries of that architecture number: sm_90 and sm_90a both), moves the kept entries, headers
unchanged, to the front of the container, shrinks the header's size field to them and zeroes the
rest. Nothing moves outside the containers: the file has the same size, the same ELF and section
headers and the same bytes outside .nv_fatbin (checked after writing, with the kept entries
parsed back), so the dynamic loader sees the library it saw before, and a device of a kept
architecture gets the entry it got before. The zeroes cost nothing once compressed. A container
with nothing a kept device loads (cuBLAS has kernels built only for older GPUs) gets the
library's smallest sm_5x cubin in place of its entries (its own smallest entry where the library
has none): a device of sm_60 or newer finds no image there, before and after, and the container
stays a well-formed, non-empty fatbin for the runtime to register.

The layout (from the CUDA toolkit's fatbinary headers, as cuobjdump reads it):
  container: u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries
  entry:     u16 kind (1 PTX, 2 cubin), u16 -, u32 header size, u64 payload size, u32 -, u32 -,
             u16 minor, u16 major, u32 arch (e.g. 90), ... (64 bytes, or header size)
"""
import argparse
import hashlib
import struct
import sys

MAGIC = 0xBA55ED50
KINDS = {1: "ptx", 2: "elf"}


def sections(data):
    """(name, offset, size, type) of each ELF64 little-endian section."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit("fatbin-cut: not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx][4]
    out = []
    for name, kind, _flags, _addr, offset, size, *_ in heads:
        end = data.index(b"\0", strtab + name)
        out.append((data[strtab + name:end].decode(), offset, size, kind))
    return out


def containers(data, start, size):
    """Yields (offset, header size, entries size, [entries]) for the containers in a section;
    an entry is (offset, total length, kind, arch)."""
    pos, end = start, start + size
    while pos + 16 <= end:
        magic, _version, hsize, fsize = struct.unpack_from("<IHHQ", data, pos)
        if magic != MAGIC:
            pos += 8  # containers are 8-aligned; the gaps between them are zero padding
            continue
        entries, e, eend = [], pos + hsize, pos + hsize + fsize
        if eend > end:
            sys.exit(f"fatbin-cut: container at {pos:#x} runs past its section")
        while e < eend:
            kind, _u, ehsize, psize = struct.unpack_from("<HHIQ", data, e)
            arch, = struct.unpack_from("<I", data, e + 28)
            if kind not in KINDS or ehsize < 64 or e + ehsize + psize > eend:
                sys.exit(f"fatbin-cut: unreadable entry at {e:#x} (kind {kind}, header {ehsize})")
            entries.append((e, ehsize + psize, KINDS[kind], arch))
            e += ehsize + psize
        yield pos, hsize, fsize, entries
        pos = eend


def fatbin_sections(data):
    found = [(o, s) for name, o, s, kind in sections(data) if name == ".nv_fatbin" and kind != 8]
    return found


def chosen(entries, keep):
    """The entries a device of each architecture in keep loads, as the runtime picks them."""
    picked = set()
    for target in keep:
        cubins = [a for _, _, k, a in entries if k == "elf" and a // 10 == target // 10 and a <= target]
        if cubins:
            picked |= {i for i, (_, _, k, a) in enumerate(entries) if k == "elf" and a == max(cubins)}
            continue
        ptx = [a for _, _, k, a in entries if k == "ptx" and a <= target]
        if ptx:
            picked |= {i for i, (_, _, k, a) in enumerate(entries) if k == "ptx" and a == max(ptx)}
    return sorted(picked)


def summary(data):
    """{(kind, arch): (entries, bytes)} over every container, and the container count."""
    table, count = {}, 0
    for start, size in fatbin_sections(data):
        for _, _, _, entries in containers(data, start, size):
            count += 1
            for _, length, kind, arch in entries:
                n, b = table.get((kind, arch), (0, 0))
                table[(kind, arch)] = (n + 1, b + length)
    return table, count


def print_summary(label, data):
    table, count = summary(data)
    print(f"{label}: {count} fatbin containers")
    for (kind, arch), (n, b) in sorted(table.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        name = ("sm_" if kind == "elf" else "compute_") + str(arch)
        print(f"  {name:12} {n:6} entries {b / 2**20:9.1f} MiB")


def filler(data):
    """The smallest sm_5x cubin of the library: never loaded by a device of sm_60 or newer."""
    old = [(length, e) for start, size in fatbin_sections(data)
           for _, _, _, entries in containers(data, start, size)
           for e, length, kind, arch in entries if kind == "elf" and arch < 60]
    return min(old) if old else None


def cut(data, keep):
    out = bytearray(data)
    whole = 0
    small = filler(data)
    for start, size in fatbin_sections(data):
        for pos, hsize, fsize, entries in containers(data, start, size):
            picked = [entries[i] for i in chosen(entries, keep)]
            if not picked:
                whole += 1
                if small and small[0] <= fsize:
                    picked = [(small[1], small[0], "elf", 0)]
                else:
                    picked = [min(entries, key=lambda entry: entry[1])]
            at = pos + hsize
            for e, length, _, _ in picked:
                # entries start 8-aligned in every container seen; moving one must keep that
                if (at - pos) % 8 != (e - pos) % 8:
                    sys.exit(f"fatbin-cut: moving the entry at {e:#x} would break its alignment")
                out[at:at + length] = data[e:e + length]
                at += length
            out[at:pos + hsize + fsize] = bytes(pos + hsize + fsize - at)
            struct.pack_into("<Q", out, pos + 8, at - pos - hsize)
    return bytes(out), whole


def verify(before, after, keep):
    """The cut file is the same ELF outside its containers, and every container parses."""
    if len(before) != len(after):
        sys.exit("fatbin-cut: size changed")
    secs = sections(before)
    if secs != sections(after):
        sys.exit("fatbin-cut: the section table changed")
    shoff, = struct.unpack_from("<Q", before, 0x28)
    if before[:64] != after[:64] or before[shoff:] != after[shoff:]:
        sys.exit("fatbin-cut: the ELF header or section headers changed")
    spans = sorted(fatbin_sections(before))
    has_filler = filler(before) is not None
    prev = 0
    for start, size in spans + [(len(before), 0)]:
        if hashlib.sha256(before[prev:start]).digest() != hashlib.sha256(after[prev:start]).digest():
            sys.exit(f"fatbin-cut: bytes outside .nv_fatbin changed in [{prev:#x}, {start:#x})")
        prev = start + size
    for start, size in spans:
        for _, _, _, entries in containers(after, start, size):
            picked = chosen(entries, keep)
            if len(picked or entries[:1]) != len(entries) or (
                    not picked and has_filler and not (entries[0][2] == "elf" and entries[0][3] < 60)):
                sys.exit("fatbin-cut: a cut container still holds entries no kept device loads")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list").add_argument("lib")
    c = sub.add_parser("cut")
    c.add_argument("--keep", required=True, help="architectures, e.g. 80,89,90")
    c.add_argument("lib")
    c.add_argument("out")
    a = p.parse_args()
    with open(a.lib, "rb") as f:
        data = f.read()
    if a.cmd == "list":
        print_summary(a.lib, data)
        return
    keep = sorted({int(x) for x in a.keep.split(",")})
    if not fatbin_sections(data):
        sys.exit(f"fatbin-cut: {a.lib} has no .nv_fatbin section")
    result, whole = cut(data, keep)
    verify(data, result, keep)
    with open(a.out, "wb") as f:
        f.write(result)
    kept, _ = summary(result)
    total = sum(b for _, b in kept.values())
    archs = ", ".join(("sm_" if k == "elf" else "compute_") + str(x) for k, x in sorted(kept, key=lambda t: (t[1], t[0])))
    print(f"fatbin-cut: {a.lib} -> {a.out}: kept {total / 2**20:.1f} MiB of device code ({archs});"
          f" {whole} containers with nothing for sm_{'/'.join(map(str, keep))} given one sm_5x cubin;"
          " section table and bytes outside .nv_fatbin unchanged", file=sys.stderr)


if __name__ == "__main__":
    main()
