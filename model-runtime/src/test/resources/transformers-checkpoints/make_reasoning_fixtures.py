"""Tiny thinking checkpoints written by transformers, and what transformers generates with them.

Run from this directory (as make_fixtures.py, whose helpers it uses):  python make_reasoning_fixtures.py

Writes, per case NAME (a folder), what make_fixtures.py writes for a checkpoint (no expected.json),
and reasoning.json: for each chat request, transformers' rendering of the chat template
(apply_chat_template with the request's chat_template_kwargs), its token ids, the greedy reply
under the request's logit_bias (float32, eager attention, bias added to the logits before the
argmax, as OpenAI and vLLM apply it) up to EOS or max_tokens, its text, and how vLLM's reasoning
parser splits that text (../../../../../server/src/test/resources/reasoning-parsers: vLLM's
logic, see make_expected.py there).

  qwen3-think  Qwen3 (qwen3 model type), Qwen3's chat template; the reply writes <think> itself
  r1-distill   DeepSeek-R1-Distill-Qwen (qwen2 model type), the distill's template as llama.cpp
               keeps it (templates/../chat-templates/deepseek_r1_distill.jinja), which opens
               <think> in the generation prompt (closes it too when enable_thinking is false)

Both tokenizers are the trained qwen2 fixture plus <think> and </think> as added, non-special
tokens (as Qwen3's and the distills' tokenizers have them); the R1 one also has the distills'
special tokens. Weights are random: the biases push the replies into thinking or not.
"""
import json
import os
import sys

import torch
import transformers
from tokenizers import AddedToken, Tokenizer
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, PreTrainedTokenizerFast

import make_fixtures as mf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "..", "server", "src", "test",
                                "resources", "reasoning-parsers"))
import make_expected as vllm_parsers  # noqa: E402

R1_SPECIALS = ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>"]

# name -> (model_type, template, bos, eos, parser, seed)
CASES = {
    "qwen3-think": ("qwen3", "qwen3", None, "<|im_end|>", "qwen3", 500),
    "r1-distill": ("qwen2", "deepseek_r1_distill", R1_SPECIALS[0], R1_SPECIALS[1],
                   "deepseek_r1", 501),
}

HI = [{"role": "user", "content": "What is 2+2?"}]
# an earlier turn sent back with its reasoning (Qwen3's template drops it before the last query)
HISTORY = [{"role": "user", "content": "What is 2+2?"},
           {"role": "assistant", "content": "4", "reasoning_content": "2 and 2 make 4."},
           {"role": "user", "content": "And 3+3?"}]

# (label, messages, chat_template_kwargs, wanted reply, max_tokens). The reply is held to
# ALLOWED (vLLM's allowed_token_ids: clean text) and pushed by a repetition_penalty and a
# logit_bias on the tags, the first of BIASES (in order) that gives the wanted reply: "think" (a
# reasoning part of at least two characters without tags, then content; Qwen3: opened by the
# reply), "plain" (no tags), "open" (reasoning cut by max_tokens).
REQUESTS = {
    "qwen3-think": [
        ("thinking", HI, {}, "think", 14),
        ("not-thinking", HI, {"enable_thinking": False}, "plain", 8),
        ("history", HISTORY, {}, "think", 14),
        ("truncated", HI, {}, "open", 6),
    ],
    "r1-distill": [
        ("thinking", HI, {"enable_thinking": True}, "think", 14),
        ("not-thinking", HI, {}, "plain", 8),
        ("truncated", HI, {"enable_thinking": True}, "open", 4),
    ],
}
ALLOWED = list("abcdefghijklmnopqrstuvwxyz .") + ["<think>", "</think>"]
# (repetition_penalty, logit_bias): the penalty keeps the random model from repeating itself
BIASES = [(p, {"<think>": o, "</think>": c}) for p in (4.0, 3.0, 6.0, 2.0)
          for o in range(0, 41, 2) for c in range(0, 21)]


def wanted(want, text, opened):
    if want == "plain":
        return "<think>" not in text and "</think>" not in text
    body = text
    if not opened:
        if not text.startswith("<think>"):
            return False
        body = text[len("<think>"):]
    if want == "open":
        return "<think>" not in body and "</think>" not in body and len(body) >= 3
    reasoning, tag, content = body.partition("</think>")
    return bool(tag) and "<think>" not in reasoning and len(reasoning.strip()) >= 2 \
        and len(content.strip()) >= 2

SHAPE = dict(mf.SHAPE, max_position_embeddings=128)


