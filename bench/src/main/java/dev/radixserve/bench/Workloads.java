package dev.radixserve.bench;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The catalogue of workloads by {@code --workload} name; {@code all} runs them in this order.
 * One spelling per name, kebab-case like every other option value; another is refused with the
 * list of names (no aliases: {@code eviction_pressure} once named a different workload than
 * {@code eviction-pressure}; the published one is {@code group-eviction} now).
 */
public final class Workloads {

  public static final String ALL = "all";

  private static final Map<String, Function<WorkloadParams, Workload>> BY_NAME = catalogue();

  private Workloads() {}

  private static Map<String, Function<WorkloadParams, Workload>> catalogue() {
    Map<String, Function<WorkloadParams, Workload>> m = new LinkedHashMap<>();
    m.put("shared-system-prompt", ChatWorkloads::sharedSystemPrompt);
    m.put("multi-turn", ChatWorkloads::multiTurn);
    m.put("few-shot", ChatWorkloads::fewShot);
    m.put("agent-loop", ChatWorkloads::agentLoop);
    m.put("unique", ChatWorkloads::unique);
    m.put("eviction-pressure", ChatWorkloads::evictionPressure);
    m.put("tiered-system-prompts", TierWorkloads::zipfSystemPrompts);
    m.put("shared-prefix-basic", PublishedScenarios::sharedPrefixBasic);
    m.put("high-reuse-many-requests", PublishedScenarios::highReuseManyRequests);
    m.put("branching-conversation", PublishedScenarios::branchingConversation);
    m.put("multi-prefix-groups", PublishedScenarios::multiPrefixGroups);
    m.put("low-reuse-control", PublishedScenarios::lowReuseControl);
    m.put("group-eviction", PublishedScenarios::evictionPressure);
    return Collections.unmodifiableMap(m);
  }

  public static List<String> names() {
    return List.copyOf(BY_NAME.keySet());
  }

  public static Workload create(String name, WorkloadParams params) {
    Function<WorkloadParams, Workload> generator = BY_NAME.get(name);
    if (generator == null) {
      throw new IllegalArgumentException(
          "unknown workload '" + name + "'; choose one of " + String.join(", ", names())
              + " or " + ALL + " (spelled with hyphens)");
    }
    return generator.apply(params);
  }

  /**
   * The workloads a {@code --workload} value names: one, or for {@code all} every one but
   * {@code tiered-system-prompts} (it needs a server set up for it, and takes minutes).
   */
  public static List<Workload> select(String name, WorkloadParams params) {
    if (ALL.equals(name)) {
      return names().stream().filter(n -> !n.equals("tiered-system-prompts"))
          .map(n -> create(n, params)).toList();
    }
    return List.of(create(name, params));
  }
}
