package dev.radixserve.model.chat;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.Filter;

/**
 * Jinja2's {@code trim} filter: {@code str(value).strip(chars)}, and an empty string for an
 * undefined value (Jinja2's undefined prints as nothing). jinjava's gives null there, which
 * {@code "text: " + x.description|trim} prints as "null" (Hermes' tool_use template, for a
 * parameter without a description).
 */
final class PythonTrim implements Filter {

  @Override
  public String getName() {
    return "trim";
  }

  @Override
  public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
    if (var == null) {
      return "";
    }
    String chars = args.length > 0 ? args[0] : null;
    return PythonStrings.rstrip(PythonStrings.lstrip(var.toString(), chars), chars);
  }
}
