package io.countergateway.security;

import io.countergateway.testing.FreePorts;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.GatewayProcess;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The body flood of the issue, against a gateway in its own JVM with a small heap: many connections each announce a
 * megabyte and send all of it but one byte. Before admission came before buffering, every such body was held whole
 * (300 connections without a token ran a 512 MB heap out of memory in two seconds). Now an unauthorised one is refused
 * on its headers and an authorised one is held only within limits.maxBodyBytesInFlight. Bounded: loopback only, a
 * fixed number of connections, a few seconds, everything closed at the end. Set {@code -Dflood.report=true} to print
 * the figures.
 */
@DisplayName("A flood of unfinished one-megabyte bodies")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BodyFloodIT {
  static final String WRITER = "writer-token-0123456789";
  static final int BODY = 1_048_576;
  static final String HEAP = "256m";
  GatewayProcess gateway;
  int port;

  @BeforeAll
  void start() {
    port = FreePorts.take();
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "flood_counters");
    config.getJsonObject("http").put("port", port);
    config.put("auth", new JsonObject().put("tokens", new JsonArray().add(WRITER + ":write")));
    config.getJsonObject("limits").put("maxBodyBytes", BODY).put("maxConnectionsPerClient", 5_000);
    gateway = GatewayProcess.start("body-flood", config, HEAP).awaitListening(Duration.ofSeconds(60));
  }

  @AfterAll
  void stop() {
    gateway.close();
  }

  @ParameterizedTest(name = "{0} connections, token: {1}")
  @CsvSource({"300, false", "300, true", "3000, true"})
  @DisplayName("leaves the gateway alive, ready and within its memory")
  void survives(int connections, boolean withToken) throws Exception {
    List<Socket> sockets = java.util.Collections.synchronizedList(new ArrayList<>());
    AtomicInteger refusedOrClosed = new AtomicInteger();
    ExecutorService senders = Executors.newFixedThreadPool(64);
    long rssBefore = gateway.residentBytes();
    long rssMax = rssBefore;
    int probes = 0;
    int ready = 0;
    try {
      for (int i = 0; i < connections; i++) {
        senders.execute(() -> {
          try {
            Socket socket = new Socket("127.0.0.1", port);
            sockets.add(socket);
            socket.setSoTimeout(5_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/counters/likes/flood/increments HTTP/1.1\r\nHost: gateway.test\r\n"
              + (withToken ? "Authorization: Bearer " + WRITER + "\r\n" : "") + "Content-Type: application/json\r\n"
              + "Content-Length: " + BODY + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = new byte[64 * 1024];
            for (int sent = 0; sent < BODY - 1; sent += chunk.length) {
              out.write(chunk, 0, Math.min(chunk.length, BODY - 1 - sent));
            }
          } catch (IOException refused) {
            refusedOrClosed.incrementAndGet();
          }
        });
      }
      senders.shutdown();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
      while (System.nanoTime() < deadline) {
        rssMax = Math.max(rssMax, gateway.residentBytes());
        probes++;
        if (readyAnswer().startsWith("HTTP/1.1 200")) {
          ready++;
        }
        GatewayProcess.sleep(250);
      }
      senders.awaitTermination(30, TimeUnit.SECONDS);
    } finally {
      senders.shutdownNow();
      synchronized (sockets) {
        for (Socket socket : sockets) {
          try {
            socket.close();
          } catch (IOException ignored) {
            // closing what the server may have closed
          }
        }
      }
    }
    if (Boolean.getBoolean("flood.report")) {
      System.out.printf("flood %d connections token=%s: alive=%s RSS %d -> max %d MB, ready %d/%d, writes refused or cut %d%n",
        connections, withToken, gateway.isAlive(), rssBefore >> 20, rssMax >> 20, ready, probes, refusedOrClosed.get());
    }
    assertThat(gateway.isAlive()).as("the gateway is alive:\n" + gateway.logTail()).isTrue();
    assertThat(gateway.logTail()).doesNotContain("OutOfMemoryError");
    assertThat(ready).as("readiness probes answered 200 during the flood").isGreaterThanOrEqualTo(probes - 2);
    assertThat(rssMax).as("resident memory under the flood").isLessThan(512L << 20);
  }

  private String readyAnswer() {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(3_000);
      socket.getOutputStream().write("GET /health/ready HTTP/1.1\r\nHost: gateway.test\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      InputStream in = socket.getInputStream();
      byte[] head = new byte[12];
      int read = in.readNBytes(head, 0, head.length);
      return new String(head, 0, read, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      return "failed: " + e;
    }
  }
}
