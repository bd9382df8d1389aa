package dev.radixserve.server.http;

import dev.radixserve.server.api.ReasoningSyntax;
import dev.radixserve.server.api.ReasoningSyntax.Start;

/**
 * Splits one chat reply into reasoning and content as its text arrives, as vLLM's {@code qwen3}
 * and {@code deepseek_r1} reasoning parsers read a whole reply: the text between the start (or a
 * leading {@code <think>}) and the first {@code </think>} is reasoning, the rest content; the tags
 * are neither. Works on text, not token ids, so a tag split across tokens or deltas is found: text
 * that could be the start of a tag is held back until it is known not to be one. The pieces of
 * all deltas add up to the split of the whole text, whatever the chunking.
 */
final class ReasoningParser {

  /** What one piece of text added: reasoning and content ({@code ""} when none). */
  record Split(String reasoning, String content) {
    static final Split EMPTY = new Split("", "");
  }

  private enum State { LEAD, REASONING, CONTENT }

  private final Start start;
  private final StringBuilder held = new StringBuilder();
  private State state = State.LEAD;
  private boolean reasoned;

  ReasoningParser(Start start) {
    this.start = start;
    if (start == Start.CONTENT) {
      state = State.CONTENT;
    }
    reasoned = start == Start.REASONING; // vLLM's deepseek_r1: even an empty reply has reasoning
  }

  /** Whether the reply has a reasoning part (entered it), so far. */
  boolean reasoned() {
    return reasoned;
  }

  /** Whether the reply's text is now content: reasoning, if any, has ended. */
  boolean closed() {
    return state == State.CONTENT;
  }

  Split feed(String text) {
    if (text.isEmpty()) {
      return Split.EMPTY;
    }
    if (state == State.CONTENT) {
      return new Split("", text);
    }
    held.append(text);
    StringBuilder reasoning = new StringBuilder();
    if (state == State.LEAD) {
      String open = ReasoningSyntax.OPEN;
      if (held.length() < open.length() && open.startsWith(held.toString())) {
        return Split.EMPTY; // could still be the opening tag
      }
      if (held.toString().startsWith(open)) {
        held.delete(0, open.length());
        enterReasoning();
      } else if (start == Start.REASONING) {
        enterReasoning();
      } else {
        state = State.CONTENT;
        String all = held.toString();
        held.setLength(0);
        return new Split("", all);
      }
    }
    String close = ReasoningSyntax.CLOSE;
    int at = held.indexOf(close);
    if (at >= 0) {
      reasoning.append(held, 0, at);
      String rest = held.substring(at + close.length());
      held.setLength(0);
      state = State.CONTENT;
      return new Split(reasoning.toString(), rest);
    }
    int keep = partialSuffix(held, close);
    reasoning.append(held, 0, held.length() - keep);
    held.delete(0, held.length() - keep);
    return new Split(reasoning.toString(), "");
  }

  /** The end of the reply: held text goes where it stands. */
  Split finish() {
    String rest = held.toString();
    held.setLength(0);
    if (state == State.REASONING || (state == State.LEAD && start == Start.REASONING)) {
      if (state == State.LEAD && !rest.isEmpty()) {
        enterReasoning();
      }
      return new Split(rest, "");
    }
    return new Split("", rest);
  }

  private void enterReasoning() {
    state = State.REASONING;
    reasoned = true;
  }

  /** The length of the longest suffix of {@code s} that is a proper prefix of {@code tag}. */
  private static int partialSuffix(CharSequence s, String tag) {
    for (int k = Math.min(tag.length() - 1, s.length()); k > 0; k--) {
      boolean match = true;
      for (int i = 0; i < k && match; i++) {
        match = s.charAt(s.length() - k + i) == tag.charAt(i);
      }
      if (match) {
        return k;
      }
    }
    return 0;
  }
}
