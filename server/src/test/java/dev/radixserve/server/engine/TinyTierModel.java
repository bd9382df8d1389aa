package dev.radixserve.server.engine;

import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.ModelRunner;
import dev.radixserve.server.kvtier.KvTiers;

/** The tiny GPT-2 shape and pool the engine-level tier tests share: 8 blocks of 4 tokens. */
final class TinyTierModel {

  static final ModelConfig TINY = new ModelConfig(2, 2, 32, 64, 97, 1e-5, "gelu_new");
  static final int B = 4;
  static final int BLOCKS = 8;
  /** A prompt of three whole blocks. */
  static final int[] A = {11, 42, 7, 93, 15, 60, 3, 28, 71, 5, 9, 14};
  /** Six whole blocks sharing nothing with A: with A cached it evicts A. */
  static final int[] C = {
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};

  /** An engine over {@code runner}'s pool with {@code tiers} below it. */
  static EngineHarness harness(ModelRunner runner, KvTiers tiers) {
    return EngineHarness.withTiers(runner.numBlocks(), B, TINY.vocabSize(),
        (step, batch) -> runner.forward(batch), tiers);
  }

  private TinyTierModel() {}
}
