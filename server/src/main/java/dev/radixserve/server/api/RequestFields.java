package dev.radixserve.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiPredicate;

/**
 * What the server does with each request field that OpenAI's API (the official Python SDK's
 * {@code CompletionCreateParams}) or vLLM's ({@code CompletionRequest}, {@code
 * ChatCompletionRequest}) defines: it is {@linkplain Handling#HONOURED honoured}, {@linkplain
 * Handling#REFUSED refused} with a 400 naming it unless it holds its neutral value, or
 * {@linkplain Handling#IGNORED accepted and ignored} because it does not change the output
 * (bookkeeping and hints that the SDKs and their users send). The parameter table of docs/api.md is
 * this table; a test holds both against the SDK's and vLLM's field lists.
 */
public final class RequestFields {

  /** The three groups; every field of either API is in exactly one per endpoint. */
  public enum Handling { HONOURED, REFUSED, IGNORED }

  /**
   * @param neutral for a refused field, the values that ask for nothing the server lacks
   *     (null always passes): {@code (value, body) -> accepted}
   * @param why for refused and ignored fields, the reason, as the 400 and docs/api.md say it
   */
  public record Field(String name, Handling handling, BiPredicate<JsonNode, JsonNode> neutral,
      String why) {}

  private static final BiPredicate<JsonNode, JsonNode> NONE = (v, b) -> false;

  private static final Map<String, Field> COMPLETIONS;
  private static final Map<String, Field> CHAT;

  static {
    Map<String, Field> both = new LinkedHashMap<>();
    for (String f : new String[] {"model", "frequency_penalty", "presence_penalty",
        "repetition_penalty", "logprobs", "max_tokens", "n", "seed", "stop", "stop_token_ids",
        "stream", "stream_options", "temperature", "top_p", "top_k", "min_p", "user",
        "ignore_eos", "response_format", "structured_outputs", "guided_json", "guided_regex",
        "guided_choice", "priority", "cache_salt", "logit_bias", "min_tokens",
        "allowed_token_ids", "bad_words"}) {
      both.put(f, honoured(f));
    }
    refuse(both, "use_beam_search", (v, b) -> v.isBoolean() && !v.asBoolean(),
        "beam search is not supported");
    refuse(both, "length_penalty", (v, b) -> v.isNumber() && v.asDouble() == 1.0,
        "it applies to beam search, which is not supported");
    refuse(both, "watermarking", (v, b) -> v.isBoolean() && !v.asBoolean(), "not supported");
    refuse(both, "include_stop_str_in_output", (v, b) -> v.isBoolean() && !v.asBoolean(),
        "the stop text is never returned");
    refuse(both, "skip_special_tokens", (v, b) -> v.isBoolean() && v.asBoolean(),
        "only the default (true) is supported");
    refuse(both, "spaces_between_special_tokens", (v, b) -> v.isBoolean() && v.asBoolean(),
        "only the default (true) is supported");
    refuse(both, "truncate_prompt_tokens", NONE,
        "prompts are never truncated (a prompt too long is a 400)");
    refuse(both, "truncation_side", NONE,
        "prompts are never truncated (a prompt too long is a 400)");
    refuse(both, "prompt_logprobs", NONE,
        "not supported (completions: `echo` with `logprobs` scores the prompt)");
    refuse(both, "logprob_token_ids", NONE, "not supported");
    refuse(both, "request_id", NONE, "the server assigns request ids");
    refuse(both, "session_id", NONE, "not supported");
    refuse(both, "return_tokens_as_token_ids", (v, b) -> v.isBoolean() && !v.asBoolean(),
        "not supported");
    refuse(both, "return_token_ids", (v, b) -> v.isBoolean() && !v.asBoolean(), "not supported");
    refuse(both, "return_token_offsets", (v, b) -> v.isBoolean() && !v.asBoolean(),
        "vLLM's render endpoints only");
    refuse(both, "return_prompt_text", (v, b) -> v.isBoolean() && !v.asBoolean(),
        "not supported");
    refuse(both, "routed_experts_prompt_start", (v, b) -> v.isIntegralNumber() && v.asLong() == 0,
        "no mixture-of-experts routing data is returned");
    refuse(both, "kv_transfer_params", NONE, "no disaggregated serving");
    refuse(both, "ec_transfer_params", NONE, "no disaggregated serving");
    refuse(both, "vllm_xargs", NONE, "no custom extensions");
    refuse(both, "repetition_detection", NONE, "not supported");
    refuse(both, "stream_interval", NONE, "every token is streamed as it is decoded");
    refuse(both, "thinking_token_budget", (v, b) -> v.isIntegralNumber() && v.asLong() == -1,
        "not supported");
    ignore(both, "return_mm_kwargs", "vLLM's render endpoints only; no multimodal inputs");

    Map<String, Field> completions = new LinkedHashMap<>(both);
    for (String f : new String[] {"prompt", "echo"}) {
      completions.put(f, honoured(f));
    }
    refuse(completions, "suffix", (v, b) -> v.isTextual() && v.asText().isEmpty(),
        "insertion (fill-in-the-middle) is not supported");
    refuse(completions, "best_of", (v, b) -> v.isIntegralNumber() && v.asLong() == n(b),
        "only best_of == n (no extra candidates are drawn to pick from)");
    refuse(completions, "prompt_embeds", NONE, "prompts are text or token ids");
    refuse(completions, "add_special_tokens", (v, b) -> v.isBoolean() && v.asBoolean(),
        "prompt text is tokenized as the tokenizer does by default");

    Map<String, Field> chat = new LinkedHashMap<>(both);
    for (String f : new String[] {"messages", "max_completion_tokens", "top_logprobs", "tools",
        "tool_choice", "parallel_tool_calls", "reasoning_effort", "chat_template_kwargs", "include_reasoning"}) {
      chat.put(f, honoured(f));
    }
    refuse(chat, "echo", (v, b) -> v.isBoolean() && !v.asBoolean(), "not supported in chat");
    refuse(chat, "add_generation_prompt", (v, b) -> v.isBoolean() && v.asBoolean(),
        "the server always adds the generation prompt");
    refuse(chat, "continue_final_message", (v, b) -> v.isBoolean() && !v.asBoolean(),
        "not supported");
    refuse(chat, "add_special_tokens", (v, b) -> v.isBoolean() && !v.asBoolean(),
        "the chat template writes the special tokens");
    refuse(chat, "documents", NONE, "not supported");
    refuse(chat, "chat_template", NONE, "the model's template is used (no per-request template)");
    refuse(chat, "media_io_kwargs", NONE, "no multimodal inputs");
    refuse(chat, "mm_processor_kwargs", NONE, "no multimodal inputs");
    refuse(chat, "audio", NONE, "no audio output");
    refuse(chat, "modalities", (v, b) -> v.isArray() && v.size() == 1
        && "text".equals(v.get(0).asText()), "text output only");
    refuse(chat, "functions", NONE, "deprecated by OpenAI: use `tools`");
    refuse(chat, "function_call", NONE, "deprecated by OpenAI: use `tool_choice`");
    refuse(chat, "prediction", NONE, "predicted outputs are not supported");
    refuse(chat, "verbosity", NONE, "not supported");
    refuse(chat, "web_search_options", NONE, "no web search");
    refuse(chat, "moderation", NONE, "no moderation");
    ignore(chat, "store", "nothing is stored");
    ignore(chat, "metadata", "nothing is stored");
    ignore(chat, "service_tier", "one tier");
    ignore(chat, "safety_identifier", "no abuse monitoring");
    ignore(chat, "prompt_cache_key", "every prefix is cached without a key (`cache_salt` "
        + "partitions the cache)");
    ignore(chat, "prompt_cache_retention", "cached prefixes stay until evicted");
    ignore(chat, "prompt_cache_options", "cached prefixes stay until evicted");

    COMPLETIONS = Collections.unmodifiableMap(completions);
    CHAT = Collections.unmodifiableMap(chat);
  }

