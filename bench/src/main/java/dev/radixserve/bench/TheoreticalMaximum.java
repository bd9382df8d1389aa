package dev.radixserve.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The most tokens a block-granular prefix cache of unlimited size could serve: for each prompt in
 * the given order, the longest prefix it shares with any earlier prompt, counted in whole blocks
 * and never covering its last token (whose logits must be computed), so at most
 * {@code floor((len - 1) / blockSize) * blockSize}. Earlier prompts only — model outputs are not
 * assumed to be cached.
 *
 * <p>At block size 1 this is the token-granular maximum: every token a prompt shares with an
 * earlier one but its last ({@link #perRequestTokens}).
 *
 * <p>Deliberately independent of {@code cache-core}: it keeps the set of every block-aligned
 * prefix seen so far, each identified exactly by (id of the prefix one block shorter, the
 * block's token ids), so a lookup walks block by block until the chain breaks.
 */
public final class TheoreticalMaximum {

  private final int blockSize;
  /** (parent prefix id, block tokens) → prefix id; id 0 is the empty prefix. */
  private final Map<PrefixKey, Integer> prefixes = new HashMap<>();

  private record PrefixKey(int parent, List<Integer> block) {}

  public TheoreticalMaximum(int blockSize) {
    if (blockSize < 1) {
      throw new IllegalArgumentException("block size must be >= 1, got " + blockSize);
    }
    this.blockSize = blockSize;
  }

  /** Cached tokens this prompt could get from the prompts offered before it; then records it. */
  public int offer(int[] prompt) {
    int matchable = (prompt.length - 1) / blockSize;
    int parent = 0;
    int matched = 0;
    while (matched < matchable) {
      Integer id = prefixes.get(key(parent, prompt, matched));
      if (id == null) {
        break;
      }
      parent = id;
      matched++;
    }
    record(prompt);
    return matched * blockSize;
  }

  private void record(int[] prompt) {
    int parent = 0;
    for (int b = 0; b < prompt.length / blockSize; b++) {
      PrefixKey key = key(parent, prompt, b);
      Integer id = prefixes.get(key);
      if (id == null) {
        id = prefixes.size() + 1;
        prefixes.put(key, id);
      }
      parent = id;
    }
  }

  private PrefixKey key(int parent, int[] prompt, int block) {
    int from = block * blockSize;
    return new PrefixKey(parent,
        Arrays.stream(Arrays.copyOfRange(prompt, from, from + blockSize)).boxed().toList());
  }

  /** Per-request maxima to the token (block size 1) for the workload's planned order. */
  public static int[] perRequestTokens(Workload workload) {
    return perRequest(workload, 1);
  }

  /** Per-request maxima for the workload's planned order. */
  public static int[] perRequest(Workload workload, int blockSize) {
    TheoreticalMaximum max = new TheoreticalMaximum(blockSize);
    int[] cached = new int[workload.size()];
    List<BenchRequest> requests = new ArrayList<>(workload.requests());
    for (BenchRequest r : requests) {
      cached[r.index()] = max.offer(r.prompt());
    }
    return cached;
  }
}
