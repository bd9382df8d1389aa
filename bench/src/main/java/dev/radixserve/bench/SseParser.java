package dev.radixserve.bench;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Incremental Server-Sent Events parser: feed it bytes as they arrive, in any split, and it
 * returns the {@code data} of each complete event. Lines are split on the LF byte, which never
 * occurs inside a UTF-8 multi-byte sequence, so a character cut between two reads is decoded
 * whole. Multi-line data is joined with LF; comments ({@code :}) and other fields are ignored.
 */
final class SseParser {

  private final ByteArrayOutputStream line = new ByteArrayOutputStream();
  private final StringBuilder data = new StringBuilder();
  private boolean hasData;

  /** The data of every event completed by these bytes, in order. */
  List<String> feed(byte[] bytes, int offset, int length) {
    List<String> events = new ArrayList<>();
    for (int i = offset; i < offset + length; i++) {
      byte b = bytes[i];
      if (b == '\n') {
        endLine(events);
      } else {
        line.write(b);
      }
    }
    return events;
  }

  /** Completes a last event the stream ended without a blank line after. */
  List<String> finish() {
    List<String> events = new ArrayList<>();
    if (line.size() > 0) {
      endLine(events);
    }
    if (hasData) {
      events.add(data.toString());
      reset();
    }
    return events;
  }

  private void endLine(List<String> events) {
    String text = line.toString(StandardCharsets.UTF_8);
    line.reset();
    if (text.endsWith("\r")) {
      text = text.substring(0, text.length() - 1);
    }
    if (text.isEmpty()) {
      if (hasData) {
        events.add(data.toString());
      }
      reset();
      return;
    }
    if (text.startsWith(":")) {
      return;
    }
    int colon = text.indexOf(':');
    String field = colon < 0 ? text : text.substring(0, colon);
    if (!field.equals("data")) {
      return;
    }
    String value = colon < 0 ? "" : text.substring(colon + 1);
    if (value.startsWith(" ")) {
      value = value.substring(1);
    }
    if (hasData) {
      data.append('\n');
    }
    data.append(value);
    hasData = true;
  }

  private void reset() {
    data.setLength(0);
    hasData = false;
  }
}
