package dev.radixserve.server.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Closes a connection after a final error response without losing that response. Closing a
 * socket with unread input makes the kernel send a reset, which can destroy the response
 * before the client reads it; so, like nginx's lingering close, the server shuts down its
 * output (the client sees the end of the response), reads and drops whatever the client still
 * sends, and closes when the client does or after {@value #LINGER_MS} ms.
 */
final class Lingering {

  static final long LINGER_MS = 2000;

  private Lingering() {}

  static void close(Channel ch) {
    if (!ch.isActive()) {
      return;
    }
    ChannelPipeline p = ch.pipeline();
    for (String name : new ArrayList<>(p.toMap().keySet())) {
      p.remove(name);
    }
    p.addLast(new ChannelInboundHandlerAdapter() {
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg);
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
      }
    });
    ch.eventLoop().schedule(() -> ch.close(), LINGER_MS, TimeUnit.MILLISECONDS);
    ch.config().setAutoRead(true);
    if (ch instanceof DuplexChannel d) {
      d.shutdownOutput();
    } else {
      ch.close();
    }
  }
}
