"""Writes request-fields.json: the request fields of the completions and chat APIs as the
official OpenAI Python SDK and vLLM define them. RequestFieldsTest checks that the server's
table (RequestFields) puts each in exactly one group, and that docs/api.md says the same.

OpenAI: read from the installed `openai` package at generation time, the keys of the
TypedDicts `CompletionCreateParamsStreaming` / `NonStreaming` (both endpoints; they add
`stream` to `CompletionCreateParamsBase`). Run it with the Python that .ci/install-sdks.sh
installs:  server/target/sdk/venv/bin/python make_request_fields.py > request-fields.json

vLLM: the pydantic request models hold the list. vLLM is not installable here (it needs
CUDA wheels), so the field names of `CompletionRequest` and `ChatCompletionRequest` are
transcribed below from vllm-project/vllm at VLLM_COMMIT
(vllm/entrypoints/openai/completion/protocol.py, .../chat_completion/protocol.py), plus the
`guided_*` fields of the older vllm/entrypoints/openai/protocol.py that radixserve accepts.
"""
import json
import sys
import typing

VLLM_COMMIT = "002032ee2b18e1f7bd924ec47b62504ba3866063"

_VLLM_SAMPLING = [
    "use_beam_search", "top_k", "min_p", "repetition_penalty", "watermarking", "length_penalty",
    "stop_token_ids", "include_stop_str_in_output", "ignore_eos", "min_tokens",
    "skip_special_tokens", "spaces_between_special_tokens", "truncate_prompt_tokens",
    "truncation_side", "prompt_logprobs", "logprob_token_ids", "allowed_token_ids", "bad_words",
]
_VLLM_COMMON_EXTRA = [
    "structured_outputs", "priority", "request_id", "session_id", "return_tokens_as_token_ids",
    "return_token_ids", "routed_experts_prompt_start", "return_token_offsets",
    "return_mm_kwargs", "cache_salt", "kv_transfer_params", "ec_transfer_params",
    "vllm_xargs", "repetition_detection", "stream_interval",
]
VLLM_COMPLETIONS = [
    "model", "prompt", "echo", "frequency_penalty", "logit_bias", "logprobs", "max_tokens", "n",
    "presence_penalty", "seed", "stop", "stream", "stream_options", "suffix", "temperature",
    "top_p", "user",
] + _VLLM_SAMPLING + [
    "prompt_embeds", "add_special_tokens", "response_format", "thinking_token_budget",
] + _VLLM_COMMON_EXTRA + ["guided_json", "guided_regex", "guided_choice"]
VLLM_CHAT = [
    "messages", "model", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs",
    "max_tokens", "max_completion_tokens", "n", "presence_penalty", "response_format", "seed",
    "stop", "stream", "stream_options", "temperature", "top_p", "tools", "tool_choice",
    "reasoning_effort", "thinking_token_budget", "include_reasoning", "parallel_tool_calls",
    "user",
] + _VLLM_SAMPLING + [
    "echo", "add_generation_prompt", "continue_final_message", "add_special_tokens",
    "documents", "chat_template", "chat_template_kwargs", "media_io_kwargs",
    "mm_processor_kwargs", "return_prompt_text",
] + _VLLM_COMMON_EXTRA + ["guided_json", "guided_regex", "guided_choice"]


def sdk_fields(module):
    keys = set()
    for name in ("CompletionCreateParamsStreaming", "CompletionCreateParamsNonStreaming"):
        keys |= set(typing.get_type_hints(getattr(module, name)).keys())
    return sorted(keys)


def main():
    import openai
    from openai.types import completion_create_params as completions
    from openai.types.chat import completion_create_params as chat
    out = {
        "openai": {"package": "openai", "version": openai.__version__,
                   "completions": sdk_fields(completions), "chat": sdk_fields(chat)},
        "vllm": {"commit": VLLM_COMMIT, "completions": sorted(set(VLLM_COMPLETIONS)),
                 "chat": sorted(set(VLLM_CHAT))},
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
