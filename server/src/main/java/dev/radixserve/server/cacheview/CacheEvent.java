package dev.radixserve.server.cacheview;

/**
 * One change of the radix cache as the live view lists it. Recorded on the engine thread (cheap:
 * no decoding, arrays handed over by the cache), turned into JSON on the view's own thread.
 * {@code seq} orders events; {@code time} is wall-clock milliseconds.
 */
sealed interface CacheEvent {

  long seq();

  long time();

  /** A new leaf: {@code blocks} blocks ending a path of {@code pathTokens}. */
  record Stored(long seq, long time, String namespace, long node, long parent, int[] pathTokens,
      int blocks) implements CacheEvent {}

  /** {@code node} gave its first {@code upperTokens} tokens to the new parent {@code upper}. */
  record Split(long seq, long time, String namespace, long node, long upper, int upperTokens)
      implements CacheEvent {}

  /** A leaf left the tree; its {@code blocks} went back to the pool. */
  record Evicted(long seq, long time, String namespace, long node, int[] pathTokens, int blocks)
      implements CacheEvent {}

  /** A running request locked the path ending at {@code node}. */
  record Locked(long seq, long time, String namespace, long node, int lockRef)
      implements CacheEvent {}

  /** A lock on the path ending at {@code node} was released. */
  record Unlocked(long seq, long time, String namespace, long node, int lockRef)
      implements CacheEvent {}

  /** An admission's prefix match: the path to {@code node} covers {@code matchedTokens}. */
  record Matched(long seq, long time, String requestId, int choice, String namespace, long node,
      int matchedTokens, int queriedTokens) implements CacheEvent {}
}
