package dev.radixserve.server.metrics;

import dev.radixserve.server.engine.Engine;
import dev.radixserve.server.engine.EngineGauges;
import dev.radixserve.server.engine.EngineObserver;
import dev.radixserve.server.engine.FinishReason;
import dev.radixserve.server.kvevents.KvEventPublisher;
import dev.radixserve.server.kvtier.KvTiers;
import dev.radixserve.server.kvtier.TierStats;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/** The server's meters (names in server/METRICS.md) on a Prometheus registry. */
public final class ServerMetrics implements EngineObserver, AutoCloseable {

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final JvmGcMetrics gc = new JvmGcMetrics();
  private final Counter queried;
  private final Counter hit;
  private final Counter computed;
  private final Counter cached;
  private final Counter generated;
  private final Counter preemptions;
  private final Counter evicted;
  private final Counter fairSharePreemptions;
  private final Counter fairShareDeferred;
  private final MultiGauge clientRunning;
  private final MultiGauge clientWaiting;
  private volatile Supplier<EngineGauges> engineGauges;
  private final SpeculationMeters speculation = new SpeculationMeters(registry);
  private final Timer ttft;
  private final Timer itl;
  private final Timer e2e;
  private final Timer queue;

  public ServerMetrics() {
    queried = counter("radixserve.prefix.cache.queried.tokens",
        "Prompt tokens looked up in the prefix cache at admission (prompt length - 1)");
    hit = counter("radixserve.prefix.cache.hit.tokens",
        "Of the looked-up prompt tokens, those found in the prefix cache (to the token)");
    computed = counter("radixserve.prompt.tokens.computed",
        "Prompt tokens the model computed (prefill, recomputation after preemption included)");
    cached = counter("radixserve.prompt.tokens.cached",
        "Prompt tokens reused from the prefix cache at first admission");
    generated = counter("radixserve.generation.tokens", "Tokens sampled (generated)");
    preemptions = counter("radixserve.preemptions",
        "Sequences preempted: their blocks freed, their tokens recomputed later");
    evicted = counter("radixserve.evicted.blocks", "Prefix cache blocks evicted to make room");
    fairSharePreemptions = counter("radixserve.fair.share.preemptions",
        "Running sequences preempted for a client, request or priority below its fair share");
    fairShareDeferred = counter("radixserve.fair.share.deferred.admissions",
        "Admissions that went ahead of an earlier waiting sequence of another client (fair share)");
    clientRunning = clientGauge("running");
    clientWaiting = clientGauge("waiting");
    ttft = latency("radixserve.time.to.first.token",
        "Request arrival to the first token of the request");
    itl = latency("radixserve.inter.token.latency",
        "Time between two consecutive tokens of one choice");
    e2e = latency("radixserve.e2e.request.latency",
        "Request arrival to its last choice finished, aborted or failed");
    queue = latency("radixserve.request.queue.time", "Request arrival to its first admission");
    Gauge.builder("radixserve.prefix.cache.hit.rate", this,
            m -> m.queried.count() == 0 ? 0 : m.hit.count() / m.queried.count())
        .description("Prompt tokens found in the prefix cache / looked up, since start")
        .register(registry);
    for (FinishReason r : FinishReason.values()) {
      finishedCounter(r);
    }
    new JvmMemoryMetrics().bindTo(registry);
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
  }

  private MultiGauge clientGauge(String state) {
    return MultiGauge.builder("radixserve.client.sequences." + state)
        .description("Sequences " + state + ", of each of the busiest clients; the rest summed as"
            + " client=\"other\"")
        .register(registry);
  }

  private Counter counter(String name, String help) {
    return Counter.builder(name).description(help).register(registry);
  }

  private Counter finishedCounter(FinishReason r) {
    return Counter.builder("radixserve.requests.finished").tag("finish_reason", r.wireName())
        .description("Requests ended, by finish reason: stop, length, abort (client gone,"
            + " shutdown) or error")
        .register(registry);
  }

  private Timer latency(String name, String help) {
    return Timer.builder(name).description(help)
        .serviceLevelObjectives(ms(5), ms(10), ms(25), ms(50), ms(100), ms(250), ms(500),
            ms(1000), ms(2500), ms(5000), ms(10000), ms(30000), ms(60000))
        .register(registry);
  }

