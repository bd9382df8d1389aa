package dev.radixserve.server.cacheview;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.cache.PrefixCache;
import dev.radixserve.server.api.ApiException;
import dev.radixserve.server.engine.Engine;
import dev.radixserve.server.engine.EngineGauges;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The live view of the radix cache, on a thread of its own ({@code radixserve-cacheview}).
 *
 * <p>Every {@value #TICK_MS} ms it drains the engine-side {@link CacheRecorder}; while someone
 * watches the stream it sends the new events, asks the engine thread for a snapshot (a copy
 * taken between two steps, reused when nothing changed) and sends the diff to the previous one.
 * So the engine takes at most {@code 1000 / TICK_MS} snapshots a second, none while nobody
 * watches and nobody asks for the tree, and fewer when they are costly: after a copy that took
 * the engine {@code t}, the next waits at least {@value #ENGINE_SHARE} × {@code t}, so copies
 * take at most about 1/{@value #ENGINE_SHARE} of the engine's time however large the tree. Decoding, diffing and JSON happen here, never on the
 * engine thread or an event loop. A viewer that cannot keep up loses frames (counted, see
 * {@link Viewer}) instead of holding anything back.
 */
public final class CacheViewService implements AutoCloseable {

  static final long TICK_MS = 250;
  /** Changed nodes beyond which a diff says "resync" (fetch the tree again) instead. */
  static final int DIFF_LIMIT = 2000;
  /** Events sent per tick at most (the newest); the page lists only recent ones. */
  static final int EVENTS_PER_TICK = 1000;
  static final long HEARTBEAT_MS = 15_000;
  /** The engine spends at most about 1/ENGINE_SHARE of its time copying the tree for the view. */
  static final long ENGINE_SHARE = 50;
  /** Event-stream clients at once. */
  public static final int MAX_VIEWERS = 32;
  private static final long SAMPLE_TIMEOUT_MS = 10_000;
  private static final Logger LOG = Logger.getLogger(CacheViewService.class.getName());

  /** One client of the event stream. Called on the view's thread. */
  public interface Viewer {
    /**
     * Sends an SSE frame, or drops it when the client is behind (its buffer full); a viewer
     * that dropped frames tells its client so with an {@code event: dropped} frame once it can.
     */
    void offer(String frame);

    boolean isOpen();
  }

  private final Engine engine;
  /** The engine's cache: read only in tasks run on the engine thread. */
  private final Optional<PrefixCache> cache;
  private final boolean prefixCaching;
  private final Function<int[], String> decoder;
  private final CacheRecorder recorder;
  /** Whose blocks these are: the KV events' and the tiers' model key, and the pool's KV dtype. */
  private final String modelKey;
  private final String kvCacheDtype;
  private final EdgeTexts texts;
  private final RequestPaths requests = new RequestPaths();
  private final List<Viewer> viewers = new ArrayList<>();
  private final AtomicInteger viewerCount = new AtomicInteger();
  /** Drained from the recorder, sent at the next tick (view thread only). */
  private final List<CacheEvent> events = new ArrayList<>();
  private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(
      Thread.ofPlatform().name("radixserve-cacheview").daemon().factory());
  // view thread only
  private CacheTree latest;
  private long nextSampleAt;
  private long lastBeat;
  private CompletableFuture<CacheTree> inFlight;

  /**
   * @param cache the engine's prefix cache (empty with prefix caching off: the tree stays empty);
   *     touched only on the engine thread
   * @param decoder token ids to text (thread-safe; called on the view's thread only)
   * @param recorder registered with the cache and the engine by the caller
   * @param modelKey the model as the block hashes name it (dtype, KV dtype and quantization
   *     inside), shown with the pool so that a viewer knows which blocks it looks at
   * @param kvCacheDtype what the pool stores keys and values in
   */
  public CacheViewService(Engine engine, Optional<PrefixCache> cache,
      Function<int[], String> decoder, int blockSize, CacheRecorder recorder, String modelKey,
      String kvCacheDtype) {
    this.engine = engine;
    this.modelKey = modelKey;
    this.kvCacheDtype = kvCacheDtype;
    this.cache = cache;
    this.prefixCaching = cache.isPresent();
    this.decoder = decoder;
    this.recorder = recorder;
    this.texts = new EdgeTexts(decoder);
    this.latest = CacheTree.empty(blockSize);
  }

  public void start() {
    thread.scheduleWithFixedDelay(this::tick, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
  }

  /**
   * The bounded tree as JSON bytes, from a snapshot at most {@value #TICK_MS} ms old (older for
   * trees that are costly to copy, see above).
   *
   * @return fails with an {@link ApiException} (404) when {@code query.node()} is not in the tree
   */
  public CompletableFuture<byte[]> tree(Map<String, List<String>> params) {
    TreeQuery query = TreeQuery.parse(params);
    return CompletableFuture.supplyAsync(() -> snapshotFor(query), thread)
        .thenCompose(f -> f)
        .thenApplyAsync(tree -> bytes(render(tree, query)), thread);
  }

  /**
   * Adds a viewer: it gets a {@code hello} frame at once, then events and diffs every tick until
   * it closes.
   *
   * @return false when {@value #MAX_VIEWERS} viewers are connected already
   */
  public boolean subscribe(Viewer viewer) {
    if (viewerCount.incrementAndGet() > MAX_VIEWERS) {
      viewerCount.decrementAndGet();
      return false;
    }
    thread.execute(() -> {
      viewers.add(viewer);
      recorder.watching(true);
      ObjectNode hello = withPool(TreeJson.header(latest));
      hello.put("prefix_caching", prefixCaching);
      hello.put("tick_ms", TICK_MS);
      viewer.offer(frame("hello", hello));
    });
    return true;
  }

  @Override
  public void close() {
    thread.shutdownNow();
  }

  /**
   * View thread: the snapshot to answer {@code query} from. Admission matches queued since the
   * last tick are indexed first, so a request whose response has arrived is always found: its
   * match was queued on the engine thread before its first token went out. When the latest
   * snapshot predates that match, one is taken at once, past the throttle, so the path is there
   * too (only for such a request lookup: the engine copies at most one more tree per lookup).
   */
  private CompletableFuture<CacheTree> snapshotFor(TreeQuery query) {
    drainRecorder();
    long needed = query.request() == null ? 0 : requests.find(query.request()).stream()
        .mapToLong(CacheEvent.Matched::seq).max().orElse(0);
    if (!prefixCaching || latest.sample().eventSeq() >= needed) {
      return sample();
    }
    CompletableFuture<CacheTree> pending = inFlight != null ? inFlight
        : CompletableFuture.completedFuture(latest);
    return pending.thenComposeAsync(t -> {
      if (t.sample().eventSeq() >= needed) {
        return CompletableFuture.completedFuture(t);
      }
      nextSampleAt = 0; // asked for after the match was recorded: the copy includes it
      return sample();
    }, thread);
  }

  /** View thread: moves the engine's queued events into {@link #events}, indexing matches. */
  private void drainRecorder() {
    int from = events.size();
    recorder.drainTo(events);
    for (CacheEvent e : events.subList(from, events.size())) {
      if (e instanceof CacheEvent.Matched m) {
        requests.add(m);
      }
    }
  }

  private ObjectNode render(CacheTree tree, TreeQuery query) {
    if (query.node() != null && tree.node(query.node()) == null) {
      throw new ApiException(404, "invalid_request_error", "node", "not_found",
          "node " + query.node() + " is not in the cache (evicted, or never there)");
    }
    List<CacheEvent.Matched> matched = query.request() == null ? List.of()
        : requests.find(query.request());
    List<Long> forced = new ArrayList<>();
    matched.forEach(m -> forced.addAll(tree.path(m.node())));
    TreeQuery.Selection sel = query.select(tree, forced);
    ObjectNode o = withPool(TreeJson.tree(tree, sel));
    o.put("prefix_caching", prefixCaching);
    if (query.search() != null) {
      o.put("query", query.search());
      sel.matches().forEach(o.putArray("matches")::add);
      o.put("matches_total", sel.matchesTotal());
    }
    if (query.request() != null) {
      o.set("request", RequestPaths.json(query.request(), matched, tree));
    }
    return o;
  }

  private void tick() {
    try {
      drainRecorder();
      viewers.removeIf(v -> {
        boolean closed = !v.isOpen();
        if (closed) {
          viewerCount.decrementAndGet();
        }
        return closed;
      });
      recorder.watching(!viewers.isEmpty());
      if (viewers.isEmpty()) {
        return;
      }
      if (!events.isEmpty()) {
        List<CacheEvent> sent = events.subList(Math.max(0, events.size() - EVENTS_PER_TICK),
            events.size());
        ObjectNode batch = EventJson.batch(sent, recorder.dropped(), decoder);
        batch.put("skipped", events.size() - sent.size());
        broadcast(frame("cache", batch));
      }
      sample();
      long now = System.currentTimeMillis();
      if (now - lastBeat >= HEARTBEAT_MS) {
        lastBeat = now;
        broadcast(": keep-alive\n\n");
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "cache view tick failed", e);
    } finally {
      events.clear(); // sent, or nobody watches
    }
  }

  /**
   * View thread: asks the engine thread for a sample (one at a time, none before it is due);
   * completes on this thread.
   */
  private CompletableFuture<CacheTree> sample() {
    if (inFlight != null) {
      return inFlight;
    }
    long requestedAt = System.currentTimeMillis();
    if (requestedAt < nextSampleAt) {
      return CompletableFuture.completedFuture(latest);
    }
    CompletableFuture<CacheTree> f = engine.onEngineThread(() -> cache.map(recorder::sample))
        .orTimeout(SAMPLE_TIMEOUT_MS, TimeUnit.MILLISECONDS)
        .handleAsync((sample, error) -> {
          inFlight = null;
          if (error != null) {
            throw new IllegalStateException("no cache snapshot from the engine", error);
          }
          long gap = TICK_MS;
          if (sample.isPresent() && sample.get().version() != latest.sample().version()) {
            gap = Math.max(TICK_MS, ENGINE_SHARE * sample.get().copyNanos() / 1_000_000);
          }
          nextSampleAt = requestedAt + gap;
          accept(sample);
          return latest;
        }, thread);
    inFlight = f;
    return f;
  }

  private void accept(Optional<CacheSample> sample) {
    if (sample.isEmpty() || sample.get().version() == latest.sample().version()) {
      return; // prefix caching off, or nothing changed
    }
    CacheTree next = CacheTree.build(sample.get(), texts);
    texts.retainSeen();
    CacheTree previous = latest;
    latest = next;
    if (!viewers.isEmpty()) {
      broadcast(frame("diff", withPool(TreeJson.diff(previous, next, DIFF_LIMIT))));
    }
  }

  private ObjectNode withPool(ObjectNode o) {
    EngineGauges g = engine.gauges();
    ObjectNode pool = o.putObject("pool");
    pool.put("total", g.totalBlocks());
    pool.put("free", g.freeBlocks());
    pool.put("cached", g.cachedBlocks());
    pool.put("running_requests", g.runningRequests());
    pool.put("waiting_requests", g.waitingRequests());
    pool.put("kv_cache_dtype", kvCacheDtype);
    pool.put("model_key", modelKey);
    return o;
  }

  private void broadcast(String frame) {
    for (Viewer v : viewers) {
      v.offer(frame);
    }
  }

  static String frame(String event, ObjectNode data) {
    return "event: " + event + "\ndata: " + data + "\n\n";
  }

  private static byte[] bytes(ObjectNode o) {
    try {
      return TreeJson.JSON.writeValueAsBytes(o);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
