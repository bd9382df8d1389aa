package dev.radixserve.server.spec;

import java.util.HashMap;
import java.util.Map;

/**
 * Drafts from a sequence's own tokens (prompt lookup, vLLM's and llama.cpp's n-gram mode): finds
 * the latest earlier place where its last {@value NGram#N} tokens occurred and proposes what
 * followed there. The index grows incrementally as the sequence grows (one map entry per
 * position, indexed once), so a proposal costs O(1) lookups and never a scan of the sequence.
 * One per sequence.
 */
public final class PromptLookup implements DraftSource {

  /** An n-gram's latest occurrence: the position right after it. */
  private final Map<NGram, Integer> after = new HashMap<>();
  /** Positions {@code e < indexedTo} have their preceding n-gram in {@link #after}. */
  private int indexedTo = NGram.N;

  @Override
  public int[] propose(int[] tokens, int length, int max) {
    if (length <= NGram.N) {
      return NONE;
    }
    // index every n-gram that has a continuation (ends before length - 1), latest wins; the
    // suffix itself is looked up before it is indexed, so it never finds itself
    for (; indexedTo < length; indexedTo++) {
      after.put(NGram.before("", tokens, indexedTo), indexedTo);
    }
    Integer end = after.get(NGram.before("", tokens, length));
    if (end == null) {
      return NONE;
    }
    return copyAfter(tokens, length, end, max);
  }

  /**
   * The {@code max} tokens that followed an earlier match ending at {@code end}, copied as LZ77
   * copies a match: where the copy runs into the sequence's end it goes on with the tokens it
   * copied, so a loop of period p (p = length - end) is proposed for the whole draft, not for p
   * tokens.
   */
  static int[] copyAfter(int[] tokens, int length, int end, int max) {
    int[] draft = new int[max];
    for (int i = 0; i < max; i++) {
      draft[i] = end + i < length ? tokens[end + i] : draft[end + i - length];
    }
    return draft;
  }
}
