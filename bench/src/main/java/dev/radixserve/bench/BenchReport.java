package dev.radixserve.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Everything one {@code bench} invocation measured, written as JSON by {@code --output}: the
 * settings, per workload and server the summary plus every request's record, and the ratios.
 */
public record BenchReport(Settings settings, List<Run> runs, List<Comparison> comparisons) {

  /** The flags that shaped the run; a null concurrency means no limit. */
  public record Settings(String url, String compareUrl, String model, long seed,
      Integer numRequests, int maxTokens, int maxModelLen, Integer concurrency, Double requestRate,
      int blockSize, boolean resetCache) {}

  /**
   * One workload against one server.
   *
   * @param cacheAtStart "emptied (POST /reset_prefix_cache)", or "as found (why)"
   */
  public record Run(String workload, String description, String role, String cacheAtStart,
      RunSummary summary, List<RequestRecord> requests) {}

  public BenchReport {
    runs = List.copyOf(runs);
    comparisons = List.copyOf(comparisons);
  }

  static ObjectMapper mapper() {
    return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  }

  void write(Path file) throws IOException {
    mapper().writeValue(file.toFile(), this);
  }
}
