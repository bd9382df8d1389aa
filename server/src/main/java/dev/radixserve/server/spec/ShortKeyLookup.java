package dev.radixserve.server.spec;

/**
 * Drafts from a sequence's own tokens by a key shorter than {@link PromptLookup}'s, two ways.
 *
 * <p>{@link #propose}: the latest earlier place where its last two tokens occurred, or failing
 * that its last token, and what followed there. Such a key matches far more often and holds far
 * less often than three tokens (on prose about one draft in five to ten holds), so it is only
 * worth a row that costs nothing: the engine asks it where the sequence's own sources found
 * nothing and a step of one more token is measured to cost what the step costs anyway, as on
 * ONNX Runtime's CPU kernels in the blocks that compute rows in pairs, where a one-token step
 * computes a padded second row ({@code QuantSpec.evenRows}).
 *
 * <p>{@link #proposeByUniquePair}: only where the last two tokens occurred exactly once before,
 * what followed there, as a draft of any length. That is where a copy starts: an answer that
 * quotes its context opens each quote at a place no key predicts, and the three-token key finds
 * the quoted run only at its third token, often later (a quote's first word is tokenized
 * otherwise after the quote mark than after the space it had in the context); a pair that the
 * text holds once finds it a token or two earlier. A pair the text holds twice or more is as
 * likely the wrong place. The index grows incrementally, a {@link RunIndex} slot per position
 * and key length, as {@link PromptLookup}'s. One per sequence.
 */
public final class ShortKeyLookup implements DraftSource {

  /** Where each pair of tokens last occurred, and whether more than once. */
  private final RunIndex afterPair = new RunIndex(2);
  /** Where each token last occurred. */
  private final RunIndex afterToken = new RunIndex(1);
  /** Positions {@code e < indexedTo} have the key(s) ending before them indexed. */
  private int indexedTo = 1;

  @Override
  public int[] propose(int[] tokens, int length, int max) {
    if (length < 2) {
      return NONE;
    }
    index(tokens, length);
    int end = afterPair.latest(tokens, length);
    if (end < 0) {
      end = afterToken.latest(tokens, length);
    }
    return end < 0 ? NONE : PromptLookup.copyAfter(tokens, length, end, max);
  }

  /**
   * Up to {@code max} tokens that followed the one earlier occurrence of the sequence's last two
   * tokens, or none where they occurred never or more than once before.
   */
  public int[] proposeByUniquePair(int[] tokens, int length, int max) {
    if (length < 2) {
      return NONE;
    }
    index(tokens, length);
    int end = afterPair.once(tokens, length);
    return end < 0 ? NONE : PromptLookup.copyAfter(tokens, length, end, max);
  }

  /**
   * Indexes every key that has a continuation (ends before {@code length - 1}), latest wins; the
   * suffix itself is looked up before it is indexed, so it never finds itself.
   */
  private void index(int[] tokens, int length) {
    for (; indexedTo < length; indexedTo++) {
      afterToken.put(tokens, indexedTo);
      if (indexedTo >= 2) {
        afterPair.put(tokens, indexedTo);
      }
    }
  }
}
