package io.countergateway.internal.http;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.List;
import java.util.zip.GZIPInputStream;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/** What HTTP clients, caches and proxies take for granted: HEAD on every GET route, Expect refused, gzip for documents. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpConventionsIT {
  private static final List<String> GET_ROUTES = List.of("/v1/counters/likes/head-read", "/v1/counters/likes?id=a&id=b",
    "/v1/namespaces", "/health/live", "/health/ready", "/metrics", "/v1/beacon.js", "/v1/openapi.yaml", "/ui/",
    "/ui/dashboard.js", "/ui/dashboard.css", "/ui/vendor/uPlot.iife.min.js", "/ui/vendor/uPlot.min.css",
    "/v1/beacon/pageviews/head-beacon", "/v1/beacon/pageviews/head-beacon?format=gif", "/no/such/route");
  private static final List<String> DOCUMENTS = List.of("/v1/beacon.js", "/v1/openapi.yaml", "/ui/", "/ui/dashboard.js");
  private static final String BROWSER =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
  private GatewayFixture gateway;

  @BeforeAll
  void start() {
    gateway = GatewayFixture.start(GatewayFixture.baseConfig(TestDatabases.postgres(), "http_conventions"));
  }

  @AfterAll
  void stop() {
    gateway.close();
  }

  @Test
  @DisplayName("HEAD on every GET route answers the GET's status and headers without a body")
  void headAnswersAsGet() {
    for (String route : GET_ROUTES) {
      HttpResponse<Buffer> get = send(HttpMethod.GET, route);
      HttpResponse<Buffer> head = send(HttpMethod.HEAD, route);
      assertThat(head.statusCode()).as(route).isEqualTo(get.statusCode());
      assertThat(head.getHeader("Content-Type")).as(route).isEqualTo(get.getHeader("Content-Type"));
      assertThat(head.body()).as(route).satisfiesAnyOf(body -> assertThat(body).isNull(),
        body -> assertThat(body.length()).isZero());
    }
  }

  @Test
  @DisplayName("HEAD on the beacon counts nothing; the GET beside it counts once")
  void headBeaconCountsNothing() throws InterruptedException {
    for (int i = 0; i < 20; i++) {
      assertThat(send(HttpMethod.HEAD, "/v1/beacon/pageviews/only-heads").statusCode()).isEqualTo(204);
      assertThat(send(HttpMethod.HEAD, "/v1/beacon/pageviews/only-heads?format=gif").statusCode()).isEqualTo(200);
    }
    assertThat(send(HttpMethod.GET, "/v1/beacon/pageviews/one-get").statusCode()).isEqualTo(204);
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (await(gateway.sumInTable("pageviews", "one-get")) < 1 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    // the GET sent after the HEADs is in the table: the HEADs, taken before it on the same path, would be too
    assertThat(await(gateway.sumInTable("pageviews", "one-get"))).isEqualTo(1);
    assertThat(await(gateway.sumInTable("pageviews", "only-heads"))).isZero();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"/v1/counters/likes/expect-single/increments", "/v1/increments",
    "/v1/beacon/pageviews/expect-beacon"})
  @DisplayName("a POST with an Expect other than 100-continue gets 417 with the JSON error, with or without a body, nothing counted")
  void unknownExpectationRefused(String route) {
    String body = route.equals("/v1/increments") ? "[{\"type\":\"likes\",\"id\":\"expect-batch\"}]" : "{\"delta\": 2}";
    for (Buffer sent : List.of(Buffer.buffer(), Buffer.buffer(body))) {
      HttpRequest<Buffer> request = gateway.http.request(HttpMethod.POST, route).putHeader("Expect", "tea")
        .putHeader("Content-Type", "application/json");
      HttpResponse<Buffer> response = await(request.sendBuffer(sent));
      assertThat(response.statusCode()).as(route + " with " + sent.length() + " bytes").isEqualTo(417);
      JsonObject error = response.bodyAsJsonObject();
      assertThat(error.getString("error")).isEqualTo("expectation_failed");
      assertThat(error.getString("field")).isEqualTo("Expect");
    }
    assertThat(await(gateway.sumInTable("likes", "expect-single"))).isZero();
    assertThat(await(gateway.sumInTable("likes", "expect-batch"))).isZero();
    assertThat(await(gateway.sumInTable("pageviews", "expect-beacon"))).isZero();
  }

  @Test
  @DisplayName("beacon.js, the OpenAPI document and the dashboard's files come gzip-compressed to clients that accept it")
  void documentsGzipped() throws IOException {
    for (String route : DOCUMENTS) {
      HttpResponse<Buffer> plain = send(HttpMethod.GET, route);
      HttpResponse<Buffer> gzipped = await(gateway.http.request(HttpMethod.GET, route)
        .putHeader("Accept-Encoding", "br;q=1.0, gzip;q=0.8").send());
      assertThat(plain.getHeader("Content-Encoding")).as(route).isNull();
      assertThat(gzipped.statusCode()).as(route).isEqualTo(200);
      assertThat(gzipped.getHeader("Content-Encoding")).as(route).isEqualTo("gzip");
      assertThat(gzipped.getHeader("Vary")).as(route).containsIgnoringCase("Accept-Encoding");
      assertThat(gzipped.body().length()).as(route).isLessThan(plain.body().length());
      try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(gzipped.body().getBytes()))) {
        assertThat(in.readAllBytes()).as(route).isEqualTo(plain.body().getBytes());
      }
      assertThat(gzipped.getHeader("ETag")).as("each representation has its own tag").isNotEqualTo(plain.getHeader("ETag"));
      HttpResponse<Buffer> refused = await(gateway.http.request(HttpMethod.GET, route)
        .putHeader("Accept-Encoding", "gzip;q=0, identity").send());
      assertThat(refused.getHeader("Content-Encoding")).as(route + " with gzip;q=0").isNull();
      HttpResponse<Buffer> revalidated = await(gateway.http.request(HttpMethod.GET, route)
        .putHeader("Accept-Encoding", "gzip").putHeader("If-None-Match", gzipped.getHeader("ETag")).send());
      assertThat(revalidated.statusCode()).as(route).isEqualTo(304);
    }
  }

  /** As a browser sends it: the beacon's bot filter would drop a beacon of the web client's own User-Agent. */
  private HttpResponse<Buffer> send(HttpMethod method, String route) {
    return await(gateway.http.request(method, route).putHeader("User-Agent", BROWSER).send());
  }
}
