package dev.radixserve.server.spec;

import java.util.HashMap;
import java.util.Map;

/**
 * Drafts from a sequence's own tokens (prompt lookup, vLLM's and llama.cpp's n-gram mode): finds
 * the latest earlier place where its last {@value #LONGEST} tokens occurred, else its last 4,
 * else its last {@value NGram#N}, and proposes what followed there. The longest match first, as
 * vLLM's prompt lookup searches from {@code prompt_lookup_max} down: where a common run of three
 * tokens occurred in several places, the place that also shares the tokens before it is the
 * likelier to go on the same way (on prose and code predicting themselves, 0-9% more draft tokens
 * held for the same drafts: {@code bench/speculative/longest_key_count.py}). The index grows
 * incrementally as the sequence grows (one map entry per position and key length, indexed once),
 * so a proposal costs at most three lookups and never a scan of the sequence. One per sequence.
 */
public final class PromptLookup implements DraftSource {

  /** Tokens of the longest key looked up. */
  static final int LONGEST = 5;

  /**
   * The up to {@value #LONGEST} tokens before a position, exact (no hash collisions), the first
   * {@code LONGEST - n} of a shorter key -1 (no token's id).
   */
  private record Key(int a, int b, int c, int d, int e) {

    static Key before(int[] tokens, int end, int n) {
      return new Key(n >= 5 ? tokens[end - 5] : -1, n >= 4 ? tokens[end - 4] : -1,
          tokens[end - 3], tokens[end - 2], tokens[end - 1]);
    }
  }

  /** A key's latest occurrence: the position right after it. */
  private final Map<Key, Integer> after = new HashMap<>();
  /** Positions {@code e < indexedTo} have their preceding keys in {@link #after}. */
  private int indexedTo = NGram.N;

  @Override
  public int[] propose(int[] tokens, int length, int max) {
    if (length <= NGram.N) {
      return NONE;
    }
    // index every key that has a continuation (ends before length - 1), latest wins; the
    // suffix itself is looked up before it is indexed, so it never finds itself
    for (; indexedTo < length; indexedTo++) {
      for (int n = NGram.N; n <= Math.min(LONGEST, indexedTo); n++) {
        after.put(Key.before(tokens, indexedTo, n), indexedTo);
      }
    }
    for (int n = Math.min(LONGEST, length); n >= NGram.N; n--) {
      Integer end = after.get(Key.before(tokens, length, n));
      if (end != null) {
        return copyAfter(tokens, length, end, max);
      }
    }
    return NONE;
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
