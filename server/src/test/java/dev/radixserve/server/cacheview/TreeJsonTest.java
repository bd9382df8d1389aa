package dev.radixserve.server.cacheview;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.InsertResult;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.server.api.ApiException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The view's wire format on exact tiny trees (11 blocks of 4 tokens; token ids decode to their
 * numbers): snapshot nodes, bounded selection, diffs across a split, an eviction and namespaces.
 */
class TreeJsonTest {

  private static final int B = 4;

  private static final Function<int[], String> DECODE = ids -> Arrays.stream(ids)
      .mapToObj(Integer::toString).collect(Collectors.joining(" "));

  private final BlockPool pool = new BlockPool(11);
  private final RadixCache cache = new RadixCache(pool, B, EvictionPolicy.lru());
  private final CacheRecorder recorder = new CacheRecorder();
  private final EdgeTexts texts = new EdgeTexts(DECODE);

  TreeJsonTest() {
    cache.addListener(recorder);
  }

  static int[] run(int from, int n) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = from + i;
    }
    return t;
  }

  private CacheTree tree() {
    return CacheTree.build(recorder.sample(cache), texts);
  }

  /** The JSON as a client reads it (numbers by value), without the wall-clock field. */
  private static JsonNode stable(ObjectNode o) throws Exception {
    o.remove("taken_at");
    return wire(o);
  }

  private static JsonNode wire(JsonNode n) throws Exception {
    return TreeJson.JSON.readTree(n.toString());
  }

  private static JsonNode json(String text) throws Exception {
    return TreeJson.JSON.readTree(text);
  }

  @Test
  void diffAcrossASplitUpsertsTheNewUpperAndTheShortenedLower() throws Exception {
    cache.insert(run(100, 12), pool.allocate(3), ""); // root #1, leaf #2
    CacheTree before = tree();
    // a token-granular match: block 0 whole, 2 tokens into block 1 (its copy source), so #2
    // splits twice and keeps its id as the lower part each time: #3 (block 0), #4 (block 1)
    cache.matchPrefix(new int[] {100, 101, 102, 103, 104, 105, 9, 9}, 8, "");
    CacheTree after = tree();
    assertEquals(json("""
        {"version": 2, "event_seq": 0, "clock": 2, "block_size": 4,
         "totals": {"nodes": 3, "blocks": 3, "tokens": 12, "locked": 0, "evictable": 1,
                    "namespaces": 1},
         "from": 1,
         "upserts": [
           {"id": 1, "root": true, "namespace": "", "depth": 0, "tokens": 0, "blocks": 0,
            "lock": 0, "hits": 0, "last_access": 0, "evictable": false, "children": 1,
            "text": "", "subtree": {"nodes": 3, "blocks": 3, "tokens": 12, "locked": 0,
                                    "evictable": 1}},
           {"id": 3, "parent": 1, "depth": 1, "tokens": 4, "blocks": 1, "lock": 0, "hits": 1,
            "last_access": 2, "evictable": false, "children": 1, "text": "100 101 102 103",
            "subtree": {"nodes": 3, "blocks": 3, "tokens": 12, "locked": 0, "evictable": 1}},
           {"id": 4, "parent": 3, "depth": 2, "tokens": 4, "blocks": 1, "lock": 0, "hits": 1,
            "last_access": 2, "evictable": false, "children": 1, "text": "104 105 106 107",
            "subtree": {"nodes": 2, "blocks": 2, "tokens": 8, "locked": 0, "evictable": 1}},
           {"id": 2, "parent": 4, "depth": 3, "tokens": 4, "blocks": 1, "lock": 0, "hits": 0,
            "last_access": 1, "evictable": true, "children": 0, "text": "108 109 110 111",
            "subtree": {"nodes": 1, "blocks": 1, "tokens": 4, "locked": 0, "evictable": 1}}],
         "removed": []}
        """), stable(TreeJson.diff(before, after, 100)));
  }

  @Test
  void diffAcrossAnEvictionRemovesTheLeafAndUpdatesItsParent() throws Exception {
    cache.insert(run(1, 8), pool.allocate(2), ""); // #2
    InsertResult kept = cache.insert(run(50, 4), pool.allocate(1), ""); // #3
    cache.lock(kept.node());
    CacheTree before = tree();
    assertEquals(2, cache.evict(1)); // #2: the only unlocked leaf
    CacheTree after = tree();
    JsonNode d = stable(TreeJson.diff(before, after, 100));
    assertEquals(json("[2]"), wire(d.get("removed")));
    assertEquals(1, d.get("upserts").size());
    assertEquals(json("""
        {"id": 1, "root": true, "namespace": "", "depth": 0, "tokens": 0, "blocks": 0,
         "lock": 0, "hits": 0, "last_access": 0, "evictable": false, "children": 1, "text": "",
         "subtree": {"nodes": 1, "blocks": 1, "tokens": 4, "locked": 1, "evictable": 0}}
        """), d.get("upserts").get(0));
    assertEquals(json("""
        {"nodes": 1, "blocks": 1, "tokens": 4, "locked": 1, "evictable": 0, "namespaces": 1}
        """), d.get("totals"));
    ObjectNode tooMuch = TreeJson.diff(before, after, 1); // 2 changes over a limit of 1
    assertEquals(true, tooMuch.get("resync").asBoolean());
    assertEquals(false, tooMuch.has("upserts"));
    assertEquals(2, tooMuch.get("version").asInt());
    assertEquals(1, tooMuch.get("from").asInt());
  }

  @Test
  void namespacesAreSeparateRootsAndTheBudgetSumsUpWhatItLeavesOut() throws Exception {
    cache.insert(run(1, 4), pool.allocate(1), "b"); // root #1, #2
    cache.insert(run(1, 4), pool.allocate(1), ""); // root #3, #4
    cache.insert(run(10, 8), pool.allocate(2), ""); // #5
    CacheTree tree = tree();
    ObjectNode all = TreeJson.tree(tree, query(Map.of()).select(tree, List.of()));
    assertEquals("3 4 5 1 2", ids(all));
    assertEquals(false, all.get("truncated").asBoolean());
    assertEquals(json("""
        {"nodes": 3, "blocks": 4, "tokens": 16, "locked": 0, "evictable": 3, "namespaces": 2}
        """), wire(all.get("totals")));
    assertEquals("b", all.at("/nodes/3/namespace").asText());

    // a budget of 3: both roots and the heaviest child (#5, 2 blocks) of the default root
    ObjectNode three = TreeJson.tree(tree, query(Map.of("max_nodes", "3")).select(tree,
        List.of()));
    assertEquals("3 5 1", ids(three));
    assertEquals(true, three.get("truncated").asBoolean());
    assertEquals(json("""
        {"children": 1, "nodes": 1, "blocks": 1, "tokens": 4, "locked": 0, "evictable": 1}
        """), wire(three.at("/nodes/0/more")));
    assertEquals(1, three.at("/nodes/2/more/children").asInt());

    // one subtree, a depth limit, a search that pulls in a node beyond the budget
    assertEquals("1 2", ids(TreeJson.tree(tree, query(Map.of("node", "1")).select(tree,
        List.of()))));
    assertEquals("3 1", ids(TreeJson.tree(tree, query(Map.of("depth", "0")).select(tree,
        List.of()))));
    TreeQuery.Selection found = query(Map.of("max_nodes", "1", "q", "12 13")).select(tree,
        List.of());
    assertEquals(List.of(5L), found.matches());
    assertEquals("3 5", ids(TreeJson.tree(tree, found)));
    assertEquals("3 4 5", ids(TreeJson.tree(tree, query(Map.of("max_nodes", "1", "expand", "3"))
        .select(tree, List.of()))));
    assertEquals("3 4", ids(TreeJson.tree(tree, query(Map.of("max_nodes", "1"))
        .select(tree, List.of(4L)))));
  }

  private static TreeQuery query(Map<String, String> params) {
    return TreeQuery.parse(params.entrySet().stream()
        .collect(Collectors.toMap(Map.Entry::getKey, e -> List.of(e.getValue()))));
  }

  private static String ids(ObjectNode tree) {
    List<String> ids = new ArrayList<>();
    tree.get("nodes").forEach(n -> ids.add(n.get("id").asText()));
    return String.join(" ", ids);
  }

  @Test
  void previewsKeepTheStartAndTheEndOfLongEdges() {
    String edge = "a".repeat(50) + "b".repeat(50);
    String p = TreeJson.preview(edge);
    assertEquals(TreeJson.PREVIEW_CHARS, p.length());
    assertEquals("a".repeat(40) + "…" + "b".repeat(39), p);
    assertEquals("short", TreeJson.preview("short"));
  }

  @Test
  void badParametersAreRejectedByName() {
    ApiException e = assertThrows(ApiException.class, () -> query(Map.of("max_nodes", "0")));
    assertEquals("max_nodes", e.param());
    assertEquals(400, e.status());
    assertEquals("depth", assertThrows(ApiException.class,
        () -> query(Map.of("depth", "x"))).param());
    assertEquals("nodes", assertThrows(ApiException.class,
        () -> query(Map.of("nodes", "1"))).param());
    assertEquals("q", assertThrows(ApiException.class,
        () -> query(Map.of("q", "x".repeat(TreeQuery.MAX_TEXT + 1)))).param());
  }

  @Test
  void requestPathsFindEveryPromptOfAResponseId() throws Exception {
    cache.insert(run(1, 8), pool.allocate(2), "");
    cache.matchPrefix(run(1, 12), 4, ""); // splits: #3 holds the first page
    CacheTree tree = tree();
    RequestPaths paths = new RequestPaths();
    paths.add(new CacheEvent.Matched(1, 0, "cmpl-x-0", 0, "", 3, 4, 11));
    paths.add(new CacheEvent.Matched(2, 0, "cmpl-x-1", 0, "", 2, 8, 11));
    assertEquals(2, paths.find("cmpl-x").size());
    ObjectNode j = RequestPaths.json("cmpl-x-1", paths.find("cmpl-x-1"), tree);
    assertEquals(json("[1, 3, 2]"), wire(j.at("/matches/0/path")));
    assertEquals(true, j.at("/matches/0/in_cache").asBoolean());
    assertEquals(false, RequestPaths.json("cmpl-y", paths.find("cmpl-y"), tree)
        .get("found").asBoolean());
  }
}
