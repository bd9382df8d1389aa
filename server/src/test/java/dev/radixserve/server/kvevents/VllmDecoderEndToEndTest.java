package dev.radixserve.server.kvevents;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.server.PythonClients;
import dev.radixserve.server.config.KvEventEncoding;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * radixserve's KV events as vLLM's consumers read them: a Python subscriber (pyzmq) decodes every
 * batch with msgspec into vLLM's own {@code KVEventBatch} / {@code BlockStored} / {@code
 * BlockRemoved} / {@code AllBlocksCleared} structs ({@code src/test/gateway/vllm_consumers.py},
 * declared there as vLLM declares them), asking the replay socket for what it missed, while a
 * workload with evictions, preemptions and resets runs on a tiny pool. Every batch must decode,
 * no removal may name a block the stream never stored, and the index the events built must equal
 * the server's radix tree at the end. Both encodings (vLLM's array and map structs).
 */
class VllmDecoderEndToEndTest {

  private static final Path SCRIPT = Path.of("src", "test", "gateway", "vllm_consumers.py");

  @ParameterizedTest
  @EnumSource(KvEventEncoding.class)
  void vllmsOwnDecoderRebuildsTheRadixTree(KvEventEncoding encoding) throws Exception {
    String python = PythonClients.python();
    KvEventsEndToEndTest.Replica r = KvEventsEndToEndTest.start(encoding);
    KvEventPublisher publisher = r.server().kvEvents().orElseThrow();
    Path err = Files.createTempFile("vllm-subscriber", ".err");
    Process sub = new ProcessBuilder(python, SCRIPT.toAbsolutePath().toString(), "events",
        publisher.endpoint(), publisher.replayEndpoint(), "kv@",
        encoding.name().toLowerCase()).redirectError(err.toFile()).start();
    try (BufferedReader out = new BufferedReader(
            new InputStreamReader(sub.getInputStream(), StandardCharsets.UTF_8));
        Writer in = sub.outputWriter(StandardCharsets.UTF_8)) {
      assertEquals("ready", out.readLine(), () -> stderr(err));
      Random rnd = new Random(42);
      KvEventsEndToEndTest.workload(r.server(), rnd, 40, 6);
      KvEventsEndToEndTest.awaitQuiescent(r.server());
      assertEquals(200, KvEventsEndToEndTest.post(r.server(), "/reset_prefix_cache", ""));
      KvEventsEndToEndTest.workload(r.server(), rnd, 15, 4);
      KvEventsEndToEndTest.crowd(r.server()); // evictions whatever the timing
      for (int i = 0; i < 1000 && !publisher.drained(); i++) {
        Thread.sleep(10);
      }
      assertTrue(publisher.drained(), "publisher still has changes queued");
      in.write(publisher.lastSequence() + "\n");
      in.flush();
      String line = out.readLine();
      assertTrue(sub.waitFor(60, TimeUnit.SECONDS), "subscriber did not finish");
      assertEquals(0, sub.exitValue(), () -> stderr(err));
      JsonNode index = KvEventsEndToEndTest.JSON.readTree(line);
      Set<Long> decoded = new TreeSet<>();
      index.get("blocks").forEach(h -> decoded.add(h.asLong()));
      Set<Long> expected = new TreeSet<>(KvEventsEndToEndTest.cachedHashes(r.server()));
      assertTrue(expected.size() > 5, "a workload that leaves little cached tests little");
      assertEquals(expected, decoded);
      assertEquals(List.of("GPU"), List.of(index.get("media").get(0).asText()));
      JsonNode types = index.get("types");
      assertTrue(types.path("BlockStored").asInt() > 0, types.toString());
      assertTrue(types.path("BlockRemoved").asInt() > 0, types.toString());
      assertTrue(types.path("AllBlocksCleared").asInt() > 0, "the idle reset: " + types);
      assertEquals(publisher.lastSequence() + 1, index.get("batches").asLong());
    } finally {
      sub.destroyForcibly();
      r.follower().close();
      r.server().shutdown(Duration.ofSeconds(5));
      Files.delete(err);
    }
  }

  private static String stderr(Path err) {
    try {
      return Files.readString(err);
    } catch (java.io.IOException e) {
      return "(no stderr: " + e + ")";
    }
  }
}
