package dev.radixserve.server.kvtier;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * Offloaded blocks in a local directory, one {@link EntryFile} per block, named by its hash,
 * within a byte budget (least recently used files deleted first). Writes run on a writer thread
 * of their own (temp file, then an atomic rename), so the engine thread only copies the block
 * (into a reused off-heap buffer);
 * when the writer is more than {@link #MAX_PENDING_BYTES} behind, a block is dropped instead
 * (counted). Blocks become visible to lookups once renamed into place.
 *
 * <p>At start the directory's entries are indexed from their headers (oldest modified first in
 * the recency order): a temp file left by a crash or an entry whose header or length does not
 * check out is deleted and counted as corrupt; another model's entries are counted and left
 * alone. The checksum is checked on every load; a failing entry is deleted, counted, and the
 * block is computed instead.
 */
final class DiskTier extends LruTier<DiskTier.Entry> {

  private static final Logger LOG = Logger.getLogger(DiskTier.class.getName());
  static final long MAX_PENDING_BYTES = 256L << 20;
  /** Payload buffers kept for reuse at most (more are left to the GC after their write). */
  static final int SPARE_BUFFERS = 16;

  record Entry(BlockKey key, Path path) implements LruTier.Keyed {}

  private final Path dir;
  private final long budgetBytes;
  private final EntryFile.Format format;
  private final Events events;
  private final ExecutorService writer;
  private final Set<Long> pending = new HashSet<>();
  /**
   * Off-heap payload buffers of written blocks, reused: the engine thread's copy of a block goes
   * into one (no heap array to allocate, zero and collect per block) and the writer writes it
   * as it is (no copy into a temporary direct buffer). Guarded by the monitor.
   */
  private final ArrayDeque<MemorySegment> spare = new ArrayDeque<>();
  /** Loader thread only: one entry file. */
  private final ByteBuffer readBuffer;
  private long pendingBytes;
  /** Bumped by {@link #clear}: writes queued before it are not indexed. */
  private long generation;
  private long loads;
  private long loadNanos;
  private long stores;
  private long evictions;
  private long corrupt;
  private long foreign;
  private long dropped;

  /**
   * Indexes what {@code dir} holds (created if missing).
   *
   * @throws IllegalArgumentException when the budget holds no entry
   * @throws UncheckedIOException when the directory cannot be created or listed
   */
  DiskTier(Path dir, long budgetBytes, EntryFile.Format format, Events events) {
    if (budgetBytes < format.fileBytes()) {
      throw new IllegalArgumentException("a disk tier of " + budgetBytes
          + " bytes holds no block file of " + format.fileBytes() + " bytes");
    }
    this.dir = dir;
    this.budgetBytes = budgetBytes;
    this.format = format;
    this.events = events;
    this.readBuffer = ByteBuffer.allocateDirect((int) format.fileBytes());
    try {
      Files.createDirectories(dir);
      scan();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot use " + dir + " as a KV tier", e);
    }
    synchronized (this) {
      evictOverBudget();
    }
    this.writer = Executors.newSingleThreadExecutor(
        Thread.ofPlatform().name("radixserve-kv-disk-writer").daemon().factory());
  }

  private void scan() throws IOException {
    List<Path> files;
    try (Stream<Path> list = Files.list(dir)) {
      files = new ArrayList<>(list.toList());
    }
    files.sort(Comparator.comparing(DiskTier::modified));
    for (Path f : files) {
      String name = f.getFileName().toString();
      if (name.endsWith(EntryFile.TEMP_SUFFIX)) {
        corrupt++; // a write that never finished
        Files.deleteIfExists(f);
        continue;
      }
      if (!name.endsWith(EntryFile.SUFFIX)) {
        continue;
      }
      try {
        BlockKey key = EntryFile.readKey(f, format);
        if (!name.equals(EntryFile.fileName(key.hash()))) {
          throw new EntryFile.BadEntry("named " + name + " but holds " + key);
        }
        entries.put(key.hash(), new Entry(key, f));
      } catch (EntryFile.ForeignEntry e) {
        foreign++;
      } catch (EntryFile.BadEntry e) {
        corrupt++;
        LOG.warning(() -> "KV tier: skipping " + f + ": " + e.getMessage());
        Files.deleteIfExists(f);
      }
    }
    if (!entries.isEmpty() || corrupt > 0 || foreign > 0) {
      LOG.info(String.format("KV disk tier %s: %d blocks indexed, %d corrupt deleted,"
          + " %d of another model skipped", dir, entries.size(), corrupt, foreign));
    }
  }

  private static FileTime modified(Path p) {
    try {
      return Files.getLastModifiedTime(p);
    } catch (IOException e) {
      return FileTime.fromMillis(0);
    }
  }

  @Override
  public String name() {
    return "disk";
  }

  @Override
  public String medium() {
    return "DISK";
  }

  @Override
  public void put(BlockKey key, MemorySegment kv) {
    enqueue(key, kv, false);
  }

  /**
   * {@link #put}, but waits for the writer instead of dropping the block when it is behind: for
   * the shutdown's write of everything cached, where no engine waits.
   */
  void putWaiting(BlockKey key, MemorySegment kv) {
    enqueue(key, kv, true);
  }

