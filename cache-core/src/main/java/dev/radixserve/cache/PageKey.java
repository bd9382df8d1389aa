package dev.radixserve.cache;

import java.util.Arrays;

/**
 * A child's key: its first page, {@code tokens[offset, offset + B)}, viewed in place (no copy).
 * Two siblings may share a first token but never a first page, so a lookup by page finds the
 * only child an edge comparison can continue into.
 *
 * <p>Stored keys view the child's own token array at offset 0 (never mutated: a split gives both
 * halves fresh arrays and fresh keys); lookup keys view the caller's query array and are dropped
 * right after the lookup.
 */
final class PageKey {

  private final int[] tokens;
  private final int offset;
  private final int length;
  private final int hash;

  PageKey(int[] tokens, int offset, int length) {
    this.tokens = tokens;
    this.offset = offset;
    this.length = length;
    int h = 1;
    for (int i = offset, end = offset + length; i < end; i++) {
      h = 31 * h + tokens[i];
    }
    this.hash = h;
  }

  /** Whether this key views exactly {@code tokens[0, length)} of the given array. */
  boolean views(int[] array, int pageLength) {
    return tokens == array && offset == 0 && length == pageLength;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PageKey k
        && hash == k.hash
        && Arrays.equals(tokens, offset, offset + length, k.tokens, k.offset, k.offset + k.length);
  }

  @Override
  public int hashCode() {
    return hash;
  }

  @Override
  public String toString() {
    return Arrays.toString(Arrays.copyOfRange(tokens, offset, offset + length));
  }
}
