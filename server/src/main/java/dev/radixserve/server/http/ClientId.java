package dev.radixserve.server.http;

import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpRequest;

/**
 * Who a generation request comes from, for fair shares: the value of the header the operator
 * named ({@code --client-id-header}, e.g. a gateway's user header), else the connection. The
 * API key names no one: the server has a single key, which every client shares.
 */
final class ClientId {

  /** Longer header values are cut: a client name, not a payload. */
  static final int MAX_LENGTH = 128;

  private final String header;

  /** @param header the header's name; null: the connection always */
  ClientId(String header) {
    this.header = header;
  }

  String of(Channel connection, HttpRequest req) {
    if (header != null) {
      String value = req.headers().get(header);
      if (value != null && !value.isBlank()) {
        value = value.strip();
        return value.length() <= MAX_LENGTH ? value : value.substring(0, MAX_LENGTH);
      }
    }
    return "connection-" + connection.id().asShortText();
  }
}
