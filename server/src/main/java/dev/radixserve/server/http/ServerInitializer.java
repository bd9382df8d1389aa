package dev.radixserve.server.http;

import dev.radixserve.server.api.ApiException;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The pipeline, in order: raw-byte watch → codec (request line ≤ 4 KB, headers ≤ 8 KB) → read
 * deadlines → one request at a time (pipelining order) → keep-alive → body aggregation (413/417)
 * → well-formedness (400/414/431) → cache view routes → handler. A connection beyond {@code maxConnections} gets
 * only the codec and its deadlines, and its first request a 503 before it is closed.
 */
public final class ServerInitializer extends ChannelInitializer<SocketChannel> {

  static final int MAX_REQUEST_LINE = 4096;
  static final int MAX_HEADER_SIZE = 8192;

  /** Connection settings (from ServerConfig). */
  public record Limits(long maxBodyBytes, int maxConnections, Duration idleTimeout,
      Duration headerTimeout, Duration bodyTimeout) {}

  private final HttpHandler handler;
  private final CacheViewHandler cacheView;
  private final Limits limits;
  private final Responses responses;
  private final RequestGuard guard;
  private final AtomicInteger open = new AtomicInteger();

  public ServerInitializer(HttpHandler handler, CacheViewHandler cacheView, Limits limits) {
    this.handler = handler;
    this.cacheView = cacheView;
    this.limits = limits;
    this.responses = handler.responses();
    this.guard = new RequestGuard(responses);
  }

  @Override
  protected void initChannel(SocketChannel ch) {
    boolean refused = open.incrementAndGet() > limits.maxConnections();
    ch.closeFuture().addListener(f -> open.decrementAndGet());
    // a refused connection gets no idle grace: it waits at most a header timeout for its 503
    ReadTimeouts timeouts = new ReadTimeouts(refused ? limits.headerTimeout() : limits.idleTimeout(),
        limits.headerTimeout(), limits.bodyTimeout(), responses);
    ChannelPipeline p = ch.pipeline();
    p.addLast(timeouts.bytesWatcher(), new HttpServerCodec(new HttpDecoderConfig()
        .setMaxInitialLineLength(MAX_REQUEST_LINE).setMaxHeaderSize(MAX_HEADER_SIZE)), timeouts);
    if (refused) {
      p.addLast(new Refusal());
      return;
    }
    int maxBody = (int) Math.min(Integer.MAX_VALUE, limits.maxBodyBytes());
    p.addLast(new RequestOrder(), new HttpServerKeepAliveHandler(),
        new BodyAggregator(maxBody, responses), guard, cacheView, handler);
  }

  /** Answers the first request of a connection over the limit with 503, then closes. */
  private final class Refusal extends ChannelInboundHandlerAdapter {
    private boolean answered;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ReferenceCountUtil.release(msg);
      if (msg instanceof HttpRequest && !answered) {
        answered = true;
        ctx.channel().config().setAutoRead(false);
        responses.errorAndClose(ctx, new ApiException(503, "server_error", null,
            "too_many_connections", "too many open connections (max-connections = "
                + limits.maxConnections() + "); retry later"));
      }
    }
  }
}
