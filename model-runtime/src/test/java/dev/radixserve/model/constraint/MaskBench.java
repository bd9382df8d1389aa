package dev.radixserve.model.constraint;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Cost of structured-output masks over GPT-2's vocabulary (50,257 tokens), as the engine pays
 * it: per sampled token, {@link ConstraintState#mask} on a logits row and {@link
 * ConstraintState#advance}. Run as a main class (docs/benchmarks/journal/2026-11-21-to-28.md has the command):
 *
 * <pre>
 *   MaskBench [walks = 200] [max tokens per walk = 120]
 * </pre>
 *
 * Each constraint is walked {@code walks} times from its start, each step choosing a random
 * allowed token (seeded), until complete or the length. "cold" is a step whose state had no mask
 * yet (one trie walk, then cached for every later request with the same constraint); "warm" is
 * every later step (times are the thread's CPU time). Reports the compile time, the states visited, and cold and warm step times;
 * a second round over the same walks (every mask cached, the JIT warm) gives the steady state.
 */
public final class MaskBench {

  /**
   * Thread CPU time, not wall time: on a shared, oversubscribed machine a step of 0.1 ms is often
   * descheduled for a whole time slice, which says nothing about the step's cost.
   */
  private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

  private MaskBench() {}

  public static void main(String[] args) throws Exception {
    int walks = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    int maxTokens = args.length > 1 ? Integer.parseInt(args[1]) : 120;
    Tokenizer tokenizer = TokenizerLoader.standard();
    long t0 = System.nanoTime();
    ConstraintCompiler compiler = new ConstraintCompiler(tokenizer);
    System.out.printf("vocabulary trie: %d tokens, %.1f ms%n", tokenizer.vocabSize(),
        (System.nanoTime() - t0) / 1e6);
    ObjectMapper json = new ObjectMapper();
    JsonNode person = json.readTree("""
        {"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
         "email":{"type":"string","format":"email"},"tags":{"type":"array","items":{"type":"string"}},
         "address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string",
         "pattern":"^[0-9]{5}$"}},"required":["city","zip"],"additionalProperties":false}},
         "required":["name","age","email","tags","address"],"additionalProperties":false}""");
    // JIT warm-up on a throwaway constraint (its masks are its own)
    run(null, () -> compiler.regex("[a-z ]{1,40}\\.[0-9]{2,6}"), tokenizer, walks, maxTokens);
    System.out.println("| constraint | compile ms | DFA states | states visited | cold step ms (median, max, sum) | warm step us (median, p99) | steady step us (median, p99) |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|");
    run("json_object", () -> compiler.jsonObject(), tokenizer, walks, maxTokens);
    run("person schema", () -> compiler.jsonSchema(person), tokenizer, walks, maxTokens);
    run("regex [A-Z]{3}-\\d{4}", () -> compiler.regex("[A-Z]{3}-\\d{4}"), tokenizer, walks, maxTokens);
  }

  private static void run(String name, java.util.function.Supplier<TokenConstraint> make,
      Tokenizer tokenizer, int walks, int maxTokens) {
    long c0 = System.nanoTime();
    TokenConstraint c = make.get();
    double compileMs = (System.nanoTime() - c0) / 1e6;
    Set<Integer> eos = Set.of(tokenizer.eosTokenId());
    List<Long> cold = new ArrayList<>();
    List<Long> warm = new ArrayList<>();
    walk(c, tokenizer, eos, walks, maxTokens, cold, warm);
    List<Long> steady = new ArrayList<>();
    walk(c, tokenizer, eos, walks, maxTokens, steady, steady);
    if (name != null) {
      System.out.printf("| %s | %.1f | %d | %d | %.2f, %.2f, %.1f | %.1f, %.1f | %.1f, %.1f |%n",
          name, compileMs, c.states(), c.cachedMasks(), pct(cold, 50) / 1e6, pct(cold, 100) / 1e6,
          cold.stream().mapToLong(Long::longValue).sum() / 1e6,
          pct(warm, 50) / 1e3, pct(warm, 99) / 1e3, pct(steady, 50) / 1e3, pct(steady, 99) / 1e3);
    }
  }

  private static void walk(TokenConstraint c, Tokenizer tokenizer, Set<Integer> eos, int walks,
      int maxTokens, List<Long> cold, List<Long> warm) {
    SplittableRandom rnd = new SplittableRandom(42);
    float[] logits = new float[tokenizer.vocabSize()];
    int[] allowed = new int[logits.length];
    for (int w = 0; w < walks; w++) {
      ConstraintState s = c.start();
      for (int step = 0; step < maxTokens && !s.isComplete(); step++) {
        for (int i = 0; i < logits.length; i++) {
          logits[i] = (float) rnd.nextDouble();
        }
        int before = c.cachedMasks();
        long t = CPU.getCurrentThreadCpuTime();
        s.mask(logits, eos);
        long masked = CPU.getCurrentThreadCpuTime() - t;
        // stands in for the sampler (not timed): any allowed token, uniformly
        int n = 0;
        for (int i = 0; i < logits.length; i++) {
          if (logits[i] != Float.NEGATIVE_INFINITY) {
            allowed[n++] = i;
          }
        }
        int token = allowed[rnd.nextInt(n)];
        long a = CPU.getCurrentThreadCpuTime();
        s.advance(token, eos);
        long total = masked + CPU.getCurrentThreadCpuTime() - a;
        (c.cachedMasks() > before ? cold : warm).add(total);
      }
    }
  }

  private static double pct(List<Long> xs, int p) {
    if (xs.isEmpty()) {
      return Double.NaN;
    }
    long[] a = xs.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(a);
    return a[Math.min(a.length - 1, (int) Math.ceil(p / 100.0 * a.length) - 1 < 0 ? 0
        : (int) Math.ceil(p / 100.0 * a.length) - 1)];
  }
}
