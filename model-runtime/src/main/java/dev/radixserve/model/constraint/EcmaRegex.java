package dev.radixserve.model.constraint;

import dk.brics.automaton.Automaton;
import dk.brics.automaton.RegExp;

/**
 * An ECMA-262 regular expression (the dialect of JSON Schema's {@code pattern}, and what vLLM's
 * {@code guided_regex} users write) as a dk.brics character automaton, by rewriting it into
 * dk.brics' own syntax: classes {@code \d \w \s} and their negations, {@code .} without line
 * terminators, non-capturing and named groups, lazy quantifiers (the same language when the
 * whole string must match). The match is over the whole string: a leading {@code ^} and trailing
 * {@code $} are dropped; an unanchored JSON Schema pattern is thus held to a full match, which
 * is stricter than the schema and so still valid under it. Features no finite automaton has
 * (lookaround, backreferences, word boundaries) are refused with {@link ConstraintException}.
 */
final class EcmaRegex {

  private static final String DIGIT = "0-9";
  private static final String WORD = "a-zA-Z0-9_";
  private static final String SPACE = " \t\n\r\u000B\f\u00A0\uFEFF\u2028\u2029";

  private final String src;
  private final String keyword;
  private int i;
  private final StringBuilder out = new StringBuilder();

  private EcmaRegex(String src, String keyword) {
    this.src = src;
    this.keyword = keyword;
  }

  /** @param keyword named in errors ({@code pattern}, {@code guided_regex}) */
  static Automaton compile(String pattern, String keyword) {
    EcmaRegex r = new EcmaRegex(pattern, keyword);
    String brics = r.translate();
    try {
      // no minimization of the parts: dk.brics would determinize them without a budget
      Automaton a = new RegExp(brics, RegExp.NONE).toAutomaton(false);
      Dfa.minimize(a);
      return a;
    } catch (IllegalArgumentException e) {
      throw new ConstraintException(keyword, keyword + " is not a valid regular expression: "
          + e.getMessage());
    }
  }

  private String translate() {
    int end = src.length();
    if (src.startsWith("^")) {
      i = 1;
    }
    if (src.endsWith("$") && !src.endsWith("\\$") && end > i) {
      end--;
    }
    while (i < end) {
      char c = src.charAt(i++);
      if (Character.isSurrogate(c)) {
        throw refuse("characters outside the Basic Multilingual Plane");
      }
      switch (c) {
        case '\\' -> escape(false);
        case '[' -> charClass(end);
        case '(' -> group();
        case ')', '|', '*', '+', '?' -> {
          out.append(c);
          if (c != ')' && c != '|' && i < end && src.charAt(i) == '?') {
            i++; // lazy: the same language under a full match
          }
        }
        case '{' -> quantifierOrLiteral();
        case '.' -> out.append("[^\\\n\\\r\\\u2028\\\u2029]");
        case '^', '$' -> throw refuse("anchors inside the pattern (`" + c + "`)");
        default -> literal(c);
      }
    }
    return out.toString();
  }

  private void group() {
    if (src.startsWith("?:", i)) {
      i += 2;
    } else if (src.startsWith("?=", i) || src.startsWith("?!", i) || src.startsWith("?<=", i)
        || src.startsWith("?<!", i)) {
      throw refuse("lookaround");
    } else if (src.startsWith("?<", i)) {
      int close = src.indexOf('>', i);
      if (close < 0) {
        throw refuse("an unterminated group name");
      }
      i = close + 1;
    } else if (i < src.length() && src.charAt(i) == '?') {
      throw refuse("group modifiers");
    }
    out.append('(');
  }

  private void quantifierOrLiteral() {
    int close = src.indexOf('}', i);
    String body = close < 0 ? "" : src.substring(i, close);
    if (body.matches("\\d+(,\\d*)?")) {
      out.append('{').append(body).append('}');
      i = close + 1;
      if (i < src.length() && src.charAt(i) == '?') {
        i++;
      }
    } else {
      literal('{');
    }
  }

  /** After a backslash outside a class. */
  private void escape(boolean inClass) {
    if (i >= src.length()) {
      throw refuse("a trailing backslash");
    }
    char c = src.charAt(i++);
    switch (c) {
      case 'd' -> out.append(inClass ? DIGIT : "[" + DIGIT + "]");
      case 'w' -> out.append(inClass ? WORD : "[" + WORD + "]");
      case 's' -> out.append(inClass ? classChars(SPACE) : "[" + classChars(SPACE) + "]");
      case 'D', 'W', 'S' -> {
        if (inClass) {
          throw refuse("`\\" + c + "` inside a character class");
        }
        String set = c == 'D' ? DIGIT : c == 'W' ? WORD : classChars(SPACE);
        out.append("[^").append(set).append(']');
      }
      case 'b', 'B' -> {
        if (inClass && c == 'b') {
          literal('\b');
        } else {
          throw refuse("word boundaries (`\\" + c + "`)");
        }
      }
      case 'n' -> literal('\n');
      case 'r' -> literal('\r');
      case 't' -> literal('\t');
      case 'f' -> literal('\f');
      case 'v' -> literal('\u000B');
      case '0' -> literal('\0');
      case 'x' -> literal(hex(2));
      case 'u' -> literal(hex(4));
      case 'c', 'p', 'P', 'k' -> throw refuse("the escape `\\" + c + "`");
      default -> {
        if (c >= '1' && c <= '9') {
          throw refuse("backreferences");
        }
        literal(c);
      }
    }
  }

  private char hex(int digits) {
    if (i + digits > src.length()) {
      throw refuse("a short hex escape");
    }
    try {
      char c = (char) Integer.parseInt(src.substring(i, i + digits), 16);
      i += digits;
      return c;
    } catch (NumberFormatException e) {
      throw refuse("a malformed hex escape");
    }
  }

  private void charClass(int end) {
    out.append('[');
    if (i < end && src.charAt(i) == '^') {
      out.append('^');
      i++;
    }
    boolean empty = true;
    while (i < end && src.charAt(i) != ']') {
      empty = false;
      char c = src.charAt(i++);
      if (c == '\\') {
        escape(true);
      } else if (c == '-' && out.charAt(out.length() - 1) != '[' && out.charAt(out.length() - 1) != '^'
          && i < end && src.charAt(i) != ']') {
        out.append('-');
      } else if (Character.isSurrogate(c)) {
        throw refuse("characters outside the Basic Multilingual Plane");
      } else {
        literal(c);
      }
    }
    if (i >= end) {
      throw refuse("an unterminated character class");
    }
    if (empty) {
      throw refuse("an empty character class");
    }
    i++;
    out.append(']');
  }

  private void literal(char c) {
    out.append('\\').append(c);
  }

  private static String classChars(String chars) {
    StringBuilder sb = new StringBuilder();
    for (char c : chars.toCharArray()) {
      sb.append('\\').append(c);
    }
    return sb.toString();
  }

  private ConstraintException refuse(String what) {
    return new ConstraintException(keyword, keyword + " uses " + what
        + ", which a finite automaton cannot hold: " + src);
  }
}
