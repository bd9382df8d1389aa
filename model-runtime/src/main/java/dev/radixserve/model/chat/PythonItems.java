package dev.radixserve.model.chat;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.Filter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Jinja2's {@code items} filter (3.1): a mapping's (key, value) pairs, as {@code x.items()}, and
 * nothing for an undefined value. jinjava has no such filter and renders an unknown one as
 * nothing, so {@code for name, fields in tool.parameters.properties|items} (Hermes' tool_use
 * template) looped over no parameters without a word.
 */
final class PythonItems implements Filter {

  @Override
  public String getName() {
    return "items";
  }

  @Override
  public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
    if (var == null) {
      return List.of();
    }
    if (!(var instanceof Map<?, ?> map)) {
      // Jinja2's TypeError
      throw new IllegalArgumentException("Can only get item pairs from a mapping.");
    }
    return new ArrayList<>(map.entrySet());
  }
}
