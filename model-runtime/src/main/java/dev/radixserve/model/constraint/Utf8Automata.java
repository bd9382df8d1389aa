package dev.radixserve.model.constraint;

import dk.brics.automaton.Automaton;
import dk.brics.automaton.State;
import dk.brics.automaton.Transition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns automata over characters into automata over UTF-8 bytes, because byte-level BPE tokens
 * are byte strings that may hold half a character: only a byte automaton can tell whether a
 * token that ends inside a multi-byte character may follow.
 *
 * <p>A byte automaton is a dk.brics {@link Automaton} whose "characters" are the bytes 0..255.
 * A character automaton's transitions are ranges of UTF-16 code units; surrogates are dropped
 * (dk.brics cannot pair them), so only characters of the Basic Multilingual Plane pass through
 * {@link #toBytes}; {@link #supplementary()} adds the 4-byte characters where free text allows
 * them.
 */
final class Utf8Automata {

  private Utf8Automata() {}

  /** The byte automaton that accepts the UTF-8 encodings of what {@code chars} accepts. */
  static Automaton toBytes(Automaton chars) {
    Automaton out = new Automaton();
    Map<State, State> map = new HashMap<>();
    for (State s : chars.getStates()) {
      State t = new State();
      t.setAccept(s.isAccept());
      map.put(s, t);
    }
    for (State s : chars.getStates()) {
      for (Transition tr : s.getTransitions()) {
        for (int[][] seq : sequences(tr.getMin(), tr.getMax())) {
          State from = map.get(s);
          for (int i = 0; i < seq.length - 1; i++) {
            State mid = new State();
            from.addTransition(new Transition((char) seq[i][0], (char) seq[i][1], mid));
            from = mid;
          }
          int[] last = seq[seq.length - 1];
          from.addTransition(new Transition((char) last[0], (char) last[1], map.get(tr.getDest())));
        }
      }
    }
    out.setInitialState(map.get(chars.getInitialState()));
    out.setDeterministic(false);
    Dfa.minimize(out);
    return out;
  }

  /** One UTF-8 character of 4 bytes (U+10000..U+10FFFF), well-formed. */
  static Automaton supplementary() {
    Automaton cont = range(0x80, 0xBF);
    Automaton f0 = range(0xF0, 0xF0).concatenate(range(0x90, 0xBF));
    Automaton f1 = range(0xF1, 0xF3).concatenate(cont);
    Automaton f4 = range(0xF4, 0xF4).concatenate(range(0x80, 0x8F));
    return f0.union(f1).union(f4).concatenate(cont).concatenate(cont);
  }

  static Automaton range(int lo, int hi) {
    return Automaton.makeCharRange((char) lo, (char) hi);
  }

  /**
   * The UTF-8 byte-range sequences of the code points {@code [lo, hi]} less the surrogates: each
   * sequence is one {lo, hi} range per byte, and their union is exactly the encodings (the
   * splitting of Rust's {@code utf8-ranges}).
   */
  static List<int[][]> sequences(int lo, int hi) {
    List<int[][]> out = new ArrayList<>();
    if (lo <= 0xD7FF) {
      split(lo, Math.min(hi, 0xD7FF), out);
    }
    if (hi >= 0xE000) {
      split(Math.max(lo, 0xE000), hi, out);
    }
    return out;
  }

  private static void split(int lo, int hi, List<int[][]> out) {
    if (lo > hi) {
      return;
    }
    for (int max : new int[] {0x7F, 0x7FF, 0xFFFF}) {
      if (lo <= max && hi > max) {
        split(lo, max, out);
        split(max + 1, hi, out);
        return;
      }
    }
    if (hi <= 0x7F) {
      out.add(new int[][] {{lo, hi}});
      return;
    }
    int n = length(lo);
    for (int i = 1; i < n; i++) {
      int m = (1 << (6 * i)) - 1;
      if ((lo & ~m) != (hi & ~m)) {
        if ((lo & m) != 0) {
          split(lo, lo | m, out);
          split((lo | m) + 1, hi, out);
          return;
        }
        if ((hi & m) != m) {
          split(lo, (hi & ~m) - 1, out);
          split(hi & ~m, hi, out);
          return;
        }
      }
    }
    int[] a = encode(lo);
    int[] b = encode(hi);
    int[][] seq = new int[n][];
    for (int i = 0; i < n; i++) {
      seq[i] = new int[] {a[i], b[i]};
    }
    out.add(seq);
  }

  private static int length(int cp) {
    return cp <= 0x7F ? 1 : cp <= 0x7FF ? 2 : cp <= 0xFFFF ? 3 : 4;
  }

  private static int[] encode(int cp) {
    return switch (length(cp)) {
      case 1 -> new int[] {cp};
      case 2 -> new int[] {0xC0 | cp >> 6, 0x80 | cp & 0x3F};
      case 3 -> new int[] {0xE0 | cp >> 12, 0x80 | cp >> 6 & 0x3F, 0x80 | cp & 0x3F};
      default -> new int[] {0xF0 | cp >> 18, 0x80 | cp >> 12 & 0x3F, 0x80 | cp >> 6 & 0x3F,
          0x80 | cp & 0x3F};
    };
  }
}
