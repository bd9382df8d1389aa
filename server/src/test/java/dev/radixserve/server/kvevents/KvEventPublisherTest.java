package dev.radixserve.server.kvevents;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.bench.KvEventDecoder;
import dev.radixserve.bench.KvEventFollower;
import dev.radixserve.bench.ZmqConnect;
import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.server.config.KvEventEncoding;
import dev.radixserve.server.config.KvEventsConfig;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** The ZeroMQ side on loopback: frames of a live message, the replay protocol, a taken port. */
class KvEventPublisherTest {

  private static final int B = 4;

  private static KvEventsConfig config(String endpoint, String replay) {
    return new KvEventsConfig(true, endpoint, replay, "kv@test@m", 100, KvEventEncoding.ARRAY);
  }

  private static long seq(byte[] frame) {
    assertEquals(8, frame.length, "sequence frames are 8 bytes");
    return ByteBuffer.wrap(frame).getLong();
  }

  @Test
  void liveFramesAndReplayFollowVllmsProtocol() throws Exception {
    BlockPool pool = new BlockPool(8);
    RadixCache cache = new RadixCache(pool, B, EvictionPolicy.lru());
    try (KvEventPublisher p = new KvEventPublisher(
            config("tcp://127.0.0.1:*", "tcp://127.0.0.1:*"), cache, "m");
        ZContext ctx = new ZContext()) {
      ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
      sub.subscribe("kv@".getBytes(StandardCharsets.UTF_8));
      sub.setReceiveTimeOut(100);
      ZmqConnect.connect(sub, p.endpoint());
      // PUB drops what it sends before the subscription arrives: store until one gets through
      byte[] topic = null;
      int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8};
      // (a stalled JeroMQ handshake is redone after ZmqConnect.HANDSHAKE_MILLIS; the 60 s bound
      // is for a loaded machine)
      for (int i = 0; topic == null && i < 600; i++) {
        if (cache.cachedBlocks() == 0) {
          cache.insert(tokens, pool.allocate(2), "");
        } else {
          cache.evictAll();
        }
        topic = sub.recv(0);
      }
      assertArrayEquals("kv@test@m".getBytes(StandardCharsets.UTF_8), topic);
      long live = seq(sub.recv(0));
      assertTrue(sub.hasReceiveMore());
      KvEventDecoder.decode(sub.recv(0));
      assertTrue(!sub.hasReceiveMore(), "three frames: topic, sequence, payload");

      ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
      dealer.setReceiveTimeOut(30_000);
      ZmqConnect.connect(dealer, p.replayEndpoint());
      dealer.sendMore(new byte[0]);
      dealer.send(ByteBuffer.allocate(8).putLong(0).array(), 0);
      long expected = 0;
      StringBuilder types = new StringBuilder();
      while (true) {
        assertArrayEquals(new byte[0], dealer.recv(0),
            "the ROUTER's empty delimiter (errno " + dealer.errno() + ")");
        long s = seq(dealer.recv(0));
        byte[] payload = dealer.recv(0);
        if (s == -1) {
          assertEquals(0, payload.length, "the end marker's payload is empty");
          break;
        }
        assertEquals(expected++, s, "replay sends every buffered batch in order");
        KvEventDecoder.decode(payload).events().forEach(e -> types.append(e.type()).append(' '));
      }
      assertTrue(expected > live, "replayed up to and past the live message " + live);
      // each reset (evictAll emptying the tree) is its removal, then the clear
      assertTrue(types.toString().matches(
          "(BlockStored BlockRemoved AllBlocksCleared )*(BlockStored )?"), types.toString());
    }
  }

  /**
   * A replay is one burst from the ROUTER; ZeroMQ's ROUTER silently drops what exceeds its
   * high-water mark (1,000 messages by default), end marker included, so a client that has not
   * started reading yet would wait forever. Every buffered batch and the end marker must arrive.
   */
  @Test
  void aLongReplayToAClientThatReadsLateArrivesWhole() throws Exception {
    BlockPool pool = new BlockPool(8);
    RadixCache cache = new RadixCache(pool, B, EvictionPolicy.lru());
    int batches = 3_000;
    try (KvEventPublisher p = new KvEventPublisher(new KvEventsConfig(true, "tcp://127.0.0.1:*",
            "tcp://127.0.0.1:*", "kv@test@m", 100_000, KvEventEncoding.ARRAY), cache, "m");
        ZContext ctx = new ZContext()) {
      int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8};
      while (p.lastSequence() < batches - 1) {
        // one change at a time, so that each becomes its own batch
        if (cache.cachedBlocks() == 0) {
          cache.insert(tokens, pool.allocate(2), "");
        } else {
          cache.evictAll();
        }
        while (!p.drained()) {
          Thread.onSpinWait();
        }
      }
      long last = p.lastSequence();
      ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
      dealer.setReceiveTimeOut(30_000);
      ZmqConnect.connect(dealer, p.replayEndpoint());
      dealer.sendMore(new byte[0]);
      dealer.send(ByteBuffer.allocate(8).putLong(0).array(), 0);
      Thread.sleep(2_000); // the client is slow to read: the whole replay is queued by then
      long expected = 0;
      StringBuilder types = new StringBuilder();
      while (true) {
        byte[] delimiter = dealer.recv(0);
        assertArrayEquals(new byte[0], delimiter,
            "the ROUTER's empty delimiter after batch " + (expected - 1) + " (errno "
                + dealer.errno() + ")");
        long s = seq(dealer.recv(0));
        dealer.recv(0);
        if (s == -1) {
          break;
        }
        assertEquals(expected++, s, "replay sends every buffered batch in order");
      }
      assertEquals(last + 1, expected, "every batch up to the last one sent was replayed");
    }
  }

  /**
   * ZeroMQ's slow joiner: a batch published before a subscriber connected never reaches it, and
   * while the replica stays idle no later batch shows the gap. A follower told the last sequence
   * fetches it by replay (as the render end-to-end test once missed its only batch in CI).
   */
  @Test
  void aFollowerThatJoinedAfterTheOnlyBatchCatchesUpByReplay() throws Exception {
    BlockPool pool = new BlockPool(8);
    RadixCache cache = new RadixCache(pool, B, EvictionPolicy.lru());
    try (KvEventPublisher p = new KvEventPublisher(
        config("tcp://127.0.0.1:*", "tcp://127.0.0.1:*"), cache, "m")) {
      cache.insert(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, pool.allocate(2), "");
      while (!p.drained()) {
        Thread.onSpinWait();
      }
      assertEquals(0, p.lastSequence());
      List<String> types = new java.util.concurrent.CopyOnWriteArrayList<>();
      try (KvEventFollower f = new KvEventFollower(p.endpoint(), p.replayEndpoint(), "kv@",
          e -> types.add(e.type()))) {
        Thread.sleep(200);
        assertEquals(-1, f.lastApplied(), "sent before the follower existed: not live");
        f.catchUpTo(p.lastSequence());
        for (int i = 0; i < 3_000 && f.lastApplied() < 0; i++) {
          Thread.sleep(10);
        }
        assertEquals(0, f.lastApplied());
        assertEquals(List.of("BlockStored"), types);
        assertEquals(2, f.blocks().size());
        assertEquals(List.of(), f.anomalies());
      }
    }
  }

  @Test
  void aTakenPortFailsTheStartWithTheAddress() {
    RadixCache cache = new RadixCache(new BlockPool(8), B, EvictionPolicy.lru());
    try (KvEventPublisher first = new KvEventPublisher(config("tcp://127.0.0.1:*", null), cache,
        "m")) {
      String taken = first.endpoint().replace("127.0.0.1", "*");
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> new KvEventPublisher(config(taken, null), cache, "m"));
      assertTrue(e.getMessage().startsWith("KV events: cannot open " + taken + ": "),
          e.getMessage());
    }
  }
}
