"""Renders each family's chat template with transformers' apply_chat_template: expected.json.

The templates (*.jinja) are the families' tokenizer_config.json chat_template texts (Llama 3.0,
Llama 3.1/3.2, Qwen2.5, Qwen3, Mistral 7B Instruct v0.1, Mistral Nemo Instruct 2407, SmolLM2;
deepseek_r1_distill is DeepSeek-R1-Distill-Qwen-32B's as llama.cpp's models/templates keeps it,
which adds an `enable_thinking` switch to the original's generation prompt). Since 2026-12-03
also, copied as they are from llama.cpp's models/templates (the tree node-llama-cpp 3.22.1
ships): llama3_3 (meta-llama-Llama-3.3-70B-Instruct), hermes3_tool_use
(NousResearch-Hermes-3-Llama-3.1-8B-tool_use), phi3_5 (microsoft-Phi-3.5-mini-instruct), gemma2
(google-gemma-2-2b-it), mistral_small_3_2 (Mistral-Small-3.2-24B-Instruct-2506).
loop_neighbours (written here) reads loop.previtem / loop.nextitem in nested loops.

Named templates (NAMED): a tokenizer whose chat_template is a dict, {"default": ...,
"tool_use": ...}, as Hermes 2 Pro / Hermes 3 ship theirs; transformers' get_chat_template picks
tool_use whenever tools are passed, default otherwise. hermes3's tool_use is the template above,
its default chatml_default.jinja (ChatML, written here). The tokenizer is saved by
save_pretrained in both of transformers' forms: named-files/ (chat_template.jinja and
additional_chat_templates/tool_use.jinja) and named-config/ (save_jinja_files=False: the
tokenizer_config.json list of {"name", "template"}); its cases have "named": true.
The thinking templates are also rendered with `chat_template_kwargs` (KWARGS): a case has
"kwargs" when they were passed.
Each conversation is rendered without tools, and the tool conversations (TOOL_CASES) with
`tools=` as well, exactly as `tokenizer.apply_chat_template(messages, tools=tools,
add_generation_prompt=True)` does: a case has "tools" when they were passed. Run from this
directory:

    pip install --index-url file:///opt/pypi/simple tokenizers transformers jinja2
    python make_expected.py

strftime_now (Llama 3.1+ prints today's date) is pinned to 2026-11-24 so the fixture is stable;
the Java test renders with a clock at that date.
"""
import datetime as _dt
import json
import re
import os

import transformers.utils.chat_template_utils as ctu
from tokenizers import Tokenizer, models
from transformers import PreTrainedTokenizerFast


class _Pinned(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return cls(2026, 11, 24, 12, 0, 0)


ctu.datetime = _Pinned

TOKENS = {
    "llama3": ("<|begin_of_text|>", "<|eot_id|>"),
    "llama3_2": ("<|begin_of_text|>", "<|eot_id|>"),
    "qwen2_5": (None, "<|im_end|>"),
    "qwen3": (None, "<|im_end|>"),
    "mistral": ("<s>", "</s>"),
    "mistral_nemo": ("<s>", "</s>"),
    "smollm2": ("<|im_start|>", "<|im_end|>"),
    "deepseek_r1_distill": ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    "llama3_3": ("<|begin_of_text|>", "<|eot_id|>"),
    "phi3_5": ("<s>", "<|endoftext|>"),
    "gemma2": ("<bos>", "<eos>"),
    "mistral_small_3_2": ("<s>", "</s>"),
    "loop_neighbours": (None, None),
}

# chat_template_kwargs: extra keyword arguments of apply_chat_template, as vLLM passes them
KWARGS = [{"enable_thinking": False}, {"enable_thinking": True},
          {"enable_thinking": False, "reasoning_effort": "low", "custom": [1, {"a": None}]}]
KWARGS_TEMPLATES = ("qwen3", "deepseek_r1_distill")

CONVERSATIONS = [
    [{"role": "user", "content": "Hello!"}],
    [{"role": "system", "content": "You are a terse assistant."},
     {"role": "user", "content": "What is 2 + 2?"}],
    [{"role": "system", "content": "  Answer in French.\n"},
     {"role": "user", "content": "Hi there"},
     {"role": "assistant", "content": "Bonjour !"},
     {"role": "user", "content": " Ünïcödé, 東京, 🙂 and\n\nnewlines  "}],
    [{"role": "user", "content": "Think first."},
     {"role": "assistant", "content": "<think>\nSome reasoning.\n</think>\n\nThe answer."},
     {"role": "user", "content": "And again?"}],
    [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
    # earlier turns sent back with their reasoning (Qwen3 renders it only after the last query)
    [{"role": "user", "content": "What is 2+2?"},
     {"role": "assistant", "content": "4", "reasoning_content": "2 and 2 make 4."},
     {"role": "user", "content": "And 3+3?"}],
    [{"role": "user", "content": "What is 2+2?"},
     {"role": "assistant", "content": "4", "reasoning_content": "\n2 and 2 make 4.\n"}],
]


TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather in a city, \"quoted\" & Ünïcödé",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "e.g. Paris"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7}},
            "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "now", "description": "The time", "parameters": {"type": "object", "properties": {}}}},
]

