package dev.radixserve.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;

/** The chart's ratio values stay clear of the ratio panel's title, whatever the ratios. */
class HitRateChartTest {

  private static RunSummary summary(String workload) {
    return new RunSummary(workload, "http://a", "m", 8, 8, 0, 1, 8, 32, 100, null, null, null,
        192, 32, 100, 0.5, 7, true, 16, 112, 0.58, 7, 168, 0.875);
  }

  private static BufferedImage chart(double... ratios) {
    List<RunSummary> primary = new ArrayList<>();
    List<Comparison> comparisons = new ArrayList<>();
    for (int i = 0; i < ratios.length; i++) {
      primary.add(summary("workload-" + i));
      comparisons.add(new Comparison("workload-" + i, "http://a", "http://b", ratios[i], 1.0,
          1.0, 1.0, 0.5, 0.0, null));
    }
    return HitRateChart.render(primary, comparisons, List.of());
  }

  @Test
  void ratioValuesNeverReachThePanelTitle() throws Exception {
    // the title band above the ratio panel, right of the axis (tick values are left of it)
    BufferedImage low = chart(0.5, 0.6, 0.7);
    for (double[] ratios : new double[][] {{3.0, 1.2, 0.9}, {2.0, 2.0, 2.0}, {1.98, 7.0, 4.5}}) {
      BufferedImage high = chart(ratios);
      Files.createDirectories(Path.of("target"));
      ImageIO.write(high, "png", Path.of("target", "hit-rate-chart-test.png").toFile());
      for (int y = HitRateChart.RATIO_TOP - 18; y < HitRateChart.RATIO_TOP; y++) {
        for (int x = 70; x < high.getWidth(); x++) {
          assertEquals(low.getRGB(x, y), high.getRGB(x, y),
              "ratios " + java.util.Arrays.toString(ratios) + ": something drawn at (" + x + ", "
                  + y + ") over the panel title");
        }
      }
    }
  }
}
