package dev.radixserve.server.spec;

/**
 * The last {@value #N} tokens before a position, as a key: exact (no hash collisions), so a
 * draft is only ever proposed after a true match, and a namespace's key never equals another's.
 */
record NGram(String namespace, int a, int b, int c) {

  /** Tokens a key holds: three is vLLM's and llama.cpp's default for prompt lookup. */
  static final int N = 3;

  /** The {@value #N} tokens ending before {@code end} ({@code end >= N}). */
  static NGram before(String namespace, int[] tokens, int end) {
    return new NGram(namespace, tokens[end - 3], tokens[end - 2], tokens[end - 1]);
  }
}
