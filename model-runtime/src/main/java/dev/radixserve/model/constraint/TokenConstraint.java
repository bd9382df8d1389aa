package dev.radixserve.model.constraint;

import dk.brics.automaton.Automaton;
import dk.brics.automaton.State;
import dk.brics.automaton.Transition;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A compiled constraint over one vocabulary: a deterministic automaton over bytes as a dense
 * table, and per state the set of tokens whose bytes keep it alive, computed the first time a
 * sequence reaches the state and kept (shared by every request with the same constraint).
 * Immutable apart from that cache; safe to share between threads (a mask computed twice by a
 * race is the same mask).
 */
public final class TokenConstraint {

  static final int MAX_STATES = 20_000;

  private final TokenVocabulary vocab;
  private final int[] next; // (state * 256 + byte) -> state, or -1: the bytes cannot lead to a match
  private final boolean[] accept;
  private final boolean[] hasNext;
  private final AtomicReferenceArray<long[]> masks; // (state) -> allowed tokens as a bit set
  final int initial;

  TokenConstraint(Automaton bytes, TokenVocabulary vocab) {
    this.vocab = vocab;
    Dfa.minimize(bytes);
    List<State> live = liveStates(bytes);
    Map<State, Integer> id = new HashMap<>();
    for (State s : live) {
      id.put(s, id.size());
    }
    int n = live.size();
    if (n > MAX_STATES) {
      // the table takes 1 KiB a state, and masks up to 6 KiB each: bound what one constraint holds
      throw new ConstraintException("constraint", "the constraint is too complex: " + n
          + " automaton states, at most " + MAX_STATES);
    }
    next = new int[Math.max(1, n) * 256];
    Arrays.fill(next, -1);
    accept = new boolean[Math.max(1, n)];
    hasNext = new boolean[Math.max(1, n)];
    for (State s : live) {
      int from = id.get(s);
      accept[from] = s.isAccept();
      for (Transition t : s.getTransitions()) {
        Integer to = id.get(t.getDest());
        if (to == null) {
          continue;
        }
        for (int b = t.getMin(); b <= Math.min(255, (int) t.getMax()); b++) {
          next[from * 256 + b] = to;
          hasNext[from] = true;
        }
      }
    }
    Integer start = id.get(bytes.getInitialState());
    if (start == null) {
      throw new ConstraintException("schema", "the constraint admits no output at all");
    }
    initial = start;
    masks = new AtomicReferenceArray<>(Math.max(1, n));
  }

  /** States from which an accepting state is reachable. */
  private static List<State> liveStates(Automaton a) {
    Map<State, List<State>> back = new HashMap<>();
    List<State> work = new ArrayList<>();
    java.util.Set<State> all = a.getStates();
    for (State s : all) {
      for (Transition t : s.getTransitions()) {
        back.computeIfAbsent(t.getDest(), k -> new ArrayList<>()).add(s);
      }
      if (s.isAccept()) {
        work.add(s);
      }
    }
    java.util.Set<State> live = new java.util.HashSet<>(work);
    while (!work.isEmpty()) {
      State s = work.removeLast();
      for (State p : back.getOrDefault(s, List.of())) {
        if (live.add(p)) {
          work.add(p);
        }
      }
    }
    List<State> out = new ArrayList<>();
    for (State s : all) {
      if (live.contains(s)) {
        out.add(s);
      }
    }
    return out;
  }

  public int states() {
    return accept.length;
  }

  public int vocabSize() {
    return vocab.vocabSize();
  }

  /** A fresh per-sequence cursor at the start. */
  public ConstraintState start() {
    return new ConstraintState(this, initial);
  }

  boolean accepting(int state) {
    return accept[state];
  }

  boolean hasNext(int state) {
    return hasNext[state];
  }

  /** The state after {@code token}'s bytes, or -1 when they lead nowhere (or it is special). */
  int step(int state, int token) {
    byte[] b = vocab.bytes(token);
    if (b == null) {
      return -1;
    }
    int s = state;
    for (int i = 0; i < b.length && s >= 0; i++) {
      s = next[s * 256 + (b[i] & 0xFF)];
    }
    return s;
  }

  /** The tokens allowed in {@code state} as a bit set over the vocabulary (EOS not included). */
  long[] allowed(int state) {
    long[] m = masks.get(state);
    if (m == null) {
      m = computeMask(state);
      masks.set(state, m);
    }
    return m;
  }

  /** How many states have their mask computed (tests, diagnostics). */
  int cachedMasks() {
    int c = 0;
    for (int i = 0; i < masks.length(); i++) {
      c += masks.get(i) != null ? 1 : 0;
    }
    return c;
  }

  /** One depth-first walk of the vocabulary trie, carrying the automaton state along. */
  private long[] computeMask(int state) {
    long[] bits = new long[(vocab.vocabSize() + 63) >>> 6];
    int[] stackNode = new int[64];
    int[] stackState = new int[64];
    int top = 0;
    stackNode[top] = 0;
    stackState[top++] = state;
    int[] childStart = vocab.childStart;
    int[] edgeByte = vocab.edgeByte;
    int[] edgeTarget = vocab.edgeTarget;
    int[] tokenAt = vocab.tokenAt;
    while (top > 0) {
      int node = stackNode[--top];
      int s = stackState[top];
      int tok = tokenAt[node];
      if (tok >= 0 && node != 0) {
        bits[tok >>> 6] |= 1L << tok;
      }
      int base = s * 256;
      for (int e = childStart[node]; e < childStart[node + 1]; e++) {
        int t = next[base + edgeByte[e]];
        if (t >= 0) {
          if (top == stackNode.length) {
            stackNode = Arrays.copyOf(stackNode, top * 2);
            stackState = Arrays.copyOf(stackState, top * 2);
          }
          stackNode[top] = edgeTarget[e];
          stackState[top++] = t;
        }
      }
    }
    return bits;
  }
}
