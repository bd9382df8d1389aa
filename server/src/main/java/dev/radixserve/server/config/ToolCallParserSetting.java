package dev.radixserve.server.config;

/**
 * Which tool-call syntax chat replies are parsed (and forced calls written) in: the model
 * family's own ({@code auto}: read from the chat template), or one named as vLLM's
 * {@code --tool-call-parser} names them.
 */
public enum ToolCallParserSetting {
  /** From the chat template: Qwen/Hermes, Llama 3.x or Mistral syntax, else generic. */
  AUTO,
  /** {@code <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>} (Qwen2.5, Qwen3, Hermes). */
  HERMES,
  /** {@code {"name": ..., "parameters": ...}}, optionally after {@code <|python_tag|>}, {@code ;}-separated. */
  LLAMA3_JSON,
  /** {@code [TOOL_CALLS][{"name": ..., "arguments": ...}, ...]}. */
  MISTRAL,
  /** radixserve's own: the reply is {@code {"name": ..., "arguments": ...}} (README). */
  GENERIC
}
