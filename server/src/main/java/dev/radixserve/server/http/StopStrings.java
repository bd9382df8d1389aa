package dev.radixserve.server.http;

import java.util.List;

/**
 * A request's stop strings, each with its Knuth–Morris–Pratt failure table, built once per
 * request and shared by its choices. A {@link Matcher} per choice then finds a stop string in
 * text that grows piece by piece at O(1) amortized per character and stop string: no substring
 * copies, no rescans, whatever the stop strings' length.
 */
final class StopStrings {

  private final String[] stops;
  private final int[][] failure; // (stop, i) -> longest proper border of stop[0..i]

  StopStrings(List<String> stops) {
    this.stops = stops.stream().filter(s -> !s.isEmpty()).toArray(String[]::new);
    this.failure = new int[this.stops.length][];
    for (int k = 0; k < this.stops.length; k++) {
      failure[k] = failureTable(this.stops[k]);
    }
  }

  Matcher matcher() {
    return new Matcher();
  }

  private static int[] failureTable(String p) {
    int[] f = new int[p.length()];
    for (int i = 1, k = 0; i < p.length(); i++) {
      while (k > 0 && p.charAt(i) != p.charAt(k)) {
        k = f[k - 1];
      }
      if (p.charAt(i) == p.charAt(k)) {
        k++;
      }
      f[i] = k;
    }
    return f;
  }

  /** The matching state of one text: per stop string, how much of it the text ends with. */
  final class Matcher {

    private final int[] matched = new int[stops.length];

    /**
     * Feeds {@code piece}, appended at text position {@code at}.
     *
     * @return where the earliest stop string that ends inside the piece starts, or -1 when none
     *     does (then the state covers the whole piece)
     */
    int feed(CharSequence piece, int at) {
      int cut = -1;
      for (int k = 0; k < stops.length; k++) {
        String p = stops[k];
        int m = matched[k];
        for (int i = 0; i < piece.length(); i++) {
          char c = piece.charAt(i);
          while (m > 0 && p.charAt(m) != c) {
            m = failure[k][m - 1];
          }
          if (p.charAt(m) == c) {
            m++;
          }
          if (m == p.length()) {
            int start = at + i + 1 - p.length();
            cut = cut < 0 ? start : Math.min(cut, start);
            break;
          }
        }
        matched[k] = m;
      }
      return cut;
    }

    /** Length of the longest text suffix that is a proper prefix of some stop string. */
    int partial() {
      int held = 0;
      for (int m : matched) {
        held = Math.max(held, m);
      }
      return held;
    }
  }
}
