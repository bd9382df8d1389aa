package dev.radixserve.server.spec;

/**
 * Drafts from a sequence's own tokens (prompt lookup, vLLM's and llama.cpp's n-gram mode): finds
 * the latest earlier place where its last {@value #LONGEST} tokens occurred, else its last 4,
 * else its last {@value NGram#N}, and proposes what followed there. The longest match first, as
 * vLLM's prompt lookup searches from {@code prompt_lookup_max} down: where a common run of three
 * tokens occurred in several places, the place that also shares the tokens before it is the
 * likelier to go on the same way (on prose and code predicting themselves, 0-9% more draft tokens
 * held for the same drafts: {@code bench/speculative/longest_key_count.py}). The index grows
 * incrementally as the sequence grows (a {@link RunIndex} slot per position and key length,
 * indexed once), so a proposal costs at most three lookups and never a scan of the sequence.
 * One per sequence.
 */
public final class PromptLookup implements DraftSource {

  /** Tokens of the longest key looked up. */
  static final int LONGEST = 5;

  /** Where each run of {@code NGram.N + i} tokens last occurred, for i = 0, 1, 2. */
  private final RunIndex[] after = new RunIndex[LONGEST - NGram.N + 1];
  /** Positions {@code e < indexedTo} have their preceding runs in {@link #after}. */
  private int indexedTo = NGram.N;

  public PromptLookup() {
    for (int i = 0; i < after.length; i++) {
      after[i] = new RunIndex(NGram.N + i);
    }
  }

  @Override
  public int[] propose(int[] tokens, int length, int max) {
    if (length <= NGram.N) {
      return NONE;
    }
    // index every key that has a continuation (ends before length - 1), latest wins; the
    // suffix itself is looked up before it is indexed, so it never finds itself
    for (; indexedTo < length; indexedTo++) {
      for (int n = NGram.N; n <= Math.min(LONGEST, indexedTo); n++) {
        after[n - NGram.N].put(tokens, indexedTo);
      }
    }
    for (int n = Math.min(LONGEST, length); n >= NGram.N; n--) {
      int end = after[n - NGram.N].latest(tokens, length);
      if (end >= 0) {
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
