package io.countergateway.fuzz;

import io.vertx.core.http.HttpMethod;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

/**
 * One generated bad request: either a well-formed HTTP request sent by the web client (method, URI, headers, body)
 * or raw bytes written to a plain TCP socket. {@code expected} narrows the 4xx statuses the category allows (empty:
 * any 4xx).
 */
record FuzzCase(int index, String category, HttpMethod method, String uri, List<String[]> headers, byte[] body,
                byte[] raw, Set<Integer> expected, Allowance allowance) {

  /**
   * The two answers Vert.x core gives before any handler of the gateway runs, so no JSON is possible; they are
   * tolerated for the raw cases that provoke them, and counted apart.
   */
  enum Allowance {
    NONE,
    /** A request line whose version is not HTTP/1.0 or HTTP/1.1: Vert.x answers a bare 501 and closes. */
    CORE_501,
    /** A chunked body with a bad chunk size: the decoder fails mid-body and Vert.x closes without an answer. */
    CLOSE_ON_BAD_CHUNK
  }

  static FuzzCase http(int index, String category, HttpMethod method, String uri, List<String[]> headers, byte[] body,
                       Set<Integer> expected) {
    return new FuzzCase(index, category, method, uri, List.copyOf(headers), body, null, expected, Allowance.NONE);
  }

  static FuzzCase raw(int index, String category, byte[] raw, Set<Integer> expected, Allowance allowance) {
    return new FuzzCase(index, category, null, null, List.of(), null, raw, expected, allowance);
  }

  boolean isRaw() {
    return raw != null;
  }

  /** A one-line, printable summary for failure reports; long parts are abbreviated. */
  String describe() {
    StringBuilder text = new StringBuilder("#").append(index).append(' ').append(category).append(": ");
    if (isRaw()) {
      return text.append("raw[").append(raw.length).append(" bytes] ").append(printable(raw, 300)).toString();
    }
    text.append(method.name()).append(' ').append(printable(uri.getBytes(StandardCharsets.UTF_8), 200));
    for (String[] header : headers) {
      text.append(" | ").append(header[0]).append(": ")
        .append(printable(header[1].getBytes(StandardCharsets.UTF_8), 60));
    }
    if (body != null && body.length > 0) {
      text.append(" | body[").append(body.length).append("] ").append(printable(body, 200));
    }
    return text.toString();
  }

  /** Bytes as text with anything outside printable ASCII escaped, cut after {@code max} bytes. */
  static String printable(byte[] bytes, int max) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < Math.min(bytes.length, max); i++) {
      int b = bytes[i] & 0xff;
      if (b == '\r') {
        text.append("\\r");
      } else if (b == '\n') {
        text.append("\\n");
      } else if (b == '\\') {
        text.append("\\\\");
      } else if (b < 0x20 || b >= 0x7f) {
        text.append(String.format("\\x%02x", b));
      } else {
        text.append((char) b);
      }
    }
    if (bytes.length > max) {
      text.append("…(+").append(bytes.length - max).append(')');
    }
    return text.toString();
  }
}
