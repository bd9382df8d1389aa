package dev.radixserve.model.constraint;

import dk.brics.automaton.Automaton;

/**
 * What may come before a constrained output in a reply that reasons first ({@code
 * <think>…</think>}): the mask starts where the reasoning ends, so a model can think and then
 * answer under the constraint. The reasoning itself is free text (any characters without {@code
 * </think>}); up to {@value #MAX_SPACE} white-space characters may follow the closing tag, as
 * the families write {@code "\n\n"} there.
 */
public enum ReasoningPrefix {
  /** The constraint applies from the first token. */
  NONE,
  /** The reply starts in reasoning (the prompt opened it; a leading {@code <think>} is allowed). */
  REQUIRED,
  /** The reply may open with a reasoning block, or start the constrained output at once. */
  OPTIONAL;

  static final String OPEN = "<think>";
  static final String CLOSE = "</think>";
  static final int MAX_SPACE = 4;

  /** The prefix as a byte automaton; null for {@link #NONE}. */
  Automaton automaton() {
    if (this == NONE) {
      return null;
    }
    Automaton character = Utf8Automata.toBytes(Automaton.makeCharRange('\u0000', '\uD7FF')
        .union(Automaton.makeCharRange('\uE000', '\uFFFF'))).union(Utf8Automata.supplementary());
    Automaton any = character.repeat();
    Automaton close = JsonBytes.literal(CLOSE);
    Automaton text = any.minus(any.concatenate(close).concatenate(any));
    // the families write "\n\n" after the tag; bounded, so a model cannot pad forever
    Automaton ended = text.concatenate(close)
        .concatenate(Automaton.makeCharSet(" \t\r\n").repeat(0, MAX_SPACE));
    Automaton open = JsonBytes.literal(OPEN);
    Automaton out = this == REQUIRED ? open.optional().concatenate(ended)
        : open.concatenate(ended).optional();
    Dfa.minimize(out);
    return out;
  }
}
