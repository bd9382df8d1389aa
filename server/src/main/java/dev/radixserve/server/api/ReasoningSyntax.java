package dev.radixserve.server.api;

import dev.radixserve.model.chat.ChatTemplate;
import dev.radixserve.server.config.ReasoningParserSetting;

/**
 * How a model family marks its reasoning, as vLLM's reasoning parsers read it: {@code
 * <think>…</think>}. What differs is where a reply starts ({@link #start}):
 *
 * <ul>
 *   <li>{@link #QWEN3}: a reply is reasoning only when it opens with {@code <think>} (Qwen3 writes
 *       the tag itself), or when the prompt opened the block;
 *   <li>{@link #DEEPSEEK_R1}: a reply is reasoning from its start until {@code </think>} (R1 and
 *       its distills put {@code <think>} in the generation prompt, or write it first);
 * </ul>
 *
 * and for both a prompt that closed a block ({@code enable_thinking: false} renders {@code
 * <think>\n\n</think>\n\n}) makes the whole reply content.
 */
public enum ReasoningSyntax {
  QWEN3,
  DEEPSEEK_R1;

  public static final String OPEN = "<think>";
  public static final String CLOSE = "</think>";

  /** Where a reply starts. */
  public enum Start {
    /** In reasoning (a leading {@code <think>} is dropped). */
    REASONING,
    /** In content: the reply holds no reasoning. */
    CONTENT,
    /** Reasoning when the reply opens with {@code <think>}, content otherwise. */
    OPENS_WITH_TAG
  }

  /** The parser {@code setting} names, or for {@code auto} the template's family; null: none. */
  public static ReasoningSyntax of(ReasoningParserSetting setting, ChatTemplate template) {
    return switch (setting) {
      case QWEN3 -> QWEN3;
      case DEEPSEEK_R1 -> DEEPSEEK_R1;
      case NONE -> null;
      case AUTO -> {
        String s = template.source();
        if (!s.contains(OPEN) || !s.contains(CLOSE)) {
          yield null;
        }
        yield s.contains("<｜Assistant｜>") ? DEEPSEEK_R1 : QWEN3;
      }
    };
  }

  /** Where the reply to {@code prompt} (the rendered chat template) starts. */
  public Start start(String prompt) {
    String tail = prompt.stripTrailing();
    if (tail.endsWith(CLOSE)) {
      return Start.CONTENT;
    }
    if (tail.endsWith(OPEN) || this == DEEPSEEK_R1) {
      return Start.REASONING;
    }
    return Start.OPENS_WITH_TAG;
  }
}
