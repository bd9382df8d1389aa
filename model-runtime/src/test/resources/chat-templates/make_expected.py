"""Renders each family's chat template with transformers' apply_chat_template: expected.json.

The templates (*.jinja) are the families' tokenizer_config.json chat_template texts (Llama 3.0,
Llama 3.1/3.2, Qwen2.5, Qwen3, Mistral 7B Instruct v0.1, Mistral Nemo Instruct 2407, SmolLM2;
deepseek_r1_distill is DeepSeek-R1-Distill-Qwen-32B's as llama.cpp's models/templates keeps it,
which adds an `enable_thinking` switch to the original's generation prompt).
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
                case = {"template": name, "bos_token": bos, "eos_token": eos, "messages": messages}
                if tools is not None:
                    case["tools"] = tools
                try:
                    case["rendered"] = tok.apply_chat_template(messages, tools=tools, tokenize=False,
                                                               add_generation_prompt=True)
                except Exception as e:
                    case["error"] = str(e)
                out.append(case)
    with open("expected.json", "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)


main()