  private RequestFields() {}

  /** The table of one endpoint, in docs/api.md's order. */
  public static Map<String, Field> of(boolean chat) {
    return chat ? CHAT : COMPLETIONS;
  }

  /**
   * 400 for the first refused field that holds anything but null or its neutral value. Fields
   * not in the table are ignored, as before (OpenAI's SDKs pass user extras through).
   */
  static void check(JsonNode body, boolean chat) {
    Map<String, Field> table = of(chat);
    for (Iterator<Map.Entry<String, JsonNode>> it = body.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      Field f = table.get(e.getKey());
      if (f != null && f.handling() == Handling.REFUSED && !e.getValue().isNull()
          && !f.neutral().test(e.getValue(), body)) {
        throw ApiException.badRequest(f.name(), "`" + f.name() + "` is not supported by this "
            + "server: " + f.why());
      }
    }
  }

  private static long n(JsonNode body) {
    JsonNode n = body.get("n");
    return n == null || n.isNull() ? 1 : n.asLong();
  }

  private static Field honoured(String name) {
    return new Field(name, Handling.HONOURED, null, null);
  }

  private static void refuse(Map<String, Field> table, String name,
      BiPredicate<JsonNode, JsonNode> neutral, String why) {
    table.put(name, new Field(name, Handling.REFUSED, neutral, why));
  }

  private static void ignore(Map<String, Field> table, String name, String why) {
    table.put(name, new Field(name, Handling.IGNORED, null, why));
  }
}
