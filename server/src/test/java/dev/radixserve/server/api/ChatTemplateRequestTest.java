package dev.radixserve.server.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.chat.JinjaChatTemplate;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import java.time.Clock;
import org.junit.jupiter.api.Test;

/**
 * A chat body through the model's own template: the prompt is the template's rendering, and a
 * conversation the template refuses (its raise_exception) is a 400 on {@code messages} naming
 * the template's reason.
 */
class ChatTemplateRequestTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  /** Mistral 7B Instruct v0.1's template. */
  private static final String MISTRAL = "{{ bos_token }}{% for message in messages %}{% if"
      + " (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation"
      + " roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if"
      + " message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif"
      + " message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{"
      + " raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}";

  private final Tokenizer tokenizer = TokenizerLoader.standard();
  private final RequestParser parser = new RequestParser(tokenizer,
      new JinjaChatTemplate(MISTRAL, "<s>", "</s>", Clock.systemUTC()), "m",
      new RequestLimits(1024, 8, 8, 8, RequestLimits.OPENAI_MAX_STOPS, 64, 16, 256));

  private JsonNode body(String messages) throws Exception {
    return JSON.readTree("{\"model\":\"m\",\"max_tokens\":4,\"messages\":" + messages + "}");
  }

  @Test
  void thePromptIsTheTemplatesRendering() throws Exception {
    GenerationRequest r = parser.parse(body("[{\"role\":\"user\",\"content\":\"Hi\"}]"), true);
    assertArrayEquals(tokenizer.encode("<s>[INST] Hi [/INST]"), r.prompts().getFirst());
  }

  @Test
  void aConversationTheTemplateRefusesIsA400OnMessages() throws Exception {
    ApiException e = assertThrows(ApiException.class, () -> parser.parse(body(
        "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"}]"),
        true));
    assertEquals(400, e.status());
    assertEquals("messages", e.param());
    assertEquals("the model's chat template refused the messages: Conversation roles must"
        + " alternate user/assistant/user/assistant/...", e.getMessage());
  }
}
