package io.countergateway.security;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A slow reader: a client that asks for much (500 pipelined requests for the 40 KB OpenAPI document) and takes the
 * answers a kilobyte at a time. Its connection is never idle, so only a deadline on the answers ends it: answers left
 * unread for a whole limits.headerTimeout (here 1 s) close the connection, with a reset, counted in
 * gateway_edge_refused_total{reason="send_timeout"}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("A slow reader")
class SlowReaderIT {
  private GatewayFixture gateway;

  @BeforeAll
  void start() {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "slow_reader_counters");
    config.getJsonObject("limits").put("headerTimeout", "1s");
    gateway = GatewayFixture.start(config);
  }

  @AfterAll
  void stop() {
    gateway.close();
  }

  @Test
  @DisplayName("that leaves its answers unread is cut off within a few header deadlines, not served for ever")
  void slowReaderIsCutOff() throws IOException {
    byte[] request = "GET /v1/openapi.yaml HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    try (Socket socket = new Socket("127.0.0.1", gateway.gateway.port())) {
      socket.setReceiveBufferSize(4_096);
      socket.setSoTimeout(1_000);
      OutputStream out = socket.getOutputStream();
      for (int i = 0; i < 500; i++) {
        out.write(request);
      }
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] kilobyte = new byte[1_024];
      long started = System.nanoTime();
      double cutOff = 0;
      while (System.nanoTime() - started < 12_000_000_000L && cutOff == 0) {
        GatewayFixture.await(gateway.vertx.timer(100));
        try {
          in.read(kilobyte);
        } catch (IOException reset) {
          // cut off: what the metric says
        }
        cutOff = sendTimeouts();
      }
      long seconds = (System.nanoTime() - started) / 1_000_000_000L;
      assertThat(cutOff).as("connections the gateway cut off for answers left unread").isEqualTo(1);
      assertThat(seconds).as("seconds until it did").isLessThan(10);
    }
  }

  private double sendTimeouts() {
    String metrics = GatewayFixture.await(gateway.http.get("/metrics").send()).bodyAsString();
    return metrics.lines().filter(line -> line.startsWith("gateway_edge_refused_total{") && line.contains("send_timeout"))
      .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
  }
}
