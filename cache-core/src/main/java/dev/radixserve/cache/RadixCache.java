package dev.radixserve.cache;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The radix prefix cache: a compressed trie over token ids per namespace whose nodes hold block
 * ids of a {@link BlockPool}, never KV data. See {@link PrefixCache} for the contracts.
 *
 * <p><b>Single-threaded by contract</b>: one thread (the engine's) calls every method; nothing
 * is synchronized and no method may be called concurrently.
 *
 * <p>Layout (B tokens per block; checked by {@link #checkIntegrity}):
 * <ol>
 *   <li>Every edge starts on a block boundary and holds {@code ceil(n / B)} blocks for its
 *       {@code n} tokens. Siblings may share first tokens but not a first page (a partial leaf's
 *       whole edge stands for its page); children are found by their first token.
 *   <li>An edge may end inside its last block only if its node is a leaf (a <em>partial
 *       leaf</em>). A sequence that goes on past it never extends it: its path is a sibling that
 *       starts on the same block boundary and holds its own block for those tokens (the copy it
 *       made of the partial block, then its own tokens).
 *   <li>So every block id is held by exactly one node, and a node's blocks are its own: lock and
 *       eviction accounting count each block once, and evicting a leaf frees all of its blocks.
 * </ol>
 *
 * <pre>
 *   B = 4. Request 1 cached "a b c d e f" (blocks 7, 8; 8 is partial, slots 0-1). Request 2,
 *   "a b c d e f g h i", matched 6 tokens: whole block 7, then slots 0-1 of block 8 copied into
 *   its own block 9, where it computed g, h; i went to block 10. Its insert adds a sibling:
 *
 *   root ─[a b c d]─▶ U (7) ─┬─[e f]──────────▶ P (8: e f . .)          partial leaf
 *                            └─[e f g h | i]──▶ Q (9: e f g h, 10: i . . .)   partial leaf
 *
 *   Q's first page "e f g h" differs from P's key "e f"; block 8 is P's alone and never written
 *   again. A match of "a b c d e x" ends in U and borrows slot 0 of the best first block among
 *   U's children (most matching tokens, then whole page before partial, then the smaller key):
 *   Q's block 9.
 * </pre>
 *
 * <p>A match or insert that ends inside an edge splits it at a block boundary: the upper part
 * becomes a new node, the existing node keeps the lower part (handles to it stay valid and keep
 * their meaning). A match that ends inside a block splits once more so that its copy source is
 * the only block of its node, which the caller locks until the copy is done. Splitting copies int
 * arrays only.
 *
 * <p>Access times are a logical clock (one tick per match or insert), not wall time. Matches
 * touch the access time and hit count of every node on the path, the copy source's included;
 * inserts touch the access time and raise the priority of every node on the path. The unlocked
 * leaves live in an incrementally maintained set ordered by the {@link EvictionPolicy}, so
 * eviction is O(log n) per node.
 */
public final class RadixCache implements PrefixCache {

  /** Block size used when none is given. */
  public static final int DEFAULT_BLOCK_SIZE = 16;

  private static final int[] NO_BLOCKS = new int[0];
  private static final Comparator<RadixNode> BY_ID = Comparator.comparingLong(n -> n.id);

  private final BlockPool pool;
  private final int pageSize;
  private final EvictableLeaves evictable;
  private final FirstBlocks firstBlocks;
  private final Map<String, RadixNode> roots = new HashMap<>();
  /** Ids held by the tree: catches a caller handing over a block the tree already owns. */
  private final BitSet owned;
  /** Handed out for namespaces with no root: a root handle, so lock/unlock are no-ops. */
  private final RadixNode absentRoot;

  private long clock;
  private long nextNodeId;
  private int nodes;
  private int evictableBlocks;
  private int protectedBlocks;
  private long evictableTokens;
  private long protectedTokens;
  private long queries;
  private long queryTokens;
  private long hitTokens;
  private long insertedBlocks;
  private long evictedBlocks;
  private final List<CacheListener> listeners = new ArrayList<>();

  /** Pages of {@link #DEFAULT_BLOCK_SIZE} tokens, least recently used leaves evicted first. */
  public RadixCache(BlockPool pool) {
    this(pool, DEFAULT_BLOCK_SIZE, EvictionPolicy.lru());
  }

  /** @throws IllegalArgumentException if {@code blockSize < 1} */
  public RadixCache(BlockPool pool, int blockSize, EvictionPolicy policy) {
    this.pool = Objects.requireNonNull(pool, "pool");
    if (blockSize < 1) {
      throw new IllegalArgumentException("block size must be at least 1, got " + blockSize);
    }
    this.pageSize = blockSize;
    this.evictable = new EvictableLeaves(Objects.requireNonNull(policy, "policy"));
    this.firstBlocks = new FirstBlocks(blockSize);
    this.owned = new BitSet(pool.total());
    this.absentRoot = RadixNode.root(nextNodeId++, "");
  }

  @Override
  public int blockSize() {
    return pageSize;
  }

  /** The pool this cache frees evicted blocks to. */
  public BlockPool pool() {
    return pool;
  }

  @Override
  public MatchResult matchPrefix(int[] tokens, int length, String namespace) {
    Objects.requireNonNull(tokens, "tokens");
    Objects.requireNonNull(namespace, "namespace");
    if (length < 0 || length > tokens.length) {
      throw new IllegalArgumentException(
          "match length " + length + " outside [0, " + tokens.length + "]");
    }
    queries++;
    queryTokens += length;
    RadixNode root = roots.get(namespace);
    if (root == null) {
      return new MatchResult(0, NO_BLOCKS, absentRoot);
    }
    long now = ++clock;
    int pos = 0;
    RadixNode node = root;
    RadixNode source = null;
    int partial = 0;
    while (pos < length) {
      RadixNode child = length - pos >= pageSize
          ? node.childWithPage(tokens, pos, pageSize) : null;
      if (child == null) { // no whole page goes on: borrow the best first block below
        int to = Math.min(length, pos + pageSize);
        source = firstBlocks.best(node, tokens, pos, to);
        if (source != null) {
          partial = FirstBlocks.common(source, tokens, pos, to);
        }
        break;
      }
      int common = FirstBlocks.common(child, tokens, pos, length);
      int whole = common - common % pageSize;
      if (whole == child.tokens.length) {
        touchMatched(child, now);
        node = child;
        pos += whole;
        continue;
      }
      node = split(child, whole / pageSize);
      touchMatched(node, now);
      pos += whole;
      if (common > whole) {
        source = child;
        partial = common - whole;
      }
      break;
    }
    hitTokens += pos + partial;
    int[] full = pathBlocks(node);
    if (source == null) {
      return new MatchResult(pos, full, node);
    }
    source = firstPage(source);
    touchMatched(source, now);
    int[] ids = Arrays.copyOf(full, full.length + 1);
    ids[full.length] = source.blocks[0];
    return new MatchResult(pos + partial, ids, partial, source, node);
  }

  @Override
  public InsertResult insert(int[] tokens, int length, int[] blockIds, String namespace) {
    return insert(tokens, length, blockIds, namespace, 0);
  }

  /** {@link #insert(int[], int, int[], String, int)} of whole blocks. */
  public InsertResult insert(int[] tokens, int[] blockIds, String namespace, int priority) {
    return insert(tokens, blockIds.length * pageSize, blockIds, namespace, priority);
  }

  /**
   * {@link #insert(int[], int, int[], String)} with an eviction priority for {@link
   * EvictionPolicy#priority()}: every node on the path keeps the highest priority of the inserts
   * through it; lower priorities are evicted first. Other policies ignore it.
   */
  public InsertResult insert(int[] tokens, int length, int[] blockIds, String namespace,
      int priority) {
    Objects.requireNonNull(tokens, "tokens");
    Objects.requireNonNull(blockIds, "blockIds");
    Objects.requireNonNull(namespace, "namespace");
    if (length < 0 || length > tokens.length) {
      throw new IllegalArgumentException(
          "insert of " + length + " tokens, but " + tokens.length + " given");
    }
    int needed = (length + pageSize - 1) / pageSize;
    if (blockIds.length != needed) {
      throw new IllegalArgumentException("insert of " + length + " tokens needs " + needed
          + " blocks of " + pageSize + ", got " + blockIds.length);
    }
    for (int id : blockIds) {
      if (pool.isFree(id)) { // also range-checks: IllegalArgumentException
        throw new IllegalStateException("insert of block " + id + ", which is free in the pool");
      }
    }
    if (length == 0) {
      return new InsertResult(0, NO_BLOCKS, rootOrAbsent(namespace));
    }
    long now = ++clock;
    RadixNode node = roots.computeIfAbsent(namespace, ns -> RadixNode.root(nextNodeId++, ns));
    InsertDuplicates duplicates = new InsertDuplicates(blockIds, owned, pageSize);
    int pos = 0;
    while (pos < length) {
      if (length - pos < pageSize) { // the last, partial page: cached if a first block covers it
        RadixNode covering =
            firstBlocks.covering(node, tokens, pos, length, blockIds[pos / pageSize]);
        if (covering == null) {
          break;
        }
        node = firstPage(covering);
        duplicates.compare(node, pos);
        touchInserted(node, now, priority);
        pos = length;
        break;
      }
      RadixNode child = node.childWithPage(tokens, pos, pageSize);
      if (child == null) {
        break;
      }
      int common = FirstBlocks.common(child, tokens, pos, length);
      int keep; // tokens of the child the insert goes through
      if (pos + common == length) { // ends inside (or at the end of) the child: all cached
        keep = Math.min(child.tokens.length, roundUp(common));
      } else if (common == child.tokens.length && common % pageSize == 0) {
        keep = common;
      } else { // diverges inside the child, or goes on past a partial leaf: a sibling follows
        keep = common - common % pageSize;
      }
      if (keep < child.tokens.length) {
        child = split(child, keep / pageSize);
      }
      duplicates.compare(child, pos);
      touchInserted(child, now, priority);
      node = child;
      pos = pos + common == length ? length : pos + keep;
    }
    int alreadyCached = pos;
    if (pos < length) {
      node = attachLeaf(node, tokens, pos, length, blockIds, priority);
    }
    return new InsertResult(alreadyCached, duplicates.ids(), node);
  }

  @Override
  public void lock(NodeHandle handle) {
    RadixNode node = own(handle);
    for (RadixNode n = node; !n.isRoot(); n = n.parent) {
      if (n.lockRef++ == 0) {
        evictableBlocks -= n.blocks.length;
        evictableTokens -= n.tokens.length;
        protectedBlocks += n.blocks.length;
        protectedTokens += n.tokens.length;
        evictable.remove(n);
      }
    }
    if (!node.isRoot()) {
      for (CacheListener l : listeners) {
        l.locked(node.namespace, node.id, node.lockRef);
      }
    }
  }

  @Override
  public void unlock(NodeHandle handle) {
    RadixNode node = own(handle);
    if (node.isRoot()) {
      return;
    }
    if (node.lockRef <= 0) {
      throw new IllegalStateException("unlock of " + node + ", which is not locked");
    }
    for (RadixNode n = node; !n.isRoot(); n = n.parent) {
      if (--n.lockRef == 0) {
        protectedBlocks -= n.blocks.length;
        protectedTokens -= n.tokens.length;
        evictableBlocks += n.blocks.length;
        evictableTokens += n.tokens.length;
        if (n.isLeaf()) {
          evictable.add(n);
        }
      }
    }
    for (CacheListener l : listeners) {
      l.unlocked(node.namespace, node.id, node.lockRef);
    }
  }

  @Override
  public int evict(int nBlocks) {
    if (nBlocks < 0) {
      throw new IllegalArgumentException("cannot evict " + nBlocks + " blocks");
    }
    int freed = 0;
    while (freed < nBlocks) {
      RadixNode leaf = evictable.pollFirst();
      if (leaf == null) {
        break;
      }
      freed += remove(leaf);
    }
    return freed;
  }

  @Override
  public int evictAll() {
    int freed = evict(Integer.MAX_VALUE);
    if (cachedBlocks() == 0) {
      for (CacheListener l : listeners) {
        l.cleared();
      }
    }
    return freed;
  }

  @Override
  public int evictableBlocks() {
    return evictableBlocks;
  }

  @Override
  public int protectedBlocks() {
    return protectedBlocks;
  }

  /** Tokens held by unlocked nodes. */
  public long evictableTokens() {
    return evictableTokens;
  }

  /** Tokens held by locked nodes. */
  public long protectedTokens() {
    return protectedTokens;
  }

  @Override
  public CacheStats stats() {
    return new CacheStats(queries, queryTokens, hitTokens, insertedBlocks, evictedBlocks,
        evictableBlocks + protectedBlocks, evictableBlocks, nodes);
  }

  @Override
  public TreeSnapshot snapshot() {
    List<TreeSnapshot.Root> list = new ArrayList<>(roots.size());
    roots.values().stream()
        .sorted(Comparator.comparing((RadixNode r) -> r.namespace))
        .forEach(r -> list.add(new TreeSnapshot.Root(r.namespace, r.id, snapshotChildren(r))));
    return new TreeSnapshot(clock, List.copyOf(list));
  }

  /**
   * Checks, throwing {@link IllegalStateException} with the numbers: parent/child links; children
   * found by their first token, siblings with distinct first pages; edges start on block boundaries,
   * hold {@code ceil(tokens / B)} blocks, and end inside a block only at a leaf; lock refs ≥ 0 and
   * a parent's ≥ each child's; evictable/protected blocks and tokens equal a recount; the
   * evictable set is exactly the unlocked leaves; every block id is owned once (tree, free list or
   * callers): no id twice in the tree, none both in the tree and free, and {@code cached + free +
   * inUse == total}.
   */
  @Override
  public void checkIntegrity(int inUseBlocks) {
    new IntegrityCheck(this, pool, pageSize).run(roots.values(), inUseBlocks);
  }

  // ---- package-private views for IntegrityCheck and tests ----

  int nodeCount() {
    return nodes;
  }

  EvictableLeaves evictableSet() {
    return evictable;
  }

  BitSet ownedBlocks() {
    return owned;
  }

  /** Adds a listener told about every store, split and eviction from now on (see its contract). */
  public void addListener(CacheListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /**
   * Tells {@code listener} about every node now in the tree through {@link CacheListener#stored},
   * parents before children and namespaces in name order, with the arguments a store of that
   * node would pass now. Changes nothing (no access times). For a consumer that starts late or
   * lost track: its initial state, or a check of its state against the tree.
   */
  public void replay(CacheListener listener) {
    Objects.requireNonNull(listener, "listener");
    roots.values().stream()
        .sorted(Comparator.comparing((RadixNode r) -> r.namespace))
        .forEach(root -> replayChildren(root, listener));
  }

  private void replayChildren(RadixNode node, CacheListener listener) {
    if (node.isLeaf()) {
      return;
    }
    node.children().stream()
        .sorted(BY_ID)
        .forEach(child -> {
          listener.stored(child.namespace, child.id, node.id, pathTokens(child),
              child.blocks.clone());
          replayChildren(child, listener);
        });
  }

  // ---- internals ----

  private int roundUp(int tokens) {
    return (tokens + pageSize - 1) / pageSize * pageSize;
  }

  /** {@code node} itself when it holds one block, else the new upper node holding its first. */
  private RadixNode firstPage(RadixNode node) {
    return node.blocks.length > 1 ? split(node, 1) : node;
  }

  private void touchMatched(RadixNode node, long now) {
    node.lastAccess = now;
    node.hits++;
    evictable.rekey(node);
  }

  private void touchInserted(RadixNode node, long now, int priority) {
    node.lastAccess = now;
    node.priority = Math.max(node.priority, priority);
    evictable.rekey(node);
  }

  /**
   * Splits {@code node} after {@code pages} pages: a new upper node takes the first pages and
   * the node keeps the rest, so its handles still mean the same path end.
   */
  private RadixNode split(RadixNode node, int pages) {
    int cut = pages * pageSize;
    RadixNode parent = node.parent;
    RadixNode upper = RadixNode.child(nextNodeId++, parent,
        Arrays.copyOfRange(node.tokens, 0, cut), Arrays.copyOfRange(node.blocks, 0, pages),
        pageSize);
    upper.lockRef = node.lockRef;
    upper.lastAccess = node.lastAccess;
    upper.hits = node.hits;
    upper.priority = node.priority;
    parent.removeChild(node);
    parent.putChild(upper);
    node.tokens = Arrays.copyOfRange(node.tokens, cut, node.tokens.length);
    node.blocks = Arrays.copyOfRange(node.blocks, pages, node.blocks.length);
    node.parent = upper;
    upper.putChild(node);
    nodes++;
    for (CacheListener l : listeners) {
      l.split(node.namespace, node.id, upper.id, cut);
    }
    return upper;
  }

  private RadixNode attachLeaf(
      RadixNode parent, int[] tokens, int pos, int limit, int[] ids, int priority) {
    int first = pos / pageSize;
    int[] blocks = Arrays.copyOfRange(ids, first, ids.length);
    for (int i = 0; i < blocks.length; i++) {
      if (owned.get(blocks[i])) {
        for (int j = 0; j < i; j++) {
          owned.clear(blocks[j]);
        }
        throw new IllegalStateException("insert hands over block " + blocks[i] + " at page "
            + (first + i) + ", but the tree already holds it (or it appears twice)");
      }
      owned.set(blocks[i]);
    }
    RadixNode leaf = RadixNode.child(nextNodeId++, parent,
        Arrays.copyOfRange(tokens, pos, limit), blocks, pageSize);
    leaf.lastAccess = clock;
    leaf.priority = priority;
    if (parent.inEvictableSet) {
      evictable.remove(parent);
    }
    parent.putChild(leaf);
    nodes++;
    insertedBlocks += blocks.length;
    evictableBlocks += blocks.length;
    evictableTokens += leaf.tokens.length;
    evictable.add(leaf);
    if (!listeners.isEmpty()) {
      int[] path = pathTokens(leaf);
      for (CacheListener l : listeners) {
        l.stored(leaf.namespace, leaf.id, parent.id, path.clone(), leaf.blocks.clone());
      }
    }
    return leaf;
  }

  /** Removes an unlocked leaf already taken out of the evictable set; returns blocks freed. */
  private int remove(RadixNode leaf) {
    if (!listeners.isEmpty()) {
      int[] path = pathTokens(leaf);
      for (CacheListener l : listeners) {
        l.evicted(leaf.namespace, leaf.id, path.clone(), leaf.blocks.clone());
      }
    }
    RadixNode parent = leaf.parent;
    parent.removeChild(leaf);
    for (int id : leaf.blocks) {
      owned.clear(id);
    }
    pool.free(leaf.blocks);
    leaf.evicted = true;
    int freed = leaf.blocks.length;
    nodes--;
    evictedBlocks += freed;
    evictableBlocks -= freed;
    evictableTokens -= leaf.tokens.length;
    if (parent.isRoot()) {
      if (parent.isLeaf()) {
        roots.remove(parent.namespace);
      }
    } else if (parent.lockRef == 0 && parent.isLeaf()) {
      evictable.add(parent);
    }
    return freed;
  }

  private RadixNode own(NodeHandle handle) {
    Objects.requireNonNull(handle, "handle");
    if (!(handle instanceof RadixNode node)) {
      throw new IllegalArgumentException("not a handle of this cache: " + handle);
    }
    if (node.evicted) {
      throw new IllegalStateException(node + " was evicted; lock a matched node before anything"
          + " may evict");
    }
    return node;
  }

  private RadixNode rootOrAbsent(String namespace) {
    RadixNode root = roots.get(namespace);
    return root == null ? absentRoot : root;
  }

  /** Every block from the root to the end of {@code end}; nodes above it end on boundaries. */
  private int[] pathBlocks(RadixNode end) {
    int[] ids = new int[(end.depthTokens + pageSize - 1) / pageSize];
    for (RadixNode n = end; !n.isRoot(); n = n.parent) {
      int first = (n.depthTokens - n.tokens.length) / pageSize;
      System.arraycopy(n.blocks, 0, ids, first, n.blocks.length);
    }
    return ids;
  }

  private int[] pathTokens(RadixNode end) {
    int[] tokens = new int[end.depthTokens];
    for (RadixNode n = end; !n.isRoot(); n = n.parent) {
      System.arraycopy(n.tokens, 0, tokens, n.depthTokens - n.tokens.length, n.tokens.length);
    }
    return tokens;
  }

  /** Plain arrays and no streams: the engine thread pays for this walk (one node, one record). */
  private List<TreeSnapshot.Node> snapshotChildren(RadixNode node) {
    if (node.isLeaf()) {
      return List.of();
    }
    RadixNode[] kids = node.children().toArray(new RadixNode[0]);
    if (kids.length > 1) {
      Arrays.sort(kids, BY_ID);
    }
    TreeSnapshot.Node[] out = new TreeSnapshot.Node[kids.length];
    for (int i = 0; i < kids.length; i++) {
      RadixNode c = kids[i];
      out[i] = new TreeSnapshot.Node(c.id, c.tokens.clone(), c.blocks.length, c.lockRef, c.hits,
          c.lastAccess, c.inEvictableSet, snapshotChildren(c));
    }
    return Collections.unmodifiableList(Arrays.asList(out));
  }
}
