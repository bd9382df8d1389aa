package dev.radixserve.server.metrics;

import dev.radixserve.server.engine.EngineGauges;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * The series gateways read, under vLLM's names and with vLLM's meanings, beside radixserve's own.
 * Their consumers hard-code these names: llm-d's endpoint picker (its {@code vllm} metric
 * mapping, the default for any pod, reads the queue, running, KV usage and cache-config series)
 * and vLLM production-stack's router ({@code EngineStats.from_vllm_scrape}, which also reads the
 * {@code gpu_}-prefixed names vLLM has since renamed). Emitting them always costs a handful of
 * series; a switch to turn them off would be one more flag nobody needs (docs/gateway-compat.md).
 *
 * <p>Not emitted: {@code vllm:lora_requests_info} (radixserve serves no adapters; the picker
 * reads its absence as "no LoRA") and vLLM's histograms (radixserve's own carry the same timings).
 */
final class VllmMeters {

  private VllmMeters() {}

  /**
   * KV usage as vLLM means it: the share of blocks that are neither free nor evictable. A block
   * the prefix cache holds but no running request locks is as good as free (it is handed out on
   * demand), so a warm idle replica reads 0, not 1.
   */
  static double kvUsage(EngineGauges g) {
    return (g.totalBlocks() - g.freeBlocks() - g.evictableBlocks()) / (double) g.totalBlocks();
  }

  /**
   * Registers the series.
   *
   * @param queried prompt tokens looked up in the prefix cache (vLLM counts tokens too)
   * @param hit of those, found
   */
  static void bind(MeterRegistry registry, Supplier<EngineGauges> gauges, Counter queried,
      Counter hit, int blockSize, String modelName) {
    Tags model = Tags.of("model_name", modelName);
    gauge(registry, "vllm:num_requests_running", "Requests admitted (at least one choice running)",
        model, gauges, EngineGauges::runningRequests);
    gauge(registry, "vllm:num_requests_waiting", "Requests queued, not yet admitted", model,
        gauges, EngineGauges::waitingRequests);
    for (String name : new String[] {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}) {
      gauge(registry, name, "KV-cache usage: blocks neither free nor evictable / all blocks"
          + " (1 = 100%)", model, gauges, VllmMeters::kvUsage);
    }
    // an info gauge: the picker reads block size and pool size from its labels
    Gauge.builder("vllm:cache_config_info", () -> 1)
        .tags(model.and("block_size", Integer.toString(blockSize),
            "num_gpu_blocks", Integer.toString(gauges.get().totalBlocks()),
            "enable_prefix_caching", "True"))
        .description("Information of the KV cache configuration").register(registry);
    for (String prefix : new String[] {"vllm:prefix_cache", "vllm:gpu_prefix_cache"}) {
      FunctionCounter.builder(prefix + "_queries", queried, Counter::count).tags(model)
          .description("Prefix cache queries, in prompt tokens looked up").register(registry);
      FunctionCounter.builder(prefix + "_hits", hit, Counter::count).tags(model)
          .description("Prefix cache hits, in prompt tokens found").register(registry);
    }
    Gauge.builder("vllm:gpu_prefix_cache_hit_rate", hit,
            h -> queried.count() == 0 ? 0 : h.count() / queried.count())
        .tags(model).description("Prefix cache hit rate in tokens, since start (vLLM v0's gauge)")
        .register(registry);
  }

  private static void gauge(MeterRegistry registry, String name, String help, Tags tags,
      Supplier<EngineGauges> source, ToDoubleFunction<EngineGauges> f) {
    Gauge.builder(name, () -> f.applyAsDouble(source.get())).tags(tags).description(help)
        .register(registry);
  }
}
