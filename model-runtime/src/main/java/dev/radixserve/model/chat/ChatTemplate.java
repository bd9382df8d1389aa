package dev.radixserve.model.chat;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns a conversation into the prompt text the model was trained on. The model's own template
 * ({@link JinjaChatTemplate}, from its tokenizer_config.json) or, for a model without one (GPT-2),
 * {@link ChatMlTemplate}.
 */
public interface ChatTemplate {

  /**
   * One message as OpenAI's API has it: a role ({@code system}, {@code user}, {@code assistant},
   * {@code tool}, ...), its text (null for an assistant turn that only calls tools), and where
   * given the assistant's {@code tool_calls} (OpenAI's list of {@code {"id", "type": "function",
   * "function": {"name", "arguments"}}}, as plain maps and lists), a tool result's {@code
   * tool_call_id} and a {@code name}, and an earlier assistant turn's {@code reasoning_content}
   * (the template renders or drops it: Qwen3's keeps it only after the last user message). A
   * template that takes tools renders them natively.
   */
  record Message(String role, String content, List<Map<String, Object>> toolCalls,
      String toolCallId, String name, String reasoningContent) {

    public Message(String role, String content) {
      this(role, content, null, null, null, null);
    }

    public Message(String role, String content, List<Map<String, Object>> toolCalls,
        String toolCallId, String name) {
      this(role, content, toolCalls, toolCallId, name, null);
    }
  }

  /**
   * The prompt for {@code messages}, ending with the generation prompt (the assistant's turn).
   *
   * @throws ChatTemplateException when the template refuses the conversation (its {@code
   *     raise_exception}, e.g. roles that do not alternate), a client error
   */
  String render(List<Message> messages);

  /**
   * As {@link #render(List)}, with the tool definitions (OpenAI's list of {@code {"type":
   * "function", "function": {...}}}) passed as the template's {@code tools} variable, as
   * transformers' {@code apply_chat_template(messages, tools=tools)} does. Only for a template
   * that {@link #takesTools}.
   */
  default String render(List<Message> messages, List<Map<String, Object>> tools) {
    if (tools != null) {
      throw new IllegalArgumentException("this chat template takes no tools");
    }
    return render(messages);
  }

  /**
   * The variables the server itself sets (or that transformers' {@code apply_chat_template}
   * takes as its own arguments): a request cannot pass them as {@code chat_template_kwargs}.
   */
  Set<String> RESERVED_VARIABLES = Set.of("messages", "tools", "add_generation_prompt",
      "continue_final_message", "bos_token", "eos_token", "strftime_now", "raise_exception",
      "tokenize", "chat_template", "documents", "return_dict", "return_assistant_tokens_mask",
      "tool_choice");

  /**
   * As {@link #render(List, List)}, with more template variables, as transformers passes
   * {@code apply_chat_template}'s extra keyword arguments (vLLM's {@code chat_template_kwargs}:
   * {@code enable_thinking}, {@code reasoning_effort}, the template's own). None may be one of
   * {@link #RESERVED_VARIABLES}. A template without variables (the built-in one) reads none.
   */
  default String render(List<Message> messages, List<Map<String, Object>> tools,
      Map<String, Object> variables) {
    return render(messages, tools);
  }

  /** Whether the template reads a {@code tools} variable (Llama 3.1+, Qwen2.5+, Mistral v3+). */
  default boolean takesTools() {
    return false;
  }

  /** The template's source text (empty for the built-in one): tells which family wrote it. */
  default String source() {
    return "";
  }

  /** Stop strings every chat request gets (the template's end-of-turn marker when it is text). */
  List<String> stops();
}
