package dev.radixserve.model.chat;

import java.util.List;

/**
 * Turns a conversation into the prompt text the model was trained on. The model's own template
 * ({@link JinjaChatTemplate}, from its tokenizer_config.json) or, for a model without one (GPT-2),
 * {@link ChatMlTemplate}.
 */
public interface ChatTemplate {

  /** One message: a role ({@code system}, {@code user}, {@code assistant}, ...) and its text. */
  record Message(String role, String content) {}

  /**
   * The prompt for {@code messages}, ending with the generation prompt (the assistant's turn).
   *
   * @throws ChatTemplateException when the template refuses the conversation (its {@code
   *     raise_exception}, e.g. roles that do not alternate), a client error
   */
  String render(List<Message> messages);

  /** Stop strings every chat request gets (the template's end-of-turn marker when it is text). */
  List<String> stops();
}
