package dev.radixserve.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The six scenarios of a published radix-tree benchmark (run there at block size 4), rebuilt from
 * their request counts and prompt-token totals. Every prompt is 24–32 tokens; shared parts are
 * whole multiples of 4 tokens so that, at block size 4, the theoretical maximum is exactly the
 * shared part. The published hit rates (87.5 / 95.8 / 87.5 / 83.3 / 0 / 79.2 %) equal the share
 * of requests that hit at all; see {@code PublishedScenariosTest} for what these structures give.
 * Counts are fixed: {@code --num-requests} does not apply.
 */
final class PublishedScenarios {

  private PublishedScenarios() {}

  /** 8 requests × (16 shared + 8 distinct) = 192 tokens. */
  static Workload sharedPrefixBasic(WorkloadParams p) {
    return groups("shared-prefix-basic", p, 1, 8, 16, 8, false,
        "8 requests: one shared 16-token prefix + a distinct 8-token suffix (192 tokens)");
  }

  /** 24 requests × (24 shared + 4 distinct) = 672 tokens. */
  static Workload highReuseManyRequests(WorkloadParams p) {
    return groups("high-reuse-many-requests", p, 1, 24, 24, 4, false,
        "24 requests: one shared 24-token prefix + a distinct 4-token suffix (672 tokens)");
  }

  /** 8 requests × (24-token trunk + 8-token branch) = 256 tokens. */
  static Workload branchingConversation(WorkloadParams p) {
    return groups("branching-conversation", p, 1, 8, 24, 8, false,
        "8 requests: one 24-token conversation trunk + a distinct 8-token branch (256 tokens)");
  }

  /** 4 groups × 6 requests × (16 group prefix + 8 distinct) = 576 tokens, groups interleaved. */
  static Workload multiPrefixGroups(WorkloadParams p) {
    return groups("multi-prefix-groups", p, 4, 6, 16, 8, true,
        "24 requests: 4 groups of 6 sharing a 16-token group prefix + a distinct 8-token suffix,"
            + " groups interleaved (576 tokens)");
  }

  /** 8 distinct 24-token prompts = 192 tokens. */
  static Workload lowReuseControl(WorkloadParams p) {
    return groups("low-reuse-control", p, 8, 1, 0, 24, false,
        "8 requests: distinct 24-token prompts, nothing shared (192 tokens)");
  }

  /**
   * 6 groups × 4 requests × (16 group prefix + 8 distinct) = 576 tokens, one group after the
   * other. Published with a cache of 8 blocks of 4 (32 tokens): one 24-token prompt takes 6
   * blocks, so each new group evicts the previous one's prefix.
   */
  static Workload evictionPressure(WorkloadParams p) {
    return groups("group-eviction", p, 6, 4, 16, 8, false,
        "24 requests: 6 groups of 4 sharing a 16-token group prefix + a distinct 8-token suffix,"
            + " groups in sequence; published with a cache of 8 blocks of 4 tokens (576 tokens)");
  }

  private static Workload groups(String name, WorkloadParams p, int groups, int perGroup,
      int prefixTokens, int suffixTokens, boolean interleaveGroups, String description) {
    TokenSource tokens = new TokenSource(p.seed(), name);
    List<int[]> prefixes = new ArrayList<>();
    for (int g = 0; g < groups; g++) {
      prefixes.add(tokens.tokens(prefixTokens));
    }
    List<int[]> prompts = new ArrayList<>();
    for (int i = 0; i < groups * perGroup; i++) {
      int g = interleaveGroups ? i % groups : i / perGroup;
      prompts.add(TokenSource.concat(prefixes.get(g), tokens.tokens(suffixTokens)));
    }
    Workload w = Workload.independent(name, description, prompts);
    p.requireFits(name, w.maxPromptLength());
    return w;
  }
}
