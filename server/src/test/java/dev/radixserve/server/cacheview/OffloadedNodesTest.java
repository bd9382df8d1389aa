package dev.radixserve.server.cacheview;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.CacheNamespace;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.model.KvPool;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.server.kvtier.DiskWritePolicy;
import dev.radixserve.server.kvtier.KvTiers;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The view's offloaded nodes on exact tiny trees (blocks of 4; token ids decode to their
 * numbers): blocks the tiers hold but the pool does not are shown where their hash chain puts
 * them, under a resident node, mid-edge, under a namespace root, and as resident once back.
 */
class OffloadedNodesTest {

  private static final int B = 4;
  private static final ModelConfig TINY = new ModelConfig(1, 2, 16, 64, 97, 1e-5, "gelu_new");
  private static final int[] X = IntStream.range(100, 108).toArray(); // 2 blocks
  private static final int[] P = concat(X, IntStream.range(300, 308).toArray()); // X + 2 blocks
  private static final int[] Q = concat(X, IntStream.range(400, 404).toArray()); // X + 1 block

  @TempDir
  Path dir;

  private final BlockPool blocks = new BlockPool(11);
  private final RadixCache cache = new RadixCache(blocks, B, EvictionPolicy.lru());
  private final CacheRecorder recorder = new CacheRecorder();
  private final EdgeTexts texts = new EdgeTexts(ids -> Arrays.stream(ids)
      .mapToObj(Integer::toString).collect(Collectors.joining(" ")));
  private final KvPool kv = KvPool.ofBlocks(TINY, B, 11);
  private KvTiers tiers;

  private static int[] concat(int[] a, int[] b) {
    return IntStream.concat(Arrays.stream(a), Arrays.stream(b)).toArray();
  }

  private void start(long hostBytes, Path disk) {
    tiers = KvTiers.create(hostBytes, disk, 1 << 20, DiskWritePolicy.ALL, kv, "m", "tiny", B);
    cache.addListener(recorder);
    cache.addListener(tiers);
    recorder.showTiers(tiers);
  }

  @AfterEach
  void close() {
    if (tiers != null) {
      tiers.close();
    }
    kv.close();
  }

  private void insert(int[] tokens) {
    var r = cache.insert(tokens, tokens.length, blocks.allocate(tokens.length / B),
        CacheNamespace.DEFAULT);
    blocks.free(r.duplicateBlockIds());
  }

  private CacheTree tree() {
    return CacheTree.build(recorder.sample(cache), texts);
  }

  private static CacheTree.Node only(CacheTree t, String text) {
    List<CacheTree.Node> found = t.nodes().stream().filter(n -> n.text().equals(text)).toList();
    assertEquals(1, found.size(), "one node '" + text + "' in " + t.nodes());
    return found.getFirst();
  }

  private static String text(int from, int n) {
    return IntStream.range(from, from + n).mapToObj(Integer::toString)
        .collect(Collectors.joining(" "));
  }

