package dev.radixserve.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.server.LocalServers;
import dev.radixserve.server.RadixServer;
import dev.radixserve.server.config.ServerConfig;
import dev.radixserve.cache.BlockHasher;
import dev.radixserve.server.kvevents.KvEventPublisher;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The routing scorer against two real replicas and their KV events. */
class RoutedSenderTest {

  private static final int B = 16;
  private final List<RadixServer> servers = new ArrayList<>();
  private final List<KvEventFollower> followers = new ArrayList<>();
  private final List<CompletionClient> clients = new ArrayList<>();

  private void startReplicas() {
    for (int i = 0; i < 2; i++) {
      ServerConfig.Builder b = LocalServers.builder(128);
      b.kvEvents = true;
      b.kvEventsEndpoint = "tcp://127.0.0.1:*";
      b.kvEventsReplayEndpoint = "tcp://127.0.0.1:*";
      RadixServer s = RadixServer.start(b.build());
      servers.add(s);
      KvEventPublisher p = s.kvEvents().orElseThrow();
      followers.add(new KvEventFollower(p.endpoint(), p.replayEndpoint(), "", e -> {}));
      clients.add(new CompletionClient(CompletionClient.newHttpClient(),
          URI.create("http://127.0.0.1:" + s.port()), null, ServerConfig.EMBEDDED_MODEL_NAME, 2,
          Duration.ofSeconds(60), System.nanoTime()));
    }
  }

  @AfterEach
  void stop() {
    followers.forEach(KvEventFollower::close);
    servers.forEach(s -> s.shutdown(Duration.ofSeconds(5)));
  }

  private static BenchRequest request(int index, int first, int length) {
    int[] prompt = new int[length];
    for (int i = 0; i < length; i++) {
      prompt[i] = first + i;
    }
    return new BenchRequest(index, index, 0, prompt);
  }

  @Test
  void prefixRoutingFollowsTheEventsAndRoundRobinTakesTurns() throws Exception {
    startReplicas();
    BlockHasher hasher = new BlockHasher(ServerConfig.EMBEDDED_MODEL_NAME, B);
    // replica 1 (not the tie-break's choice) caches a 49-token prompt: 3 whole blocks
    BenchRequest warm = request(0, 500, 49);
    assertTrue(clients.get(1).send(warm, 0).success());
    long[] chain = hasher.chain("", warm.prompt(), 3);
    for (int i = 0; i < 3000 && followers.get(1).prefixBlocks(chain) < 3; i++) {
      Thread.sleep(10); // the events travel publisher thread → socket → follower
    }
    assertEquals(3, followers.get(1).prefixBlocks(chain));
    assertEquals(0, followers.get(0).prefixBlocks(chain));

    RoutedSender byPrefix =
        new RoutedSender(clients, followers, hasher, RoutedSender.Policy.PREFIX);
    RequestRecord extended = byPrefix.send(request(1, 500, 70), 0);
    assertArrayEquals(new int[] {0, 1}, byPrefix.sentPerReplica());
    // token-granular reuse: the whole 49-token warm prompt (3 blocks + 1 token copied from its
    // cached partial last block, which the events leave out, so routing saw 3 blocks)
    assertEquals(49, extended.cachedTokens());
    RequestRecord other = byPrefix.send(request(2, 900, 40), 1); // held nowhere: the tie-break
    assertArrayEquals(new int[] {1, 1}, byPrefix.sentPerReplica());
    assertEquals(0, other.cachedTokens());

    RoutedSender inTurn =
        new RoutedSender(clients, followers, hasher, RoutedSender.Policy.ROUND_ROBIN);
    for (int i = 0; i < 5; i++) {
      inTurn.send(request(3 + i, 500, 70), i);
    }
    assertArrayEquals(new int[] {3, 2}, inTurn.sentPerReplica());
    assertEquals(List.of(), followers.get(0).anomalies());
    assertEquals(List.of(), followers.get(1).anomalies());
  }
}
