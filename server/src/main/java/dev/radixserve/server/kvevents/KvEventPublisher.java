package dev.radixserve.server.kvevents;

import dev.radixserve.bench.ZmqConnect;
import dev.radixserve.cache.BlockHasher;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.server.config.KvEventsConfig;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * Publishes the radix cache's changes as vLLM's KV cache events (vLLM's {@code
 * ZmqEventPublisher}): every batch goes out on a ZeroMQ PUB socket as three frames, {@code
 * (topic, sequence, payload)}, the sequence an 8-byte big-endian counter from 0 and the payload a
 * msgpack {@code KVEventBatch}. With a replay endpoint, a ROUTER socket answers a request whose
 * one frame (after the delimiter) is an 8-byte start sequence with every buffered batch from there
 * on, {@code (identity, "", sequence, payload)} each, then {@code (identity, "", -1, "")}; the
 * last {@value #REPLAY_BUFFER} batches are kept, as vLLM's default {@code buffer_steps}.
 *
 * <p>The engine thread only records changes (see {@link CacheEventRecorder}); this class's own
 * thread hashes, encodes and sends them, taking whatever has queued up as one batch. PUB sockets
 * never block: a slow subscriber loses messages at its high-water mark and sees a gap in the
 * sequence, which replay can fill. When the recorder dropped changes (its queue was full), the
 * sequence skips a number that replay cannot fill, so a subscriber can tell its view is stale.
 */
public final class KvEventPublisher implements AutoCloseable {

  static final int REPLAY_BUFFER = 10_000;
  private static final int MAX_BATCH = 1024;
  private static final int HWM = 100_000;
  private static final byte[] END_SEQ = ByteBuffer.allocate(8).putLong(-1).array();
  private static final Logger LOG = Logger.getLogger(KvEventPublisher.class.getName());

  private record Sent(long seq, byte[] payload) {}

  private final CacheEventRecorder recorder;
  private final BlockHasher hasher;
  private final KvEventEncoder encoder;
  private final byte[] topic;
  private final ZContext context = new ZContext();
  private final ZMQ.Socket pub;
  private final ZMQ.Socket replay;
  private final String endpoint;
  private final String replayEndpoint;
  private final ArrayDeque<Sent> buffer = new ArrayDeque<>();
  private final AtomicLong publishedEvents = new AtomicLong();
  private final AtomicLong consumed = new AtomicLong();
  private final Thread thread;
  private volatile boolean running = true;
  private volatile long lastSequence = -1;
  private long nextSequence;
  private long droppedSeen;

  /**
   * Binds (or connects) the sockets, registers with {@code cache} and starts the publisher thread.
   *
   * @param model the served model name, with its quantization when the weights are quantized
   *     ({@code RadixServer.cacheModelKey}): the root of the hash chain (see {@link BlockHasher})
   * @throws IllegalStateException when an endpoint cannot be bound (e.g. the port is taken)
   */
  public KvEventPublisher(KvEventsConfig config, RadixCache cache, String model) {
    this.hasher = new BlockHasher(model, cache.blockSize());
    this.encoder = new KvEventEncoder(config.encoding());
    this.topic = (config.topic() == null ? "" : config.topic()).getBytes(StandardCharsets.UTF_8);
    try {
      pub = context.createSocket(SocketType.PUB);
      pub.setSndHWM(HWM);
      pub.setLinger(0);
      String ep = config.endpoint();
      // vLLM's rule: bind a wildcard or local transport, connect to a concrete address
      if (ep.contains("*") || ep.contains("::") || ep.startsWith("ipc://")
          || ep.startsWith("inproc://")) {
        pub.bind(ep);
        endpoint = pub.getLastEndpoint();
      } else {
        ZmqConnect.connect(pub, ep);
        endpoint = ep;
      }
      if (config.replayEndpoint() != null) {
        replay = context.createSocket(SocketType.ROUTER);
        // a ROUTER drops silently past its high-water mark (1,000 messages by default), end
        // marker included: room for two whole replays per client, so one that reads late
        // still gets every batch and the end
        replay.setSndHWM(2 * (REPLAY_BUFFER + 1));
        replay.setLinger(0);
        replay.bind(config.replayEndpoint());
        replayEndpoint = replay.getLastEndpoint();
      } else {
        replay = null;
        replayEndpoint = null;
      }
    } catch (ZMQException e) {
      context.close();
      throw new IllegalStateException("KV events: cannot open " + config.endpoint()
          + (config.replayEndpoint() == null ? "" : " / " + config.replayEndpoint()) + ": "
          + e.getMessage(), e);
    }
    this.recorder = new CacheEventRecorder(cache.blockSize(), config.queueSize());
    cache.addListener(recorder);
    this.thread = Thread.ofPlatform().name("radixserve-kv-events").daemon().unstarted(this::run);
    thread.start();
  }

  /** The PUB socket's address, with the port resolved when bound to {@code :*}. */
  public String endpoint() {
    return endpoint;
  }

  /** The ROUTER socket's address, or null without replay. */
  public String replayEndpoint() {
    return replayEndpoint;
  }

  /** Events sent so far (every block list counts once). */
  public long publishedEvents() {
    return publishedEvents.get();
  }

  /** Cache changes lost because the queue to this thread was full. */
  /**
   * Publishes that a cache tier below the pool now holds a block, with the tier's {@code medium}
   * (any thread; as cheap as the cache's own events).
   */
  public void tierStored(String medium, long hash, Long parentHash, int[] tokens, String salt) {
    recorder.tierStored(medium, hash, parentHash, tokens, salt);
  }

  /** Publishes that a cache tier below the pool no longer holds a block (any thread). */
  public void tierRemoved(String medium, long hash) {
    recorder.tierRemoved(medium, hash);
  }

  public long droppedEvents() {
    return recorder.dropped();
  }

  /** The sequence number of the last batch sent; -1 before the first. */
  public long lastSequence() {
    return lastSequence;
  }

  /** True when every change recorded so far has been sent (or dropped). */
  public boolean drained() {
    return recorder.queue().isEmpty() && consumed.get() == recorder.recorded();
  }

  private void run() {
    List<CacheChange> changes = new ArrayList<>();
    try {
      while (running || !recorder.queue().isEmpty()) {
        serveReplays();
        CacheChange first = recorder.queue().poll(50, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        changes.add(first);
        recorder.queue().drainTo(changes, MAX_BATCH - 1);
        try {
          publish(KvEvent.of(changes, hasher));
        } catch (RuntimeException e) {
          LOG.log(Level.SEVERE, "KV events: could not publish a batch of " + changes.size()
              + " changes", e);
        }
        consumed.addAndGet(changes.size());
        changes.clear();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      context.close();
    }
  }

  private void publish(List<KvEvent> events) {
    long dropped = recorder.dropped();
    if (dropped != droppedSeen) {
      droppedSeen = dropped;
      nextSequence++; // a gap no replay can fill: changes were lost before this batch
    }
    long seq = nextSequence++;
    byte[] payload = encoder.encode(System.currentTimeMillis() / 1000.0, events);
    byte[] seqBytes = ByteBuffer.allocate(8).putLong(seq).array();
    pub.sendMore(topic);
    pub.sendMore(seqBytes);
    pub.send(payload, 0);
    if (replay != null) {
      if (buffer.size() == REPLAY_BUFFER) {
        buffer.removeFirst();
      }
      buffer.addLast(new Sent(seq, payload));
    }
    publishedEvents.addAndGet(events.size());
    lastSequence = seq;
  }

  /** Answers every replay request waiting on the ROUTER socket (never blocks). */
  private void serveReplays() {
    if (replay == null) {
      return;
    }
    byte[] identity;
    while ((identity = replay.recv(ZMQ.DONTWAIT)) != null) {
      List<byte[]> frames = new ArrayList<>();
      while (replay.hasReceiveMore()) {
        frames.add(replay.recv(0));
      }
      if (frames.size() != 2 || frames.get(0).length != 0 || frames.get(1).length != 8) {
        LOG.warning(() -> "KV events: ignoring a replay request of " + (frames.size() + 1)
            + " frames (expected identity, empty delimiter, 8-byte start sequence)");
        continue;
      }
      long start = ByteBuffer.wrap(frames.get(1)).getLong();
      for (Sent s : buffer) {
        if (s.seq() >= start) {
          replay.sendMore(identity);
          replay.sendMore(new byte[0]);
          replay.sendMore(ByteBuffer.allocate(8).putLong(s.seq()).array());
          replay.send(s.payload(), 0);
        }
      }
      replay.sendMore(identity);
      replay.sendMore(new byte[0]);
      replay.sendMore(END_SEQ);
      replay.send(new byte[0], 0);
    }
  }

  /**
   * Stops taking changes and sends what is queued (within about a second, as vLLM's shutdown),
   * then closes the sockets.
   */
  @Override
  public void close() {
    running = false;
    try {
      thread.join(2000);
      if (thread.isAlive()) {
        thread.interrupt();
        thread.join(1000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
