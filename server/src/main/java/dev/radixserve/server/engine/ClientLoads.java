package dev.radixserve.server.engine;

import dev.radixserve.server.engine.EngineGauges.ClientLoad;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Per-client sequence counts for the gauges: the busiest clients by name, the rest summed. */
final class ClientLoads {

  private ClientLoads() {}

  static List<ClientLoad> top(Collection<Sequence> running, Collection<Sequence> waiting,
      int limit) {
    if (running.isEmpty() && waiting.isEmpty()) {
      return List.of();
    }
    Map<String, int[]> counts = new HashMap<>();
    running.forEach(s -> counts.computeIfAbsent(s.request.client(), c -> new int[2])[0]++);
    waiting.forEach(s -> counts.computeIfAbsent(s.request.client(), c -> new int[2])[1]++);
    List<ClientLoad> all = new ArrayList<>(counts.size());
    counts.forEach((c, n) -> all.add(new ClientLoad(c, n[0], n[1])));
    all.sort(Comparator.comparingInt((ClientLoad l) -> l.running() + l.waiting()).reversed()
        .thenComparing(ClientLoad::client));
    if (all.size() <= limit) {
      return all;
    }
    List<ClientLoad> out = new ArrayList<>(all.subList(0, limit));
    int running0 = 0;
    int waiting0 = 0;
    for (ClientLoad l : all.subList(limit, all.size())) {
      running0 += l.running();
      waiting0 += l.waiting();
    }
    out.add(new ClientLoad(EngineGauges.OTHER, running0, waiting0));
    return out;
  }
}
