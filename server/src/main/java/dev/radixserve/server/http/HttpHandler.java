package dev.radixserve.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.server.api.ApiException;
import dev.radixserve.server.api.GenerationRequest;
import dev.radixserve.server.api.RequestParser;
import dev.radixserve.server.engine.Engine;
import dev.radixserve.server.engine.EngineRejectedException;
import dev.radixserve.server.engine.EngineRequest;
import dev.radixserve.server.metrics.ServerMetrics;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Routes requests (404 unknown path, 405 wrong method), checks the API key, and serves every
 * endpoint. Parsing and tokenizing of generation bodies runs on {@code workers}, never on the
 * event loop. Shared by all channels (stateless).
 */
@ChannelHandler.Sharable
public final class HttpHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

  private static final Logger LOG = Logger.getLogger(HttpHandler.class.getName());
  private static final String MODEL_ROUTE = "/v1/models/{model}";
  private static final Map<String, HttpMethod> ROUTES = Map.of(
      "/v1/completions", HttpMethod.POST, "/v1/chat/completions", HttpMethod.POST,
      "/v1/models", HttpMethod.GET, MODEL_ROUTE, HttpMethod.GET,
      "/tokenize", HttpMethod.POST, "/detokenize", HttpMethod.POST,
      "/version", HttpMethod.GET, "/metrics", HttpMethod.GET,
      "/reset_prefix_cache", HttpMethod.POST, "/health", HttpMethod.GET);

  /**
   * What the handler serves with.
   *
   * @param modelRoot where the model came from (its directory), {@code root} in /v1/models
   */
  public record Context(Engine engine, Tokenizer tokenizer, ServerMetrics metrics,
      ExecutorService workers, String modelName, int maxModelLen, int blockSize, int totalBlocks,
      String apiKey, BooleanSupplier ready, String modelRoot) {}

  private final Context c;
  private final Responses responses;
  private final RequestParser parser;
  private final ModelCards models;

  public HttpHandler(Context c) {
    this.c = c;
    this.responses = new Responses(c.metrics());
    this.parser = new RequestParser(c.tokenizer(), c.modelName());
    this.models = new ModelCards(c.modelName(), c.modelRoot(), c.maxModelLen(),
        System.currentTimeMillis() / 1000);
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
    String path = new QueryStringDecoder(req.uri()).path();
    String route = path.startsWith(ModelCards.PREFIX) ? MODEL_ROUTE : path;
    HttpMethod method = ROUTES.get(route);
    try {
      if (method == null) {
        throw new ApiException(404, "invalid_request_error", null, "not_found", "no route " + path);
      }
      if (!method.equals(req.method())) {
        throw new ApiException(405, "invalid_request_error", null, "method_not_allowed",
            req.method() + " is not allowed on " + path);
      }
      if (c.apiKey() != null && !java.util.Set.of("/health", "/metrics", "/version").contains(path)
          && !("Bearer " + c.apiKey()).equals(req.headers().get(HttpHeaderNames.AUTHORIZATION))) {
        throw new ApiException(401, "invalid_request_error", null, "invalid_api_key",
            "missing or wrong API key");
      }
      byte[] body = ByteBufUtil.getBytes(req.content());
      switch (route) {
        case "/v1/completions" -> generate(ctx, body, false);
        case "/v1/chat/completions" -> generate(ctx, body, true);
        case "/v1/models" -> responses.json(ctx, 200, models.list());
        case MODEL_ROUTE -> responses.json(ctx, 200, models.card(path.substring(ModelCards.PREFIX.length())));
        case "/tokenize" -> c.workers().execute(() -> guarded(ctx, () -> tokenize(ctx, body)));
        case "/detokenize" -> c.workers().execute(() -> guarded(ctx, () -> detokenize(ctx, body)));
        case "/version" -> responses.json(ctx, 200, Map.of("version", "0.1.0"));
        case "/metrics" -> responses.text(ctx, 200, c.metrics().scrape(),
            "text/plain; version=0.0.4; charset=utf-8");
        case "/health" -> responses.text(ctx, c.ready().getAsBoolean() ? 200 : 503, "", "text/plain");
        case "/reset_prefix_cache" -> c.engine().resetPrefixCache().thenAccept(n ->
            ctx.executor().execute(() -> responses.json(ctx, 200, Map.of("freed_blocks", n))));
        default -> throw new IllegalStateException("unrouted " + path);
      }
    } catch (ApiException e) {
      responses.error(ctx, e);
    }
  }


  private void guarded(ChannelHandlerContext ctx, Runnable work) {
    try {
      work.run();
    } catch (ApiException e) {
      ctx.executor().execute(() -> responses.error(ctx, e));
    } catch (RuntimeException e) {
      String rid = UUID.randomUUID().toString();
      LOG.log(Level.SEVERE, "internal error, request id " + rid, e);
      ctx.executor().execute(() -> responses.error(ctx, new ApiException(500, "server_error", null,
          null, "internal error (request id " + rid + "): " + e.getMessage())));
    }
  }

  private void generate(ChannelHandlerContext ctx, byte[] body, boolean chat) {
    if (!c.ready().getAsBoolean() || !c.engine().isAccepting()) {
      throw new ApiException(503, "server_error", null, "unavailable", "the server is not ready");
    }
    c.workers().execute(() -> guarded(ctx, () -> submit(ctx, body, chat)));
  }

  private void submit(ChannelHandlerContext ctx, byte[] body, boolean chat) {
    GenerationRequest g = parser.parse(RequestParser.readObject(body), chat);
    List<EngineRequest> engineRequests = new ArrayList<>();
    String id = (chat ? "chatcmpl-" : "cmpl-") + UUID.randomUUID().toString().replace("-", "");
    if (g.user() != null) {
      LOG.fine(() -> id + " user=" + g.user());
    }
    GenerationCall call = new GenerationCall(ctx, g, c.tokenizer(), responses, id, c.modelName());
    for (int i = 0; i < g.prompts().size(); i++) {
      int[] prompt = g.prompts().get(i);
      int room = c.maxModelLen() - prompt.length;
      if (room < 1 || (g.maxTokens() != null && g.maxTokens() > room)) {
        throw ApiException.badRequest(g.chat() ? "messages" : "prompt", "this model's maximum "
            + "context length is " + c.maxModelLen() + " tokens; the prompt has " + prompt.length
            + " and " + (g.maxTokens() == null ? "no room is left" : g.maxTokens()
            + " were requested for the completion"));
      }
      int maxTokens = g.maxTokens() == null ? room : g.maxTokens();
      int blocks = (prompt.length + maxTokens + c.blockSize() - 1) / c.blockSize();
      if (blocks > c.totalBlocks()) {
        throw ApiException.badRequest("max_tokens", "the request needs " + blocks
            + " KV blocks but the pool has only " + c.totalBlocks());
      }
      engineRequests.add(new EngineRequest(id + "-" + i, prompt, g.params(), g.n(), maxTokens,
          g.stop(), g.ignoreEos(), g.namespace(), call.sink(i), g.echo() && g.logprobs() != null));
    }
    ctx.executor().execute(() -> {
      if (!ctx.channel().isActive()) {
        return;
      }
      List<String> submitted = new ArrayList<>();
      try {
        if (g.stream()) {
          call.startStream();
        }
        for (EngineRequest r : engineRequests) {
          c.engine().submit(r);
          submitted.add(r.id());
        }
        ctx.channel().closeFuture().addListener(f -> {
          if (!call.isDone()) {
            submitted.forEach(c.engine()::abort);
          }
        });
      } catch (EngineRejectedException e) {
        submitted.forEach(c.engine()::abort);
        int status = e.reason() == EngineRejectedException.Reason.QUEUE_FULL ? 429 : 503;
        if (g.stream()) {
          call.error(status, e.getMessage());
        } else {
          responses.error(ctx, new ApiException(status, status == 429 ? "rate_limit_error"
              : "server_error", null, null, e.getMessage()));
        }
      }
    });
  }

  private void tokenize(ChannelHandlerContext ctx, byte[] body) {
    JsonNode json = RequestParser.readObject(body);
    JsonNode prompt = json.get("prompt");
    if (prompt == null || !prompt.isTextual()) {
      throw ApiException.badRequest("prompt", "prompt must be a string");
    }
    int[] tokens = c.tokenizer().encode(prompt.asText());
    ObjectNode out = Responses.JSON.createObjectNode();
    out.put("count", tokens.length);
    out.put("max_model_len", c.maxModelLen());
    ArrayNode arr = out.putArray("tokens");
    for (int t : tokens) {
      arr.add(t);
    }
    ctx.executor().execute(() -> responses.json(ctx, 200, out));
  }

  private void detokenize(ChannelHandlerContext ctx, byte[] body) {
    JsonNode json = RequestParser.readObject(body);
    JsonNode tokens = json.get("tokens");
    if (tokens == null || !tokens.isArray()) {
      throw ApiException.badRequest("tokens", "tokens must be a list of token ids");
    }
    int[] ids = new int[tokens.size()];
    for (int i = 0; i < ids.length; i++) {
      JsonNode t = tokens.get(i);
      if (!t.isIntegralNumber() || t.asInt() < 0 || t.asInt() >= c.tokenizer().vocabSize()) {
        throw ApiException.badRequest("tokens", "invalid token id " + t);
      }
      ids[i] = t.asInt();
    }
    String text = c.tokenizer().decode(ids);
    ctx.executor().execute(() -> responses.json(ctx, 200, Map.of("prompt", text)));
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    LOG.log(Level.FINE, "channel error", cause);
    ctx.close();
  }
}
