#!/usr/bin/env python3
"""How often a short key would guess the next token of a text where a three-token key is silent.

For each position of each file's first 12,000 characters (after the first 64 tokens), as if the
text were being decoded: does the last three tokens' latest earlier occurrence exist (prompt
lookup, PromptLookup), and was it followed by this token; where it does not exist, does the
last two tokens' or else the last token's (ShortKeyLookup), and was it followed by this token.
An offline count on texts, not on a model's answers: what the one-token guesses into a free row
(docs/speculative-decoding.md) may hold on prose and code. Beside it (since 2026-12-03), where the
three-token key is silent, does the last two tokens' pair occur exactly once before
(ShortKeyLookup.proposeByUniquePair, drafts of any length), and was it followed by this token.

usage: short_key_count.py TOKENIZER_JSON FILE...
"""
import json
import sys

from tokenizers import Tokenizer


def count(ids, tot):
    last = {1: {}, 2: {}, 3: {}}
    seen = {}  # pair -> occurrences with a continuation
    for i, nxt in enumerate(ids):
        if i >= 64:
            tot["positions"] += 1
            k3, k2, k1 = tuple(ids[i - 3:i]), tuple(ids[i - 2:i]), (ids[i - 1],)
            if k3 in last[3]:
                tot["three"] += 1
                tot["three_held"] += ids[last[3][k3]] == nxt
            else:
                if seen.get(k2) == 1:
                    tot["pair_once"] += 1
                    tot["pair_once_held"] += ids[last[2][k2]] == nxt
                if k2 in last[2] or k1 in last[1]:
                    end = last[2][k2] if k2 in last[2] else last[1][k1]
                    tot["short"] += 1
                    tot["short_held"] += ids[end] == nxt
        for n in (1, 2, 3):
            if i >= n:
                last[n][tuple(ids[i - n:i])] = i
        if i >= 2:
            seen[tuple(ids[i - 2:i])] = seen.get(tuple(ids[i - 2:i]), 0) + 1


def main():
    tok = Tokenizer.from_file(sys.argv[1])
    tot = dict(positions=0, three=0, three_held=0, short=0, short_held=0, pair_once=0,
               pair_once_held=0)
    for f in sys.argv[2:]:
        count(tok.encode(open(f, errors="replace").read()[:12000]).ids, tot)
    p = tot["positions"]
    print(json.dumps(tot))
    print("three-token key: proposes at %.1f%% of positions, held %.1f%%; short key where it is "
          "silent: proposes at %.1f%%, held %.1f%%" % (
              100 * tot["three"] / p, 100 * tot["three_held"] / max(1, tot["three"]),
              100 * tot["short"] / p, 100 * tot["short_held"] / max(1, tot["short"])))
    print("where it is silent, a pair held once before: proposes at %.1f%% of positions, held "
          "%.1f%%" % (100 * tot["pair_once"] / p,
                      100 * tot["pair_once_held"] / max(1, tot["pair_once"])))


if __name__ == "__main__":
    main()