  private static Duration ms(long ms) {
    return Duration.ofMillis(ms);
  }

  /**
   * Binds the engine-state gauges, radixserve's and vLLM's (see {@link VllmMeters}).
   *
   * @param modelName the served model name, vLLM's {@code model_name} label
   */
  public void bindEngine(Engine engine, int blockSize, String modelName) {
    engineGauges = engine::gauges;
    gauge("radixserve.requests.running", "Requests admitted (at least one choice running)",
        engine::gauges, EngineGauges::runningRequests);
    gauge("radixserve.requests.waiting", "Requests queued, not yet admitted", engine::gauges,
        EngineGauges::waitingRequests);
    gauge("radixserve.kv.cache.blocks.total", "Blocks in the KV pool", engine::gauges,
        EngineGauges::totalBlocks);
    gauge("radixserve.kv.cache.blocks.free", "KV blocks on the free list", engine::gauges,
        EngineGauges::freeBlocks);
    gauge("radixserve.kv.cache.blocks.cached",
        "KV blocks held by the radix prefix cache (locked or not)", engine::gauges,
        EngineGauges::cachedBlocks);
    gauge("radixserve.kv.cache.blocks.evictable",
        "KV blocks the prefix cache holds that no running request locks (free on demand)",
        engine::gauges, EngineGauges::evictableBlocks);
    gauge("radixserve.kv.cache.usage.ratio",
        "KV blocks neither free nor evictable / all KV blocks (vLLM's meaning)", engine::gauges,
        VllmMeters::kvUsage);
    gauge("radixserve.kv.cache.occupancy.ratio",
        "KV blocks not on the free list (in use or cached) / all KV blocks", engine::gauges,
        g -> (g.totalBlocks() - g.freeBlocks()) / (double) g.totalBlocks());
    VllmMeters.bind(registry, engine::gauges, queried, hit, blockSize, modelName);
  }

  /** Binds each cache tier's gauges and counters, tagged {@code tier} (only with tiers). */
  public void bindTiers(KvTiers tiers) {
    List<TierStats> initial = tiers.stats();
    for (int i = 0; i < initial.size(); i++) {
      int index = i;
      String tier = initial.get(i).tier();
      Supplier<TierStats> stats = () -> tiers.stats().get(index);
      Gauge.builder("radixserve.kv.tier.entries", () -> stats.get().entries()).tag("tier", tier)
          .description("Blocks held by this cache tier below the KV pool").register(registry);
      Gauge.builder("radixserve.kv.tier.bytes", () -> stats.get().bytes()).tag("tier", tier)
          .baseUnit("bytes").description("Bytes this cache tier's blocks take")
          .register(registry);
      tierCounter("radixserve.kv.tier.hit.blocks", tier, tiers, () -> stats.get().hits(),
          "Blocks an admission's lookup found in this tier");
      tierCounter("radixserve.kv.tier.loaded.blocks", tier, tiers, () -> stats.get().loads(),
          "Blocks loaded from this tier into the pool instead of computed");
      tierCounter("radixserve.kv.tier.load.seconds", tier, tiers,
          () -> stats.get().loadNanos() / 1e9, "Loader-thread time spent reading blocks in");
      tierCounter("radixserve.kv.tier.stored.blocks", tier, tiers, () -> stats.get().stores(),
          "Evicted (or, at shutdown, cached) blocks written to this tier");
      tierCounter("radixserve.kv.tier.evicted.blocks", tier, tiers,
          () -> stats.get().evictions(), "Entries this tier dropped for room, oldest use first");
      tierCounter("radixserve.kv.tier.corrupt.blocks", tier, tiers, () -> stats.get().corrupt(),
          "Entries skipped as torn, truncated, failing their checksum or another model's");
      tierCounter("radixserve.kv.tier.dropped.blocks", tier, tiers, () -> stats.get().dropped(),
          "Blocks not stored because the disk writer was too far behind");
    }
    FunctionCounter.builder("radixserve.kv.tier.offload.seconds", tiers,
            t -> t.offloadNanos() / 1e9)
        .description("Engine-thread time spent offloading evicted blocks into the tiers")
        .register(registry);
  }