  private void enqueue(BlockKey key, MemorySegment kv, boolean waitForRoom) {
    MemorySegment payload;
    long gen;
    synchronized (this) {
      if (entry(key) != null || pending.contains(key.hash())) {
        return;
      }
      while (waitForRoom && pendingBytes + format.fileBytes() > MAX_PENDING_BYTES
          && !writer.isShutdown()) {
        try {
          wait();
        } catch (InterruptedException ex) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      if (pendingBytes + format.fileBytes() > MAX_PENDING_BYTES || writer.isShutdown()) {
        dropped++;
        return;
      }
      pending.add(key.hash());
      pendingBytes += format.fileBytes();
      gen = generation;
      payload = spare.poll();
    }
    if (payload == null) {
      // an automatic arena: freed by the GC once dropped, without the handshake with every
      // thread that closing a shared arena costs
      payload = Arena.ofAuto().allocate(format.payloadBytes(), 64);
    }
    MemorySegment.copy(kv, 0, payload, 0, format.payloadBytes());
    MemorySegment p = payload;
    writer.execute(() -> {
      try {
        write(key, p.asByteBuffer(), gen);
      } finally {
        reuse(p);
      }
    });
  }

  private synchronized void reuse(MemorySegment payload) {
    if (spare.size() < SPARE_BUFFERS) {
      spare.push(payload);
    }
  }

  private void write(BlockKey key, ByteBuffer payload, long gen) {
    Path target = dir.resolve(EntryFile.fileName(key.hash()));
    Path temp = dir.resolve(EntryFile.fileName(key.hash()) + "." + gen + EntryFile.TEMP_SUFFIX);
    boolean written = false;
    try {
      Files.deleteIfExists(temp);
      EntryFile.write(temp, format, key, payload);
      move(temp, target);
      written = true;
    } catch (IOException | RuntimeException e) {
      LOG.log(Level.WARNING, "KV tier: could not write " + target, e);
      deleteQuietly(temp);
    }
    synchronized (this) {
      pending.remove(key.hash());
      pendingBytes -= format.fileBytes();
      notifyAll();
      if (!written) {
        dropped++;
        return;
      }
      if (gen != generation) { // cleared meanwhile
        deleteQuietly(target);
        return;
      }
      entries.put(key.hash(), new Entry(key, target));
      stores++;
      events.stored(this, key);
      evictOverBudget();
    }
  }

  private static void move(Path from, Path to) throws IOException {
    try {
      Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private void evictOverBudget() {
    long max = budgetBytes / format.fileBytes();
    Iterator<Map.Entry<Long, Entry>> eldest = entries.entrySet().iterator();
    while (entries.size() > max && eldest.hasNext()) {
      Entry e = eldest.next().getValue();
      eldest.remove();
      deleteQuietly(e.path);
      evictions++;
      events.removed(this, e.key.hash());
    }
  }

  @Override
  public boolean read(BlockKey key, MemorySegment dst) {
    Entry e;
    synchronized (this) {
      e = entry(key);
    }
    if (e == null) {
      return false;
    }
    long start = System.nanoTime();
    synchronized (readBuffer) {
      try {
        EntryFile.read(e.path, format, key, readBuffer);
        MemorySegment.copy(MemorySegment.ofBuffer(readBuffer), 0, dst, 0, format.payloadBytes());
      } catch (EntryFile.BadEntry | IOException ex) {
        // gone (evicted or cleared since the lookup), or damaged: never loaded; an interrupted
        // read (shutdown) says nothing about the file
        boolean damaged = !(ex instanceof java.nio.file.NoSuchFileException
            || ex instanceof java.nio.channels.ClosedChannelException);
        synchronized (this) {
          if (entries.get(key.hash()) == e) {
            entries.remove(key.hash());
            events.removed(this, key.hash());
            if (damaged) {
              corrupt++;
              LOG.warning(() -> "KV tier: dropping " + e.path + ": " + ex.getMessage());
              deleteQuietly(e.path);
            }
          }
        }
        return false;
      }
    }
    synchronized (this) {
      loads++;
      loadNanos += System.nanoTime() - start;
    }
    return true;
  }

  @Override
  public synchronized void clear() {
    generation++;
    for (Entry e : entries.values()) {
      deleteQuietly(e.path);
      events.removed(this, e.key.hash());
    }
    entries.clear();
  }

  @Override
  public synchronized TierStats stats() {
    return new TierStats(name(), entries.size(), entries.size() * format.fileBytes(), hits, loads,
        loadNanos, stores, evictions, corrupt + foreign, dropped);
  }

  /** Finishes the queued writes (a graceful shutdown keeps what it offloaded) and stops. */
  @Override
  public void close() {
    writer.shutdown();
    try {
      if (!writer.awaitTermination(60, TimeUnit.SECONDS)) {
        LOG.warning("KV tier: writes still queued after 60 s; the rest is lost");
        writer.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      LOG.log(Level.FINE, "KV tier: could not delete " + p, e);
    }
  }
}
