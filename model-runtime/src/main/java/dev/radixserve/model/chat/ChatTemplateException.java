package dev.radixserve.model.chat;

/** The template refused the conversation: its {@code raise_exception} message, for a 400. */
public final class ChatTemplateException extends IllegalArgumentException {

  public ChatTemplateException(String message) {
    super(message);
  }
}
