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
 * Roles: system, developer, user, assistant. The markers are plain text to the GPT-2 tokenizer.
 * {@value #END} is added to the stop strings of every chat request.
 */
public final class ChatTemplate {

  public static final String END = "<|im_end|>";

  public record Message(String role, String content) {}

  private ChatTemplate() {}

  public static String render(List<Message> messages) {
    StringBuilder sb = new StringBuilder();
    for (Message m : messages) {
      sb.append("<|im_start|>").append(m.role()).append('\n').append(m.content()).append(END)
          .append('\n');
    }
    return sb.append("<|im_start|>assistant\n").toString();
  }
}
