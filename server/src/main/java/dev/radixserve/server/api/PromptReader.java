package dev.radixserve.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.chat.ChatTemplate;
import dev.radixserve.model.chat.ChatTemplateException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the prompts of a completions body ({@code prompt}) or the conversation of a chat body
 * ({@code messages}) into token ids. Shapes and counts are checked before anything is
 * tokenized, and each text is tokenized only up to what the model could take
 * ({@link Tokenizer#encodeAtMost}), so a huge text costs no more than a long prompt.
 */
final class PromptReader {

  private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant",
      "tool");
  private static final Set<String> MESSAGE_FIELDS = Set.of("role", "content", "name",
      "tool_calls", "tool_call_id", "refusal", "reasoning_content", "reasoning");

  /** OpenAI's values, and vLLM's {@code max}. */
  static final List<String> REASONING_EFFORTS = List.of("none", "minimal", "low", "medium",
      "high", "xhigh", "max");
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Tokenizer tokenizer;
  private final ChatTemplate template;
  private final RequestLimits limits;

  PromptReader(Tokenizer tokenizer, ChatTemplate template, RequestLimits limits) {
    this.tokenizer = tokenizer;
    this.template = template;
    this.limits = limits;
  }

  /** How many prompts {@code prompt} holds; 400 for a shape OpenAI does not accept. */
  static int count(JsonNode body) {
    JsonNode p = body.get("prompt");
    if (p == null || p.isNull()) {
      throw ApiException.badRequest("prompt", "prompt is required");
    }
    if (p.isTextual() || (p.isArray() && !p.isEmpty() && p.get(0).isNumber())) {
      return 1;
    }
    if (!p.isArray() || p.isEmpty()) {
      throw ApiException.badRequest("prompt",
          "prompt must be a string, a list of strings, a token list or a list of token lists");
    }
    for (JsonNode e : p) {
      if (!e.isTextual() && !e.isArray()) {
        throw ApiException.badRequest("prompt", "prompt list items must be strings or token lists");
      }
    }
    return p.size();
  }

  /** The prompts' token ids; call after {@link #count} accepted the shape. */
  List<int[]> completion(JsonNode body, Integer maxTokens) {
    JsonNode p = body.get("prompt");
    int most = limits.maxPromptTokens(maxTokens);
    if (p.isTextual() || p.get(0).isNumber()) {
      return List.of(one(p, most, maxTokens));
    }
    List<int[]> out = new ArrayList<>(p.size());
    for (JsonNode e : p) {
      out.add(one(e, most, maxTokens));
    }
    return out;
  }

  /** A chat prompt: its tokens and the template's text they came from. */
  record ChatPrompt(int[] tokens, String text) {}

  /** @param tools their definitions go into the prompt; null for none */
  ChatPrompt chat(JsonNode body, Integer maxTokens, Tools tools) {
    JsonNode msgs = body.get("messages");
    if (msgs == null || !msgs.isArray() || msgs.isEmpty()) {
      throw ApiException.badRequest("messages", "messages must be a non-empty list");
    }
    List<ChatTemplate.Message> out = new ArrayList<>(msgs.size());
    int index = -1;
    for (JsonNode m : msgs) {
      index++;
      if (!m.isObject()) {
        throw ApiException.badRequest("messages", "each message must be an object");
      }
      for (Iterator<String> it = m.fieldNames(); it.hasNext(); ) {
        String k = it.next();
        if (!MESSAGE_FIELDS.contains(k)) {
          throw ApiException.badRequest("messages", "unknown message field: " + k);
        }
      }
      String role = m.path("role").isTextual() ? m.get("role").asText() : null;
      if (role == null || !ROLES.contains(role)) {
        throw ApiException.badRequest("messages", "message role must be one of " + ROLES);
      }
      if (role.equals("tool") && !m.path("tool_call_id").isTextual()) {
        // OpenAI's answer to a tool result that names no call
        String param = "messages[" + index + "].tool_call_id";
        throw ApiException.badRequest(param, "Missing required parameter: '" + param + "'.");
      }
      JsonNode calls = m.get("tool_calls");
      boolean hasCalls = role.equals("assistant") && calls != null && calls.isArray()
          && !calls.isEmpty();
      JsonNode c = m.get("content");
      String reasoning = reasoning(m, index);
      if (template.takesTools()) {
        // the template writes calls and results in its own syntax, from OpenAI's fields
        String text = hasCalls && (c == null || c.isNull()) ? null : content(c);
        out.add(new ChatTemplate.Message(role, text, hasCalls ? ToolCallText.asMaps(calls) : null,
            m.hasNonNull("tool_call_id") ? text(m.get("tool_call_id"), "messages") : null,
            m.hasNonNull("name") ? text(m.get("name"), "messages") : null, reasoning));
        continue;
      }
      String text = hasCalls && (c == null || c.isNull()) ? "" : content(c);
      if (hasCalls) {
        text = text + ToolCallText.render(calls);
      }
      out.add(new ChatTemplate.Message(role, text, null, null, null, reasoning));
    }
    List<Map<String, Object>> toolsVariable = null;
    if (tools != null && template.takesTools()) {
      toolsVariable = tools.definitions();
    } else if (tools != null) {
      out = withSystemText(out, tools.systemText());
    }
    String rendered;
    try {
      rendered = template.render(out, toolsVariable, templateVariables(body));
    } catch (ChatTemplateException e) {
      throw ApiException.badRequest("messages", e.getMessage());
    }
    // the template wrote the special tokens (BOS and all): none added, as transformers does
    int most = Math.max(0, limits.maxPromptTokens(maxTokens));
    return new ChatPrompt(tokenizer.encodeTemplatedAtMost(rendered, most).orElseThrow(() ->
        limits.promptTooLong("messages", "more than " + most + " tokens", maxTokens)), rendered);
  }

  /**
   * vLLM's {@code chat_template_kwargs} (any JSON values, passed to the template as variables,
   * except the ones the server sets) and {@code reasoning_effort}, passed as the template
   * variable of that name; with it, {@code enable_thinking} is {@code reasoning_effort !=
   * "none"} unless the kwargs set it (vLLM's rule).
   */
  static Map<String, Object> templateVariables(JsonNode body) {
    Map<String, Object> vars = new LinkedHashMap<>();
    JsonNode kwargs = body.get("chat_template_kwargs");
    if (kwargs != null && !kwargs.isNull()) {
      if (!kwargs.isObject()) {
        throw ApiException.badRequest("chat_template_kwargs",
            "chat_template_kwargs must be an object of template variables");
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = kwargs.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (ChatTemplate.RESERVED_VARIABLES.contains(e.getKey()) || e.getKey().startsWith("__")) {
          throw ApiException.badRequest("chat_template_kwargs", "chat_template_kwargs may not set `"
              + e.getKey() + "`: the server sets it");
        }
        vars.put(e.getKey(), JSON.convertValue(e.getValue(), Object.class));
      }
    }
    JsonNode effort = body.get("reasoning_effort");
    if (effort != null && !effort.isNull()) {
      if (!effort.isTextual() || !REASONING_EFFORTS.contains(effort.asText())) {
        throw ApiException.badRequest("reasoning_effort", "reasoning_effort must be one of "
            + REASONING_EFFORTS);
      }
      Object kwarg = vars.get("reasoning_effort");
      if (kwarg != null && !kwarg.equals(effort.asText())) {
        throw ApiException.badRequest("reasoning_effort", "reasoning_effort `" + effort.asText()
            + "` contradicts chat_template_kwargs.reasoning_effort `" + kwarg + "`");
      }
      vars.put("reasoning_effort", effort.asText());
      vars.putIfAbsent("enable_thinking", !effort.asText().equals("none"));
    }
    return vars;
  }

  /**
   * An assistant turn's reasoning sent back: {@code reasoning_content} (DeepSeek's and our
   * replies' name) or {@code reasoning} (vLLM's newer name), given to the template as {@code
   * reasoning_content}, as vLLM does.
   */
  private static String reasoning(JsonNode m, int index) {
    JsonNode r = m.hasNonNull("reasoning_content") ? m.get("reasoning_content") : m.get("reasoning");
    if (r == null || r.isNull()) {
      return null;
    }
    String param = "messages[" + index + "]." + (m.hasNonNull("reasoning_content")
        ? "reasoning_content" : "reasoning");
    if (!r.isTextual()) {
      throw ApiException.badRequest(param, param + " must be a string");
    }
    if (!"assistant".equals(m.path("role").asText())) {
      throw ApiException.badRequest(param, "only assistant messages carry reasoning");
    }
    return text(r, param);
  }

  /** {@code messages} with {@code text} appended to the leading system message (or one added). */
  private static List<ChatTemplate.Message> withSystemText(List<ChatTemplate.Message> messages,
      String text) {
    List<ChatTemplate.Message> out = new ArrayList<>(messages);
    if (!out.isEmpty() && out.getFirst().role().equals("system")) {
      out.set(0, new ChatTemplate.Message("system", out.getFirst().content() + "\n\n" + text));
    } else {
      out.addFirst(new ChatTemplate.Message("system", text));
    }
    return out;
  }

  private int[] one(JsonNode p, int most, Integer maxTokens) {
    if (p.isTextual()) {
      int[] ids = encode(text(p, "prompt"), "prompt", maxTokens);
      if (ids.length == 0) {
        throw ApiException.badRequest("prompt", "prompt must not be empty");
      }
      return ids;
    }
    if (p.isEmpty()) {
      throw ApiException.badRequest("prompt", "prompt must not be empty");
    }
    if (p.size() > most) {
      throw limits.promptTooLong("prompt", Integer.toString(p.size()), maxTokens);
    }
    int[] t = new int[p.size()];
    for (int i = 0; i < t.length; i++) {
      t[i] = tokenId(p.get(i), "prompt");
    }
    return t;
  }

  private int[] encode(String text, String param, Integer maxTokens) {
    int most = limits.maxPromptTokens(maxTokens);
    return tokenizer.encodeAtMost(text, Math.max(0, most))
        .orElseThrow(() -> limits.promptTooLong(param, "more than " + Math.max(0, most)
            + " tokens", maxTokens));
  }

  int tokenId(JsonNode n, String param) {
    return JsonBody.tokenId(n, tokenizer.vocabSize(), param);
  }

  private static String content(JsonNode c) {
    if (c != null && c.isTextual()) {
      return text(c, "messages");
    }
    if (c != null && c.isArray()) {
      StringBuilder sb = new StringBuilder();
      for (JsonNode part : c) {
        if (!"text".equals(part.path("type").asText()) || !part.path("text").isTextual()) {
          throw ApiException.badRequest("messages", "only text content parts are supported");
        }
        sb.append(text(part.get("text"), "messages"));
      }
      return sb.toString();
    }
    throw ApiException.badRequest("messages", "message content must be a string or text parts");
  }

  /**
   * A JSON string as text; 400 when it holds an unpaired surrogate ({@code "\ud800"}), which
   * is no Unicode text and has no UTF-8 form.
   */
  static String text(JsonNode v, String param) {
    String s = v.asText();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw ApiException.badRequest(param, param + " holds an unpaired surrogate (\\u"
            + Integer.toHexString(c) + ") at index " + i);
      }
    }
    return s;
  }
}
