package dev.radixserve.server.engine;

/** Why a sequence ended; {@link #wireName()} is OpenAI's {@code finish_reason} and the metric tag. */
public enum FinishReason {
  /** An EOS token, a stop token id or a stop string. */
  STOP("stop"),
  /**
   * The output is complete under its constraint (structured outputs) and nothing may follow; on
   * the wire a {@code stop}, but unlike {@link #STOP} the last token is text, not an end token.
   */
  COMPLETE("stop"),
  /** max_tokens or the model's length reached. */
  LENGTH("length"),
  /** The client went away or the server shut down. */
  ABORT("abort"),
  /** The engine failed while running it. */
  ERROR("error");

  private final String wireName;

  FinishReason(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }
}
