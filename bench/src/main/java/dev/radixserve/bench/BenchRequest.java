package dev.radixserve.bench;

import java.util.Arrays;

/**
 * One planned completion request.
 *
 * @param index position in the workload's planned order (0-based)
 * @param session requests of one session (a conversation, an agent) are sent one after another
 * @param turn position within its session; turn n+1 is sent only after turn n completed
 * @param prompt token ids, each in [0, {@link TokenSource#VOCAB_SIZE})
 */
public record BenchRequest(int index, int session, int turn, int[] prompt) {

  public BenchRequest {
    if (prompt.length == 0) {
      throw new IllegalArgumentException("request " + index + " has an empty prompt");
    }
    prompt = prompt.clone();
  }

  @Override
  public int[] prompt() {
    return prompt.clone();
  }

  public int promptLength() {
    return prompt.length;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BenchRequest r && r.index == index && r.session == session
        && r.turn == turn && Arrays.equals(r.prompt, prompt);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(prompt) + index;
  }

  @Override
  public String toString() {
    return "BenchRequest[index=" + index + ", session=" + session + ", turn=" + turn
        + ", promptLength=" + prompt.length + "]";
  }
}
