package dev.radixserve.cache;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
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
 * <p>Layout: one root per namespace; every edge holds a whole number of pages (B tokens each, one
 * block per page); children are keyed by their first page, so two siblings may share a first
 * token but not a first page. A match or insert that ends inside an edge splits it at the page
 * boundary: the upper part becomes a new node, the existing node keeps the lower part (handles
 * to it stay valid and keep their meaning). Splitting copies int arrays only.
 *
 * <pre>
 *   before: root ─[a b c d | e f g h]─▶ X         (B = 4, X holds blocks [7, 8])
 *   match "a b c d e f x x": splits X after its first page
 *   after:  root ─[a b c d]─▶ M ─[e f g h]─▶ X     (M holds [7], X holds [8])
 * </pre>
 *
 * <p>Access times are a logical clock (one tick per match or insert), not wall time. Matches
 * touch the access time and hit count of every node on the path; inserts touch the access time
 * and raise the priority of every node on the path. The unlocked leaves live in an incrementally
 * maintained set ordered by the {@link EvictionPolicy}, so eviction is O(log n) per node.
 *
 * <p>Copy-on-write of a partly matched last block (not built): {@code matchPrefix} would also
 * report the tree's block holding the next {@code r < B} matching tokens (found by the same
 * {@code Arrays.mismatch} that ends the match today) together with {@code r}; the caller would
 * allocate a fresh block, copy those {@code r} token slots from it while the path is locked, and
 * prefill only the rest. The tree itself needs no change: nodes still hold whole pages.
 */
public final class RadixCache implements PrefixCache {

  /** Block size used when none is given. */
  public static final int DEFAULT_BLOCK_SIZE = 16;

  private static final int[] NO_BLOCKS = new int[0];

