"""Writes expected.json: how vLLM's reasoning parsers split chat replies into reasoning and
content, for ReasoningParserTest. Run from this directory: python3 make_expected.py

The splits are vLLM's, restated here from its sources (the logic, not the code):
  deepseek_r1  DeepSeekR1ReasoningParser.extract_reasoning_content,
               vllm/reasoning/deepseek_r1_reasoning_parser.py at d5c95556302c4f4fdae9e2aef9d03548e1b1f678:
               drop everything up to and including the first <think> (if any); no </think> after
               that: all reasoning, content None; else reasoning before the first </think>,
               content after it (None when empty).
  qwen3        Qwen3ReasoningParser.extract_reasoning,
               vllm/reasoning/qwen3_reasoning_parser.py. Two generations of it disagree on a reply
               with no <think>: at 693e2a480214549321ea5eba9db5b132a09f7bee (Qwen3's own template,
               where the model writes <think> itself) both tags are required, else the reply is
               content; at 00a4c6a1d828f0de294a8eac028c60a2b522efa2 (templates that put <think> in
               the prompt) a reply is reasoning up to </think>, and all reasoning without one
               (thinking enabled). radixserve picks by the prompt: the newer rule when the prompt
               opened the block or the reply opens with <think>, the older one otherwise. The
               newer one's implicit end at <tool_call> (Qwen3.5) is not taken.
  both         vLLM's serving layer first asks whether the prompt already ended the reasoning
               (prompt_is_reasoning_end: enable_thinking false renders <think>\n\n</think>\n\n):
               then the whole reply is content.

A case where radixserve deliberately differs has "differs" with the reason, and its own expected
split (radixserve splits a reply the same way streamed and whole; vLLM's streamed and whole
splits disagree there).
"""
import json

OPEN, CLOSE = "<think>", "</think>"

PROMPTS = {
    "neutral": "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    "opened": "<｜User｜>Hi<｜Assistant｜><think>\n",
    "closed": "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
}

TEXTS = [
    "<think>\nLet me think.\n</think>\n\nThe answer is 4.",
    "The answer is 4.",
    "<think>\nunfinished",
    "<think></think>Done",
    "<think>\n\n</think>\n\n",
    "Let me think.</think>Answer",
    "a </think> b </think> c",
    "<thinking>no</thinking>",
    "<think>x<think>y</think>z",
    "",
    "</think>",
    "<think",
    "reasoning with a < and </thin k> </think>\u00e9\U0001F600 end",
    "Hello <think>x</think> y",
]


def prompt_ends_reasoning(prompt):
    return prompt.rstrip().endswith(CLOSE)


def deepseek_r1(text):
    before, tag, after = text.partition(OPEN)
    text = after if tag else before
    if CLOSE not in text:
        return text, None
    reasoning, _, content = text.partition(CLOSE)
    return reasoning, content or None


def qwen3_strict(text):  # 693e2a48
    if OPEN not in text or CLOSE not in text:
        return None, text
    before, tag, after = text.partition(OPEN)
    text = after if tag else before
    reasoning, _, content = text.partition(CLOSE)
    return reasoning, content or None


def qwen3_thinking(text):  # 00a4c6a1, thinking enabled, without the <tool_call> end
    before, tag, after = text.partition(OPEN)
    text = after if tag else before
    if CLOSE in text:
        reasoning, _, content = text.partition(CLOSE)
        return reasoning, content or None
    return text, None


def vllm(parser, prompt, text):
    if prompt_ends_reasoning(prompt):
        return None, text
    if parser == "deepseek_r1":
        return deepseek_r1(text)
    if prompt.rstrip().endswith(OPEN) or text.startswith(OPEN):
        return qwen3_thinking(text)
    return qwen3_strict(text)


def differs(parser, prompt, text):
    """Where radixserve's split is not vLLM's whole-reply split, and what it is instead."""
    opened = prompt.rstrip().endswith(OPEN) or parser == "deepseek_r1"
    if prompt_ends_reasoning(prompt):
        return None
    if OPEN in text and not text.startswith(OPEN) and (opened or CLOSE in text):
        # vLLM drops the text before a <think> in the middle of a reply (whole), but streams it;
        # radixserve takes only a leading <think> as the tag, streamed and whole
        if not opened:
            return "a <think> not at the start is text", (None, text)
        reasoning, _, content = text.partition(CLOSE)
        return "a <think> not at the start is text", (reasoning, content or None) \
            if CLOSE in text else (text, None)
    return None


def main():
    cases = []
    for parser in ("qwen3", "deepseek_r1"):
        for prompt_name, prompt in PROMPTS.items():
            for text in TEXTS:
                reasoning, content = vllm(parser, prompt, text)
                case = {"parser": parser, "prompt": prompt_name, "text": text,
                        "reasoning": reasoning, "content": content}
                d = differs(parser, prompt, text)
                if d is not None:
                    case["differs"] = d[0]
                    case["vllm"] = {"reasoning": reasoning, "content": content}
                    case["reasoning"], case["content"] = d[1]
                cases.append(case)
    with open("expected.json", "w", encoding="utf-8") as f:
        json.dump({"prompts": PROMPTS, "cases": cases}, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
