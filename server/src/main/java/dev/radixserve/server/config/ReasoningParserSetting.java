package dev.radixserve.server.config;

/**
 * How chat replies are split into reasoning and content: as the chat template's family thinks
 * ({@code auto}), or by one of vLLM's {@code --reasoning-parser} names.
 */
public enum ReasoningParserSetting {
  /** From the chat template: deepseek_r1 for DeepSeek-R1 templates, qwen3 for others with {@code <think>}, else none. */
  AUTO,
  /** {@code <think>…</think>} that the reply opens itself (Qwen3), or that the prompt opened. */
  QWEN3,
  /** Reasoning from the start of the reply up to {@code </think>} (DeepSeek-R1 and its distills). */
  DEEPSEEK_R1,
  /** No split: the whole reply is content. */
  NONE
}
