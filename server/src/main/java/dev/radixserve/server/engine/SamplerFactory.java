package dev.radixserve.server.engine;

import dev.radixserve.model.sampling.Sampler;
import dev.radixserve.model.sampling.SamplingParams;

/** Makes the per-sequence sampler (one per choice: it keeps random state and token counts). */
@FunctionalInterface
public interface SamplerFactory {
  Sampler create(SamplingParams params);
}
