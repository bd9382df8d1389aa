package dev.radixserve.cache;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Eviction of 1,000 blocks (about 100 leaves of 10 blocks) from the {@link RadixCacheBenchmark}
 * tree (about 124,000 cached blocks, 10,000 leaves). Before each invocation, untimed, 1,000
 * fresh blocks go in, so the tree stays the same size.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class EvictionBenchmark {

  private final RadixCacheBenchmark tree = new RadixCacheBenchmark();

  @Setup(Level.Trial)
  public void buildTree() {
    tree.buildTree();
  }

  @Setup(Level.Invocation)
  public void refill() {
    tree.refill1000();
  }

  @Benchmark
  public int evict1000() {
    return tree.cache().evict(1000);
  }
}
