package dev.radixserve.server.engine;

import dev.radixserve.server.engine.SequenceBlocks.PrefixHold;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Loads of offloaded blocks into the pool, run on a loader thread while the engine goes on
 * stepping other sequences. A load owns its pool blocks (in use, in no table and not in the
 * cache, so no step touches them) until the engine thread takes it back with {@link #takeDone}.
 * Engine thread only, but for the loader's hand-back queue.
 */
final class TierLoads {

  private static final Logger LOG = Logger.getLogger(TierLoads.class.getName());

  /** One sequence's load: blocks {@code prefix.length ...} of its tokens into {@code ids}. */
  static final class Load {
    final Sequence seq;
    /** Lock on the cached prefix the loaded blocks continue. */
    final PrefixHold prefixHold;
    final int[] prefix;
    final int[] ids;
    private final BlockTiers.TierHits hits;
    /** Written by the loader before it hands the load back (the queue orders the two). */
    private int loaded;
    private boolean cancelled;

    Load(Sequence seq, PrefixHold prefixHold, int[] prefix, BlockTiers.TierHits hits, int[] ids) {
      this.seq = seq;
      this.prefixHold = prefixHold;
      this.prefix = prefix;
      this.hits = hits;
      this.ids = ids;
    }

    /** Blocks loaded, from the first: a failed block ends the run. */
    int loaded() {
      return loaded;
    }

    boolean cancelled() {
      return cancelled;
    }

    private void run() {
      try {
        while (loaded < ids.length && hits.load(loaded, ids[loaded])) {
          loaded++;
        }
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "loading offloaded blocks of " + seq + " failed", e);
      }
    }
  }

  private final Executor loader;
  private final Runnable wake;
  private final Set<Load> inFlight = new LinkedHashSet<>();
  private final Queue<Load> done = new ConcurrentLinkedQueue<>();

  /**
   * @param loader runs the loads (a thread of their own; inline in tests)
   * @param wake tells the engine thread a load is done (called on the loader's thread)
   */
  TierLoads(Executor loader, Runnable wake) {
    this.loader = loader;
    this.wake = wake;
  }

  Load start(Sequence s, PrefixHold prefixHold, int[] prefix, BlockTiers.TierHits hits,
      int[] ids) {
    Load load = new Load(s, prefixHold, prefix, hits, ids);
    inFlight.add(load);
    loader.execute(() -> {
      load.run();
      done.add(load);
      wake.run();
    });
    return load;
  }

  /** The sequence is gone: its load's blocks and lock are given back once it is done. */
  void cancel(Load load) {
    load.cancelled = true;
  }

  /** Loads the loader finished since the last call, no longer in flight. */
  List<Load> takeDone() {
    List<Load> out = new ArrayList<>();
    for (Load l = done.poll(); l != null; l = done.poll()) {
      inFlight.remove(l);
      out.add(l);
    }
    return out;
  }

  boolean busy() {
    return !inFlight.isEmpty();
  }

  /** Pool blocks owned by loads not yet taken back. */
  List<Integer> blocks() {
    List<Integer> out = new ArrayList<>();
    for (Load l : inFlight) {
      for (int id : l.ids) {
        out.add(id);
      }
    }
    return out;
  }
}
