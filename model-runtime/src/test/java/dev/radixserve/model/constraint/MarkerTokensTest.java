package dev.radixserve.model.constraint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.tokenizer.HfTokenizer;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tool-call syntax's marker that the tokenizer holds as a special token (Mistral's
 * {@code [TOOL_CALLS]}) may be written by a forced call as that one token, only when the compiler
 * was told to keep it; other special tokens stay out.
 */
class MarkerTokensTest {

  @Test
  void aMarkerSpecialTokenIsAllowedOnlyWhenKept(@TempDir Path dir) throws Exception {
    ObjectMapper json = new ObjectMapper();
    ObjectNode tok;
    try (InputStream in = getClass().getResourceAsStream("/hf-tokenizers/llama3/tokenizer.json")) {
      tok = (ObjectNode) json.readTree(in);
    }
    int id = tok.get("model").get("vocab").size() + tok.get("added_tokens").size();
    ((com.fasterxml.jackson.databind.node.ArrayNode) tok.get("added_tokens")).addObject()
        .put("id", id).put("content", "[TOOL_CALLS]").put("single_word", false)
        .put("lstrip", false).put("rstrip", false).put("normalized", false).put("special", true);
    Files.writeString(dir.resolve("tokenizer.json"), json.writeValueAsString(tok));
    try (HfTokenizer tokenizer = HfTokenizer.load(dir)) {
      assertTrue(tokenizer.isSpecial(id));
      Map<String, com.fasterxml.jackson.databind.JsonNode> tools = new LinkedHashMap<>();
      tools.put("now", SchemaCompilerTest.schema("{'type':'object','properties':{},"
          + "'additionalProperties':false}"));
      ToolCallLayout mistral = new ToolCallLayout("[TOOL_CALLS][", "", "arguments", "", ", ", "]");
      Set<Integer> eos = Set.of(tokenizer.encodeTemplated("<|eot_id|>")[0]);
      float[] kept = new float[tokenizer.vocabSize()];
      new ConstraintCompiler(tokenizer, Set.of("[TOOL_CALLS]")).toolCalls(tools, mistral, true)
          .start().mask(kept, eos);
      assertEquals(0f, kept[id]);
      float[] left = new float[tokenizer.vocabSize()];
      new ConstraintCompiler(tokenizer).toolCalls(tools, mistral, true).start().mask(left, eos);
      assertEquals(Float.NEGATIVE_INFINITY, left[id]);
      // either way the marker can be spelled from text pieces: "[" is allowed
      int bracket = tokenizer.encodeTemplated("[")[0];
      assertEquals(0f, kept[bracket]);
      assertEquals(0f, left[bracket]);
      // and the kept marker is a token: the state after it expects the '['
      ConstraintState s = new ConstraintCompiler(tokenizer, Set.of("[TOOL_CALLS]"))
          .toolCalls(tools, mistral, true).start();
      s.advance(id, eos);
      float[] next = new float[tokenizer.vocabSize()];
      s.mask(next, eos);
      assertEquals(0f, next[bracket]);
      assertEquals(Float.NEGATIVE_INFINITY, next[id]);
    }
  }
}
