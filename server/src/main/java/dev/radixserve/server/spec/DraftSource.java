package dev.radixserve.server.spec;

/**
 * Proposes tokens that may follow a sequence, for speculative decoding: the engine verifies them
 * in one forward step and keeps only those the model itself produces, so a source may be wrong
 * at no cost to correctness, only to speed. Engine thread only.
 */
public interface DraftSource {

  int[] NONE = new int[0];

  /**
   * @param tokens the sequence; only {@code [0, length)} is read
   * @param max most tokens to propose, at least 1
   * @return up to {@code max} tokens that may follow {@code tokens[0, length)}; {@link #NONE}
   *     when the source knows nothing
   */
  int[] propose(int[] tokens, int length, int max);
}
