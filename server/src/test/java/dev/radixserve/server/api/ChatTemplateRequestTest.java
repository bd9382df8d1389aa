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

  /** A template that prints the variables a request may set. */
  private final RequestParser echoVars = new RequestParser(tokenizer, new JinjaChatTemplate(
      "{% for m in messages %}{{ m['content'] }}{% endfor %}|{{ enable_thinking }}|"
      + "{{ reasoning_effort }}|{{ custom['a'][1] }}|{{ bos_token }}", "<s>", "</s>",
      Clock.systemUTC()), "m",
      new RequestLimits(1024, 8, 8, 8, RequestLimits.OPENAI_MAX_STOPS, 64, 16, 256));

  private String rendered(String extra) throws Exception {
    GenerationRequest r = echoVars.parse(JSON.readTree("{\"model\":\"m\",\"max_tokens\":4,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]" + extra + "}"), true);
    return tokenizer.decode(r.prompts().getFirst());
  }

  @Test
  void chatTemplateKwargsAndReasoningEffortAreTemplateVariables() throws Exception {
    assertEquals("Hi||||<s>", rendered(""));
    assertEquals("Hi|false||x|<s>", rendered(
        ",\"chat_template_kwargs\":{\"enable_thinking\":false,\"custom\":{\"a\":[0,\"x\"]}}"));
    // vLLM's rule: reasoning_effort sets enable_thinking unless the kwargs do
    assertEquals("Hi|false|none||<s>", rendered(",\"reasoning_effort\":\"none\""));
    assertEquals("Hi|true|high||<s>", rendered(",\"reasoning_effort\":\"high\""));
    assertEquals("Hi|false|high||<s>", rendered(",\"reasoning_effort\":\"high\","
        + "\"chat_template_kwargs\":{\"enable_thinking\":false}"));
    assertEquals("Hi|true|low||<s>", rendered(",\"reasoning_effort\":\"low\","
        + "\"chat_template_kwargs\":{\"reasoning_effort\":\"low\"}"));
  }

  @Test
  void kwargsTheServerSetsAndBadEffortsAre400() {
    for (String key : new String[] {"messages", "tools", "add_generation_prompt", "bos_token",
        "eos_token", "continue_final_message", "__radixserve_today"}) {
      ApiException e = assertThrows(ApiException.class, () -> rendered(
          ",\"chat_template_kwargs\":{\"" + key + "\":1}"));
      assertEquals("chat_template_kwargs", e.param());
      assertEquals(true, e.getMessage().contains(key), e.getMessage());
    }
    for (String bad : new String[] {"\"chat_template_kwargs\":[1]",
        "\"chat_template_kwargs\":\"x\""}) {
      assertEquals("chat_template_kwargs", assertThrows(ApiException.class,
          () -> rendered("," + bad)).param());
    }
    for (String bad : new String[] {"\"reasoning_effort\":\"extreme\"",
        "\"reasoning_effort\":1", "\"reasoning_effort\":\"low\","
            + "\"chat_template_kwargs\":{\"reasoning_effort\":\"high\"}"}) {
      assertEquals("reasoning_effort", assertThrows(ApiException.class,
          () -> rendered("," + bad)).param());
    }
  }
}
