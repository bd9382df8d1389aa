package dev.radixserve.server.kvevents;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.bench.KvEventDecoder;
import dev.radixserve.bench.KvEventFollower;
import dev.radixserve.cache.CacheListener;
import dev.radixserve.server.LocalServers;
import dev.radixserve.server.RadixServer;
import dev.radixserve.server.config.KvEventEncoding;
import dev.radixserve.server.config.ServerConfig;
import dev.radixserve.cache.CacheNamespace;
import dev.radixserve.server.engine.EngineSnapshot;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * Two real servers (one per event encoding) publish KV events over ZeroMQ on loopback while a
 * seeded random workload runs on a tiny pool: shared prefixes, cache salts, concurrent requests
 * that force evictions and preemptions, resets while requests hold blocks and one when idle. A
 * follower per replica rebuilds the set of cached block hashes from the event stream alone
 * (replaying what it joined too late for); it must equal the hashes of the radix cache's own
 * nodes, computed by {@link ReferenceBlockHash}, and every stored event's hashes must follow from
 * its token ids and parent by that same independent function.
 */
class KvEventsEndToEndTest {

  private static final int B = 4;
  static final String MODEL = ServerConfig.EMBEDDED_MODEL_NAME;
  private static final List<String> SALTS = List.of("", "", "tenant-a", "tenant-b");
  static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  record Replica(RadixServer server, KvEventFollower follower,
      List<KvEventDecoder.Event> events) {}

  static Replica start(KvEventEncoding encoding) {
    ServerConfig.Builder b = LocalServers.builder(40); // 160 tokens of KV in all
    b.blockSize = B;
    b.maxNumSeqs = 6;
    b.kvEvents = true;
    b.kvEventsEndpoint = "tcp://127.0.0.1:*";
    b.kvEventsReplayEndpoint = "tcp://127.0.0.1:*";
    b.kvEventsTopic = "kv@replica-" + encoding + "@" + MODEL;
    b.kvEventsEncoding = encoding;
    RadixServer server = RadixServer.start(b.build());
    KvEventPublisher p = server.kvEvents().orElseThrow();
    List<KvEventDecoder.Event> events = Collections.synchronizedList(new ArrayList<>());
    return new Replica(server,
        new KvEventFollower(p.endpoint(), p.replayEndpoint(), "kv@", events::add), events);
  }

  static int post(RadixServer s, String path, String body) {
    return send(s, "POST", path, body).statusCode();
  }

  static HttpResponse<String> send(RadixServer s, String method, String path, String body) {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
          .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofString(body)).build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  /** A prompt of token ids: one of four shared prefixes (or none), then a random tail. */
  private static ObjectNode request(Random rnd) {
    int[][] prefixes = {range(100, 22), range(200, 9), range(100, 13), range(300, 30)};
    List<Integer> prompt = new ArrayList<>();
    if (rnd.nextInt(5) > 0) {
      for (int t : prefixes[rnd.nextInt(prefixes.length)]) {
        prompt.add(t);
      }
    }
    for (int i = 1 + rnd.nextInt(18); i > 0; i--) {
      prompt.add(1000 + rnd.nextInt(40));
    }
    ObjectNode body = JSON.createObjectNode();
    body.put("model", dev.radixserve.server.config.ServerConfig.EMBEDDED_MODEL_NAME);
    body.putPOJO("prompt", prompt);
    body.put("max_tokens", 1 + rnd.nextInt(14));
    body.put("temperature", 0);
    body.put("ignore_eos", true);
    String salt = SALTS.get(rnd.nextInt(SALTS.size()));
    if (!salt.isEmpty()) {
      body.put("cache_salt", salt);
    }
    return body;
  }

