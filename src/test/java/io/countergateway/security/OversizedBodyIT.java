package io.countergateway.security;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that writes its whole request before it reads anything (Python's urllib, most HTTP libraries) and sends a
 * body past limits.maxBodyBytes must read the 413, not a reset: the gateway answers on the headers, half-closes, and
 * reads and drops the rest of the body for a bounded time and size before it closes (nginx's lingering close).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("An oversized body is answered 413, not reset")
class OversizedBodyIT {
  private static final int TRIES = 20;
  private static final int BODY_BYTES = 4 * 1024 * 1024;
  private GatewayFixture gateway;

  @BeforeAll
  void start() {
    gateway = GatewayFixture.start(GatewayFixture.baseConfig(TestDatabases.postgres(), "oversized_counters"));
  }

  @AfterAll
  void stop() {
    gateway.close();
  }

  @Test
  @DisplayName("a 4 MB batch written whole before the answer is read gets its 413 in 20 of 20 tries")
  void wholeBodyThenRead() throws IOException {
    byte[] body = new byte[BODY_BYTES];
    Arrays.fill(body, (byte) ' ');
    body[0] = '[';
    body[body.length - 1] = ']';
    byte[] head = ("POST /v1/increments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      + "Content-Length: " + BODY_BYTES + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    List<String> answers = new ArrayList<>();
    for (int i = 0; i < TRIES; i++) {
      answers.add(exchange(head, body));
    }
    assertThat(answers).as("what the client read").allSatisfy(answer -> assertThat(answer).startsWith("HTTP/1.1 413"));
  }

  /** The status line the client reads after writing everything, or what went wrong instead. */
  private String exchange(byte[] head, byte[] body) {
    try (Socket socket = new Socket("127.0.0.1", gateway.gateway.port())) {
      socket.setSoTimeout(15_000);
      OutputStream out = socket.getOutputStream();
      out.write(head);
      for (int at = 0; at < body.length; at += 65_536) {
        out.write(body, at, Math.min(65_536, body.length - at));
      }
      out.flush();
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream line = new ByteArrayOutputStream();
      int next;
      while ((next = in.read()) >= 0 && next != '\n') {
        line.write(next);
      }
      return line.size() == 0 ? "closed without an answer" : line.toString(StandardCharsets.ISO_8859_1).strip();
    } catch (IOException e) {
      return e.toString();
    }
  }
}
