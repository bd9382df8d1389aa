package dev.radixserve.server;

import static dev.radixserve.server.TierRestartTest.PROMPT;
import static dev.radixserve.server.TierRestartTest.complete;
import static dev.radixserve.server.TierRestartTest.metric;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.cache.BlockHasher;
import dev.radixserve.model.Device;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.graph.KvDtype;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.server.config.ServerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code --kv-cache-dtype} through the HTTP server with both tiers: an int8 (fp8) server's evicted
 * prompt comes back from host memory and, after a restart, from disk with the greedy text of the
 * same server with the cache off; a server of another KV dtype does not take its directory.
 */
class TierKvDtypeServerTest {

  private static final String OTHER =
      "Summarise the following list of fruit: apple, pear, plum. ".repeat(16);

  @TempDir
  Path dir;

  private static RadixServer start(KvDtype kv, boolean caching, long hostBytes, Path tiers) {
    return LocalServers.startTiered(null, kv, caching, hostBytes, tiers);
  }

  @ParameterizedTest
  @EnumSource(value = KvDtype.class, names = {"INT8", "FP8"})
  void blocksComeBackFromHostAndDiskWithTheCacheOffTextAndOnlyToTheirOwnDtype(KvDtype kv)
      throws Exception {
    String expected;
    RadixServer off = start(kv, false, 0, null);
    try {
      expected = complete(off, PROMPT).text();
    } finally {
      off.shutdown(Duration.ofSeconds(5));
    }

    RadixServer s = start(kv, true, 64L << 20, dir);
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

    RadixServer restarted = start(kv, true, 0, dir);
    try {
      assertTrue(metric(restarted, "radixserve_kv_tier_entries", "disk") >= 12);
      TierRestartTest.Completion warm = complete(restarted, PROMPT);
      assertEquals(expected, warm.text());
      assertTrue(warm.cachedTokens() >= 12 * 16, "cached " + warm.cachedTokens());
      assertTrue(metric(restarted, "radixserve_kv_tier_loaded_blocks_total", "disk") >= 12);
    } finally {
      restarted.shutdown(Duration.ofSeconds(5));
    }

    // the KV dtype is in the hash root and the entries' fingerprint: fp32 and the other 8-bit
    // type skip them all
    for (KvDtype other : new KvDtype[] {KvDtype.FLOAT32, kv == KvDtype.INT8 ? KvDtype.FP8
        : KvDtype.INT8}) {
      RadixServer foreign = start(other, true, 0, dir);
      try {
        assertEquals(0, metric(foreign, "radixserve_kv_tier_entries", "disk"), other.name());
        assertEquals(0, complete(foreign, PROMPT).cachedTokens(), other.name());
      } finally {
        foreign.shutdown(Duration.ofSeconds(5));
      }
    }
  }

  /** The KV events' model key (the root of every block hash) names a KV dtype not the graph's. */
  @Test
  void everyKvDtypeRootsItsOwnHashChain() {
    ServerConfig.Builder b = ServerConfig.builder();
    b.device = Device.Kind.CPU;
    long hidden = ModelConfig.embeddedDefault().hiddenSize();
    Set<Long> roots = new HashSet<>();
    for (KvDtype kv : KvDtype.values()) {
      b.kvCacheDtype = kv;
      ServerConfig c = b.build();
      String key = RadixServer.cacheModelKey(c, c.quantization().resolvedFor(hidden));
      assertEquals(kv == KvDtype.FLOAT32 ? "radixserve-embedded-gpt2"
          : "radixserve-embedded-gpt2@kv-" + kv.settingName(), key);
      roots.add(new BlockHasher(key, 16).root());
    }
    assertEquals(KvDtype.values().length, roots.size());
    b.kvCacheDtype = null; // auto: the graph's dtype, fp32 here
    assertEquals(KvDtype.FLOAT32, b.build().kvCacheDtype());
  }

  @Test
  void autoKeepsBfloat16BesideQuantizedWeightsAndFloat32BesideExactOnes() {
    ServerConfig.Builder b = ServerConfig.builder();
    b.device = Device.Kind.CPU;
    ServerConfig auto = b.build();
    assertTrue(auto.kvCacheDtypeAuto());
    for (QuantMode mode : List.of(QuantMode.INT8, QuantMode.INT4)) {
      ServerConfig served = auto.withKvCacheDtypeFor(QuantSpec.of(mode));
      assertEquals(KvDtype.BFLOAT16, served.kvCacheDtype(), mode.label());
      String key = RadixServer.cacheModelKey(served, QuantSpec.of(mode));
      assertTrue(key.startsWith("radixserve-embedded-gpt2@kv-bfloat16@"), key);
    }
    assertEquals(KvDtype.FLOAT32, auto.withKvCacheDtypeFor(QuantSpec.none()).kvCacheDtype());
    b.kvCacheDtype = KvDtype.FLOAT32; // given: kept beside any weights
    assertEquals(KvDtype.FLOAT32,
        b.build().withKvCacheDtypeFor(QuantSpec.of(QuantMode.INT4)).kvCacheDtype());
    b.kvCacheDtype = null;
    b.device = Device.Kind.CUDA; // the device's pool: its --dtype
    assertEquals(KvDtype.FLOAT16,
        b.build().withKvCacheDtypeFor(QuantSpec.of(QuantMode.INT4)).kvCacheDtype());
  }

  @Test
  void cudaRefusesCachesItsKernelCannotRead() {
    ServerConfig.Builder b = ServerConfig.builder();
    b.device = Device.Kind.CUDA;
    b.kvCacheDtype = KvDtype.FP8;
    assertEquals("kv-cache-dtype fp8 is not available on cuda with dtype float16: ONNX Runtime's"
        + " CUDA PagedAttention reads fp8 caches only with static per-tensor or per-channel"
        + " scales calibrated ahead of time (k_scale/v_scale); the per-row scales of"
        + " kv-cache-dtype fp8 are written by radixserve's CPU kernel only (use auto or float16)",
        assertThrows(IllegalArgumentException.class, b::build).getMessage());
    b.kvCacheDtype = null;
    assertEquals(KvDtype.FLOAT16, b.build().kvCacheDtype());
  }
}
