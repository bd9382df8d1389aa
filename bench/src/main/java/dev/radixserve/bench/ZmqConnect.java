package dev.radixserve.bench;

import org.zeromq.ZMQ;

/**
 * Connects a JeroMQ socket so that a stalled handshake recovers within seconds.
 *
 * <p>JeroMQ 0.6.0's I/O thread can lose a freshly connected channel's registration (it
 * re-registers a handle while the channel's cancelled key is still in the selector: zeromq/jeromq
 * pull request 1022, "connect hand-off race"). The TCP connection is then up, but the ZMTP
 * greeting is never sent: a SUB's subscription or a DEALER's request waits until the handshake
 * timer tears the connection down and reconnects, 30 s by default. Only the connecting side is
 * affected; a bound socket's accept path registers a fresh channel. Measured here: 3 of 8 fresh
 * loopback DEALER connections stalled. A short handshake interval bounds the stall; a
 * handshake that completes (milliseconds, even across a data centre) is not affected.
 */
public final class ZmqConnect {

  /** ZMQ_HANDSHAKE_IVL for connecting sockets, in milliseconds. */
  public static final int HANDSHAKE_MILLIS = 2_000;

  private ZmqConnect() {}

  /** Sets the short handshake interval and connects {@code socket} to {@code endpoint}. */
  public static void connect(ZMQ.Socket socket, String endpoint) {
    socket.setHandshakeIvl(HANDSHAKE_MILLIS);
    socket.connect(endpoint);
  }
}
