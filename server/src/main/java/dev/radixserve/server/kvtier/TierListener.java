package dev.radixserve.server.kvtier;

/**
 * Told when a tier starts or stops holding a block (for the KV events' {@code medium}). Called
 * on whichever thread changed the tier (engine, disk writer, loader): must be cheap and
 * thread-safe, and must not call back into the tiers.
 */
public interface TierListener {

  /**
   * @param medium the tier's medium in vLLM's terms ({@code "CPU"}, {@code "DISK"})
   * @param parentHash the hash of the block before, null for block 0
   * @param salt block 0's cache salt when known
   */
  void stored(String medium, long hash, Long parentHash, int[] tokens, String salt);

  void removed(String medium, long hash);
}
