package dev.radixserve.model.constraint;

import dk.brics.automaton.Automaton;
import dk.brics.automaton.State;
import dk.brics.automaton.Transition;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Determinization with a budget. A client's regex or schema can make the subset construction
 * exponential ({@code (a|b)*a(a|b){20}}: 2^20 states); dk.brics would run until memory is gone,
 * on a worker thread, with no way to stop it. This subset construction counts the states it
 * makes and refuses the constraint past {@link #MAX_SUBSET_STATES}; dk.brics then minimizes the
 * deterministic result (Hopcroft, no blow-up).
 */
final class Dfa {

  static final int MAX_SUBSET_STATES = 100_000;

  private Dfa() {}

  /** Makes {@code a} a minimal DFA, or throws {@link ConstraintException} over the budget. */
  static void minimize(Automaton a) {
    if (!a.isDeterministic()) {
      determinize(a);
    }
    a.minimize();
  }

  private static void determinize(Automaton a) {
    State init = a.getInitialState();
    List<State> nfa = new ArrayList<>(a.getStates());
    Map<State, Integer> index = new IdentityHashMap<>();
    for (State s : nfa) {
      index.put(s, index.size());
    }
    Map<BitSet, State> made = new HashMap<>();
    ArrayDeque<BitSet> work = new ArrayDeque<>();
    BitSet start = new BitSet();
    start.set(index.get(init));
    State newInit = new State();
    made.put(start, newInit);
    work.add(start);
    while (!work.isEmpty()) {
      BitSet set = work.poll();
      State from = made.get(set);
      List<Transition> out = new ArrayList<>();
      for (int i = set.nextSetBit(0); i >= 0; i = set.nextSetBit(i + 1)) {
        State s = nfa.get(i);
        if (s.isAccept()) {
          from.setAccept(true);
        }
        out.addAll(s.getTransitions());
      }
      // the alphabet cut at every transition's ends; each piece goes to one subset
      int[] points = new int[out.size() * 2];
      int n = 0;
      for (Transition t : out) {
        points[n++] = t.getMin();
        points[n++] = t.getMax() + 1;
      }
      Arrays.sort(points, 0, n);
      for (int p = 0; p + 1 < n; p++) {
        int lo = points[p];
        int hi = points[p + 1] - 1;
        if (lo > hi) {
          continue;
        }
        BitSet to = new BitSet();
        for (Transition t : out) {
          if (t.getMin() <= lo && hi <= t.getMax()) {
            to.set(index.get(t.getDest()));
          }
        }
        if (to.isEmpty()) {
          continue;
        }
        State dest = made.get(to);
        if (dest == null) {
          if (made.size() >= MAX_SUBSET_STATES) {
            throw new ConstraintException("constraint", "the constraint is too complex: its"
                + " automaton needs more than " + MAX_SUBSET_STATES + " states");
          }
          dest = new State();
          made.put(to, dest);
          work.add(to);
        }
        from.addTransition(new Transition((char) lo, (char) hi, dest));
      }
    }
    a.setInitialState(newInit);
    a.setDeterministic(true);
    a.restoreInvariant();
  }
}
