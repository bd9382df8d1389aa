package dev.radixserve.model.constraint;

/**
 * How a model family writes tool calls, as literal text around each call's JSON object
 * {@code {"name": "NAME", "KEY": ARGUMENTS}}:
 *
 * <pre>
 *   start  callOpen {call} callClose  [separator callOpen {call} callClose ...]  end
 * </pre>
 *
 * e.g. Qwen/Hermes: {@code <tool_call>\n{...}\n</tool_call>}, calls separated by {@code \n};
 * Llama 3.x: {@code {"name": ..., "parameters": {...}}}, separated by {@code ; }; Mistral:
 * {@code [TOOL_CALLS][{...}, {...}]}.
 *
 * @param argumentsKey {@code arguments}, or {@code parameters} (Llama 3.x)
 */
public record ToolCallLayout(String start, String callOpen, String argumentsKey,
    String callClose, String separator, String end) {

  /** The radixserve generic format: the bare object, several one per line. */
  public static final ToolCallLayout GENERIC = new ToolCallLayout("", "", "arguments", "", "\n", "");

  /** The text before the arguments of a call of {@code name} (a JSON-escaped function name). */
  public String head(String quotedName) {
    return callOpen + "{\"name\": " + quotedName + ", \"" + argumentsKey + "\": ";
  }

  /** The text after the arguments of a call. */
  public String tail() {
    return "}" + callClose;
  }
}
