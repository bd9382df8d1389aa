package dev.radixserve.server.http;

import dev.radixserve.server.api.ApiException;
import dev.radixserve.server.metrics.ServerMetrics;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;

/**
 * The pipeline: codec → keep-alive → body aggregation (413 in OpenAI's shape) → cache view
 * routes → handler.
 */
public final class ServerInitializer extends ChannelInitializer<SocketChannel> {

  private final HttpHandler handler;
  private final CacheViewHandler cacheView;
  private final int maxBody;
  private final ServerMetrics metrics;

  public ServerInitializer(HttpHandler handler, CacheViewHandler cacheView, long maxBodyBytes,
      ServerMetrics metrics) {
    this.handler = handler;
    this.cacheView = cacheView;
    this.maxBody = (int) Math.min(Integer.MAX_VALUE, maxBodyBytes);
    this.metrics = metrics;
  }

  @Override
  protected void initChannel(SocketChannel ch) {
    ch.pipeline().addLast(new HttpServerCodec(), new HttpServerKeepAliveHandler(),
        new HttpObjectAggregator(maxBody) {
          @Override
          protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage m) {
            new Responses(metrics).error(ctx, new ApiException(413, "invalid_request_error",
                null, "request_too_large", "request body over " + maxBody + " bytes"));
            ctx.channel().eventLoop().execute(() -> ctx.close());
          }
        }, cacheView, handler);
  }

  static ChannelFutureListener closer() {
    return ChannelFutureListener.CLOSE;
  }
}
