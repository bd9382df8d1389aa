package dev.radixserve.model;

import java.util.Optional;

/** Text to token ids and back. Thread-safe: HTTP threads tokenize. */
public interface Tokenizer {

  /** Encodes text; the special token {@code <|endoftext|>} in the text maps to its id. */
  int[] encode(String text);

  /**
   * Encodes text that may have at most {@code maxTokens} tokens; empty when it has more. An
   * implementation should stop as soon as the text is known to be too long, so the cost of a
   * request is bounded by the limit rather than by the size of its text.
   */
  default Optional<int[]> encodeAtMost(String text, int maxTokens) {
    int[] ids = encode(text);
    return ids.length <= maxTokens ? Optional.of(ids) : Optional.empty();
  }

  /**
   * Encodes a rendered chat template: no special tokens added around it (the template wrote
   * them), special tokens in the text still map to their ids.
   */
  default int[] encodeTemplated(String text) {
    return encode(text);
  }

  /** {@link #encodeTemplated} of a text that may have at most {@code maxTokens} tokens. */
  default Optional<int[]> encodeTemplatedAtMost(String text, int maxTokens) {
    return encodeAtMost(text, maxTokens);
  }

  /** Decodes ids to text; bytes that do not form valid UTF-8 become U+FFFD. */
  String decode(int[] ids);

  /** The raw bytes of one token (byte-level BPE tokens are byte strings, not always UTF-8). */
  byte[] tokenBytes(int id);

  /**
   * Whether {@code id} is a special token (end-of-text and the like) or unused: its bytes are no
   * text, so a constraint on the output never matches it.
   */
  default boolean isSpecial(int id) {
    return id == eosTokenId();
  }

  /** {@code <|endoftext|>}: 50256 for GPT-2. */
  int eosTokenId();

  int vocabSize();
}