  static int[] range(int from, int n) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = from + i;
    }
    return t;
  }

  /** Runs {@code n} requests, {@code concurrency} at a time, resetting the cache mid-way. */
  static void workload(RadixServer s, Random rnd, int n, int concurrency) {
    List<ObjectNode> bodies = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      bodies.add(request(rnd));
    }
    try (ExecutorService pool = Executors.newFixedThreadPool(concurrency)) {
      List<CompletableFuture<Integer>> done = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        String body = bodies.get(i).toString();
        done.add(CompletableFuture.supplyAsync(() -> post(s, "/v1/completions", body), pool));
        if (i % 17 == 16) { // while requests hold locked blocks: only unlocked ones go
          done.add(CompletableFuture.supplyAsync(() -> post(s, "/reset_prefix_cache", ""), pool));
        }
      }
      for (CompletableFuture<Integer> f : done) {
        assertEquals(200, f.join());
      }
    }
  }

  static void awaitQuiescent(RadixServer s) throws InterruptedException {
    EngineSnapshot snap = s.inspect();
    for (int i = 0; i < 500 && !snap.quiescent(); i++) {
      Thread.sleep(10);
      snap = s.inspect();
    }
    assertNull(snap.integrityError());
    assertTrue(snap.quiescent(), snap.toString());
  }

  /**
   * Pressure whatever the timing: six greedy choices of one 20-token prompt grow 10 blocks each
   * past their 5 shared ones, 65 blocks against the pool's 40, so some choices are preempted and
   * blocks evicted (a random workload preempts only when enough requests overlap).
   */
  static void crowd(RadixServer s) throws InterruptedException {
    ObjectNode crowd = JSON.createObjectNode();
    crowd.put("model", MODEL);
    crowd.putPOJO("prompt", range(500, 20));
    crowd.put("n", 6);
    crowd.put("max_tokens", 40);
    crowd.put("temperature", 0);
    crowd.put("ignore_eos", true);
    assertEquals(200, post(s, "/v1/completions", crowd.toString()));
    awaitQuiescent(s);
  }

  /** Every event the publisher sent has reached the follower. */
  static void awaitDelivered(Replica r) throws InterruptedException {
    KvEventPublisher p = r.server().kvEvents().orElseThrow();
    for (int i = 0; i < 1000 && !p.drained(); i++) {
      Thread.sleep(10);
    }
    assertTrue(p.drained(), "publisher still has changes queued");
    // batches sent before the subscription reached the publisher come by replay
    r.follower().catchUpTo(p.lastSequence());
    for (int i = 0; i < 1000 && r.follower().lastApplied() < p.lastSequence(); i++) {
      Thread.sleep(10);
    }
    assertEquals(p.lastSequence(), r.follower().lastApplied());
  }

  /** The hashes of every whole block on every node's path, straight from the radix cache. */
  static Set<Long> cachedHashes(RadixServer s) {
    Set<Long> hashes = new HashSet<>();
    s.replayCache(new CacheListener() {
      @Override
      public void stored(String ns, long id, long parent, int[] path, int[] blocks) {
        String salt = CacheNamespace.saltOf(ns); // the radix namespace of the request's salt
        for (long h : ReferenceBlockHash.chain(MODEL, salt == null ? "" : salt, path, B)) {
          hashes.add(h);
        }
      }
    });
    return hashes;
  }

  /** Each stored event's hashes from its own token ids, parent and extra keys. */
  private static void checkStoredHashes(List<KvEventDecoder.Event> events) {
    long root = ReferenceBlockHash.root(MODEL);
    for (KvEventDecoder.Event e : List.copyOf(events)) {
      if (!e.type().equals("BlockStored")) {
        continue;
      }
      assertEquals(B, e.blockSize());
      assertEquals("GPU", e.medium());
      assertEquals(e.hashes().length * B, e.tokenIds().length);
      String salt = null;
      if (e.extraKeys() != null) {
        assertNull(e.parentHash(), "a salt rides on block 0 only");
        salt = e.extraKeys().getFirst().asArrayValue().get(0).asStringValue().asString();
        assertTrue(SALTS.contains(salt), salt);
      }
      long parent = e.parentHash() == null ? root : e.parentHash();
      long[] expected = new long[e.hashes().length];
      for (int i = 0; i < expected.length; i++) {
        parent = ReferenceBlockHash.block(parent,
            java.util.Arrays.copyOfRange(e.tokenIds(), i * B, (i + 1) * B), i == 0 ? salt : null);
        expected[i] = parent;
      }
      assertArrayEquals(expected, e.hashes());
    }
  }

  private static double counter(RadixServer s, String name) throws Exception {
    String metrics = HTTP.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + s.port() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    double value = metrics.lines().filter(l -> l.startsWith(name + " ")).findFirst()
        .map(l -> Double.parseDouble(l.substring(name.length() + 1))).orElseThrow();
    assertTrue(Double.isFinite(value), name + " = " + value);
    return value;
  }

  @Test
  void followersRebuildEachReplicasCacheFromTheEventsAlone() throws Exception {
    List<Replica> replicas = List.of(start(KvEventEncoding.ARRAY), start(KvEventEncoding.MAP));
    try {
      Random rnd = new Random(14);
      for (Replica r : replicas) {
        workload(r.server(), rnd, 70, 6);
        awaitQuiescent(r.server());
        assertEquals(200, post(r.server(), "/reset_prefix_cache", "")); // idle: clears all
        workload(r.server(), rnd, 25, 4);
        awaitQuiescent(r.server());
        crowd(r.server());
      }
      for (Replica r : replicas) {
        awaitDelivered(r);
        Set<Long> expected = cachedHashes(r.server());
        assertTrue(expected.size() > 5, "a workload that leaves little cached tests little");
        assertEquals(List.of(), r.follower().anomalies());
        assertEquals(expected, r.follower().blocks());
        checkStoredHashes(r.events());
        List<String> types = r.events().stream().map(KvEventDecoder.Event::type).toList();
        assertTrue(types.contains("AllBlocksCleared"), "the idle reset clears everything");
        assertTrue(types.contains("BlockRemoved"));
        assertTrue(counter(r.server(), "radixserve_preemptions_total") > 0, "no preemption");
        assertTrue(counter(r.server(), "radixserve_evicted_blocks_total") > 0, "no eviction");
        assertEquals(0, counter(r.server(), "radixserve_kv_events_dropped_total"));
        assertTrue(counter(r.server(), "radixserve_kv_events_published_total") > 0);
      }
    } finally {
      for (Replica r : replicas) {
        r.follower().close();
        r.server().shutdown(Duration.ofSeconds(5));
      }
    }
  }
}
