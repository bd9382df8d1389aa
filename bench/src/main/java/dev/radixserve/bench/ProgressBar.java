package dev.radixserve.bench;

import java.io.PrintStream;
import java.util.function.IntConsumer;

/** A text progress bar redrawn in place with a carriage return: {@code [#####.....] 16/32 name}. */
final class ProgressBar implements IntConsumer {

  private static final int CELLS = 30;

  private final PrintStream out;
  private final String label;
  private final int total;

  ProgressBar(PrintStream out, String label, int total) {
    this.out = out;
    this.label = label;
    this.total = total;
  }

  /** Whether a bar belongs on stderr: only on a terminal, and not with --quiet. */
  static boolean wanted(boolean quiet) {
    var console = System.console();
    return !quiet && console != null && console.isTerminal();
  }

  static String render(String label, int done, int total) {
    int filled = total == 0 ? CELLS : (int) ((long) done * CELLS / total);
    return "[" + "#".repeat(filled) + ".".repeat(CELLS - filled) + "] " + done + "/" + total
        + " " + label;
  }

  @Override
  public synchronized void accept(int done) {
    out.print("\r" + render(label, done, total));
    if (done == total) {
      out.println();
    }
    out.flush();
  }
}
