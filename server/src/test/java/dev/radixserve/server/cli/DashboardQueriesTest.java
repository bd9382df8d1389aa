package dev.radixserve.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DashboardQueriesTest {

  @Test
  void extractsSeriesNamesButNotFunctionsOrLabels(@TempDir Path dir) throws IOException {
    Path f = dir.resolve("d.json");
    Files.writeString(f, """
        {"panels": [{"targets": [
          {"expr": "histogram_quantile(0.9, sum by (le) (rate(radixserve_x_seconds_bucket[1m])))"},
          {"expr": "sum by (finish_reason) (rate(radixserve_done_total{finish_reason=\\"stop\\"}[$__rate_interval]))"},
          {"expr": "sum(jvm_memory_used_bytes{area=\\"heap\\"}) / radixserve_y"}]}]}
        """);
    assertEquals(new TreeSet<>(Set.of("radixserve_x_seconds_bucket", "radixserve_done_total",
        "jvm_memory_used_bytes", "radixserve_y")), DashboardQueries.metricNames(f));
  }

  @Test
  void theDashboardReadsEveryDocumentedSeries() throws IOException {
    assertEquals(new TreeSet<>(Set.of(
        "radixserve_generation_tokens_total", "radixserve_requests_finished_total",
        "radixserve_time_to_first_token_seconds_bucket", "radixserve_inter_token_latency_seconds_bucket",
        "radixserve_e2e_request_latency_seconds_bucket", "radixserve_request_queue_time_seconds_bucket",
        "radixserve_prefix_cache_hit_tokens_total", "radixserve_prefix_cache_queried_tokens_total",
        "radixserve_prefix_cache_hit_rate", "radixserve_prompt_tokens_computed_total",
        "radixserve_prompt_tokens_cached_total", "radixserve_kv_cache_usage_ratio",
        "radixserve_kv_cache_blocks_total", "radixserve_kv_cache_blocks_free",
        "radixserve_kv_cache_blocks_cached", "radixserve_requests_running",
        // KV usage in vLLM's meaning beside the occupancy (issue 42)
        "radixserve_kv_cache_occupancy_ratio", "radixserve_kv_cache_blocks_evictable",
        "radixserve_requests_waiting", "radixserve_preemptions_total",
        "radixserve_evicted_blocks_total", "radixserve_http_responses_total",
        "jvm_memory_used_bytes",
        // the cache tiers below the pool (issue 22)
        "radixserve_kv_tier_entries", "radixserve_kv_tier_bytes",
        "radixserve_kv_tier_hit_blocks_total", "radixserve_kv_tier_loaded_blocks_total",
        "radixserve_kv_tier_load_seconds_total", "radixserve_kv_tier_stored_blocks_total",
        "radixserve_kv_tier_evicted_blocks_total", "radixserve_kv_tier_dropped_blocks_total",
        "radixserve_kv_tier_corrupt_blocks_total", "radixserve_kv_tier_offload_seconds_total")),
        DashboardQueries.metricNames(DashboardQueries.DASHBOARD));
  }
}
