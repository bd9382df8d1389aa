package dev.radixserve.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.imageio.ImageIO;

/**
 * A PNG of grouped bars per workload: top, the measured hit rate beside the theoretical maxima
 * (to the token and in whole blocks; and the compare server's hit rate when there is one); bottom, the throughput ratio
 * primary / compare with a line at 1.0. Drawn headless with java.awt.
 */
final class HitRateChart {

  private static final int WIDTH = 1200;
  private static final int HEIGHT = 860;
  private static final int LEFT = 70;
  private static final int RIGHT = 20;
  /** Top of the throughput-ratio panel; its title sits just above. */
  static final int RATIO_TOP = 500;
  /** Pixels kept free above the tallest ratio bar for its value. */
  private static final int LABEL_ROOM = 20;
  private static final Color MEASURED = new Color(0x1f77b4);
  private static final Color TOKEN_MAX = new Color(0xff7f0e);
  private static final Color THEORETICAL = new Color(0xffbb78);
  private static final Color COMPARE = new Color(0x7f7f7f);
  private static final Color RATIO = new Color(0x2ca02c);

  private HitRateChart() {}

  static void write(Path file, List<RunSummary> primary, List<Comparison> comparisons,
      List<RunSummary> compare) throws IOException {
    System.setProperty("java.awt.headless", "true");
    BufferedImage image = render(primary, comparisons, compare);
    if (!ImageIO.write(image, "png", file.toFile())) {
      throw new IOException("no PNG writer available for " + file);
    }
  }

  static BufferedImage render(List<RunSummary> primary, List<Comparison> comparisons,
      List<RunSummary> compare) {
    BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, WIDTH, HEIGHT);
      g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
      Map<String, Double> compareHit = compare.stream()
          .collect(Collectors.toMap(RunSummary::workload, RunSummary::hitRate, (a, b) -> a));
      Map<String, Comparison> byWorkload = comparisons.stream()
          .collect(Collectors.toMap(Comparison::workload, Function.identity(), (a, b) -> a));
      int n = Math.max(1, primary.size());
      double slot = (WIDTH - LEFT - RIGHT) / (double) n;

      int top = 40;
      int bottom = 400;
      axis(g, "cache hit rate (%)", top, bottom, 100, "%.0f");
      for (int i = 0; i < primary.size(); i++) {
        RunSummary s = primary.get(i);
        double x = LEFT + i * slot + slot * 0.1;
        double w = slot * 0.8 / 4;
        bar(g, MEASURED, x, w, top, bottom, s.hitRate());
        bar(g, TOKEN_MAX, x + w, w, top, bottom, s.tokenGranularMaxHitRate());
        bar(g, THEORETICAL, x + 2 * w, w, top, bottom, s.theoreticalMaxHitRate());
        Double c = compareHit.get(s.workload());
        if (c != null) {
          bar(g, COMPARE, x + 3 * w, w, top, bottom, c);
        }
        label(g, s.workload(), LEFT + i * slot, slot, bottom + 16);
      }
      legend(g, top - 20, new Color[] {MEASURED, TOKEN_MAX, THEORETICAL, COMPARE},
          new String[] {"measured hit rate", "max to the token", "max in whole blocks",
              "compare server hit rate"});

      int rTop = RATIO_TOP;
      int rBottom = HEIGHT - 100;
      double maxRatio = 2;
      for (Comparison c : comparisons) {
        if (c.outputThroughputRatio() != null) {
          // room above the tallest bar for its value, below the panel's title
          maxRatio = Math.max(maxRatio, Math.ceil(c.outputThroughputRatio() * (rBottom - rTop)
              / (rBottom - rTop - LABEL_ROOM)));
        }
      }
      axis(g, "output throughput ratio (primary / compare)", rTop, rBottom, maxRatio, "%.2f");
      int one = (int) (rBottom - (rBottom - rTop) / maxRatio);
      g.setColor(Color.RED);
      g.setStroke(new BasicStroke(1, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10,
          new float[] {6, 4}, 0));
      g.drawLine(LEFT, one, WIDTH - RIGHT, one);
      g.setStroke(new BasicStroke(1));
      for (int i = 0; i < primary.size(); i++) {
        Comparison c = byWorkload.get(primary.get(i).workload());
        if (c != null && c.outputThroughputRatio() != null) {
          double x = LEFT + i * slot + slot * 0.3;
          bar(g, RATIO, x, slot * 0.4, rTop, rBottom, c.outputThroughputRatio() / maxRatio);
          String value = String.format(Locale.ROOT, "%.2fx", c.outputThroughputRatio());
          int vy = (int) (rBottom - (rBottom - rTop) * c.outputThroughputRatio() / maxRatio) - 3;
          // on white, so the 1.0 line does not cross it
          g.setColor(Color.WHITE);
          g.fillRect((int) x, vy - g.getFontMetrics().getAscent(),
              g.getFontMetrics().stringWidth(value), g.getFontMetrics().getAscent());
          g.setColor(Color.BLACK);
          g.drawString(value, (int) x, vy);
        }
        label(g, primary.get(i).workload(), LEFT + i * slot, slot, rBottom + 16);
      }
      if (comparisons.isEmpty()) {
        g.setColor(Color.GRAY);
        g.drawString("no --compare-url run: no throughput ratio", LEFT + 20, (rTop + rBottom) / 2);
      }
    } finally {
      g.dispose();
    }
    return image;
  }

  private static void axis(Graphics2D g, String title, int top, int bottom, double max,
      String format) {
    g.setColor(Color.BLACK);
    g.drawLine(LEFT, top, LEFT, bottom);
    g.drawLine(LEFT, bottom, WIDTH - RIGHT, bottom);
    for (int t = 0; t <= 4; t++) {
      int y = bottom - (bottom - top) * t / 4;
      g.setColor(new Color(0xdddddd));
      g.drawLine(LEFT + 1, y, WIDTH - RIGHT, y);
      g.setColor(Color.BLACK);
      g.drawString(String.format(Locale.ROOT, format, max * t / 4), 8, y + 4);
    }
    g.drawString(title, LEFT + 4, top - 4);
  }

  private static void bar(Graphics2D g, Color color, double x, double w, int top, int bottom,
      double fraction) {
    double f = Math.max(0, Math.min(1, fraction));
    int h = (int) Math.round((bottom - top) * f);
    g.setColor(color);
    g.fillRect((int) x, bottom - h, Math.max(1, (int) w - 2), h);
  }

  private static void label(Graphics2D g, String text, double x, double slot, int y) {
    g.setColor(Color.BLACK);
    String shown = text.length() > 22 ? text.substring(0, 21) + "…" : text;
    int width = g.getFontMetrics().stringWidth(shown);
    if (width > slot - 4) {
      Graphics2D r = (Graphics2D) g.create();
      r.rotate(Math.toRadians(20), x + 4, y - 8);
      r.drawString(shown, (int) x + 4, y);
      r.dispose();
    } else {
      g.drawString(shown, (int) (x + (slot - width) / 2), y);
    }
  }

  private static void legend(Graphics2D g, int y, Color[] colors, String[] names) {
    int x = WIDTH - RIGHT - 640;
    for (int i = 0; i < colors.length; i++) {
      g.setColor(colors[i]);
      g.fillRect(x, y - 10, 12, 12);
      g.setColor(Color.BLACK);
      g.drawString(names[i], x + 16, y);
      x += 20 + g.getFontMetrics().stringWidth(names[i]) + 14;
    }
  }
}
