#!/usr/bin/env python3
"""What looking up the longest key first changes in prompt lookup's drafts, on texts.

For each position of each file's first 20,000 characters (after the first 64 tokens), as if the
text were being decoded: the draft of up to 8 tokens that followed the latest earlier occurrence
of the last three tokens (PromptLookup until 2026-12-03), against the draft that followed the
latest earlier occurrence of the last five tokens, else four, else three (vLLM's order, from
prompt_lookup_max down; PromptLookup since), and how many of each draft's tokens the text then
holds. Both draft at the same positions (a longer key matches only where its last three tokens
do). An offline count on texts predicting themselves, not on a model's answers.

usage: longest_key_count.py TOKENIZER_JSON FILE...
"""
import sys

from tokenizers import Tokenizer

DRAFT = 8


def count(ids, lengths):
    latest = {n: {} for n in (3, 4, 5)}
    drafts = held = 0
    for i in range(len(ids)):
        if i >= 64:
            end = next((latest[n][k] for n in lengths
                        if (k := tuple(ids[i - n:i])) in latest[n]), None)
            if end is not None:
                drafts += 1
                h = 0
                while h < DRAFT and i + h < len(ids) and ids[end + h] == ids[i + h]:
                    h += 1
                held += h
        for n in (3, 4, 5):
            if i >= n:
                latest[n][tuple(ids[i - n:i])] = i
    return drafts, held


def main():
    tok = Tokenizer.from_file(sys.argv[1])
    total = [0, 0, 0]
    print("file\tdrafts\theld, latest 3\theld, longest of 5/4/3")
    for f in sys.argv[2:]:
        with open(f, errors="replace") as fh:
            ids = tok.encode(fh.read()[:20000]).ids
        drafts, three = count(ids, (3,))
        _, longest = count(ids, (5, 4, 3))
        total = [total[0] + drafts, total[1] + three, total[2] + longest]
        print(f"{f.split('/')[-1]}\t{drafts}\t{three}\t{longest} ({longest / max(three, 1):.3f}x)")
    print(f"all\t{total[0]}\t{total[1]}\t{total[2]} ({total[2] / max(total[1], 1):.3f}x)")


if __name__ == "__main__":
    main()
