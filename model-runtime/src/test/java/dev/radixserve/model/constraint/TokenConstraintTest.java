package dev.radixserve.model.constraint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Token-level masks over GPT-2's real vocabulary (50,257 byte-level BPE tokens). */
class TokenConstraintTest {

  static Tokenizer tokenizer;
  static ConstraintCompiler compiler;
  static Set<Integer> eos;

  @BeforeAll
  static void load() {
    tokenizer = TokenizerLoader.standard();
    compiler = new ConstraintCompiler(tokenizer);
    eos = Set.of(tokenizer.eosTokenId());
  }

  /** Feeds the tokens of {@code text}; each must be allowed by the mask before it is taken. */
  static ConstraintState feed(TokenConstraint c, int[] tokens) {
    ConstraintState s = c.start();
    for (int t : tokens) {
      assertFalse(s.isComplete());
      float[] logits = new float[tokenizer.vocabSize()];
      s.mask(logits, eos);
      assertEquals(0f, logits[t], "token " + t + " '" + tokenizer.decode(new int[] {t})
          + "' should be allowed");
      s.advance(t, eos);
    }
    return s;
  }

  @Test
  void validTextPassesTokenByTokenAndCompletes() {
    TokenConstraint c = compiler.jsonSchema(SchemaCompilerTest.schema(
        "{'type':'object','properties':{'city':{'type':'string'},'n':{'type':'integer'}},"
            + "'required':['city','n'],'additionalProperties':false}"));
    ConstraintState s = feed(c, tokenizer.encode("{\"city\": \"Z\u00fcrich \ud83d\ude00\", \"n\": 42}"));
    assertTrue(s.isComplete(), "a closed object admits nothing more");
  }

  @Test
  void partialUtf8TokensAreAllowedOnlyWhereACharacterMayStart() {
    // GPT-2 encodes U+1F600 as byte tokens that each hold part of the character
    int[] smile = tokenizer.encode("\ud83d\ude00");
    assertTrue(smile.length > 1, Arrays.toString(smile));
    TokenConstraint str = compiler.jsonSchema(SchemaCompilerTest.schema("{'type':'string'}"));
    ConstraintState s = str.start();
    s.advance(tokenizer.encode("\"")[0], eos);
    float[] logits = new float[tokenizer.vocabSize()];
    s.mask(logits, eos);
    assertEquals(0f, logits[smile[0]], "a lead byte may start a character in a string");
    TokenConstraint ascii = compiler.regex("[a-z]+");
    float[] l2 = new float[tokenizer.vocabSize()];
    ascii.start().mask(l2, eos);
    assertEquals(Float.NEGATIVE_INFINITY, l2[smile[0]]);
    assertEquals(0f, l2[tokenizer.encode("hello")[0]]);
  }

  @Test
  void eosOnlyWhereTheOutputIsComplete() {
    TokenConstraint digits = compiler.regex("\\d{2,}");
    ConstraintState s = digits.start();
    float[] logits = new float[tokenizer.vocabSize()];
    s.mask(logits, eos);
    assertEquals(Float.NEGATIVE_INFINITY, logits[tokenizer.eosTokenId()]);
    s.advance(tokenizer.encode("12")[0], eos);
    float[] l2 = new float[tokenizer.vocabSize()];
    s.mask(l2, eos);
    assertEquals(0f, l2[tokenizer.eosTokenId()], "12 is complete, and more digits may follow");
    assertFalse(s.isComplete());
    s.advance(tokenizer.eosTokenId(), eos);
    assertTrue(s.isComplete());
  }

  @Test
  void choiceAndForbiddenTokens() {
    TokenConstraint c = compiler.choice(List.of("yes", "no"));
    ConstraintState s = c.start();
    assertThrows(IllegalStateException.class, () -> s.advance(tokenizer.encode("maybe")[0], eos));
    assertTrue(feed(c, tokenizer.encode("yes")).isComplete());
  }

  @Test
  void masksAreComputedOncePerStateAndConstraintsAreCached() {
    String schema = "{'type':'object','properties':{'ok':{'type':'boolean'}},'required':['ok']}";
    TokenConstraint a = compiler.jsonSchema(SchemaCompilerTest.schema(schema));
    assertSame(a, compiler.jsonSchema(SchemaCompilerTest.schema(schema)));
    feed(a, tokenizer.encode("{\"ok\": true}"));
    int cached = a.cachedMasks();
    feed(a, tokenizer.encode("{\"ok\": true}"));
    assertEquals(cached, a.cachedMasks());
  }

  @Test
  void toolCallFormat() {
    TokenConstraint c = compiler.toolCall(new java.util.LinkedHashMap<>(java.util.Map.of(
        "get_weather", SchemaCompilerTest.schema("{'type':'object','properties':{'city':"
            + "{'type':'string'}},'required':['city']}"))));
    assertTrue(feed(c, tokenizer.encode("{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}"))
        .isComplete());
  }

