// OpenAI Node SDK against a running radixserve: zod response_format and tools through parse().
// Usage: node structured_outputs.mjs BASE_URL MODEL   (exits non-zero on the first failure)
import assert from "node:assert/strict";
import OpenAI from "openai";
import { zodFunction, zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "unused" });
const messages = [{ role: "user", content: "Describe a city in JSON." }];

const City = z.object({
  name: z.string().max(10),
  country: z.enum(["NO", "SE", "DK"]),
  population: z.number().int().min(0).max(9999),
  capital: z.boolean(),
});
for (const seed of [0, 1, 2]) {
  const r = await client.chat.completions.parse({
    model, messages, response_format: zodResponseFormat(City, "city"),
    max_tokens: 200, temperature: 1.0, seed,
  });
  assert.equal(r.choices[0].finish_reason, "stop");
  City.parse(r.choices[0].message.parsed);
  console.log("parse:", r.choices[0].message.parsed);
}

const GetWeather = z.object({ city: z.string().max(10), unit: z.enum(["celsius", "fahrenheit"]) });
const tools = [zodFunction({ name: "get_weather", parameters: GetWeather })];
const r = await client.chat.completions.parse({
  model, messages, tools, tool_choice: "required", max_tokens: 120, temperature: 0,
});
assert.equal(r.choices[0].finish_reason, "tool_calls");
const call = r.choices[0].message.tool_calls[0];
assert.equal(call.function.name, "get_weather");
GetWeather.parse(call.function.parsed_arguments);
console.log("tool call:", call.function.parsed_arguments);

const stream = await client.chat.completions.create({
  model, messages, tools, tool_choice: "required", max_tokens: 120, temperature: 0, stream: true,
});
let args = "";
for await (const chunk of stream) {
  for (const tc of chunk.choices[0].delta.tool_calls ?? []) {
    args += tc.function?.arguments ?? "";
  }
}
assert.deepEqual(JSON.parse(args), JSON.parse(call.function.arguments));
console.log("node sdk: ok");
