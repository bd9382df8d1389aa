package dev.radixserve.server.config;

/**
 * KV cache events in vLLM's wire format (see the {@code kvevents} package).
 *
 * @param enabled publish at all (off by default, as in vLLM)
 * @param endpoint ZeroMQ PUB address; bound when it has a wildcard ({@code tcp://*:5557}) or is
 *     {@code ipc://}/{@code inproc://}, connected otherwise (vLLM's rule: a central subscriber)
 * @param replayEndpoint ROUTER address serving replays of past batches; null for none
 * @param topic the first frame of every message; null sends an empty topic. llm-d's subscribers
 *     expect {@code kv@<pod-ip>:<port>@<model>}
 * @param queueSize events the engine may leave for the publisher thread; beyond it events are
 *     dropped and counted, never waited for
 * @param encoding array (vLLM's classic shape) or map (vLLM's current one)
 */
public record KvEventsConfig(boolean enabled, String endpoint, String replayEndpoint,
    String topic, int queueSize, KvEventEncoding encoding) {

  public static final String DEFAULT_ENDPOINT = "tcp://*:5557";
  public static final int DEFAULT_QUEUE_SIZE = 100_000;

  public KvEventsConfig {
    require(endpoint, "kv-events-endpoint");
    if (replayEndpoint != null) {
      require(replayEndpoint, "kv-events-replay-endpoint");
    }
    if (queueSize < 1) {
      throw new IllegalArgumentException("invalid value for kv-events-queue-size: " + queueSize
          + " (allowed: >= 1)");
    }
    if (encoding == null) {
      encoding = KvEventEncoding.ARRAY;
    }
  }

  private static void require(String address, String key) {
    if (address == null || !address.matches("(tcp|ipc|inproc)://\\S+")) {
      throw new IllegalArgumentException("invalid value for " + key + ": " + address
          + " (allowed: a ZeroMQ address tcp://HOST:PORT, ipc://PATH or inproc://NAME)");
    }
  }

  public static KvEventsConfig disabled() {
    return new KvEventsConfig(false, DEFAULT_ENDPOINT, null, null, DEFAULT_QUEUE_SIZE,
        KvEventEncoding.ARRAY);
  }
}