  /** Whether {@code text}'s tokens are allowed one by one, and the end of output after them. */
  static boolean accepts(TokenConstraint c, String text) {
    ConstraintState s = c.start();
    for (int t : tokenizer.encode(text)) {
      float[] logits = new float[tokenizer.vocabSize()];
      s.mask(logits, eos);
      if (logits[t] != 0f) {
        return false;
      }
      s.advance(t, eos);
    }
    float[] logits = new float[tokenizer.vocabSize()];
    s.mask(logits, eos);
    return s.isComplete() || logits[tokenizer.eosTokenId()] == 0f;
  }

  @Test
  void familyLayoutsWrapEachCallAndParallelAllowsSeveral() {
    java.util.Map<String, com.fasterxml.jackson.databind.JsonNode> tools = new java.util.LinkedHashMap<>();
    tools.put("get_weather", SchemaCompilerTest.schema("{'type':'object','properties':{'city':"
        + "{'type':'string','maxLength':8}},'required':['city'],'additionalProperties':false}"));
    tools.put("now", SchemaCompilerTest.schema("{'type':'object','properties':{},'additionalProperties':false}"));
    ToolCallLayout hermes = new ToolCallLayout("", "<tool_call>\n", "arguments", "\n</tool_call>", "\n", "");
    String one = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>";
    String two = one + "\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";
    assertTrue(accepts(compiler.toolCalls(tools, hermes, false), one));
    assertFalse(accepts(compiler.toolCalls(tools, hermes, false), two));
    assertTrue(accepts(compiler.toolCalls(tools, hermes, true), one));
    assertTrue(accepts(compiler.toolCalls(tools, hermes, true), two));
    assertFalse(accepts(compiler.toolCalls(tools, hermes, true), one + "\n"));
    assertFalse(accepts(compiler.toolCalls(tools, hermes, true),
        "{\"name\": \"now\", \"arguments\": {}}"));
    ToolCallLayout llama = new ToolCallLayout("", "", "parameters", "", "; ", "");
    assertTrue(accepts(compiler.toolCalls(tools, llama, true), "{\"name\": \"get_weather\","
        + " \"parameters\": {\"city\": \"Oslo\"}}; {\"name\": \"now\", \"parameters\": {}}"));
    assertFalse(accepts(compiler.toolCalls(tools, llama, true), "{\"name\": \"now\", \"arguments\": {}}"));
    ToolCallLayout mistral = new ToolCallLayout("[TOOL_CALLS][", "", "arguments", "", ", ", "]");
    assertTrue(accepts(compiler.toolCalls(tools, mistral, true),
        "[TOOL_CALLS][{\"name\": \"now\", \"arguments\": {}}, {\"name\": \"now\", \"arguments\": {}}]"));
    assertFalse(accepts(compiler.toolCalls(tools, mistral, false),
        "[TOOL_CALLS][{\"name\": \"now\", \"arguments\": {}}, {\"name\": \"now\", \"arguments\": {}}]"));
    assertFalse(accepts(compiler.toolCalls(tools, mistral, true), "[TOOL_CALLS][{\"name\": \"now\", \"arguments\": {}}"));
    // the generic layout is the earlier single-call format
    assertSame(compiler.toolCall(tools), compiler.toolCalls(tools, ToolCallLayout.GENERIC, false));
  }

  @Test
  void maskEqualsStepByStepCheckOfEveryToken() {
    TokenConstraint c = compiler.jsonSchema(SchemaCompilerTest.schema(
        "{'type':'object','properties':{'mail':{'type':'string','format':'email'},"
            + "'n':{'type':'number'}},'required':['mail','n']}"));
    java.util.SplittableRandom rnd = new java.util.SplittableRandom(1);
    ConstraintState s = c.start();
    int state = c.initial;
    for (int step = 0; step < 30 && !s.isComplete(); step++) {
      float[] logits = new float[tokenizer.vocabSize()];
      s.mask(logits, eos);
      List<Integer> allowed = new java.util.ArrayList<>();
      for (int t = 0; t < logits.length; t++) {
        boolean byWalk = c.step(state, t) >= 0 || (eos.contains(t) && c.accepting(state));
        assertEquals(byWalk, logits[t] == 0f, "token " + t + " at step " + step);
        if (byWalk) {
          allowed.add(t);
        }
      }
      int t = allowed.get(rnd.nextInt(allowed.size()));
      s.advance(t, eos);
      state = eos.contains(t) ? state : c.step(state, t);
    }
  }

  @Test
  void anExponentialRegexIsRefusedNotBuilt() {
    // the subset construction of this regex has 2^21 states; the budget stops it early
    ConstraintException e = assertThrows(ConstraintException.class,
        () -> compiler.regex("(a|b)*a(a|b){20}"));
    assertTrue(e.getMessage().contains("too complex"), e.getMessage());
  }
}
