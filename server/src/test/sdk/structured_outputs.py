"""OpenAI Python SDK against a running radixserve: response_format and tools paths.

Usage: python structured_outputs.py BASE_URL MODEL   (exits non-zero on the first failure)
"""
import json
import sys
from typing import Literal

from openai import OpenAI, pydantic_function_tool
from pydantic import BaseModel, Field

base_url, model = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=base_url, api_key="unused")
msgs = [{"role": "user", "content": "Describe a city in JSON."}]


class City(BaseModel):
    name: str = Field(max_length=10)
    country: Literal["NO", "SE", "DK"]
    population: int = Field(ge=0, le=9999)
    capital: bool


# parse(): the SDK sends the model's strict JSON Schema and parses the reply into City
for seed in range(3):
    r = client.chat.completions.parse(model=model, messages=msgs, response_format=City,
                                      max_tokens=200, temperature=1.0, seed=seed)
    c = r.choices[0]
    assert c.finish_reason == "stop", c
    assert isinstance(c.message.parsed, City), c.message
    print("parse:", c.message.parsed)

r = client.chat.completions.create(model=model, messages=msgs, max_tokens=8,
                                   response_format={"type": "json_object"})
assert r.choices[0].message.content.startswith("{"), r

r = client.completions.create(model=model, prompt="Pick:", max_tokens=5,
                              extra_body={"guided_choice": ["left", "right"]})
assert r.choices[0].text in ("left", "right"), r


class GetWeather(BaseModel):
    city: str = Field(max_length=10)
    unit: Literal["celsius", "fahrenheit"]


tools = [pydantic_function_tool(GetWeather, name="get_weather")]
r = client.chat.completions.parse(model=model, messages=msgs, tools=tools,
                                  tool_choice="required", max_tokens=120, temperature=0)
c = r.choices[0]
assert c.finish_reason == "tool_calls", c
call = c.message.tool_calls[0]
assert call.function.name == "get_weather", call
assert isinstance(call.function.parsed_arguments, GetWeather), call
print("tool call:", call.function.parsed_arguments)

# streamed tool-call deltas reassemble to the same call
args, name = "", None
for chunk in client.chat.completions.create(model=model, messages=msgs, tools=tools,
                                            tool_choice="required", max_tokens=120,
                                            temperature=0, stream=True):
    for tc in chunk.choices[0].delta.tool_calls or []:
        name = tc.function.name or name
        args += tc.function.arguments or ""
assert name == "get_weather" and json.loads(args) == json.loads(call.function.arguments), args
print("python sdk: ok")
