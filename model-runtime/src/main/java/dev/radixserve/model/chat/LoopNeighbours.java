package dev.radixserve.model.chat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Jinja2's {@code loop.previtem} and {@code loop.nextitem}, which jinjava's loop lacks (it reads
 * them as undefined, so Hermes' tool_use template never opened a tool turn): a loop whose own
 * body reads them is rewritten to iterate a list set just before it, and each read to that list's
 * neighbouring item, undefined past either end as in Jinja2. A loop with an inline {@code if}
 * filter or {@code recursive} is left as it is (jinjava renders those otherwise).
 */
final class LoopNeighbours {

  /** A for or endfor tag, after the bridge applied whitespace control ({@code {% ... %}}). */
  private static final Pattern TAG =
      Pattern.compile("\\{%\\s*(for\\s+(.+?)\\s+in\\s+(.+?)|endfor)\\s*%}", Pattern.DOTALL);
  private static final Pattern NEIGHBOUR = Pattern.compile("\\bloop\\.(previtem|nextitem)\\b");
  /** Never set: reads as undefined. */
  private static final String UNDEFINED = "__radixserve_undefined";

  private LoopNeighbours() {}

  private static final class Loop {
    final int tagStart;
    final int tagEnd;
    final String target;
    final String iterable;
    final List<int[]> reads = new ArrayList<>(); // start, end, 0 previtem / 1 nextitem

    Loop(int tagStart, int tagEnd, String target, String iterable) {
      this.tagStart = tagStart;
      this.tagEnd = tagEnd;
      this.target = target;
      this.iterable = iterable;
    }
  }

  static String rewrite(String template) {
    if (!NEIGHBOUR.matcher(template).find()) {
      return template;
    }
    List<Loop> loops = new ArrayList<>();
    Deque<Loop> open = new ArrayDeque<>();
    Matcher tags = TAG.matcher(template);
    Matcher reads = NEIGHBOUR.matcher(template);
    boolean more = reads.find();
    while (tags.find()) {
      more = attribute(reads, more, tags.start(), open);
      if (tags.group(1).equals("endfor")) {
        if (!open.isEmpty()) {
          loops.add(open.pop());
        }
      } else {
        open.push(new Loop(tags.start(), tags.end(), tags.group(2), tags.group(3)));
      }
    }
    attribute(reads, more, template.length(), open);
    StringBuilder out = new StringBuilder(template);
    List<int[]> edits = new ArrayList<>(); // start, end, index into texts
    List<String> texts = new ArrayList<>();
    for (Loop loop : loops) {
      if (loop.reads.isEmpty() || loop.iterable.matches("(?s).*\\s(if|recursive)\\s.*")
          || loop.iterable.matches("(?s).*\\srecursive$")) {
        continue;
      }
      String items = "__radixserve_items_" + loop.tagStart;
      edits.add(new int[] {loop.tagStart, loop.tagEnd, texts.size()});
      texts.add("{% set " + items + " = (" + loop.iterable + ")|list %}{% for " + loop.target
          + " in " + items + " %}");
      for (int[] read : loop.reads) {
        edits.add(new int[] {read[0], read[1], texts.size()});
        texts.add(read[2] == 0
            ? "(" + UNDEFINED + " if loop.first else " + items + "[loop.index0 - 1])"
            : "(" + UNDEFINED + " if loop.last else " + items + "[loop.index0 + 1])");
      }
    }
    edits.sort((a, b) -> Integer.compare(b[0], a[0]));
    for (int[] e : edits) {
      out.replace(e[0], e[1], texts.get(e[2]));
    }
    return out.toString();
  }

  /** Gives the reads before {@code until} to the innermost open loop; whether reads are left. */
  private static boolean attribute(Matcher reads, boolean more, int until, Deque<Loop> open) {
    while (more && reads.start() < until) {
      if (!open.isEmpty()) {
        open.peek().reads.add(new int[] {reads.start(), reads.end(),
            reads.group(1).equals("previtem") ? 0 : 1});
      }
      more = reads.find();
    }
    return more;
  }
}
