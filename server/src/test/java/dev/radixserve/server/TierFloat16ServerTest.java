package dev.radixserve.server;

import static dev.radixserve.server.TierRestartTest.PROMPT;
import static dev.radixserve.server.TierRestartTest.complete;
import static dev.radixserve.server.TierRestartTest.metric;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.graph.GraphDtype;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cache tiers under the IOBinding runner through the HTTP server: {@code --dtype float16} on
 * the CPU (the device pool of {@code --device cuda}, with the CPU allocator) starts with both
 * tiers, an evicted prompt comes back from host memory and, after a restart, from disk, with the
 * greedy text of an fp16 server with the cache off; an fp32 server does not take the fp16
 * server's directory for its own.
 */
class TierFloat16ServerTest {

  private static final String OTHER =
      "Summarise the following list of fruit: apple, pear, plum. ".repeat(16);

  @TempDir
  Path dir;

  private static RadixServer start(GraphDtype dtype, boolean caching, long hostBytes, Path tiers) {
    return LocalServers.startTiered(dtype, null, caching, hostBytes, tiers);
  }

  @Test
  void fp16BlocksComeBackFromHostAndFromDiskWithTheCacheOffText() throws Exception {
    String expected;
    RadixServer off = start(GraphDtype.FLOAT16, false, 0, null);
    try {
      expected = complete(off, PROMPT).text();
    } finally {
      off.shutdown(Duration.ofSeconds(5));
    }

    RadixServer s = start(GraphDtype.FLOAT16, true, 64L << 20, dir);
    try {
      assertEquals(expected, complete(s, PROMPT).text());
      complete(s, OTHER); // evicts PROMPT's blocks into both tiers
      TierRestartTest.Completion again = complete(s, PROMPT);
      assertEquals(expected, again.text());
      assertTrue(again.cachedTokens() >= 12 * 16, "cached " + again.cachedTokens());
      assertTrue(metric(s, "radixserve_kv_tier_loaded_blocks_total", "host") >= 12);
      assertTrue(s.inspect().quiescent(), s.inspect().toString());
    } finally {
      s.shutdown(Duration.ofSeconds(5)); // writes what the pool caches to the directory
    }

    RadixServer restarted = start(GraphDtype.FLOAT16, true, 0, dir);
    try {
      double indexed = metric(restarted, "radixserve_kv_tier_entries", "disk");
      assertTrue(indexed >= 12, "indexed " + indexed);
      TierRestartTest.Completion warm = complete(restarted, PROMPT);
      assertEquals(expected, warm.text());
      assertTrue(warm.cachedTokens() >= 12 * 16, "cached " + warm.cachedTokens());
      assertTrue(metric(restarted, "radixserve_kv_tier_loaded_blocks_total", "disk") >= 12);
    } finally {
      restarted.shutdown(Duration.ofSeconds(5));
    }

    // the dtype is in the hash root and the entries' fingerprint: an fp32 server skips them all
    RadixServer fp32 = start(GraphDtype.FLOAT32, true, 0, dir);
    try {
      assertEquals(0, metric(fp32, "radixserve_kv_tier_entries", "disk"));
      assertEquals(0, complete(fp32, PROMPT).cachedTokens());
    } finally {
      fp32.shutdown(Duration.ofSeconds(5));
    }
  }
}
