package dev.radixserve.server.kvevents;

import dev.radixserve.cache.BlockHasher;
import dev.radixserve.cache.CacheNamespace;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The three events of vLLM's {@code vllm/distributed/kv_events.py}, with radixserve's values for
 * the fields it has no use for: {@code lora_id} and {@code lora_name} null (no adapters),
 * {@code medium} {@value #MEDIUM} (vLLM's name for the engine's own KV pool, where radixserve's
 * blocks live whatever the device).
 */
sealed interface KvEvent {

  String MEDIUM = "GPU";
  /** vLLM's name for host memory below the pool (its offloading connector's CPU tier). */
  String MEDIUM_CPU = "CPU";
  /** The disk tier's medium; vLLM has none built in (radixserve's choice, same style). */
  String MEDIUM_DISK = "DISK";

  /**
   * Whole blocks that entered the cache, in path order.
   *
   * @param parentHash the hash of the block before the first, or null when the first is block 0
   * @param tokenIds every token of the blocks, {@code hashes.length * blockSize} of them
   * @param salt the cache salt when the first block is block 0 of a salted namespace (vLLM then
   *     sends it as block 0's {@code extra_keys}, and llm-d folds it into its keys); else null
   * @param medium where the blocks are: {@link #MEDIUM} for the pool, or a tier's
   */
  record BlockStored(long[] hashes, Long parentHash, int[] tokenIds, int blockSize, String salt,
      String medium) implements KvEvent {}

  record BlockRemoved(long[] hashes, String medium) implements KvEvent {}

  record AllBlocksCleared() implements KvEvent {}

  /**
   * The events for one batch of changes, hashed, one for one. A reset's {@link
   * CacheChange.Cleared} follows its {@code BlockRemoved} events, which are kept: an indexer that
   * only logs {@code AllBlocksCleared} (older llm-d) still drops every block.
   */
  static List<KvEvent> of(List<CacheChange> changes, BlockHasher hasher) {
    List<KvEvent> events = new ArrayList<>(changes.size());
    int b = hasher.blockSize();
    for (CacheChange change : changes) {
      switch (change) {
        case CacheChange.Stored s -> {
          long[] chain = hasher.chain(s.namespace(), s.path(), s.toBlock());
          events.add(new BlockStored(Arrays.copyOfRange(chain, s.fromBlock(), s.toBlock()),
              s.fromBlock() == 0 ? null : chain[s.fromBlock() - 1],
              Arrays.copyOfRange(s.path(), s.fromBlock() * b, s.toBlock() * b), b,
              s.fromBlock() == 0 ? CacheNamespace.saltOf(s.namespace()) : null, MEDIUM));
        }
        case CacheChange.Removed r -> events.add(new BlockRemoved(Arrays.copyOfRange(
            hasher.chain(r.namespace(), r.path(), r.toBlock()), r.fromBlock(), r.toBlock()),
            MEDIUM));
        case CacheChange.TierStored t -> events.add(new BlockStored(new long[] {t.hash()},
            t.parentHash(), t.tokens(), b, t.salt(), t.medium()));
        case CacheChange.TierRemoved t ->
            events.add(new BlockRemoved(new long[] {t.hash()}, t.medium()));
        case CacheChange.Cleared c -> events.add(new AllBlocksCleared());
      }
    }
    return events;
  }
}
