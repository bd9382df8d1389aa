package dev.radixserve.server.api;

import java.util.List;

/**
 * The default chat template (GPT-2 has none), ChatML-like:
 *
 * <pre>
 * &lt;|im_start|&gt;{role}\n{content}&lt;|im_end|&gt;\n     (for every message, in order)
 * &lt;|im_start|&gt;assistant\n                        (the generation prompt)
 * </pre>
 *
 * Roles: system, developer, user, assistant, tool. The markers are plain text to the GPT-2
 * tokenizer. Tools ({@link Tools}) are described in the system message, first in the
 * conversation (one is added when there is none); an assistant's earlier tool calls are its
 * content in the generic call format.
 * {@value #END} is added to the stop strings of every chat request.
 */
public final class ChatTemplate {

  public static final String END = "<|im_end|>";

  public record Message(String role, String content) {}

  private ChatTemplate() {}

  /** {@code messages} with {@code text} appended to the leading system message (or one added). */
  static List<Message> withSystemText(List<Message> messages, String text) {
    List<Message> out = new java.util.ArrayList<>(messages);
    if (!out.isEmpty() && out.getFirst().role().equals("system")) {
      out.set(0, new Message("system", out.getFirst().content() + "\n\n" + text));
    } else {
      out.addFirst(new Message("system", text));
    }
    return out;
  }

  public static String render(List<Message> messages) {
    StringBuilder sb = new StringBuilder();
    for (Message m : messages) {
      sb.append("<|im_start|>").append(m.role()).append('\n').append(m.content()).append(END)
          .append('\n');
    }
    return sb.append("<|im_start|>assistant\n").toString();
  }
}
