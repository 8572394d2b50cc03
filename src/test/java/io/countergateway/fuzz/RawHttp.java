package io.countergateway.fuzz;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Writes raw bytes to the gateway over a plain TCP socket and reads the first HTTP/1.x response back by hand:
 * status line, headers, and a body framed by Content-Length, chunked coding, or the connection's close.
 */
final class RawHttp {
  private final Vertx vertx;
  private final NetClient client;
  private final int port;

  RawHttp(Vertx vertx, NetClient client, int port) {
    this.vertx = vertx;
    this.client = client;
    this.port = port;
  }

  /** What came back: a parsed response, or why there was none. */
  record Answer(int status, String contentType, byte[] body, String problem) {
    static Answer none(String problem) {
      return new Answer(-1, null, null, problem);
    }
  }

  /** Never fails: a missing, partial or late answer is reported in {@link Answer#problem()}. */
  Future<Answer> exchange(byte[] request, long timeoutMs) {
    Promise<Answer> answer = Promise.promise();
    client.connect(port, "127.0.0.1").onComplete(connected -> {
      if (connected.failed()) {
        answer.tryComplete(Answer.none("connect failed: " + connected.cause()));
        return;
      }
      NetSocket socket = connected.result();
      Buffer received = Buffer.buffer();
      String[] lastError = {null};
      long timer = vertx.setTimer(timeoutMs, t -> {
        answer.tryComplete(Answer.none("no complete answer within " + timeoutMs + " ms (hang); received "
          + received.length() + " bytes: " + FuzzCase.printable(received.getBytes(), 200)));
        socket.close();
      });
      socket.handler(chunk -> {
        received.appendBuffer(chunk);
        Answer parsed = parse(received, false);
        if (parsed != null && answer.tryComplete(parsed)) {
          vertx.cancelTimer(timer);
          socket.close();
        }
      });
      socket.exceptionHandler(error -> lastError[0] = error.toString());
      socket.closeHandler(closed -> {
        vertx.cancelTimer(timer);
        Answer parsed = parse(received, true);
        if (parsed.problem() != null && lastError[0] != null) {
          parsed = Answer.none(parsed.problem() + " (" + lastError[0] + ")");
        }
        answer.tryComplete(parsed);
      });
      socket.write(Buffer.buffer(request));
    });
    return answer.future();
  }

  /** Everything the server sends until it closes the connection; fails if it has not closed within the timeout. */
  Future<Buffer> readUntilClose(byte[] request, long timeoutMs) {
    return client.connect(port, "127.0.0.1").compose(socket -> {
      Promise<Buffer> all = Promise.promise();
      Buffer received = Buffer.buffer();
      long timer = vertx.setTimer(timeoutMs, t -> {
        all.tryFail("the server did not close the connection within " + timeoutMs + " ms; received: "
          + FuzzCase.printable(received.getBytes(), 300));
        socket.close();
      });
      socket.handler(received::appendBuffer);
      socket.closeHandler(closed -> {
        vertx.cancelTimer(timer);
        all.tryComplete(received);
      });
      socket.write(Buffer.buffer(request));
      return all.future();
    });
  }

  /**
   * The first final (non-1xx) response in {@code data}; null while incomplete, unless {@code closed}, when an
   * incomplete one is reported as a problem.
   */
  static Answer parse(Buffer data, boolean closed) {
    byte[] bytes = data.getBytes();
    int start = 0;
    while (true) {
      int headEnd = indexOf(bytes, "\r\n\r\n".getBytes(StandardCharsets.US_ASCII), start);
      if (headEnd < 0) {
        return closed ? Answer.none(bytes.length == 0 ? "connection closed without an answer"
          : "connection closed inside the response head: " + FuzzCase.printable(bytes, 200)) : null;
      }
      String head = new String(bytes, start, headEnd - start, StandardCharsets.ISO_8859_1);
      String[] lines = head.split("\r\n");
      String[] statusLine = lines[0].split(" ", 3);
      int status;
      try {
        // Vert.x echoes the request's version, so a request line with HTTP/3.0 gets "HTTP/3.0 501 ..."
        if (!statusLine[0].matches("[A-Za-z]+/\\d+(\\.\\d+)?")) {
          return Answer.none("not an HTTP status line: " + FuzzCase.printable(lines[0].getBytes(StandardCharsets.ISO_8859_1), 100));
        }
        status = Integer.parseInt(statusLine[1]);
      } catch (RuntimeException e) {
        return Answer.none("bad status line: " + FuzzCase.printable(lines[0].getBytes(StandardCharsets.ISO_8859_1), 100));
      }
      String contentType = null;
      long contentLength = -1;
      boolean chunked = false;
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        if (colon <= 0) {
          return Answer.none("bad response header line: " + lines[i]);
        }
        String name = lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT);
        String value = lines[i].substring(colon + 1).trim();
        switch (name) {
          case "content-type" -> contentType = value;
          case "content-length" -> contentLength = Long.parseLong(value);
          case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
          default -> {
          }
        }
      }
      int bodyStart = headEnd + 4;
      if (status >= 100 && status < 200) {
        start = bodyStart; // 100 Continue and friends: the final answer follows
        continue;
      }
      if (chunked) {
        return dechunk(bytes, bodyStart, status, contentType, closed);
      }
      if (contentLength >= 0) {
        if (bytes.length - bodyStart < contentLength) {
          return closed ? Answer.none("connection closed after " + (bytes.length - bodyStart) + " of " + contentLength
            + " body bytes") : null;
        }
        byte[] body = new byte[(int) contentLength];
        System.arraycopy(bytes, bodyStart, body, 0, body.length);
        return new Answer(status, contentType, body, null);
      }
      if (!closed) {
        return null; // the body runs to the connection's close
      }
      byte[] body = new byte[bytes.length - bodyStart];
      System.arraycopy(bytes, bodyStart, body, 0, body.length);
      return new Answer(status, contentType, body, null);
    }
  }

  private static Answer dechunk(byte[] bytes, int at, int status, String contentType, boolean closed) {
    java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
    while (true) {
      int lineEnd = indexOf(bytes, "\r\n".getBytes(StandardCharsets.US_ASCII), at);
      if (lineEnd < 0) {
        return closed ? Answer.none("connection closed inside a chunked body") : null;
      }
      String sizeText = new String(bytes, at, lineEnd - at, StandardCharsets.ISO_8859_1).split(";")[0].trim();
      int size;
      try {
        size = Integer.parseInt(sizeText, 16);
      } catch (NumberFormatException e) {
        return Answer.none("bad chunk size in the response: " + sizeText);
      }
      at = lineEnd + 2;
      if (size == 0) {
        return new Answer(status, contentType, body.toByteArray(), null);
      }
      if (bytes.length < at + size + 2) {
        return closed ? Answer.none("connection closed inside a chunk") : null;
      }
      body.write(bytes, at, size);
      at += size + 2;
    }
  }

  private static int indexOf(byte[] haystack, byte[] needle, int from) {
    outer:
    for (int i = from; i <= haystack.length - needle.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
