package dev.radixserve.server.http;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import java.time.Duration;

/**
 * The pipeline, in order: raw-byte watch → codec (request line ≤ 4 KB, headers ≤ 8 KB) → read
 * deadlines → one request at a time (pipelining order) → keep-alive → body aggregation (413/417)
 * → well-formedness (400/414/431) → cache view routes → handler. Beyond {@code maxConnections}
 * the oldest idle connection is closed for a new one, or the new one is closed at once when
 * every connection is busy ({@link ConnectionLimit}).
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
  private final ConnectionLimit connections;

  public ServerInitializer(HttpHandler handler, CacheViewHandler cacheView, Limits limits) {
    this.handler = handler;
    this.cacheView = cacheView;
    this.limits = limits;
    this.responses = handler.responses();
    this.guard = new RequestGuard(responses);
    this.connections = new ConnectionLimit(limits.maxConnections());
  }

  public ConnectionLimit connections() {
    return connections;
  }

  @Override
  protected void initChannel(SocketChannel ch) {
    ConnectionLimit.State state = connections.accept(ch);
    if (state == null) {
      ch.close();
      return;
    }
    ReadTimeouts timeouts = new ReadTimeouts(limits.idleTimeout(), limits.headerTimeout(),
        limits.bodyTimeout(), responses, state);
    ChannelPipeline p = ch.pipeline();
    p.addLast(timeouts.bytesWatcher(), new HttpServerCodec(new HttpDecoderConfig()
        .setMaxInitialLineLength(MAX_REQUEST_LINE).setMaxHeaderSize(MAX_HEADER_SIZE)), timeouts);
    int maxBody = (int) Math.min(Integer.MAX_VALUE, limits.maxBodyBytes());
    p.addLast(new RequestOrder(), new HttpServerKeepAliveHandler(),
        new BodyAggregator(maxBody, responses), guard, cacheView, handler);
  }
}