# OpenAI's message shapes; arguments as objects (the server parses the JSON strings clients send,
# as vLLM does before it renders). Mistral's template wants 9-character ids.
TOOL_CASES = [
    [{"role": "user", "content": "Weather in Paris?"}],
    [{"role": "system", "content": "Be brief."},
     {"role": "user", "content": "Weather in Paris?"}],
    [{"role": "system", "content": "Be brief."},
     {"role": "user", "content": "Weather in Paris?"},
     {"role": "assistant", "content": None, "tool_calls": [
         {"id": "abcDEF123", "type": "function",
          "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}]},
     {"role": "tool", "tool_call_id": "abcDEF123", "name": "get_weather",
      "content": "{\"temp\": 21, \"sky\": \"clear\"}"}],
    [{"role": "user", "content": "Weather in Paris and the time?"},
     {"role": "assistant", "content": "Let me check.", "tool_calls": [
         {"id": "abcDEF123", "type": "function",
          "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
         {"id": "xyzXYZ789", "type": "function", "function": {"name": "now", "arguments": {}}}]},
     {"role": "tool", "tool_call_id": "abcDEF123", "content": "21 C"},
     {"role": "tool", "tool_call_id": "xyzXYZ789", "content": "noon"},
     {"role": "assistant", "content": "21 C at noon."},
     {"role": "user", "content": "Thanks!"}],
]


def rendered(case, tok, tools):
    """CASE with "tools" (when given) and transformers' render of its messages, or its error."""
    if tools is not None:
        case["tools"] = tools
    try:
        case["rendered"] = tok.apply_chat_template(case["messages"], tools=tools, tokenize=False,
                                                   add_generation_prompt=True)
    except Exception as e:  # the template's raise_exception
        case["error"] = str(e)
    return case


NAMED = {"hermes3": ({"default": "chatml_default", "tool_use": "hermes3_tool_use"},
                     "<|begin_of_text|>", "<|im_end|>")}


def named(out):
    import shutil
    for name, (files, bos, eos) in NAMED.items():
        templates = {}
        for role, file in files.items():
            with open(file + ".jinja", encoding="utf-8") as f:
                templates[role] = f.read()
        tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE()), bos_token=bos,
                                      eos_token=eos)
        tok.chat_template = templates
        for folder, jinja_files in (("named-files", True), ("named-config", False)):
            shutil.rmtree(folder, ignore_errors=True)
            tok.save_pretrained(folder, save_jinja_files=jinja_files)
            for extra in ("tokenizer.json", "special_tokens_map.json"):
                if os.path.exists(os.path.join(folder, extra)):
                    os.remove(os.path.join(folder, extra))  # only the templates are read
        cases = [(m, None) for m in CONVERSATIONS[:3]]
        cases += [(m, t) for m in TOOL_CASES for t in (TOOLS, [])]
        for messages, tools in cases:
            out.append(rendered({"template": name, "named": True, "bos_token": bos,
                                 "eos_token": eos, "messages": messages}, tok, tools))


def main():
    out = []
    for name, (bos, eos) in TOKENS.items():
        with open(name + ".jinja", encoding="utf-8") as f:
            template = f.read()
        tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE()), bos_token=bos,
                                      eos_token=eos)
        tok.chat_template = template
        for messages in CONVERSATIONS:
            case = {"template": name, "bos_token": bos, "eos_token": eos, "messages": messages}
            try:
                case["rendered"] = tok.apply_chat_template(messages, tokenize=False,
                                                           add_generation_prompt=True)
            except Exception as e:  # the template's raise_exception
                case["error"] = str(e)
            out.append(case)
        for kwargs in KWARGS if name in KWARGS_TEMPLATES else []:
            for messages in (CONVERSATIONS[0], CONVERSATIONS[3]):
                case = {"template": name, "bos_token": bos, "eos_token": eos,
                        "messages": messages, "kwargs": kwargs}
                case["rendered"] = tok.apply_chat_template(messages, tokenize=False,
                                                           add_generation_prompt=True, **kwargs)
                out.append(case)
        # a template that never reads `tools` gets the server's generic format instead (the
        # definitions in the system message, calls as text), so only the others render these
        for messages in TOOL_CASES if re.search(r"\btools\b", template) else []:
            for tools in (TOOLS, None):
                out.append(rendered({"template": name, "bos_token": bos, "eos_token": eos,
                                     "messages": messages}, tok, tools))
    named(out)
    with open("expected.json", "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)


main()
