package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.model.chat.ChatFixtures;
import dev.radixserve.model.chat.ChatTemplate;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file's {@code tokenizer.chat_template.tool_use} (the converter's copy of a checkpoint's
 * template named tool_use: gguf-py's {@code CHAT_TEMPLATE_N}) renders the requests that pass
 * tools, as llama-server and transformers pick it; the default one the others. Checked on the
 * file llama.cpp's converter wrote ({@code make_fixtures.py tool-use}: the Llama 3 checkpoint with
 * Hermes 3's tool_use template and a ChatML default beside it, as transformers 5 saves the pair),
 * against transformers' renders of that pair ({@code chat-templates/expected.json}'s named cases).
 */
class GgufToolUseTemplateTest {

  @Test
  void theKeyIsGgufPysNamedTemplate() throws IOException {
    List<String> keys = new ArrayList<>();
    GgufTablesTest.tables().get("keys").forEach(k -> keys.add(k.asText()));
    assertTrue(keys.contains("tokenizer.chat_template.{name}"), keys.toString());
    assertEquals("tokenizer.chat_template.{name}".replace("{name}", "tool_use"),
        GgufKeys.CHAT_TEMPLATE_TOOL_USE);
  }

  @Test
  void requestsWithToolsRenderByTheToolUseTemplate() throws IOException {
    Path file = GgufTestFiles.fixtures().resolve("llama3-tool-use-vocab.gguf");
    int checked = 0;
    try (Arena arena = Arena.ofConfined()) {
      ChatTemplate t = GgufModelLoader.chatTemplate(GgufFile.map(file, arena),
          ChatFixtures.FIXTURE_DAY);
      assertTrue(t.takesTools());
      for (JsonNode c : ChatFixtures.namedCases()) {
        ChatFixtures.assertRendersAsTransformers(t, c);
        checked++;
      }
    }
    assertEquals(11, checked);
  }

  @Test
  void withoutTheKeyTheDefaultTemplateAloneRenders(@TempDir Path dir) throws IOException {
    String defaultTemplate = text("chatml_default.jinja");
    Path file = GgufTestFiles.rewrite("llama3-f32.gguf", dir.resolve("default.gguf"),
        kv -> kv.put(GgufKeys.CHAT_TEMPLATE, defaultTemplate), tensors -> {});
    try (Arena arena = Arena.ofConfined()) {
      assertFalse(GgufModelLoader.chatTemplate(GgufFile.map(file, arena),
          ChatFixtures.FIXTURE_DAY).takesTools());
    }
  }

  private static String text(String resource) throws IOException {
    try (InputStream in = GgufToolUseTemplateTest.class.getResourceAsStream("/chat-templates/"
        + resource)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
