package dev.radixserve.model.constraint;

import dk.brics.automaton.Automaton;
import dk.brics.automaton.BasicOperations;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The byte automata of JSON's pieces, in the one layout constrained output uses: no whitespace
 * except at most one space after {@code :} and {@code ,} (what models write, and a bound that
 * keeps a model from padding forever). Numbers are bounded as a double holds them: at most 16
 * integer and 16 fraction digits and a 3-digit exponent.
 */
final class JsonBytes {

  private JsonBytes() {}

  /** The UTF-8 bytes of {@code s}, literally. */
  static Automaton literal(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    StringBuilder sb = new StringBuilder(b.length);
    for (byte x : b) {
      sb.append((char) (x & 0xFF));
    }
    return Automaton.makeString(sb.toString());
  }

  static final Automaton COMMA = literal(",").concatenate(literal(" ").optional());
  static final Automaton COLON = literal(":").concatenate(literal(" ").optional());
  static final Automaton QUOTE = literal("\"");

  /** Characters a string holds unescaped: U+0020 and up, less {@code "} and backslash (BMP). */
  static final Automaton SAFE_CHAR = Automaton.makeCharRange('\u0020', '\uFFFF')
      .minus(Automaton.makeChar('"')).minus(Automaton.makeChar('\\'));

  /** One character of a JSON string's source: an unescaped character or one escape. */
  static final Automaton STRING_CHAR = stringChar();

  static final Automaton INTEGER = digits(false);
  static final Automaton NUMBER = digits(true);
  static final Automaton BOOLEAN = literal("true").union(literal("false"));
  static final Automaton NULL = literal("null");

  private static Automaton stringChar() {
    Automaton hex = Automaton.makeCharRange('0', '9').union(Automaton.makeCharRange('a', 'f'))
        .union(Automaton.makeCharRange('A', 'F'));
    // \\u escapes of surrogates are left out: they would decode to unpaired halves
    Automaton nonSurrogate = Automaton.makeCharRange('0', '9')
        .union(Automaton.makeCharRange('a', 'c')).union(Automaton.makeCharRange('A', 'C'))
        .concatenate(hex.repeat(3, 3))
        .union(Automaton.makeCharRange('d', 'd').union(Automaton.makeCharRange('D', 'D'))
            .concatenate(Automaton.makeCharRange('0', '7')).concatenate(hex.repeat(2, 2)))
        .union(Automaton.makeCharRange('e', 'f').union(Automaton.makeCharRange('E', 'F'))
            .concatenate(hex.repeat(3, 3)));
    Automaton escape = Automaton.makeChar('\\').concatenate(
        Automaton.makeCharSet("\"\\/bfnrt").union(Automaton.makeChar('u').concatenate(nonSurrogate)));
    Automaton chars = Utf8Automata.toBytes(SAFE_CHAR.union(escape));
    Automaton a = chars.union(Utf8Automata.supplementary());
    Dfa.minimize(a);
    return a;
  }

  private static Automaton digits(boolean fraction) {
    Automaton digit = Automaton.makeCharRange('0', '9');
    Automaton integer = literal("-").optional().concatenate(literal("0")
        .union(Automaton.makeCharRange('1', '9').concatenate(digit.repeat(0, 15))));
    if (!fraction) {
      Dfa.minimize(integer);
      return integer;
    }
    Automaton frac = literal(".").concatenate(digit.repeat(1, 16)).optional();
    Automaton exp = Automaton.makeCharSet("eE").concatenate(Automaton.makeCharSet("+-").optional())
        .concatenate(digit.repeat(1, 3)).optional();
    Automaton a = integer.concatenate(frac).concatenate(exp);
    Dfa.minimize(a);
    return a;
  }

  /** A string of {@code min..max} characters ({@code max} -1: unbounded). */
  static Automaton string(int min, int max) {
    Automaton body = max < 0 ? STRING_CHAR.repeat(min) : STRING_CHAR.repeat(min, max);
    return QUOTE.concatenate(body).concatenate(QUOTE);
  }

  /** A string whose characters, unescaped, are a word of the character automaton {@code chars}. */
  static Automaton string(Automaton chars) {
    Automaton safe = chars.intersection(SAFE_CHAR.repeat());
    return QUOTE.concatenate(Utf8Automata.toBytes(safe)).concatenate(QUOTE);
  }

  /** {@code open (item (, item)*)? close}, with {@code min..max} items ({@code max} -1: any). */
  static Automaton list(String open, Automaton item, int min, int max, String close) {
    Automaton rest = COMMA.concatenate(item);
    Automaton items;
    if (max == 0) {
      items = Automaton.makeEmptyString();
    } else {
      Automaton tail = max < 0 ? rest.repeat(Math.max(0, min - 1))
          : rest.repeat(Math.max(0, min - 1), max - 1);
      items = item.concatenate(tail);
      if (min == 0) {
        items = items.optional();
      }
    }
    return BasicOperations.concatenate(List.of(literal(open), items, literal(close)));
  }

  /** anyValue(d), built once (levels 3 and 4 take a second or two). */
  private static final Automaton[] ANY = new Automaton[8];

  /**
   * Any JSON value with at most {@code depth} levels of arrays and objects. Not thread-safe:
   * callers hold the compiler's lock ({@link ConstraintCompiler}).
   */
  static Automaton anyValue(int depth) {
    if (ANY[depth] == null) {
      Automaton v;
      if (depth == 0) {
        v = string(0, -1).union(NUMBER).union(BOOLEAN).union(NULL);
      } else {
        // one minimization per level: minimizing the pieces too costs several times more
        Automaton inner = anyValue(depth - 1);
        v = anyValue(0).union(list("[", inner, 0, -1, "]")).union(anyObject(inner));
      }
      Dfa.minimize(v);
      ANY[depth] = v;
    }
    return ANY[depth];
  }

  /** An object of any keys whose values are words of {@code value}. */
  static Automaton anyObject(Automaton value) {
    return list("{", string(0, -1).concatenate(COLON).concatenate(value), 0, -1, "}");
  }
}
