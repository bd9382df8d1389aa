package dev.radixserve.server.http;

import dev.radixserve.server.api.ApiException;
import dev.radixserve.server.cacheview.CacheViewService;
import dev.radixserve.server.metrics.ServerMetrics;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;

/**
 * The cache view's routes, in front of {@link HttpHandler} (anything else passes through):
 * {@code GET /cache} (the page), {@code /cache/view.js}, {@code /cache/view.css},
 * {@code GET /cache/tree} (bounded JSON snapshot), {@code GET /cache/events} (SSE) and
 * {@code POST /cache/login}. See {@link CacheViewAuth} for the API key.
 */
@ChannelHandler.Sharable
public final class CacheViewHandler extends ChannelInboundHandlerAdapter {

  private static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self';"
      + " connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none';"
      + " frame-ancestors 'none'";
  private static final Map<String, String> ASSETS = Map.of(
      "/cache", "cache.html", "/cache/view.js", "view.js", "/cache/view.css", "view.css");

  private final CacheViewService view;
  private final CacheViewAuth auth;
  private final Responses responses;
  private final Map<String, byte[]> assets;

  public CacheViewHandler(CacheViewService view, String apiKey, ServerMetrics metrics) {
    this.view = view;
    this.auth = new CacheViewAuth(apiKey);
    this.responses = new Responses(metrics);
    this.assets = Map.of("/cache", asset("cache.html"), "/cache/view.js", asset("view.js"),
        "/cache/view.css", asset("view.css"));
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof FullHttpRequest req)) {
      ctx.fireChannelRead(msg);
      return;
    }
    QueryStringDecoder uri = new QueryStringDecoder(req.uri());
    String path = uri.path();
    if (!path.equals("/cache") && !path.startsWith("/cache/")) {
      ctx.fireChannelRead(msg);
      return;
    }
    try {
      route(ctx, req, path, uri.parameters());
    } catch (ApiException e) {
      responses.error(ctx, e);
    } finally {
      ReferenceCountUtil.release(req);
    }
  }

  private void route(ChannelHandlerContext ctx, FullHttpRequest req, String path,
      Map<String, List<String>> params) {
    boolean known = ASSETS.containsKey(path) || path.equals("/cache/tree")
        || path.equals("/cache/events") || path.equals("/cache/login");
    if (!known) {
      throw new ApiException(404, "invalid_request_error", null, "not_found", "no route " + path);
    }
    HttpMethod method = path.equals("/cache/login") ? HttpMethod.POST : HttpMethod.GET;
    if (!method.equals(req.method())) {
      throw new ApiException(405, "invalid_request_error", null, "method_not_allowed",
          req.method() + " is not allowed on " + path);
    }
    if (path.equals("/cache/login")) {
      login(ctx, req);
      return;
    }
    if (!auth.allows(req)) {
      String accept = req.headers().get(HttpHeaderNames.ACCEPT, "");
      if (path.equals("/cache") && accept.contains("text/html")) {
        send(ctx, 401, CacheViewAuth.loginPage(false), "text/html; charset=utf-8",
            CacheViewAuth.LOGIN_CSP);
        return;
      }
      throw new ApiException(401, "invalid_request_error", null, "invalid_api_key",
          "missing or wrong API key (send 'Authorization: Bearer KEY', or log in at /cache)");
    }
    switch (path) {
      case "/cache/tree" -> tree(ctx, params);
      case "/cache/events" -> events(ctx);
      default -> send(ctx, 200, assets.get(path), contentType(path), CSP);
    }
  }

  private void login(ChannelHandlerContext ctx, FullHttpRequest req) {
    String body = req.content().toString(StandardCharsets.UTF_8);
    List<String> keys = new QueryStringDecoder(body, false).parameters().get("key");
    String key = keys == null || keys.size() != 1 ? "" : keys.getFirst();
    if (!auth.keyMatches(key)) {
      send(ctx, 401, CacheViewAuth.loginPage(true), "text/html; charset=utf-8",
          CacheViewAuth.LOGIN_CSP);
      return;
    }
    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
        HttpResponseStatus.SEE_OTHER, Unpooled.EMPTY_BUFFER);
    r.headers().set(HttpHeaderNames.LOCATION, "/cache");
    if (auth.required()) {
      r.headers().set(HttpHeaderNames.SET_COOKIE, auth.cookie());
    }
    r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
    r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
    responses.count(303);
    ctx.writeAndFlush(r);
  }

  private void tree(ChannelHandlerContext ctx, Map<String, List<String>> params) {
    view.tree(params).whenComplete((json, error) -> ctx.executor().execute(() -> {
      if (error == null) {
        send(ctx, 200, json, "application/json", null);
        return;
      }
      Throwable cause = error instanceof CompletionException && error.getCause() != null
          ? error.getCause() : error;
      responses.error(ctx, cause instanceof ApiException e ? e : new ApiException(503,
          "server_error", null, "unavailable", "no cache snapshot: " + cause.getMessage()));
    }));
  }

  private void events(ChannelHandlerContext ctx) {
    // The service writes its first frame from its own thread, which Netty queues behind this
    // event-loop task: the response head below always goes out first.
    SseViewer viewer = new SseViewer(ctx.channel());
    if (!view.subscribe(viewer)) {
      throw new ApiException(429, "rate_limit_error", null, null, "too many cache viewers (max "
          + CacheViewService.MAX_VIEWERS + ")");
    }
    HttpResponse r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
    r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
    r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
    r.headers().set(HttpHeaderNames.TRANSFER_ENCODING, "chunked");
    r.headers().set("X-Accel-Buffering", "no");
    responses.count(200);
    ctx.writeAndFlush(r);
  }

  private void send(ChannelHandlerContext ctx, int status, byte[] body, String type, String csp) {
    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
        HttpResponseStatus.valueOf(status), Unpooled.wrappedBuffer(body));
    r.headers().set(HttpHeaderNames.CONTENT_TYPE, type);
    r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
    r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
    r.headers().set("X-Content-Type-Options", "nosniff");
    r.headers().set("Referrer-Policy", "no-referrer");
    if (csp != null) {
      r.headers().set("Content-Security-Policy", csp);
    }
    responses.count(status);
    ctx.writeAndFlush(r);
  }

  private static String contentType(String path) {
    if (path.endsWith(".js")) {
      return "text/javascript; charset=utf-8";
    }
    return path.endsWith(".css") ? "text/css; charset=utf-8" : "text/html; charset=utf-8";
  }

  private static byte[] asset(String name) {
    try (var in = CacheViewService.class.getResourceAsStream("page/" + name)) {
      if (in == null) {
        throw new IllegalStateException("cache view asset missing from the jar: " + name);
      }
      return in.readAllBytes();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot read cache view asset " + name, e);
    }
  }

  /**
   * An SSE client. Frames it cannot take (its channel is not writable: the socket buffer and
   * Netty's outbound buffer, 64 KiB by default, are full) are dropped and counted; the count
   * goes out as {@code event: dropped} before the next frame that fits.
   */
  private static final class SseViewer implements CacheViewService.Viewer {

    private final Channel channel;
    private long dropped;

    SseViewer(Channel channel) {
      this.channel = channel;
    }

    @Override
    public void offer(String frame) {
      if (!channel.isActive()) {
        return;
      }
      if (!channel.isWritable()) {
        dropped++;
        return;
      }
      if (dropped > 0) {
        write("event: dropped\ndata: {\"frames\":" + dropped + "}\n\n");
        dropped = 0;
      }
      write(frame);
    }

    private void write(String frame) {
      channel.writeAndFlush(new DefaultHttpContent(
          Unpooled.copiedBuffer(frame, StandardCharsets.UTF_8)));
    }

    @Override
    public boolean isOpen() {
      return channel.isActive();
    }
  }
}
