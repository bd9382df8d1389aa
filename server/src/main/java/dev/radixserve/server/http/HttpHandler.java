package dev.radixserve.server.http;

import dev.radixserve.model.Tokenizer;
import dev.radixserve.server.api.ReasoningSyntax;
import dev.radixserve.server.api.ToolCallSyntax;
import dev.radixserve.model.chat.ChatTemplate;
import dev.radixserve.server.api.ApiException;
import dev.radixserve.server.api.RequestLimits;
import dev.radixserve.server.api.RequestParser;
import dev.radixserve.server.engine.Engine;
import dev.radixserve.server.metrics.ServerMetrics;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Routes requests (404 unknown path, 405 wrong method), checks the API key, and serves every
 * endpoint. Requests arrive one at a time per connection, well-formed ({@link RequestGuard});
 * parsing and tokenizing run on {@link Workers}, never on the event loop. Shared by all
 * channels (stateless).
 */
@ChannelHandler.Sharable
public final class HttpHandler extends SimpleChannelInboundHandler<FullHttpRequest>
    implements AutoCloseable {

  private static final Logger LOG = Logger.getLogger(HttpHandler.class.getName());
  private static final String MODELS = "/v1/models";
  private static final String COMPLETIONS_RENDER = "/v1/completions/render";
  private static final String CHAT_RENDER = "/v1/chat/completions/render";
  private static final Map<String, HttpMethod> ROUTES = Map.ofEntries(
      Map.entry("/v1/completions", HttpMethod.POST),
      Map.entry("/v1/chat/completions", HttpMethod.POST),
      Map.entry(COMPLETIONS_RENDER, HttpMethod.POST), Map.entry(CHAT_RENDER, HttpMethod.POST),
      Map.entry(MODELS, HttpMethod.GET), Map.entry("/tokenize", HttpMethod.POST),
      Map.entry("/detokenize", HttpMethod.POST), Map.entry("/version", HttpMethod.GET),
      Map.entry("/metrics", HttpMethod.GET), Map.entry("/reset_prefix_cache", HttpMethod.POST),
      Map.entry("/health", HttpMethod.GET));
  /** Routes served without the API key: probes and monitoring. */
  static final Set<String> OPEN_ROUTES = Set.of("/health", "/metrics", "/version");

  /**
   * What the handler serves with.
   *
   * @param modelRoot where the model came from (its directory), {@code root} in /v1/models
   * @param weightsDigest which weights these are ({@code WeightsDigest}), {@code
   *     weights_digest} in /v1/models
   * @param toolCallSyntax how the model writes tool calls ({@code --tool-call-parser})
   */
  public record Context(Engine engine, Tokenizer tokenizer, ChatTemplate chatTemplate,
      ServerMetrics metrics,
      String modelName, RequestLimits limits, String apiKey, BooleanSupplier ready,
      String modelRoot, String weightsDigest, String clientIdHeader,
      ToolCallSyntax toolCallSyntax, ReasoningSyntax reasoningSyntax) {

    /** The parser of completions and chat requests, for generation and render alike. */
    RequestParser requestParser() {
      return new RequestParser(tokenizer, chatTemplate, modelName, limits, toolCallSyntax,
          reasoningSyntax);
    }
  }

  private final Context c;
  private final Responses responses;
  private final ApiKey apiKey;
  private final Workers workers;
  private final GenerationEndpoint generation;
  private final TokenizeEndpoints tokenize;
  private final RenderEndpoints render;
  private final ModelCards models;
  private final ClientId clientId;

  public HttpHandler(Context c) {
    this.c = c;
    this.responses = new Responses(c.metrics());
    this.apiKey = c.apiKey() == null ? null : new ApiKey(c.apiKey());
    this.workers = new Workers(Runtime.getRuntime().availableProcessors(), responses);
    this.generation = new GenerationEndpoint(c, responses, workers);
    this.tokenize = new TokenizeEndpoints(c.tokenizer(), c.limits().maxModelLen(), responses);
    this.render = new RenderEndpoints(c.requestParser(), c.limits(), c.modelName(), responses);
    this.clientId = new ClientId(c.clientIdHeader());
    this.models = new ModelCards(c.modelName(), c.modelRoot(), c.weightsDigest(),
        c.limits().maxModelLen(),
        System.currentTimeMillis() / 1000);
  }

  Responses responses() {
    return responses;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
    try {
      route(ctx, req, RequestGuard.path(req.uri()));
    } catch (ApiException e) {
      responses.error(ctx, e);
    } catch (RuntimeException e) {
      String rid = UUID.randomUUID().toString();
      LOG.log(Level.SEVERE, "internal error, request id " + rid, e);
      responses.error(ctx, new ApiException(500, "server_error", null, null,
          "internal error (request id " + rid + ")"));
    }
  }

  private void route(ChannelHandlerContext ctx, FullHttpRequest req, String path) {
    String route = path.startsWith(ModelCards.PREFIX) ? ModelCards.PREFIX : path;
    HttpMethod method = route.equals(ModelCards.PREFIX) ? HttpMethod.GET : ROUTES.get(route);
    if (method == null) {
      throw new ApiException(404, "invalid_request_error", null, "not_found", "no route " + path);
    }
    if (!method.equals(req.method())) {
      throw new ApiException(405, "invalid_request_error", null, "method_not_allowed",
          req.method() + " is not allowed on " + path);
    }
    if (apiKey != null && !OPEN_ROUTES.contains(route)
        && !apiKey.accepts(req.headers().get(HttpHeaderNames.AUTHORIZATION))) {
      throw new ApiException(401, "invalid_request_error", null, "invalid_api_key",
          "missing or wrong API key");
    }
    byte[] body = ByteBufUtil.getBytes(req.content());
    switch (route) {
      case "/v1/completions", "/v1/chat/completions" -> generation.handle(ctx, body,
          route.equals("/v1/chat/completions"), clientId.of(ctx.channel(), req));
      case MODELS -> responses.json(ctx, 200, models.list());
      case ModelCards.PREFIX -> responses.json(ctx, 200,
          models.card(path.substring(ModelCards.PREFIX.length())));
      case COMPLETIONS_RENDER, CHAT_RENDER -> workers.utility(ctx,
          () -> render.render(ctx, body, route.equals(CHAT_RENDER)));
      case "/tokenize" -> workers.utility(ctx, () -> tokenize.tokenize(ctx, body));
      case "/detokenize" -> workers.utility(ctx, () -> tokenize.detokenize(ctx, body));
      case "/version" -> responses.json(ctx, 200, Map.of("version", "0.1.0"));
      case "/metrics" -> responses.text(ctx, 200, c.metrics().scrape(),
          "text/plain; version=0.0.4; charset=utf-8");
      case "/health" -> responses.text(ctx, c.ready().getAsBoolean() ? 200 : 503, "", "text/plain");
      case "/reset_prefix_cache" -> c.engine().resetPrefixCache().thenAccept(n ->
          ctx.executor().execute(() -> responses.json(ctx, 200, Map.of("freed_blocks", n))));
      default -> throw new IllegalStateException("unrouted " + path);
    }
  }

  /**
   * A decoder error (too many pipelined requests) is the codec's to handle: it answers what it
   * has and closes. Anything else (a reset connection) closes the channel.
   */
  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    LOG.log(Level.FINE, "channel error", cause);
    if (!(cause instanceof DecoderException)) {
      ctx.close();
    }
  }

  /** See {@link GenerationEndpoint#awaitAdmitted}. */
  public boolean awaitAdmitted(long deadlineNanos) throws InterruptedException {
    return generation.awaitAdmitted(deadlineNanos);
  }

  @Override
  public void close() {
    workers.close();
  }
}
