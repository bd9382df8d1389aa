package dev.radixserve.server.engine;

import java.util.List;

/**
 * Sizes the engine publishes after every step, for gauges read from other threads.
 *
 * @param evictableBlocks cached blocks no running request locks (free on demand)
 * @param clients running and waiting sequences of the {@value #TOP_CLIENTS} busiest clients, and
 *     of all others together as {@value #OTHER} (so a gauge's label set stays bounded)
 */
public record EngineGauges(int runningRequests, int waitingRequests, int totalBlocks,
    int freeBlocks, int cachedBlocks, int evictableBlocks, List<ClientLoad> clients) {

  public static final int TOP_CLIENTS = 10;
  public static final String OTHER = "other";

  /** One client's sequences (one per prompt and choice) running and waiting. */
  public record ClientLoad(String client, int running, int waiting) {}
}
