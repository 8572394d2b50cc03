package io.countergateway.security;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Connection budgets that one party cannot multiply by the addresses it holds: per client, per network, and the
 * gateway's total shared fairly. The loopback network stands in for the internet: 127.0.0.2–9 are eight clients of one
 * /24, 127.0.1.1 a client of another; 127.0.0.100 is a trusted proxy whose connections carry forwarded clients. Small
 * caps: 400 connections, 64 per client, 4 clients' worth per network (256), a fair share of 400 / 32 = 12.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Connection budgets per client, per network and shared fairly")
class ConnectionBudgetsIT {
  private static final byte[] LIVE = "GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  private GatewayFixture gateway;

  @BeforeAll
  void start() {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "budget_counters");
    config.getJsonObject("http").put("trustedProxies", new JsonArray().add("127.0.0.100"));
    config.getJsonObject("limits").put("maxConnections", 400).put("maxConnectionsPerClient", 64)
      .put("clientsPerNetwork", 4).put("headerTimeout", "30s");
    gateway = GatewayFixture.start(config);
  }

  @AfterAll
  void stop() {
    gateway.close();
  }

  /** A connection from {@code from} that answered a request (and is kept open), or null when it was refused. */
  private Socket held(String from, String forwardedFor) {
    Socket socket = new Socket();
    try {
      socket.bind(new java.net.InetSocketAddress(InetAddress.getByName(from), 0));
      socket.connect(new java.net.InetSocketAddress("127.0.0.1", gateway.gateway.port()), 2_000);
      socket.setSoTimeout(3_000);
      byte[] request = forwardedFor == null ? LIVE : ("GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: "
        + forwardedFor + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
      socket.getOutputStream().write(request);
      InputStream in = socket.getInputStream();
      byte[] status = new byte[12];
      if (in.readNBytes(status, 0, 12) == 12 && new String(status, StandardCharsets.US_ASCII).equals("HTTP/1.1 200")) {
        in.skip(in.available());
        return socket;
      }
    } catch (IOException refused) {
      // closed at accept or at its first request
    }
    close(List.of(socket));
    return null;
  }

  private static void close(List<Socket> sockets) {
    for (Socket socket : sockets) {
      try {
        socket.close();
      } catch (IOException ignored) {
        // already closed by the gateway
      }
    }
  }

  @Test
  @DisplayName("eight addresses of one network hold half the connections at most; a client of another network still gets its fair share")
  void oneNetworkCannotTakeEveryConnection() {
    List<Socket> attacker = new ArrayList<>();
    List<Socket> other = new ArrayList<>();
    try {
      int[] perAddress = new int[8];
      for (int round = 0; round < 80; round++) {
        for (int a = 0; a < 8; a++) {
          Socket socket = held("127.0.0." + (2 + a), null);
          if (socket != null) {
            attacker.add(socket);
            perAddress[a]++;
          }
        }
      }
      for (int i = 0; i < 40; i++) {
        Socket socket = held("127.0.1.1", null);
        if (socket != null) {
          other.add(socket);
        }
      }
      assertThat(java.util.Arrays.stream(perAddress).max().orElse(0)).as("most held by one address").isLessThanOrEqualTo(64);
      // past half of the 400, a network holding 12 opens no more
      assertThat(attacker).as("held by the eight addresses of 127.0.0.0/24").hasSizeLessThanOrEqualTo(201);
      assertThat(other).as("held by a client of another network").hasSizeGreaterThanOrEqualTo(12);
    } finally {
      close(attacker);
      close(other);
    }
  }

  @Test
  @DisplayName("a trusted proxy's connections count against the client each forwards: one forwarded client holds 64")
  void forwardedClientsKeepTheirCaps() throws IOException {
    GatewayFixture.await(gateway.vertx.timer(500)); // the other test's connections are closed on the gateway's side
    List<Socket> viaProxy = new ArrayList<>();
    List<Socket> others = new ArrayList<>();
    try {
      for (int i = 0; i < 100; i++) {
        Socket socket = held("127.0.0.100", "198.51.100.7");
        if (socket != null) {
          viaProxy.add(socket);
        }
      }
      for (int i = 0; i < 10; i++) {
        Socket socket = held("127.0.0.100", "203.0.113." + i);
        if (socket != null) {
          others.add(socket);
        }
      }
      assertThat(viaProxy).as("connections of one forwarded client").hasSize(64);
      assertThat(others).as("other forwarded clients, through the same proxy").hasSize(10);
    } finally {
      close(viaProxy);
      close(others);
    }
  }
}
