package dev.radixserve.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.server.api.ApiException;
import dev.radixserve.server.api.JsonBody;
import io.netty.channel.ChannelHandlerContext;
import java.util.Map;

/**
 * {@code /tokenize} and {@code /detokenize}, on the utility workers. Like a prompt, a text to
 * tokenize may have at most {@code max_model_len} tokens (400 beyond): the work per request is
 * bounded by what the model could ever take, not by the body size.
 */
final class TokenizeEndpoints {

  private final Tokenizer tokenizer;
  private final int maxModelLen;
  private final Responses responses;

  TokenizeEndpoints(Tokenizer tokenizer, int maxModelLen, Responses responses) {
    this.tokenizer = tokenizer;
    this.maxModelLen = maxModelLen;
    this.responses = responses;
  }

  void tokenize(ChannelHandlerContext ctx, byte[] body) {
    JsonNode prompt = JsonBody.readObject(body).get("prompt");
    if (prompt == null || !prompt.isTextual()) {
      throw ApiException.badRequest("prompt", "prompt must be a string");
    }
    int[] tokens = tokenizer.encodeAtMost(prompt.asText(), maxModelLen).orElseThrow(() ->
        ApiException.badRequest("prompt", "the prompt has more than max_model_len = "
            + maxModelLen + " tokens"));
    ObjectNode out = Responses.JSON.createObjectNode();
    out.put("count", tokens.length);
    out.put("max_model_len", maxModelLen);
    ArrayNode arr = out.putArray("tokens");
    for (int t : tokens) {
      arr.add(t);
    }
    ctx.executor().execute(() -> responses.json(ctx, 200, out));
  }

  void detokenize(ChannelHandlerContext ctx, byte[] body) {
    JsonNode tokens = JsonBody.readObject(body).get("tokens");
    if (tokens == null || !tokens.isArray()) {
      throw ApiException.badRequest("tokens", "tokens must be a list of token ids");
    }
    int[] ids = new int[tokens.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = JsonBody.tokenId(tokens.get(i), tokenizer.vocabSize(), "tokens");
    }
    String text = tokenizer.decode(ids);
    ctx.executor().execute(() -> responses.json(ctx, 200, Map.of("prompt", text)));
  }
}
