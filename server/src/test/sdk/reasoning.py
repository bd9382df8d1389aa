"""OpenAI Python SDK against a running radixserve with a reasoning model: reasoning_content as
an extra field of the message and of stream deltas, usage.completion_tokens_details.

Usage: python reasoning.py BASE_URL MODEL RUN_JSON
RUN_JSON: one run of transformers-checkpoints/*/reasoning.json (the request and the split that
transformers' reply and vLLM's parser give). Exits non-zero on the first failure.
"""
import json
import sys

from openai import OpenAI

base_url, model, run = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
client = OpenAI(base_url=base_url, api_key="unused")
extra = {"allowed_token_ids": run["allowed_token_ids"],
         "repetition_penalty": run["repetition_penalty"]}
if run["chat_template_kwargs"]:
    extra["chat_template_kwargs"] = run["chat_template_kwargs"]
kwargs = dict(model=model, messages=run["messages"], max_tokens=run["max_tokens"],
              temperature=0, logit_bias=run["logit_bias"], extra_body=extra)

r = client.chat.completions.create(**kwargs)
m = r.choices[0].message
# not a field of the SDK's ChatCompletionMessage: kept as an extra (pydantic extra="allow")
assert getattr(m, "reasoning_content") == run["reasoning"], (m, run)
assert m.content == run["content"], (m, run)
assert r.usage.completion_tokens_details.reasoning_tokens > 0, r.usage
print("reasoning_content:", repr(m.reasoning_content), "content:", repr(m.content))

reasoning, content = "", ""
for chunk in client.chat.completions.create(stream=True, **kwargs):
    if not chunk.choices:
        continue
    d = chunk.choices[0].delta
    reasoning += getattr(d, "reasoning_content", None) or ""
    content += d.content or ""
assert reasoning == run["reasoning"], (reasoning, run)
assert content == (run["content"] or ""), (content, run)
print("streamed:", repr(reasoning), repr(content))
