package dev.radixserve.server.http;

import dev.radixserve.model.constraint.ToolCallLayout;
import dev.radixserve.server.api.ToolCallSyntax;
import dev.radixserve.server.api.Tools;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads one chat choice's text as it streams in, in the tool-call syntax of the model's family
 * ({@link ToolCallSyntax}), and says what to send: content, the start of call {@code index}, or
 * a piece of its arguments. The non-streamed reply feeds the same parser its whole text, so the
 * streamed pieces always reassemble to it.
 *
 * <ul>
 *   <li>Forced calls (tool_choice required or named; the output was decoded under the family's
 *       layout): a call starts once its name is complete, its arguments stream as they come (a
 *       JSON scanner finds where they end), and the layout's text between calls is dropped.
 *   <li>{@code auto}: text streams as content until a call may start (the family's marker, or
 *       for Llama and generic a reply that opens with {@code {}); from there on the text is
 *       held until the choice ends, then sent as calls if it parses as calls of listed
 *       functions ({@link ToolCallSyntax#parse}), else as content. A marker's first characters
 *       at the end of the text so far are held until the next piece says.
 * </ul>
 *
 * With {@code parallel_tool_calls} false an {@code auto} reply keeps its first call only (as
 * vLLM does); a forced one could not write a second.
 */
final class ToolCallParser {

  sealed interface Event {}

  record Content(String text) implements Event {}

  record Start(int index, String id, String name) implements Event {}

  record Arguments(int index, String fragment) implements Event {}

  /** Where a forced reply's reader stands in its layout. */
  private enum Forced { START, HEAD, ARGUMENTS, TAIL, BETWEEN, DONE }

  private final Tools tools;
  private final ToolCallSyntax syntax;
  private final ToolCallLayout layout;
  private final Pattern head;
  /** auto: the whole text so far; forced: what is not yet read. */
  private final StringBuilder text = new StringBuilder();
  /** forced: the whole text so far, content if no call ever starts (cut by length). */
  private final StringBuilder raw = new StringBuilder();
  private int emitted; // auto: characters of text sent as content
  private int callStart = -1; // auto: where the calls start, once they have
  private Forced at = Forced.START;
  private final ArgumentScanner scanner = new ArgumentScanner();
  private int calls; // calls started

  ToolCallParser(Tools tools) {
    this.tools = tools;
    this.syntax = tools.syntax();
    this.layout = syntax.layout();
    this.head = Pattern.compile(Pattern.quote(layout.callOpen())
        + "\\{\"name\": \"([a-zA-Z0-9_-]{1,64})\", \"" + Pattern.quote(layout.argumentsKey())
        + "\": ");
  }

  /** Whether the choice turned out to hold a tool call. */
  boolean isCall() {
    return calls > 0;
  }

  List<Event> feed(String piece) {
    text.append(piece);
    if (tools.forced() && calls == 0) {
      raw.append(piece);
    }
    List<Event> out = new ArrayList<>();
    if (tools.forced()) {
      readForced(out);
    } else if (callStart < 0) {
      // what was sent as content starts no call: look for one after it only
      callStart = syntax.callStart(text, emitted);
      int upTo = callStart >= 0 ? callStart : text.length() - syntax.markerPrefixAtEnd(text);
      if (callStart < 0 && emitted == 0 && text.toString().isBlank()) {
        upTo = 0; // leading whitespace: a JSON call may still follow
      }
      content(upTo, out);
    }
    return out;
  }

  /** The choice ended; {@code complete}: by its constraint or an end token, not by length. */
  List<Event> finish(boolean complete) {
    List<Event> out = new ArrayList<>();
    if (tools.forced()) {
      if (calls == 0 && !raw.isEmpty()) {
        out.add(new Content(raw.toString()));
      }
      return out;
    }
    ToolCallSyntax.Parsed parsed = callStart < 0 ? null
        : syntax.parse(text.substring(callStart), tools.functions().keySet());
    if (parsed == null) {
      content(text.length(), out);
      return out;
    }
    content(callStart, out);
    for (ToolCallSyntax.Call c : tools.parallel() ? parsed.calls() : parsed.calls().subList(0, 1)) {
      out.add(new Start(calls, syntax.newId(), c.name()));
      out.add(new Arguments(calls++, c.arguments()));
    }
    return out;
  }

  private void content(int upTo, List<Event> out) {
    if (upTo > emitted) {
      out.add(new Content(text.substring(emitted, upTo)));
      emitted = upTo;
    }
  }

  private void readForced(List<Event> out) {
    boolean progress = true;
    while (progress && !text.isEmpty()) {
      progress = switch (at) {
        case START -> literal(layout.start(), Forced.HEAD);
        case HEAD -> {
          Matcher m = head.matcher(text);
          if (!m.lookingAt()) {
            yield false;
          }
          out.add(new Start(calls++, syntax.newId(), m.group(1)));
          text.delete(0, m.end());
          scanner.reset();
          at = Forced.ARGUMENTS;
          yield true;
        }
        case ARGUMENTS -> {
          int n = scanner.scan(text);
          if (n > 0) {
            out.add(new Arguments(calls - 1, take(n)));
          }
          if (scanner.done()) {
            at = Forced.TAIL;
          }
          yield scanner.done();
        }
        case TAIL -> literal(layout.tail(), Forced.BETWEEN);
        case BETWEEN -> {
          if (!layout.end().isEmpty() && literal(layout.end(), Forced.DONE)) {
            yield true;
          }
          yield literal(layout.separator(), Forced.HEAD);
        }
        case DONE -> {
          text.setLength(0); // nothing can follow under the constraint
          yield false;
        }
      };
    }
  }

  /** Consumes {@code s} when the text starts with it, moving on to {@code next}. */
  private boolean literal(String s, Forced next) {
    if (text.length() < s.length() || !text.substring(0, s.length()).equals(s)) {
      return false;
    }
    text.delete(0, s.length());
    at = next;
    return true;
  }

  private String take(int n) {
    String s = text.substring(0, n);
    text.delete(0, n);
    return s;
  }

  /** Finds where one JSON value ends, piece by piece: strings, escapes and nesting followed. */
  static final class ArgumentScanner {
    private int depth;
    private boolean inString;
    private boolean escape;
    private boolean started;
    private boolean done;

    void reset() {
      depth = 0;
      inString = false;
      escape = false;
      started = false;
      done = false;
    }

    boolean done() {
      return done;
    }

    /** How many characters of {@code s} belong to the value (all of them until it ends). */
    int scan(CharSequence s) {
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (inString) {
          if (escape) {
            escape = false;
          } else if (c == '\\') {
            escape = true;
          } else if (c == '"') {
            inString = false;
            if (depth == 0) {
              done = true;
              return i + 1;
            }
          }
          continue;
        }
        if (c == '"') {
          inString = true;
        } else if (c == '{' || c == '[') {
          depth++;
        } else if (c == '}' || c == ']') {
          if (depth == 0 && started) {
            done = true; // a bare number, true, false or null ended at the wrapper's brace
            return i;
          }
          if (--depth == 0) {
            done = true;
            return i + 1;
          }
        }
        started |= !Character.isWhitespace(c);
      }
      return s.length();
    }
  }
}
