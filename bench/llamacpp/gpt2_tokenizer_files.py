#!/usr/bin/env python3
"""Writes GPT-2's vocab.json and merges.txt into a model directory that has none.

radixserve serves a checkpoint without tokenizer files with GPT-2's standard vocabulary
(r50k_base, read from JTokkit's jar); llama.cpp's convert_hf_to_gguf.py needs the files. This
derives them from the same r50k_base ranks the way radixserve's R50kVocabulary does (a token of
rank r is the merge of the two parts byte-level BPE over ranks below r leaves of its bytes), so
the GGUF carries the vocabulary radixserve uses.

usage: gpt2_tokenizer_files.py JTOKKIT_JAR MODEL_DIR
"""
import base64
import json
import sys
import zipfile


def bytes_to_unicode():
    """GPT-2's byte-level alphabet: printable bytes map to themselves, the rest to 256+."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def split_of(token, max_rank, ranks):
    parts = [bytes([b]) for b in token]
    while len(parts) > 2:
        best, best_rank = -1, max_rank
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < best_rank:
                best, best_rank = i, r
        if best < 0:
            raise ValueError(f"no merge below rank {max_rank} for {token!r}")
        parts[best:best + 2] = [parts[best] + parts[best + 1]]
    return parts


def main(jar, out_dir):
    with zipfile.ZipFile(jar) as z:
        text = z.read("com/knuddels/jtokkit/r50k_base.tiktoken").decode("ascii")
    ranks = {}
    for line in text.splitlines():
        if line.strip():
            b64, rank = line.split()
            ranks[base64.b64decode(b64)] = int(rank)
    alphabet = bytes_to_unicode()
    enc = lambda bs: "".join(alphabet[b] for b in bs)
    by_rank = sorted(ranks.items(), key=lambda kv: kv[1])
    vocab = {enc(tok): rank for tok, rank in by_rank}
    vocab["<|endoftext|>"] = 50256
    merges = [" ".join(enc(p) for p in split_of(tok, rank, ranks))
              for tok, rank in by_rank if len(tok) > 1]
    with open(f"{out_dir}/vocab.json", "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(f"{out_dir}/merges.txt", "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "\n".join(merges) + "\n")
    print(f"{len(vocab)} tokens, {len(merges)} merges -> {out_dir}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
