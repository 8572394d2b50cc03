package io.countergateway.internal.http;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * HTTP/1.1 pipelining past what any client sends (browsers send none, libraries a few): a thousand requests written
 * on a connection before one answer is read. The gateway serves no WebSockets, so no WebSocket handler may see them
 * (Netty's compression handler, which Vert.x installs by default, throws past 128 queued requests and each throw was
 * logged as some 27 lines); they are answered in order as Vert.x reads them, and nothing is logged.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Deep pipelining")
class PipeliningIT {
  private static final int CONNECTIONS = 8;
  private static final int DEPTH = 1_000;
  private GatewayFixture gateway;

  @BeforeAll
  void start() {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "pipelining_counters");
    config.getJsonObject("http").put("instances", 1);
    gateway = GatewayFixture.start(config);
  }

  @AfterAll
  void stop() {
    gateway.close();
  }

  @Test
  @DisplayName("a thousand pipelined requests on each of 8 connections are answered in order and log nothing")
  void deepPipelinesAreAnsweredQuietly() throws IOException {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    root.addAppender(logged);
    List<Integer> answered = new ArrayList<>();
    try {
      byte[] request = "GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
      byte[] burst = new byte[request.length * DEPTH];
      for (int i = 0; i < DEPTH; i++) {
        System.arraycopy(request, 0, burst, i * request.length, request.length);
      }
      List<Socket> sockets = new ArrayList<>();
      try {
        for (int c = 0; c < CONNECTIONS; c++) {
          Socket socket = new Socket("127.0.0.1", gateway.gateway.port());
          socket.setSoTimeout(10_000);
          sockets.add(socket);
          OutputStream out = socket.getOutputStream();
          out.write(burst);
          out.flush();
        }
        for (Socket socket : sockets) {
          answered.add(countAnswers(socket.getInputStream(), DEPTH));
        }
      } finally {
        for (Socket socket : sockets) {
          socket.close();
        }
      }
      GatewayFixture.await(gateway.vertx.timer(300));
    } finally {
      root.detachAppender(logged);
    }
    assertThat(answered).as("answers per connection").containsOnly(DEPTH);
    assertThat(logged.list.stream().filter(event -> event.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.WARN))
      .map(event -> event.getLoggerName() + ": " + event.getFormattedMessage()).toList()).as("warnings and errors logged")
      .isEmpty();
  }

  /** The number of "HTTP/1.1 200" status lines read before {@code expected} of them, the close or a silent 10 s. */
  private static int countAnswers(InputStream in, int expected) throws IOException {
    byte[] status = "HTTP/1.1 200".getBytes(StandardCharsets.US_ASCII);
    byte[] buffer = new byte[65_536];
    int count = 0;
    int matched = 0;
    try {
      while (count < expected) {
        int read = in.read(buffer);
        if (read < 0) {
          break;
        }
        for (int i = 0; i < read; i++) {
          matched = buffer[i] == status[matched] ? matched + 1 : buffer[i] == status[0] ? 1 : 0;
          if (matched == status.length) {
            count++;
            matched = 0;
          }
        }
      }
    } catch (SocketTimeoutException | java.net.SocketException stopped) {
      // counted so far
    }
    return count;
  }
}
