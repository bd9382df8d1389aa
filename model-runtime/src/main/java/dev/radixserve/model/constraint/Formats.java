package dev.radixserve.model.constraint;

import dk.brics.automaton.Automaton;
import java.util.Map;

/**
 * JSON Schema string formats as character automata (regular approximations: a date's day is
 * 01..31 whatever the month). Formats that are not regular, or not listed, are refused.
 */
final class Formats {

  private static final String DATE = "\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])";
  private static final String TIME =
      "([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,6})?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)";
  private static final String OCTET = "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
  // unbounded label lengths: bounded repeats multiply the automaton's states
  private static final String LABEL = "[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?";
  private static final Map<String, String> REGEX = Map.of(
      "date", DATE,
      "time", TIME,
      "date-time", DATE + "T" + TIME,
      "uuid", "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
      "ipv4", "(" + OCTET + "\\.){3}" + OCTET,
      "hostname", LABEL + "(\\." + LABEL + ")*",
      "email", "[a-zA-Z0-9_%+-]+(\\.[a-zA-Z0-9_%+-]+)*@" + LABEL + "(\\." + LABEL
          + ")*\\.[a-zA-Z]{2,10}");

  private Formats() {}

  static Automaton of(String format, String path) {
    String regex = REGEX.get(format);
    if (regex == null) {
      throw new ConstraintException("format", "unsupported string format `" + format + "` at "
          + path + " (supported: " + String.join(", ", REGEX.keySet().stream().sorted().toList())
          + ")");
    }
    return EcmaRegex.compile(regex, "format");
  }
}
