package dev.radixserve.server.engine;

import static dev.radixserve.server.engine.TinyTierModel.TINY;

import dev.radixserve.model.ModelRunner;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.RandomGpt2;
import java.nio.file.Path;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What each engine-level tier test starts from: {@link TinyTierModel}'s weights (seed 5), a
 * runner over them made by the subclass, a temporary directory for a disk tier; both closed
 * after each test.
 */
abstract class TinyRunnerFixture<R extends ModelRunner> {

  protected final GptWeights weights = RandomGpt2.create(TINY, 5);
  protected final R runner;

  @TempDir
  protected Path dir;

  protected TinyRunnerFixture(Function<GptWeights, R> open) {
    this.runner = open.apply(weights);
  }

  @AfterEach
  void closeRunner() {
    runner.close();
    weights.close();
  }
}