def tokenizer(template, bos, eos, r1):
    backend = Tokenizer.from_file(os.path.join(mf.TOKENIZERS, "qwen2", "tokenizer.json"))
    if r1:
        backend.add_special_tokens(R1_SPECIALS)
    backend.add_tokens([AddedToken("<think>", special=False, normalized=False),
                        AddedToken("</think>", special=False, normalized=False)])
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=bos, eos_token=eos)
    with open(os.path.join(mf.TEMPLATES, template + ".jinja"), encoding="utf-8") as f:
        tok.chat_template = f.read()
    return tok


def write(name, model_type, template, bos, eos, seed):
    out = os.path.join(HERE, name)
    tok = tokenizer(template, bos, eos, name.startswith("r1"))
    eos_ids = [tok.convert_tokens_to_ids(eos)]
    config = transformers.CONFIG_MAPPING[model_type](
        vocab_size=len(tok), tie_word_embeddings=True, bos_token_id=tok.bos_token_id,
        eos_token_id=eos_ids, pad_token_id=eos_ids[0],
        rope_parameters=dict(rope_type="default", rope_theta=10000.0),
        **({"head_dim": 16} if model_type == "qwen3" else {}), **SHAPE)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    mf.randomize(model, seed)
    model = model.to(torch.bfloat16)
    model.generation_config = GenerationConfig(bos_token_id=tok.bos_token_id, eos_token_id=eos_ids)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def greedy(model, ids, allowed, bias_ids, eos, max_tokens, penalty=1.0):
    """
    Greedy under allowed_token_ids, logit_bias and repetition_penalty, in the server's order
    (README: the rules, then the penalty on every token of the prompt and the output: a positive
    logit divided by it, a negative one multiplied), ties to the lowest id.
    """
    seen = set(ids)
    out, past, step = [], None, torch.tensor([ids])
    with torch.no_grad():
        for _ in range(max_tokens):
            r = model(step, past_key_values=past, use_cache=True)
            past = r.past_key_values
            logits = r.logits[0, -1].double()
            masked = torch.full_like(logits, float("-inf"))
            masked[allowed] = logits[allowed]
            for i, b in bias_ids.items():
                masked[int(i)] += b
            if penalty != 1.0:
                for i in seen:
                    v = masked[i]
                    masked[i] = v / penalty if v > 0 else v * penalty
            t = int(torch.argmax(masked))
            seen.add(t)
            if t in eos:
                return out, "stop"
            out.append(t)
            step = torch.tensor([[t]])
    return out, "length"


def generate(case_dir, parser, requests):
    tok = AutoTokenizer.from_pretrained(case_dir)
    model = AutoModelForCausalLM.from_pretrained(case_dir, dtype=torch.float32,
                                                 attn_implementation="eager")
    model.eval()
    eos = set(model.generation_config.eos_token_id)
    runs = []
    allowed = set(eos)
    for t in ALLOWED:
        one = tok.encode(t, add_special_tokens=False)
        assert len(one) == 1, (t, one)
        allowed.add(one[0])
    allowed = sorted(allowed)
    for label, messages, kwargs, want, max_tokens in requests:
        rendered = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                           **kwargs)
        ids = tok.encode(rendered, add_special_tokens=False)
        opened = rendered.rstrip().endswith("<think>") or parser == "deepseek_r1"
        for penalty, bias in BIASES if want != "plain" else [(2.0, {})]:
            bias_ids = {str(tok.convert_tokens_to_ids(t)): float(b) for t, b in bias.items() if b}
            out, finish = greedy(model, ids, allowed, bias_ids, eos, max_tokens, penalty)
            text = tok.decode(out, skip_special_tokens=False)
            if wanted(want, text, opened):
                break
        else:
            raise SystemExit(f"{name} {label}: no bias gives a {want} reply")
        reasoning, content = vllm_parsers.vllm(parser, rendered, text)
        runs.append({"label": label, "messages": messages, "chat_template_kwargs": kwargs,
                     "logit_bias": bias_ids, "allowed_token_ids": allowed,
                     "repetition_penalty": penalty,
                     "max_tokens": max_tokens, "prompt": rendered, "prompt_ids": ids,
                     "tokens": out, "text": text, "finish_reason": finish,
                     "reasoning": reasoning, "content": content})
        print(name, label, repr(text), "->", repr(reasoning), repr(content))
    with open(os.path.join(case_dir, "reasoning.json"), "w", encoding="utf-8") as f:
        json.dump({"transformers": transformers.__version__, "parser": parser, "runs": runs}, f,
                  ensure_ascii=False, indent=1)


if __name__ == "__main__":
    torch.set_num_threads(1)
    for name, (model_type, template, bos, eos, parser, seed) in CASES.items():
        d = write(name, model_type, template, bos, eos, seed)
        generate(d, parser, REQUESTS[name])
