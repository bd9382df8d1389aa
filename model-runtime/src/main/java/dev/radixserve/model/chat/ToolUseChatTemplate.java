package dev.radixserve.model.chat;

import java.util.List;
import java.util.Map;

/**
 * A model's default chat template beside the one named {@code tool_use} (Hermes 2 Pro, Hermes 3,
 * Command R: tokenizer_config.json's list of named templates, a GGUF file's {@code
 * tokenizer.chat_template.tool_use}), picked as transformers' {@code get_chat_template} picks:
 * the tool_use one whenever {@code tools} are passed (a list, even an empty one), the default
 * one otherwise. llama-server and vLLM pick so too.
 */
final class ToolUseChatTemplate implements ChatTemplate {

  private final ChatTemplate defaultTemplate;
  private final ChatTemplate toolUse;

  ToolUseChatTemplate(ChatTemplate defaultTemplate, ChatTemplate toolUse) {
    this.defaultTemplate = defaultTemplate;
    this.toolUse = toolUse;
  }

  @Override
  public String render(List<Message> messages) {
    return defaultTemplate.render(messages);
  }

  @Override
  public String render(List<Message> messages, List<Map<String, Object>> tools) {
    return render(messages, tools, Map.of());
  }

  @Override
  public String render(List<Message> messages, List<Map<String, Object>> tools,
      Map<String, Object> variables) {
    return tools != null ? toolUse.render(messages, tools, variables)
        : defaultTemplate.render(messages, null, variables);
  }

  /** Tools are always rendered natively: by the tool_use template. */
  @Override
  public boolean takesTools() {
    return true;
  }

  /** Both texts, so the family (tool call and reasoning syntax) is read from either. */
  @Override
  public String source() {
    return defaultTemplate.source() + "\n" + toolUse.source();
  }

  @Override
  public List<String> stops() {
    return defaultTemplate.stops();
  }
}
