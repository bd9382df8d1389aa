package dev.radixserve.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;

/**
 * Speculative decoding's meters, by draft position (1 is the token right after the decoded one):
 * draft tokens verified, those the model agreed with (a token counts only when every draft token
 * before it was accepted too), and their ratio. Positions are registered as drafts first reach
 * them, so the scrape lists only positions that were ever drafted.
 */
final class SpeculationMeters {

  private final MeterRegistry registry;
  private final List<Counter> drafted = new ArrayList<>();
  private final List<Counter> accepted = new ArrayList<>();

  SpeculationMeters(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Engine thread. */
  void speculated(int draftedTokens, int acceptedTokens) {
    while (drafted.size() < draftedTokens) {
      register(drafted.size() + 1);
    }
    for (int i = 0; i < draftedTokens; i++) {
      drafted.get(i).increment();
      if (i < acceptedTokens) {
        accepted.get(i).increment();
      }
    }
  }

  private void register(int position) {
    String tag = Integer.toString(position);
    Counter d = Counter.builder("radixserve.spec.draft.tokens").tag("position", tag)
        .description("Draft tokens verified at this draft position (speculative decoding)")
        .register(registry);
    Counter a = Counter.builder("radixserve.spec.accepted.tokens").tag("position", tag)
        .description("Draft tokens at this position the model agreed with (accepted)")
        .register(registry);
    Gauge.builder("radixserve.spec.acceptance.rate", () -> d.count() == 0 ? 0
            : a.count() / d.count())
        .tag("position", tag)
        .description("Accepted / verified draft tokens at this draft position, since start")
        .register(registry);
    drafted.add(d);
    accepted.add(a);
  }
}
