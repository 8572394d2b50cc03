package io.countergateway.internal.http;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway announces how long a kept-alive connection stays usable ({@code Keep-Alive: timeout=N}) and closes
 * one only once it is idle past that: a client that honours the header never sends a request on a connection the
 * gateway is closing, the race that ended a reused connection with "Connection was closed" under load. Here
 * {@code limits.headerTimeout} is 2 s, so N is 1 and a used connection is closed no sooner than 3 s idle (N + 2 s:
 * Vert.x's client looks at its connections' expiry once a second, so it may reuse one up to N + 1 s idle).
 */
@DisplayName("Kept-alive connections")
class KeepAliveIT {
  private static final String ANNOUNCED = "timeout=1";
  private static final long CLOSED_NO_SOONER_MS = 3_000;
  /** The gateway's looks at a connection: every limits.headerTimeout. */
  private static final long LOOKS_MS = 2_000;

  private static GatewayFixture fixture;

  @BeforeAll
  static void start() {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "keep_alive_counters");
    config.getJsonObject("limits").put("headerTimeout", "2s");
    fixture = GatewayFixture.start(config);
  }

  @AfterAll
  static void stop() {
    fixture.close();
  }

  @Test
  @DisplayName("every HTTP/1.x answer says how long the connection stays usable, on the hot beacon route and the router alike")
  void announced() {
    HttpResponse<Buffer> beacon = await(fixture.http.post("/v1/beacon/pageviews/keep-alive").send());
    HttpResponse<Buffer> increment = await(fixture.http.post("/v1/counters/likes/keep-alive/increments").send());
    HttpResponse<Buffer> refused = await(fixture.http.get("/v1/counters/nowhere/x").send());
    assertThat(List.of(beacon.statusCode(), increment.statusCode(), refused.statusCode())).containsExactly(204, 200, 404);
    for (HttpResponse<Buffer> answer : List.of(beacon, increment, refused)) {
      assertThat(answer.getHeader("Keep-Alive")).isEqualTo(ANNOUNCED);
    }
  }

  @Test
  @DisplayName("a client that honours Keep-Alive gets every answer, whatever the pause between requests: it reuses a connection while it is announced usable and opens another once its pool saw it expire")
  void honouringClientNeverFindsAClosedConnection() throws Exception {
    // the client's own keep-alive is a minute: the announced timeout is what keeps it from a closing connection
    HttpClient client = fixture.vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true)
      .setKeepAliveTimeout(60), new PoolOptions().setHttp1MaxSize(1));
    String id = "honoured-" + UUID.randomUUID();
    long[] pausesMs = {0, 200, 1_100, 300, 1_900, 2_300, 3_100};
    List<Integer> ports = new ArrayList<>();
    try {
      for (long pause : pausesMs) {
        TimeUnit.MILLISECONDS.sleep(pause); // the scenario: the connection idle that long
        RequestOptions request = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1")
          .setPort(fixture.gateway.port()).setURI("/v1/counters/likes/" + id + "/increments");
        ports.add(await(client.request(request).compose(sent -> sent.send().compose(answer -> answer.body()
          .map(body -> {
            assertThat(answer.statusCode()).as("after a pause of %d ms", pause).isEqualTo(200);
            return sent.connection().localAddress().port();
          })))));
      }
    } finally {
      await(client.close());
    }
    assertThat(await(fixture.sumInTable("likes", id))).as("every increment answered and counted")
      .isEqualTo(pausesMs.length);
    assertThat(ports.get(1)).as("reused 200 ms after").isEqualTo(ports.get(0));
    for (int i = 2; i < pausesMs.length; i++) {
      if (pausesMs[i] > 2_000) {
        // past the announced second and the pool's check a second later: the client opened another
        assertThat(ports.get(i)).as("a new connection after %d ms", pausesMs[i]).isNotEqualTo(ports.get(i - 1));
      }
    }
  }

  @Test
  @DisplayName("the gateway keeps a used connection open while idle below the announced timeout plus a second, and closes it once idle past that")
  void closedOnlyPastTheAnnouncedTimeout() throws Exception {
    try (Socket socket = new Socket("127.0.0.1", fixture.gateway.port())) {
      socket.setSoTimeout(15_000);
      assertThat(exchange(socket)).startsWith("HTTP/1.1 200");
      TimeUnit.MILLISECONDS.sleep(2_200); // the scenario: idle past what a client may reuse, short of the close
      String second = exchange(socket);
      assertThat(second).as("answered on the same connection").startsWith("HTTP/1.1 200")
        .containsIgnoringCase("keep-alive: " + ANNOUNCED);
      long answeredAt = System.nanoTime();
      assertThat(socket.getInputStream().read()).as("the gateway closed the idle connection").isEqualTo(-1);
      long idleMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - answeredAt);
      // closed at the second look after the deadline at the latest
      assertThat(idleMs).as("idle before the close").isBetween(CLOSED_NO_SOONER_MS, CLOSED_NO_SOONER_MS + 2 * LOOKS_MS
        + 2_000);
    }
  }

  /** Sends a GET /health/live on {@code socket} and reads its whole answer: status line and headers, lower case. */
  private static String exchange(Socket socket) throws IOException {
    socket.getOutputStream().write("GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
      .getBytes(StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
    InputStream in = socket.getInputStream();
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      int b = in.read();
      assertThat(b).as("the answer's head").isNotEqualTo(-1);
      head.write(b);
    }
    String text = head.toString(StandardCharsets.US_ASCII);
    int length = text.lines().map(line -> line.toLowerCase(Locale.ROOT))
      .filter(line -> line.startsWith("content-length:")).map(line -> Integer.parseInt(line.substring(15).strip()))
      .findFirst().orElseThrow();
    assertThat(in.readNBytes(length)).hasSize(length);
    return text;
  }
}
