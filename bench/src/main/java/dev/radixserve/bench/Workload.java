package dev.radixserve.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * A named, reproducible set of requests in planned send order. For workloads with sessions
 * (conversations, agents) the planned order interleaves sessions turn by turn: turn 0 of every
 * session, then turn 1, and so on, which is the order in which they are sent when every session
 * is in flight at once.
 *
 * @param name the {@code --workload} name
 * @param description structure and sizes, printed with the results
 * @param requests every request, in planned order ({@code requests.get(i).index() == i})
 */
public record Workload(String name, String description, List<BenchRequest> requests) {

  public Workload {
    requests = List.copyOf(requests);
    for (int i = 0; i < requests.size(); i++) {
      if (requests.get(i).index() != i) {
        throw new IllegalStateException(
            "workload " + name + ": request at " + i + " has index " + requests.get(i).index());
      }
    }
  }

  /**
   * Builds a workload from sessions of prompts (each session's prompts in turn order), planned
   * turn by turn across sessions: turn 0 of sessions 0..n-1, then turn 1, and so on.
   */
  static Workload interleaved(String name, String description, List<List<int[]>> sessions) {
    List<BenchRequest> planned = new ArrayList<>();
    int longest = sessions.stream().mapToInt(List::size).max().orElse(0);
    for (int turn = 0; turn < longest; turn++) {
      for (int s = 0; s < sessions.size(); s++) {
        if (turn < sessions.get(s).size()) {
          planned.add(new BenchRequest(planned.size(), s, turn, sessions.get(s).get(turn)));
        }
      }
    }
    return new Workload(name, description, planned);
  }

  /** Builds a workload of independent requests (one session each) in the given order. */
  static Workload independent(String name, String description, List<int[]> prompts) {
    List<BenchRequest> planned = new ArrayList<>();
    for (int[] prompt : prompts) {
      planned.add(new BenchRequest(planned.size(), planned.size(), 0, prompt));
    }
    return new Workload(name, description, planned);
  }

  public int size() {
    return requests.size();
  }

  public long totalPromptTokens() {
    return requests.stream().mapToLong(BenchRequest::promptLength).sum();
  }

  /** Longest prompt: with max_tokens, what the server's context must hold. */
  public int maxPromptLength() {
    return requests.stream().mapToInt(BenchRequest::promptLength).max().orElse(0);
  }
}
