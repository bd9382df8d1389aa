package dev.radixserve.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.cache.CacheNamespace;
import dev.radixserve.model.sampling.SamplingParams;
import dev.radixserve.server.api.GenerationRequest;
import dev.radixserve.server.api.JsonBody;
import dev.radixserve.server.api.RequestLimits;
import dev.radixserve.server.api.RequestParser;
import io.netty.channel.ChannelHandlerContext;
import java.util.UUID;

/**
 * vLLM's {@code POST /v1/completions/render} and {@code POST /v1/chat/completions/render}: the
 * request is an ordinary completions or chat request, parsed and validated exactly as the
 * generation endpoints parse it (same {@link RequestParser}, so the same chat template, the same
 * 4xx), and nothing is generated. The answer is vLLM's {@code GenerateRequest} (for chat) or a
 * list of them, one per prompt (for completions): the prompt's token ids and the resolved
 * sampling parameters. llm-d's endpoint picker ({@code token-producer} with a {@code vllm} block)
 * calls these to hash the very token ids radixserve caches and publishes in its KV events.
 *
 * <p>{@code sampling_params} carries the parameters radixserve has, under vLLM's names; vLLM's
 * own object has more fields (those radixserve does not implement), which the picker ignores
 * (it reads {@code token_ids} and {@code features} only). {@code features} is null: no
 * multimodal inputs.
 */
final class RenderEndpoints {

  private final RequestParser parser;
  private final RequestLimits limits;
  private final String modelName;
  private final Responses responses;

  RenderEndpoints(RequestParser parser, RequestLimits limits, String modelName,
      Responses responses) {
    this.parser = parser;
    this.limits = limits;
    this.modelName = modelName;
    this.responses = responses;
  }

  /** On a worker; answers on the channel's event loop. */
  void render(ChannelHandlerContext ctx, byte[] body, boolean chat) {
    JsonNode request = JsonBody.readObject(body);
    GenerationRequest g = parser.parse(request, chat);
    // vLLM: the request's stream_options when streaming, else null
    JsonNode streamOptions = g.stream() ? request.get("stream_options") : null;
    ArrayNode all = Responses.JSON.createArrayNode();
    for (int[] prompt : g.prompts()) {
      all.add(generateRequest(g, prompt, chat, streamOptions));
    }
    Object out = chat ? all.get(0) : all;
    ctx.executor().execute(() -> responses.json(ctx, 200, out));
  }

  private ObjectNode generateRequest(GenerationRequest g, int[] prompt, boolean chat,
      JsonNode streamOptions) {
    ObjectNode r = Responses.JSON.createObjectNode();
    r.put("request_id", (chat ? "chatcmpl-" : "cmpl-") + UUID.randomUUID());
    ArrayNode ids = r.putArray("token_ids");
    for (int t : prompt) {
      ids.add(t);
    }
    r.putNull("features");
    r.set("sampling_params", samplingParams(g,
        limits.maxTokensFor(prompt.length, g.maxTokens(), chat ? "messages" : "prompt")));
    r.put("model", modelName);
    r.put("stream", g.stream());
    r.set("stream_options", streamOptions == null ? NullNode.getInstance() : streamOptions);
    String salt = CacheNamespace.saltOf(g.namespace());
    if (salt == null) {
      r.putNull("cache_salt");
    } else {
      r.put("cache_salt", salt);
    }
    r.put("priority", g.priority());
    r.putNull("kv_transfer_params");
    return r;
  }

  /** vLLM's {@code SamplingParams} fields that radixserve has, resolved as it will use them. */
  private static ObjectNode samplingParams(GenerationRequest g, int maxTokens) {
    SamplingParams p = g.params();
    ObjectNode s = Responses.JSON.createObjectNode();
    s.put("n", g.n());
    s.put("presence_penalty", p.presencePenalty());
    s.put("frequency_penalty", p.frequencyPenalty());
    s.put("repetition_penalty", p.repetitionPenalty());
    s.put("temperature", p.temperature());
    s.put("top_p", p.topP());
    s.put("top_k", p.topK());
    s.put("min_p", p.minP());
    if (p.seed() == null) {
      s.putNull("seed");
    } else {
      s.put("seed", p.seed());
    }
    ArrayNode stop = s.putArray("stop");
    g.stop().forEach(stop::add);
    ArrayNode stopIds = s.putArray("stop_token_ids");
    p.stopTokenIds().stream().sorted().forEach(stopIds::add);
    s.put("ignore_eos", g.ignoreEos());
    s.put("max_tokens", maxTokens);
    if (g.logprobs() == null) {
      s.putNull("logprobs");
    } else {
      s.put("logprobs", g.logprobs());
    }
    return s;
  }
}
