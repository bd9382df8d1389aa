"""Llama 3's tokenizer as Hugging Face files (tokenizer.json, tokenizer_config.json), made from
llama.cpp's own vocabulary file models/ggml-vocab-llama-bpe.gguf (its 128,256 tokens, 280,147
merges and token types), so that convert_hf_to_gguf.py can convert a Llama-3.2-1B-shaped
checkpoint written without tokenizer files (/work/bench-1b) on a machine with no hub access.

    python3 llama3_tokenizer_files.py LLAMACPP_SRC OUT_DIR
"""
import json
import os
import sys

# gguf-py from llama.cpp's own tree when no gguf package is installed
sys.path.append(os.path.join(sys.argv[1] if len(sys.argv) > 1 else "/work/llamacpp/src", "gguf-py"))
from gguf import GGUFReader  # noqa: E402
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, AddedToken

# Llama 3's pre-tokenizer split (llama-vocab.cpp's LLAMA_VOCAB_PRE_TYPE_LLAMA3 regex)
SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"
         r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def main(src, out):
    r = GGUFReader(os.path.join(src, "models", "ggml-vocab-llama-bpe.gguf"))
    tokens = r.get_field("tokenizer.ggml.tokens").contents()
    types = r.get_field("tokenizer.ggml.token_type").contents()
    merges = r.get_field("tokenizer.ggml.merges").contents()
    bos = int(r.get_field("tokenizer.ggml.bos_token_id").contents())
    normal = {t: i for i, t in enumerate(tokens) if types[i] == 1}
    bpe = models.BPE(vocab=normal, merges=[tuple(m.split(" ", 1)) for m in merges],
                     ignore_merges=True)
    tok = Tokenizer(bpe)
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    special = [AddedToken(tokens[i], special=True, normalized=False)
               for i in range(len(tokens)) if types[i] != 1]
    tok.add_special_tokens(special)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{tokens[bos]} $A", pair=f"{tokens[bos]} $A {tokens[bos]} $B",
        special_tokens=[(tokens[bos], bos)])
    os.makedirs(out, exist_ok=True)
    tok.save(os.path.join(out, "tokenizer.json"))
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": tokens[bos],
                   "eos_token": "<|end_of_text|>", "model_max_length": 131072}, f)
    assert tok.get_vocab_size() == len(tokens), (tok.get_vocab_size(), len(tokens))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
