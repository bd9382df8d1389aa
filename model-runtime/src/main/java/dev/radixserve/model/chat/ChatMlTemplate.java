package dev.radixserve.model.chat;

import java.util.List;

/**
 * The default chat template for a model without one (GPT-2), ChatML-like:
 *
 * <pre>
 * &lt;|im_start|&gt;{role}\n{content}&lt;|im_end|&gt;\n     (for every message, in order)
 * &lt;|im_start|&gt;assistant\n                        (the generation prompt)
 * </pre>
 *
 * The markers are plain text to the GPT-2 tokenizer, so {@value #END} is a stop string of every
 * chat request.
 */
public final class ChatMlTemplate implements ChatTemplate {

  public static final String END = "<|im_end|>";

  @Override
  public String render(List<Message> messages) {
    StringBuilder sb = new StringBuilder();
    for (Message m : messages) {
      sb.append("<|im_start|>").append(m.role()).append('\n').append(m.content()).append(END)
          .append('\n');
    }
    return sb.append("<|im_start|>assistant\n").toString();
  }

  @Override
  public List<String> stops() {
    return List.of(END);
  }
}
