"""Builds the tokenizer.json fixtures and their expected ids with Hugging Face `tokenizers`.

No hub: each tokenizer is trained on a small corpus here and assembled as the families ship
them. Run from this directory (python 3.11, tokenizers 0.23.2):

    pip install --index-url file:///opt/pypi/simple tokenizers
    python make_fixtures.py

Writes, per tokenizer NAME: NAME/tokenizer.json and NAME/expected.json, which holds for each
corpus line the ids with and without special tokens and the decoded text of the ids.
"""
import json
import os

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

TRAIN = """The quick brown fox jumps over the lazy dog. Tokenizers split text into pieces.
def forward(self, x):\n    return self.linear(x) + 1  # residual
Numbers like 12345, 3.14159 and 2026 appear; so do dates: 2026-11-24.
Les élèves étudient à l'école. Über große Straßen. 東京は日本の首都です。我们喜欢机器学习。
Emoji: 🙂🚀✨ and whitespace   runs\t\ttabs\n\n\nnewlines.
It's, they're, we've, I'm, you'll, he'd. SHOUTING IT'S LOUD.
""" * 3

CORPUS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    " leading space and trailing space ",
    "def add(a, b):\n    return a + b\n",
    "for (int i = 0; i < n; i++) { sum += x[i]; }",
    "whitespace    runs\t\ttabs\n\n\nand newlines \n ",
    "digits 1234567890 and 3.14159 and 1,000,000",
    "東京は日本の首都です。机器学习",
    "emoji 🙂🚀✨👩‍💻 done",
    "It's they're WE'VE I'm you'll he'd",
    "Ünïcödé naïve café",
    "unseen symbols ∮ ⅋ ꙮ",
    "",
]

LLAMA3_SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                   "<|end_header_id|>", "<|eot_id|>"]
QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def byte_level(pattern, specials, bos, normalizer):
    """Llama 3 / Qwen2: a regex split, then GPT-2's byte-to-unicode map, byte-level BPE."""
    tok = Tokenizer(models.BPE())
    if normalizer:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=[],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator([TRAIN], trainer)
    tok.add_special_tokens(specials)
    if bos:
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(single=bos + " $A", pair=bos + " $A " + bos + " $B:1",
                                          special_tokens=[(bos, tok.token_to_id(bos))]),
        ])
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


def sentencepiece_style():
    """Mistral / TinyLlama (Llama 2's tokenizer): ▁ for spaces, BPE with <0xNN> byte fallback."""
    trainer_tok = Tokenizer(models.BPE())
    trainer_tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    trainer = trainers.BpeTrainer(vocab_size=500, special_tokens=[], show_progress=False,
                                  limit_alphabet=120)
    trainer_tok.train_from_iterator([TRAIN], trainer)
    trained = json.loads(trainer_tok.to_str())["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for token, _ in sorted(trained["vocab"].items(), key=lambda kv: kv[1]):
        if token not in vocab:
            vocab[token] = len(vocab)
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in trained["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True,
                               fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens(["<unk>", "<s>", "</s>"])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B:1", special_tokens=[("<s>", 1)])
    return tok


def write(name, tok, specials_in_text):
    os.makedirs(name, exist_ok=True)
    tok.save(os.path.join(name, "tokenizer.json"))
    lines = CORPUS + [f"{s} inside {s}text" for s in specials_in_text]
    expected = []
    for line in lines:
        with_specials = tok.encode(line, add_special_tokens=True).ids
        plain = tok.encode(line, add_special_tokens=False).ids
        expected.append({"text": line, "ids": with_specials, "ids_no_specials": plain,
                         "decoded": tok.decode(plain, skip_special_tokens=False)})
    with open(os.path.join(name, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)


write("llama3", byte_level(LLAMA3_PATTERN, LLAMA3_SPECIALS, "<|begin_of_text|>", None),
      ["<|eot_id|>", "<|start_header_id|>"])
write("qwen2", byte_level(QWEN_PATTERN, QWEN_SPECIALS, None, normalizers.NFC()),
      ["<|im_start|>", "<|im_end|>"])
write("sentencepiece", sentencepiece_style(), ["</s>", "<s>"])
