package dev.radixserve.server.metrics;

import dev.radixserve.server.engine.Engine;
import dev.radixserve.server.engine.EngineGauges;
import dev.radixserve.server.engine.EngineObserver;
import dev.radixserve.server.engine.FinishReason;
import dev.radixserve.server.kvevents.KvEventPublisher;
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
  private final Timer ttft;
  private final Timer itl;
  private final Timer e2e;
  private final Timer queue;

  public ServerMetrics() {
    queried = Counter.builder("radixserve.prefix.cache.queried.tokens").register(registry);
    hit = Counter.builder("radixserve.prefix.cache.hit.tokens").register(registry);
    computed = Counter.builder("radixserve.prompt.tokens.computed").register(registry);
    cached = Counter.builder("radixserve.prompt.tokens.cached").register(registry);
    generated = Counter.builder("radixserve.generation.tokens").register(registry);
    preemptions = Counter.builder("radixserve.preemptions").register(registry);
    evicted = Counter.builder("radixserve.evicted.blocks").register(registry);
    fairSharePreemptions = Counter.builder("radixserve.fair.share.preemptions")
        .description("running sequences preempted for a client below its fair share")
        .register(registry);
    fairShareDeferred = Counter.builder("radixserve.fair.share.deferred.admissions")
        .description("admissions that went ahead of an earlier waiting sequence of another client")
        .register(registry);
    clientRunning = clientGauge("running");
    clientWaiting = clientGauge("waiting");
    ttft = latency("radixserve.time.to.first.token");
    itl = latency("radixserve.inter.token.latency");
    e2e = latency("radixserve.e2e.request.latency");
    queue = latency("radixserve.request.queue.time");
    Gauge.builder("radixserve.prefix.cache.hit.rate", this,
        m -> m.queried.count() == 0 ? 0 : m.hit.count() / m.queried.count()).register(registry);
    for (FinishReason r : FinishReason.values()) {
      Counter.builder("radixserve.requests.finished").tag("finish_reason", r.wireName())
          .register(registry);
    }
    new JvmMemoryMetrics().bindTo(registry);
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
  }

  private MultiGauge clientGauge(String state) {
    return MultiGauge.builder("radixserve.client.sequences." + state)
        .description(state + " sequences of the busiest clients, the rest as client=\"other\"")
        .register(registry);
  }

  private Timer latency(String name) {
    return Timer.builder(name)
        .serviceLevelObjectives(ms(5), ms(10), ms(25), ms(50), ms(100), ms(250), ms(500),
            ms(1000), ms(2500), ms(5000), ms(10000), ms(30000), ms(60000))
        .register(registry);
  }

  private static Duration ms(long ms) {
    return Duration.ofMillis(ms);
  }

  /** Binds the engine-state gauges. */
  public void bindEngine(Engine engine) {
    engineGauges = engine::gauges;
    gauge("radixserve.requests.running", engine::gauges, EngineGauges::runningRequests);
    gauge("radixserve.requests.waiting", engine::gauges, EngineGauges::waitingRequests);
    gauge("radixserve.kv.cache.blocks.total", engine::gauges, EngineGauges::totalBlocks);
    gauge("radixserve.kv.cache.blocks.free", engine::gauges, EngineGauges::freeBlocks);
    gauge("radixserve.kv.cache.blocks.cached", engine::gauges, EngineGauges::cachedBlocks);
    gauge("radixserve.kv.cache.usage.ratio", engine::gauges,
        g -> (g.totalBlocks() - g.freeBlocks()) / (double) g.totalBlocks());
  }

  /** Binds the KV event counters (only when events are published). */
  public void bindKvEvents(KvEventPublisher publisher) {
    // the registry holds the publisher weakly; the server holds it for its whole life
    FunctionCounter.builder("radixserve.kv.events.published", publisher,
        KvEventPublisher::publishedEvents).register(registry);
    FunctionCounter.builder("radixserve.kv.events.dropped", publisher,
        KvEventPublisher::droppedEvents).register(registry);
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
    Gauge.builder("radixserve.connections.open", open::getAsInt).register(registry);
    Gauge.builder("radixserve.connections.max", () -> max).register(registry);
    // the registry holds a function counter's object weakly: this (held by the server), not the
    // supplier, which nothing else holds
    FunctionCounter.builder("radixserve.connections.refused", this, m -> refused.getAsLong())
        .description("connections closed at accept: every open connection was busy")
        .register(registry);
    FunctionCounter.builder("radixserve.connections.evicted.idle", this, m -> evicted.getAsLong())
        .description("idle connections closed to make room for a new one").register(registry);
  }

  private void gauge(String name, Supplier<EngineGauges> source, ToDoubleFunction<EngineGauges> f) {
    Gauge.builder(name, () -> f.applyAsDouble(source.get())).register(registry);
  }

  public void httpResponse(int status) {
    registry.counter("radixserve.http.responses", "status", Integer.toString(status)).increment();
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
    registry.counter("radixserve.requests.finished", "finish_reason", reason.wireName()).increment();
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
  public void close() {
    gc.close();
    registry.close();
  }
}