  @Test
  void anEvictedLeafHangsUnderItsResidentParentAsAnOffloadedNode() throws Exception {
    start(16 * kv.bytesPerBlock(), null);
    insert(P);
    insert(Q); // X (2 blocks) with children 300.. (2 blocks) and 400.. (1 block)
    cache.evict(1); // the least recent leaf: P's tail, offloaded
    CacheTree t = tree();
    CacheTree.Node x = only(t, text(100, 8));
    CacheTree.Node q = only(t, text(400, 4));
    CacheTree.Node p = only(t, text(300, 8));
    assertEquals(x.id(), p.parent());
    assertEquals(x.id(), q.parent());
    assertEquals(List.of("CPU"), p.media());
    assertEquals(0, p.blocks());
    assertEquals(2, p.offloadedBlocks());
    assertFalse(q.offloaded());
    // totals: the pool's 3 blocks, the tier's 2 apart
    CacheTree.Totals all = t.totals();
    assertEquals(List.of(2, 3, 12L, 1, 2, 8L),
        List.of(all.nodes(), all.blocks(), all.tokens(), all.offloadedNodes(),
            all.offloadedBlocks(), all.offloadedTokens()));
    JsonNode json = TreeJson.JSON.readTree(TreeJson.node(p, true).toString());
    assertEquals(TreeJson.JSON.readTree("""
        {"id": %d, "parent": %d, "depth": 2, "tokens": 8, "blocks": 0, "lock": 0, "hits": 0,
         "last_access": 0, "evictable": false, "children": 0, "text": "%s",
         "subtree": {"nodes": 0, "blocks": 0, "tokens": 0, "locked": 0, "evictable": 0,
                     "offloaded_nodes": 1, "offloaded_blocks": 2, "offloaded_tokens": 8},
         "offloaded": true, "medium": "CPU", "media": ["CPU"], "offloaded_blocks": 2}
        """.formatted(p.id(), x.id(), text(300, 8))), json);
    JsonNode header = TreeJson.JSON.readTree(TreeJson.header(t).toString());
    assertEquals(0, header.get("totals").get("offloaded_unplaced_blocks").asInt());
    assertEquals(2, header.get("totals").get("offloaded_blocks").asInt());
  }

  @Test
  void anEmptiedPoolShowsTheWholeTreeOffloadedInBothTiers() {
    start(16 * kv.bytesPerBlock(), dir);
    insert(P);
    insert(Q);
    cache.evictAll();
    // the disk writer runs on its own thread: wait until it has written all 5 blocks
    for (long end = System.nanoTime() + 60_000_000_000L; tiers.stats().get(1).entries() < 5; ) {
      if (System.nanoTime() > end) {
        throw new AssertionError("disk tier never got its 5 blocks: " + tiers.stats());
      }
      Thread.onSpinWait();
    }
    CacheTree t = tree();
    CacheTree.Node x = only(t, text(100, 8));
    CacheTree.Node root = t.node(x.parent());
    assertEquals(true, root.isRoot());
    assertEquals(CacheNamespace.DEFAULT, root.namespace());
    assertEquals(2, x.offloadedBlocks()); // one run of 2 blocks down to the branch
    assertEquals(List.of("CPU", "DISK"), x.media());
    assertEquals(x.id(), only(t, text(300, 8)).parent());
    assertEquals(x.id(), only(t, text(400, 4)).parent());
    CacheTree.Totals all = t.totals();
    assertEquals(List.of(0, 0, 3, 5), List.of(all.nodes(), all.blocks(), all.offloadedNodes(),
        all.offloadedBlocks()));
  }

  @Test
  void aBlockBackInThePoolIsResidentAndItsOffloadedSiblingBranchesMidEdge() throws Exception {
    start(16 * kv.bytesPerBlock(), null);
    insert(P);
    insert(Q);
    cache.evictAll(); // all 5 blocks in the host tier
    insert(P); // X + P's tail back as one resident node of 4 blocks (still in the tier too)
    CacheTree t = tree();
    CacheTree.Node p = only(t, text(100, 8) + " " + text(300, 8));
    assertFalse(p.offloaded());
    assertEquals(4, p.blocks());
    CacheTree.Node q = only(t, text(400, 4));
    assertEquals(p.id(), q.parent());
    assertEquals(8, q.branchAt()); // Q leaves the resident edge after X, not at its end
    assertEquals(1, q.offloadedBlocks());
    assertEquals(8, TreeJson.JSON.readTree(TreeJson.node(q, true).toString())
        .get("branch_at").asInt());
    CacheTree.Totals all = t.totals();
    assertEquals(List.of(1, 4, 1, 1), List.of(all.nodes(), all.blocks(), all.offloadedNodes(),
        all.offloadedBlocks()));
    // and without tiers the format is as before: no offloaded fields
    assertNull(TreeJson.node(p, false).get("subtree").get("offloaded_blocks"));
  }
}