  private final BlockPool pool;
  private final int pageSize;
  private final EvictableLeaves evictable;
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
    int limit = length - length % pageSize;
    int pos = 0;
    RadixNode node = root;
    while (pos < limit) {
      RadixNode child = node.child(new PageKey(tokens, pos, pageSize));
      if (child == null) {
        break;
      }
      int matched = commonPages(child, tokens, pos, limit) * pageSize;
      if (matched < child.tokens.length) {
        child = split(child, matched / pageSize);
      }
      child.lastAccess = now;
      child.hits++;
      evictable.rekey(child);
      node = child;
      pos += matched;
      if (matched < child.tokens.length) {
        break;
      }
    }
    hitTokens += pos;
    return new MatchResult(pos, pathBlocks(node), node);
  }

  @Override
  public InsertResult insert(int[] tokens, int[] blockIds, String namespace) {
    return insert(tokens, blockIds, namespace, 0);
  }

  /**
   * {@link #insert(int[], int[], String)} with an eviction priority for {@link
   * EvictionPolicy#priority()}: every node on the path keeps the highest priority of the inserts
   * through it; lower priorities are evicted first. Other policies ignore it.
   */
  public InsertResult insert(int[] tokens, int[] blockIds, String namespace, int priority) {
    Objects.requireNonNull(tokens, "tokens");
    Objects.requireNonNull(blockIds, "blockIds");
    Objects.requireNonNull(namespace, "namespace");
    long needed = (long) blockIds.length * pageSize;
    if (tokens.length < needed) {
      throw new IllegalArgumentException("insert of " + blockIds.length + " blocks of "
          + pageSize + " tokens needs " + needed + " tokens, got " + tokens.length);
    }
    for (int id : blockIds) {
      if (pool.isFree(id)) { // also range-checks: IllegalArgumentException
        throw new IllegalStateException("insert of block " + id + ", which is free in the pool");
      }
    }
    if (blockIds.length == 0) {
      return new InsertResult(0, NO_BLOCKS, rootOrAbsent(namespace));
    }
    long now = ++clock;
    int limit = (int) needed;
    RadixNode node = roots.computeIfAbsent(namespace, ns -> RadixNode.root(nextNodeId++, ns));
    int[] duplicates = NO_BLOCKS;
    int duplicateCount = 0;
    int pos = 0;
    int alreadyCached = limit;
    while (pos < limit) {
      RadixNode child = node.child(new PageKey(tokens, pos, pageSize));
      if (child == null) {
        alreadyCached = pos;
        node = attachLeaf(node, tokens, pos, limit, blockIds, priority);
        break;
      }
      int pages = commonPages(child, tokens, pos, limit);
      int first = pos / pageSize;
      if (!Arrays.equals(child.blocks, 0, pages, blockIds, first, first + pages)) {
        if (duplicates == NO_BLOCKS) {
          duplicates = new int[blockIds.length];
        }
        for (int i = 0; i < pages; i++) {
          int mine = blockIds[first + i];
          if (mine != child.blocks[i]) {
            if (owned.get(mine)) {
              throw new IllegalStateException("insert hands over block " + mine + " at page "
                  + (first + i) + ", but the tree already holds it elsewhere");
            }
            duplicates[duplicateCount++] = mine;
          }
        }
      }
      if (pages * pageSize < child.tokens.length) {
        child = split(child, pages);
      }
      child.lastAccess = now;
      child.priority = Math.max(child.priority, priority);
      evictable.rekey(child);
      node = child;
      pos += pages * pageSize;
    }
    return new InsertResult(alreadyCached, Arrays.copyOf(duplicates, duplicateCount), node);
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
    return evict(Integer.MAX_VALUE);
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
        .forEach(r -> list.add(new TreeSnapshot.Root(r.namespace, snapshotChildren(r))));
    return new TreeSnapshot(List.copyOf(list));
  }

  /**
   * Checks, throwing {@link IllegalStateException} with the numbers: parent/child links and child
   * keys (equal to first pages); edge lengths (blocks × B); lock refs ≥ 0 and a parent's ≥ each
   * child's; evictable/protected blocks and tokens equal a recount; the evictable set is exactly
   * the unlocked leaves; every block id is owned once (tree, free list or callers): no id twice in
   * the tree, none both in the tree and free, and {@code cached + free + inUse == total}.
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
    node.children.values().stream()
        .sorted(Comparator.comparingLong((RadixNode c) -> c.id))
        .forEach(child -> {
          listener.stored(child.namespace, child.id, node.id, pathTokens(child),
              child.blocks.clone());
          replayChildren(child, listener);
        });
  }

  // ---- internals ----

  /** Whole pages of {@code child}'s edge equal to {@code tokens[pos, limit)}; at least 1. */
  private int commonPages(RadixNode child, int[] tokens, int pos, int limit) {
    int span = Math.min(child.tokens.length, limit - pos);
    int mismatch = Arrays.mismatch(child.tokens, 0, span, tokens, pos, pos + span);
    return (mismatch < 0 ? span : mismatch) / pageSize;
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
    node.key = new PageKey(node.tokens, 0, pageSize);
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

  private int[] pathBlocks(RadixNode end) {
    int[] ids = new int[end.depthBlocks];
    for (RadixNode n = end; !n.isRoot(); n = n.parent) {
      System.arraycopy(n.blocks, 0, ids, n.depthBlocks - n.blocks.length, n.blocks.length);
    }
    return ids;
  }

  private int[] pathTokens(RadixNode end) {
    int[] tokens = new int[end.depthBlocks * pageSize];
    for (RadixNode n = end; !n.isRoot(); n = n.parent) {
      System.arraycopy(n.tokens, 0, tokens, (n.depthBlocks - n.blocks.length) * pageSize,
          n.tokens.length);
    }
    return tokens;
  }

  private List<TreeSnapshot.Node> snapshotChildren(RadixNode node) {
    if (node.isLeaf()) {
      return List.of();
    }
    List<TreeSnapshot.Node> list = new ArrayList<>(node.children.size());
    node.children.values().stream()
        .sorted(Comparator.comparingLong((RadixNode c) -> c.id))
        .forEach(c -> list.add(new TreeSnapshot.Node(c.tokens.length, c.blocks.length,
            c.lockRef, c.hits, c.lastAccess, snapshotChildren(c))));
    return List.copyOf(list);
  }
}
