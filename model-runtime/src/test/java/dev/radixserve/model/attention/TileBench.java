package dev.radixserve.model.attention;

import dev.radixserve.model.attention.RowAttention.QueryRun;
import java.util.Random;

/**
 * One tile call alone, in cache: {@link TiledScores#pairs} or {@link TiledValues#pair} over a
 * block of 16 key (value) rows for two query rows, as a grouped decode step or a prefill run
 * calls them, at the JVM's tile width ({@code -Dradixserve.attention.tileBits=256|512}). Prints
 * ns a call and the fma rate, for five rounds of 200,000 calls.
 *
 * <pre>java --add-modules jdk.incubator.vector -cp ... dev.radixserve.model.attention.TileBench
 *     scores|values [headSize = 64]</pre>
 */
public final class TileBench {

  private TileBench() {}

  public static void main(String[] args) {
    boolean scores = args[0].equals("scores");
    int hd = args.length > 1 ? Integer.parseInt(args[1]) : 64;
    int block = 16;
    int width = 2000;
    // 8 queries at 1,500 past tokens, 2 heads over one kv head: the rows of a verification step
    QueryRun run = new QueryRun(0, 0, 8, 1500, new int[200], 0, block, 0, 0, 0, 2, 2, hd,
        (float) (1 / Math.sqrt(hd)), ScoreRule.FULL);
    Random random = new Random(1);
    float[] queries = new float[2 * hd];
    float[] rows = new float[block * hd];
    float[] p = new float[2 * width + 64];
    for (int i = 0; i < queries.length; i++) {
      queries[i] = random.nextFloat() - 0.5f;
    }
    for (int i = 0; i < rows.length; i++) {
      rows[i] = random.nextFloat() - 0.5f;
    }
    for (int i = 0; i < p.length; i++) {
      p[i] = random.nextFloat();
    }
    float[] max = new float[2];
    float[] acc = new float[2 * hd];
    int calls = 200_000;
    for (int round = 0; round < 5; round++) {
      long t0 = System.nanoTime();
      for (int c = 0; c < calls; c++) {
        int j0 = (c % 90) * block; // the block's positions move, as along a context
        if (scores) {
          TiledScores.pairs(run, queries, 0, rows, -j0 * hd, j0, j0 + block, p, 0, max, 0);
        } else {
          for (int d = 0; d < hd; d += 64) {
            TiledValues.pair(p, 0, width, rows, -j0 * hd + d, j0, j0 + block, acc, d, hd);
          }
        }
      }
      long ns = System.nanoTime() - t0;
      System.out.printf("%s, tiles %d bits, head %d: %.1f ns a block of %d rows x 2 queries,"
          + " %.1f GFLOP/s%n", args[0], WideTiles.ON ? 512 : 256, hd, (double) ns / calls, block,
          2.0 * block * 2 * hd * calls / ns);
    }
  }
}
