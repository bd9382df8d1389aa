package dev.radixserve.server.kvtier;

import dev.radixserve.cache.BlockHasher;
import dev.radixserve.cache.CacheListener;
import dev.radixserve.cache.CacheNamespace;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.model.KvBlockIo;
import dev.radixserve.server.engine.BlockTiers;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The tiers below the KV pool, in order (host memory, then disk): listens to the radix cache and
 * offloads every whole block it evicts into each tier (a partial last block is dropped, as it
 * was before; with {@link DiskWritePolicy#REUSED} the disk tier takes only blocks that were
 * reused), finds and loads blocks for the engine, and on shutdown writes what the pool still
 * caches to the disk tier, so a restart finds it.
 *
 * <p>Entries are keyed by the KV events' chained block hash ({@link BlockHasher}: the model name
 * at its root, the namespace's salt in block 0), so a tier never serves another model's or
 * another tenant's blocks; a disk entry's fingerprint also pins the model's shape, block size and
 * dtype, so a directory reused by another model is skipped.
 *
 * <p>Engine thread: the listener calls, {@link #find}, {@link #clear}, {@link #offloading}. The
 * loader thread: {@link BlockTiers.TierHits#load}.
 */
public final class KvTiers implements BlockTiers, CacheListener, AutoCloseable {

  private final List<KvTier> tiers;
  private final KvBlockIo io;
  private final BlockHasher hasher;
  private final int blockSize;
  private final Arena arena = Arena.ofShared();
  /** Engine thread: a block on its way out. */
  private final MemorySegment offloadBuffer;
  /** Loader thread: a block on its way in. */
  private final MemorySegment loadBuffer;
  private boolean offloading = true;
  private final DiskWritePolicy diskWrites;
  /**
   * Engine thread: pool blocks reused since they entered the cache ({@link #reused}); cleared
   * when a block enters or leaves the tree. Only kept under {@link DiskWritePolicy#REUSED}.
   * Tracked here by pool block id, not with the radix node's {@code hits}: those also count the
   * inserting request's own re-match after each chunk and the scheduler's probes.
   */
  private final java.util.BitSet reusedBlocks = new java.util.BitSet();
  /**
   * Engine thread: hashes of blocks kept off the disk at an eviction; the next eviction of the
   * same hash writes it (see {@link EvictedOnce}). Null unless {@link DiskWritePolicy#REUSED}.
   */
  private final EvictedOnce evictedOnce;
  /** Engine-thread time spent offloading evicted blocks (hashing, export, tier puts). */
  private volatile long offloadNanos;
  private volatile TierListener listener;
  /** Entries stored or removed in any tier so far (the cache view's "changed since"). */
  private final java.util.concurrent.atomic.AtomicLong changes =
      new java.util.concurrent.atomic.AtomicLong();

  private KvTiers(List<KvTier> tiers, KvBlockIo io, BlockHasher hasher,
      DiskWritePolicy diskWrites, long diskBytes) {
    this.tiers = List.copyOf(tiers);
    this.diskWrites = java.util.Objects.requireNonNull(diskWrites, "diskWrites");
    // remember about as many skipped blocks as the disk tier holds (within 1 Ki .. 1 Mi hashes)
    this.evictedOnce = diskWrites == DiskWritePolicy.REUSED
        ? new EvictedOnce((int) Math.clamp(diskBytes / Math.max(1, io.blockBytes()), 1024,
            1 << 20))
        : null;
    this.io = io;
    this.hasher = hasher;
    this.blockSize = hasher.blockSize();
    this.offloadBuffer = arena.allocate(io.blockBytes(), 64);
    this.loadBuffer = arena.allocate(io.blockBytes(), 64);
  }

  /**
   * @param hostBytes budget of the host-memory tier; 0 for none
   * @param dir the disk tier's directory; null for none
   * @param diskBytes the disk tier's budget
   * @param diskWrites which evicted blocks the disk tier takes
   * @param model the served model's name (in every block hash)
   * @param modelShape what else a block's KV depends on (layers, width, heads, dtype): in the
   *     disk entries' fingerprint
   */
  public static KvTiers create(long hostBytes, Path dir, long diskBytes,
      DiskWritePolicy diskWrites, KvBlockIo io, String model, String modelShape, int blockSize) {
    List<KvTier> list = new ArrayList<>();
    BlockHasher hasher = new BlockHasher(model, blockSize);
    Forward events = new Forward(hasher.root());
    if (hostBytes > 0) {
      list.add(new HostTier(hostBytes, io.blockBytes(), events));
    }
    if (dir != null) {
      list.add(new DiskTier(dir, diskBytes,
          new EntryFile.Format(fingerprint(model, modelShape, blockSize), blockSize,
              io.blockBytes()), events));
    }
    if (list.isEmpty()) {
      throw new IllegalArgumentException("no tier configured");
    }
    KvTiers t = new KvTiers(list, io, hasher, diskWrites, dir == null ? 0 : diskBytes);
    events.owner = t;
    return t;
  }

  /**
   * Tells {@code l} about every block the tiers hold now (those indexed from disk at start
   * included) and from now on about each store and removal.
   */
  public void setListener(TierListener l) {
    Forward replay = new Forward(hasher.root());
    replay.owner = this;
    listener = l;
    for (KvTier t : tiers) {
      t.replay(key -> replay.stored(t, key, l));
    }
  }

  /** Hands tier events to the listener, once there is one. */
  private static final class Forward implements KvTier.Events {
    private final long root;
    KvTiers owner;

    Forward(long root) {
      this.root = root;
    }

    @Override
    public void stored(KvTier tier, BlockKey key) {
      if (owner != null) {
        owner.changes.incrementAndGet();
      }
      TierListener l = owner == null ? null : owner.listener;
      if (l != null) {
        stored(tier, key, l);
      }
    }

    void stored(KvTier tier, BlockKey key, TierListener l) {
      l.stored(tier.medium(), key.hash(), key.parent() == root ? null : key.parent(),
          key.tokens(), key.salt());
    }

    @Override
    public void removed(KvTier tier, long hash) {
      if (owner != null) {
        owner.changes.incrementAndGet();
      }
      TierListener l = owner == null ? null : owner.listener;
      if (l != null) {
        l.removed(tier.medium(), hash);
      }
    }
  }

  /** 64 bits of SHA-256 over what a block file's bytes mean. */
  static long fingerprint(String model, String modelShape, int blockSize) {
    try {
      byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(
          ("radixserve-kv-v1|" + model + "|" + modelShape + "|B=" + blockSize)
              .getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return java.nio.ByteBuffer.wrap(d).getLong();
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JDK", e);
    }
  }

  /** The hasher of every key (the view places offloaded blocks by their chain). */
  public BlockHasher hasher() {
    return hasher;
  }

  /** Engine-thread time spent offloading evicted blocks so far. */
  public long offloadNanos() {
    return offloadNanos;
  }

  /** Entries stored or removed so far: unchanged means {@link #index()} is unchanged. */
  public long changes() {
    return changes.get();
  }

  /**
   * One block the tiers hold, for the cache view.
   *
   * @param media the tiers holding it, fastest first, as the KV events name them ("CPU", "DISK")
   */
  public record IndexedBlock(long hash, long parent, int[] tokens, String salt,
      List<String> media) {}

  /** Every block some tier holds (any thread; does not change recency). */
  public List<IndexedBlock> index() {
    java.util.Map<Long, IndexedBlock> blocks = new java.util.LinkedHashMap<>();
    for (KvTier t : tiers) {
      t.replay(key -> blocks.merge(key.hash(), new IndexedBlock(key.hash(), key.parent(),
          key.tokens(), key.salt(), List.of(t.medium())), (a, b) -> new IndexedBlock(a.hash(),
          a.parent(), a.tokens(), a.salt() != null ? a.salt() : b.salt(),
          java.util.stream.Stream.concat(a.media().stream(), b.media().stream()).toList())));
    }
    return List.copyOf(blocks.values());
  }

  public List<TierStats> stats() {
    return tiers.stream().map(KvTier::stats).toList();
  }

  // ---- offload: the radix cache's evictions ----

  @Override
  public void evicted(String namespace, long nodeId, int[] pathTokens, int[] blocks) {
    if (offloading) {
      long t0 = System.nanoTime();
      offload(namespace, pathTokens, blocks, tiers, KvTier::put,
          evictedOnce == null ? null
              : (block, hash) -> reusedBlocks.get(block) || evictedOnce.seenBefore(hash));
      offloadNanos += System.nanoTime() - t0; // engine thread only: no lost update
    }
    forget(blocks);
  }

  @Override
  public void stored(String namespace, long nodeId, long parentId, int[] pathTokens,
      int[] blocks) {
    forget(blocks); // a block back in the tree holds new tokens: not reused yet
  }

  @Override
  public void reused(int[] poolBlocks) {
    if (diskWrites == DiskWritePolicy.REUSED) {
      for (int b : poolBlocks) {
        reusedBlocks.set(b);
      }
    }
  }

  private void forget(int[] blocks) {
    for (int b : blocks) {
      reusedBlocks.clear(b);
    }
  }

  /** How a block goes into a tier. */
  private interface Store {
    void put(KvTier tier, BlockKey key, MemorySegment kv);
  }

  /** Whether an evicted block goes to the disk tier (asked once per block the disk lacks). */
  private interface DiskFilter {
    boolean accepts(int poolBlock, long hash);
  }

  /**
   * Writes the whole blocks among a node's {@code blocks} into {@code into}; into the disk tier
   * only those {@code toDisk} accepts (null: all).
   */
  private void offload(String namespace, int[] path, int[] blocks, List<KvTier> into,
      Store store, DiskFilter toDisk) {
    int whole = path.length / blockSize;
    int first = (path.length + blockSize - 1) / blockSize - blocks.length; // path index of blocks[0]
    if (first >= whole) {
      return;
    }
    long[] hashes = hasher.chain(namespace, path, whole);
    for (int i = first; i < whole; i++) {
      BlockKey key = key(namespace, hashes, path, i);
      boolean exported = false;
      int block = blocks[i - first];
      for (KvTier t : into) {
        if (t.holds(key)
            || toDisk != null && t instanceof DiskTier && !toDisk.accepts(block, key.hash())) {
          continue;
        }
        if (!exported) {
          io.exportBlock(block, offloadBuffer);
          exported = true;
        }
        store.put(t, key, offloadBuffer);
      }
    }
  }

  private BlockKey key(String namespace, long[] hashes, int[] path, int i) {
    return new BlockKey(hashes[i], i == 0 ? hasher.root() : hashes[i - 1],
        Arrays.copyOfRange(path, i * blockSize, (i + 1) * blockSize),
        i == 0 ? CacheNamespace.saltOf(namespace) : null);
  }

  /**
   * Writes every whole block {@code cache} holds to the disk tier (none without one): at
   * shutdown, after the engine stopped, so a restart finds what the pool cached.
   */
  public void persist(RadixCache cache) {
    for (KvTier t : tiers) {
      if (t instanceof DiskTier disk) {
        cache.replay(new CacheListener() {
          @Override
          public void stored(String namespace, long nodeId, long parentId, int[] pathTokens,
              int[] blocks) {
            offload(namespace, pathTokens, blocks, List.of(disk),
                (t, key, kv) -> disk.putWaiting(key, kv), null); // every block, whatever the policy
          }
        });
      }
    }
  }

  // ---- load: the engine's lookups ----

  @Override
  public TierHits find(String namespace, int[] tokens, int from, int to) {
    long[] hashes = hasher.chain(namespace, tokens, to);
    List<BlockKey> found = new ArrayList<>();
    for (int i = from; i < to; i++) {
      BlockKey key = key(namespace, hashes, tokens, i);
      if (!anyHolds(key)) {
        break;
      }
      found.add(key);
    }
    return new Hits(found);
  }

  private boolean anyHolds(BlockKey key) {
    for (KvTier t : tiers) {
      if (t.holds(key)) {
        t.hit();
        return true;
      }
    }
    return false;
  }

  private final class Hits implements TierHits {
    private final List<BlockKey> keys;

    Hits(List<BlockKey> keys) {
      this.keys = keys;
    }

    @Override
    public int count() {
      return keys.size();
    }

    @Override
    public boolean load(int i, int poolBlock) {
      BlockKey key = keys.get(i);
      for (KvTier t : tiers) {
        if (t.read(key, loadBuffer)) {
          io.importBlock(poolBlock, loadBuffer);
          return true;
        }
      }
      return false;
    }
  }

  @Override
  public void clear() {
    tiers.forEach(KvTier::clear);
  }

  @Override
  public void offloading(boolean on) {
    offloading = on;
  }

  /** Finishes queued disk writes, frees host memory. After the engine and its loader stopped. */
  @Override
  public void close() {
    offloading = false;
    tiers.forEach(KvTier::close);
    arena.close();
  }
}