  private void tierCounter(String name, String tier, KvTiers tiers, DoubleSupplier value,
      String help) {
    // the registry holds the object weakly; the server holds the tiers for its whole life
    FunctionCounter.builder(name, tiers, t -> value.getAsDouble()).tag("tier", tier)
        .description(help).register(registry);
  }

  /** Binds the KV event counters (only when events are published). */
  public void bindKvEvents(KvEventPublisher publisher) {
    // the registry holds the publisher weakly; the server holds it for its whole life
    FunctionCounter.builder("radixserve.kv.events.published", publisher,
            KvEventPublisher::publishedEvents)
        .description("KV cache events published to routers (--kv-events)").register(registry);
    FunctionCounter.builder("radixserve.kv.events.dropped", publisher,
            KvEventPublisher::droppedEvents)
        .description("Cache changes dropped because the KV event publisher's queue was full")
        .register(registry);
  }

  /**
   * Binds the connection meters.
   *
   * @param open connections open now
   * @param refused connections closed at accept (every open one busy)
   * @param evicted idle connections closed to make room for a new one
   */
  public void bindConnections(IntSupplier open, int max, LongSupplier refused,
      LongSupplier evicted) {
    Gauge.builder("radixserve.connections.open", open::getAsInt)
        .description("Open HTTP connections").register(registry);
    Gauge.builder("radixserve.connections.max", () -> max)
        .description("--max-connections in effect (after the file-descriptor cap)")
        .register(registry);
    // the registry holds a function counter's object weakly: this (held by the server), not the
    // supplier, which nothing else holds
    FunctionCounter.builder("radixserve.connections.refused", this, m -> refused.getAsLong())
        .description("Connections closed at accept: over the limit with every connection busy")
        .register(registry);
    FunctionCounter.builder("radixserve.connections.evicted.idle", this, m -> evicted.getAsLong())
        .description("Idle connections closed to make room for a new one").register(registry);
  }

  private void gauge(String name, String help, Supplier<EngineGauges> source,
      ToDoubleFunction<EngineGauges> f) {
    Gauge.builder(name, () -> f.applyAsDouble(source.get())).description(help)
        .register(registry);
  }

  public void httpResponse(int status) {
    Counter.builder("radixserve.http.responses").tag("status", Integer.toString(status))
        .description("HTTP responses sent, by status code").register(registry).increment();
  }

  public String scrape() {
    refreshClients();
    return registry.scrape();
  }

  /** Replaces the per-client rows with the engine's latest (the busiest few, the rest summed). */
  private void refreshClients() {
    Supplier<EngineGauges> source = engineGauges;
    if (source == null) {
      return;
    }
    List<EngineGauges.ClientLoad> clients = source.get().clients();
    clientRunning.register(clients.stream().map(c -> MultiGauge.Row.of(
        Tags.of("client", c.client()), c.running())).toList(), true);
    clientWaiting.register(clients.stream().map(c -> MultiGauge.Row.of(
        Tags.of("client", c.client()), c.waiting())).toList(), true);
  }

  @Override
  public void admitted(long queueNanos, int queriedTokens, int hitTokens) {
    queue.record(queueNanos, TimeUnit.NANOSECONDS);
    queried.increment(queriedTokens);
    hit.increment(hitTokens);
    cached.increment(hitTokens);
  }

  @Override
  public void promptTokensComputed(int tokens) {
    computed.increment(tokens);
  }

  @Override
  public void firstToken(long sinceArrivalNanos) {
    ttft.record(sinceArrivalNanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void interToken(long nanos) {
    itl.record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void tokensGenerated(int tokens) {
    generated.increment(tokens);
  }

  @Override
  public void finished(FinishReason reason, long sinceArrivalNanos) {
    e2e.record(sinceArrivalNanos, TimeUnit.NANOSECONDS);
    finishedCounter(reason).increment();
  }

  @Override
  public void preempted() {
    preemptions.increment();
  }

  @Override
  public void fairSharePreempted() {
    fairSharePreemptions.increment();
  }

  @Override
  public void fairShareDeferred() {
    fairShareDeferred.increment();
  }

  @Override
  public void evicted(int blocks) {
    evicted.increment(blocks);
  }

  @Override
  public void speculated(int drafted, int accepted) {
    speculation.speculated(drafted, accepted);
  }

  @Override
  public void close() {
    gc.close();
    registry.close();
  }
}
