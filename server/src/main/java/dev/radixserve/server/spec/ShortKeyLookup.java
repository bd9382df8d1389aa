package dev.radixserve.server.spec;

import java.util.HashMap;
import java.util.Map;

/**
 * Drafts from a sequence's own tokens by a key shorter than {@link PromptLookup}'s: the latest
 * earlier place where its last two tokens occurred, or failing that its last token, and what
 * followed there. Such a key matches far more often and holds far less often than three tokens
 * (on prose about one draft in five to ten holds), so it is only worth a row that costs nothing:
 * the engine asks it where the sequence's own sources found nothing and a step of one more token
 * is measured to cost what the step costs anyway, as on ONNX Runtime's CPU kernels in the blocks
 * that compute rows in pairs, where a one-token step computes a padded second row
 * ({@code QuantSpec.evenRows}). The index grows incrementally, one entry per position and key
 * length, as {@link PromptLookup}'s. One per sequence.
 */
public final class ShortKeyLookup implements DraftSource {

  /** A pair of tokens' latest occurrence: the position right after it. */
  private final Map<Long, Integer> afterPair = new HashMap<>();
  /** A token's latest occurrence: the position right after it. */
  private final Map<Integer, Integer> afterToken = new HashMap<>();
  /** Positions {@code e < indexedTo} have the key(s) ending before them indexed. */
  private int indexedTo = 1;

  @Override
  public int[] propose(int[] tokens, int length, int max) {
    if (length < 2) {
      return NONE;
    }
    // index every key that has a continuation (ends before length - 1), latest wins; the
    // suffix itself is looked up before it is indexed, so it never finds itself
    for (; indexedTo < length; indexedTo++) {
      afterToken.put(tokens[indexedTo - 1], indexedTo);
      if (indexedTo >= 2) {
        afterPair.put(pair(tokens, indexedTo), indexedTo);
      }
    }
    Integer end = afterPair.get(pair(tokens, length));
    if (end == null) {
      end = afterToken.get(tokens[length - 1]);
    }
    return end == null ? NONE : PromptLookup.copyAfter(tokens, length, end, max);
  }

  /** The two tokens ending before {@code end} ({@code end >= 2}), as one key. */
  private static long pair(int[] tokens, int end) {
    return ((long) tokens[end - 2] << 32) | (tokens[end - 1] & 0xffffffffL);
  }
}
