package dev.radixserve.model.constraint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A constraint after a reply's reasoning ({@link ReasoningPrefix}): the reasoning is free text
 * up to {@code </think>}, then the constrained output; optional for a reply that may open its own
 * block, required where the prompt opened it. Over GPT-2's vocabulary, where the tags are several
 * tokens each.
 */
class ReasoningPrefixTest {

  private static final Tokenizer TOKENIZER = TokenizerLoader.standard();
  private static final Set<Integer> EOS = Set.of(TOKENIZER.eosTokenId());
  private static final ConstraintCompiler COMPILER = new ConstraintCompiler(TOKENIZER);

  /** Feeds {@code text}'s tokens, each of which must be allowed; false at the first that is not. */
  private static boolean accepts(ConstraintState s, String text) {
    for (int t : TOKENIZER.encode(text)) {
      float[] logits = new float[TOKENIZER.vocabSize()];
      s.mask(logits, EOS);
      if (logits[t] == Float.NEGATIVE_INFINITY) {
        return false;
      }
      s.advance(t, EOS);
    }
    return true;
  }

  private static ConstraintState start(ReasoningPrefix p) {
    return COMPILER.after(p).choice(List.of("yes", "no")).start();
  }

  @Test
  void optionalReasoningThenTheConstrainedOutput() {
    ConstraintState s = start(ReasoningPrefix.OPTIONAL);
    assertTrue(accepts(s, "<think>\nweigh it: yes or no? {\"x\"}\n</think>\n\n"));
    assertFalse(s.isComplete());
    assertTrue(accepts(s, "no"));
    assertTrue(s.isComplete());
    // or no reasoning at all
    ConstraintState direct = start(ReasoningPrefix.OPTIONAL);
    assertTrue(accepts(direct, "yes"));
    assertTrue(direct.isComplete());
    // but nothing else first
    assertFalse(accepts(start(ReasoningPrefix.OPTIONAL), "maybe"));
  }

  @Test
  void requiredReasoningEndsAtTheFirstCloseTag() {
    ConstraintState s = start(ReasoningPrefix.REQUIRED);
    assertTrue(accepts(s, "yes"));
    assertFalse(s.isComplete(), "still reasoning: yes is text before </think>");
    assertTrue(accepts(s, "</think>"));
    assertFalse(accepts(s, "</think>"), "after the close tag only the answer (and space)");
    ConstraintState t = start(ReasoningPrefix.REQUIRED);
    assertTrue(accepts(t, "<think>a</think>\n\nyes"));
    assertTrue(t.isComplete());
    // white space after the tag is bounded
    assertFalse(accepts(start(ReasoningPrefix.REQUIRED), "a</think>" + " ".repeat(5) + "no"));
  }

  @Test
  void noneIsTheConstraintAlone() {
    ConstraintState s = start(ReasoningPrefix.NONE);
    assertFalse(accepts(s, "<think>"));
    assertEquals(COMPILER.choice(List.of("yes", "no")), COMPILER.after(ReasoningPrefix.NONE)
        .choice(List.of("yes", "no")), "the same cached constraint");
  }
}
