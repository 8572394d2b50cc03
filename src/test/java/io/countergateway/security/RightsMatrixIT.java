package io.countergateway.security;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.http.HttpApi;
import io.countergateway.internal.runtime.GatewayServices;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every route of the HTTP API against every right, through the gateway's real server (so the hot routes in front of
 * the router are held to the same answers): the status a client sees, and on a refusal, nothing in the table.
 */
@DisplayName("Routes x rights")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RightsMatrixIT {
  /** The columns, in the order of each row's statuses. */
  enum Caller {
    NONE(null), UNKNOWN("unknown-token-0123456789"), READ("read-token-0123456789"), WRITE("write-token-0123456789"),
    ADMIN("admin-token-0123456789"), BEACON("beacon-token-0123456789");

    final String token;

    Caller(String token) {
      this.token = token;
    }
  }

  /**
   * One route: its template as the router declares it, the request sent (an {@code {id}} fresh for every cell), the
   * counter it would write (null: none) and the status each caller gets.
   */
  record Row(String method, String template, String path, String body, String writes, int... statuses) {
  }

  static final List<Row> MATRIX = List.of(
    //                                                                                         none unknown read write admin beacon
    new Row("POST", "/v1/counters/:type/:id/increments", "/v1/counters/likes/{id}/increments", "{\"delta\":1}", "likes",
      401, 401, 403, 200, 403, 403),
    new Row("POST", "/v1/increments", "/v1/increments", "[{\"type\":\"likes\",\"id\":\"{id}\"}]", "likes",
      401, 401, 403, 200, 403, 403),
    new Row("GET", "/v1/counters/:type/:id", "/v1/counters/likes/{id}", null, null, 401, 401, 200, 200, 200, 403),
    new Row("GET", "/v1/counters/:type", "/v1/counters/likes?id={id}", null, null, 401, 401, 200, 200, 200, 403),
    new Row("DELETE", "/v1/counters/:type/:id", "/v1/counters/likes/{id}", null, null, 401, 401, 403, 403, 204, 403),
    new Row("GET", "/v1/namespaces", "/v1/namespaces", null, null, 401, 401, 200, 200, 200, 403),
    new Row("GET", "/metrics", "/metrics", null, null, 401, 401, 200, 200, 200, 403),
    // a namespace that is not public takes beacons only with the beacon right; without a token it is answered as an
    // undeclared one (404), so that anonymous beacons cannot tell which namespaces exist
    new Row("GET", "/v1/beacon/:type/:id", "/v1/beacon/likes/{id}", null, "likes", 404, 401, 403, 403, 403, 204),
    new Row("POST", "/v1/beacon/:type/:id", "/v1/beacon/likes/{id}", "", "likes", 404, 401, 403, 403, 403, 204),
    // a public namespace's beacons are anonymous by design: a token changes nothing
    new Row("GET", "/v1/beacon/:type/:id", "/v1/beacon/pageviews/{id}", null, "pageviews", 204, 204, 204, 204, 204, 204),
    new Row("POST", "/v1/beacon/:type/:id", "/v1/beacon/pageviews/{id}", "", "pageviews", 204, 204, 204, 204, 204, 204),
    new Row("OPTIONS", "/v1/beacon/:type/:id", "/v1/beacon/pageviews/{id}", null, null, 204, 204, 204, 204, 204, 204),
    new Row("GET", "/v1/beacon.js", "/v1/beacon.js", null, null, 200, 200, 200, 200, 200, 200),
    // the trackers' doors are public beacons of the default beacon namespace: no token is asked for or looked at
    new Row("GET", "/count", "/count?p=%2F{id}&b=0", null, null, 200, 200, 200, 200, 200, 200),
    new Row("POST", "/count", "/count?p=%2F{id}&b=0", null, null, 200, 200, 200, 200, 200, 200),
    new Row("POST", "/api/send", "/api/send", "{\"type\":\"event\",\"payload\":{\"website\":\"w\","
      + "\"url\":\"http://localhost/{id}\",\"referrer\":\"\"}}", null, 200, 200, 200, 200, 200, 200),
    new Row("POST", "/api/event", "/api/event", "{\"n\":\"pageview\",\"u\":\"http://localhost/{id}\","
      + "\"d\":\"localhost\"}", null, 202, 202, 202, 202, 202, 202),
    new Row("GET", "/v1/openapi.yaml", "/v1/openapi.yaml", null, null, 200, 200, 200, 200, 200, 200),
    new Row("GET", "/ui/", "/ui/", null, null, 200, 200, 200, 200, 200, 200),
    new Row("GET", "/ui", "/ui", null, null, 302, 302, 302, 302, 302, 302),
    new Row("GET", "/", "/", null, null, 302, 302, 302, 302, 302, 302),
    new Row("GET", "/ui/dashboard.js", "/ui/dashboard.js", null, null, 200, 200, 200, 200, 200, 200),
    new Row("GET", "/ui/dashboard.css", "/ui/dashboard.css", null, null, 200, 200, 200, 200, 200, 200),
    new Row("GET", "/ui/vendor/uPlot.iife.min.js", "/ui/vendor/uPlot.iife.min.js", null, null, 200, 200, 200, 200, 200, 200),
    new Row("GET", "/ui/vendor/uPlot.min.css", "/ui/vendor/uPlot.min.css", null, null, 200, 200, 200, 200, 200, 200),
    new Row("GET", "/health/live", "/health/live", null, null, 200, 200, 200, 200, 200, 200),
    new Row("GET", "/health/ready", "/health/ready", null, null, 200, 200, 200, 200, 200, 200),
    new Row("GET", "/health/accepting", "/health/accepting", null, null, 200, 200, 200, 200, 200, 200));

  static final AtomicInteger CELLS = new AtomicInteger();

  GatewayFixture fixture;
  JsonObject rawConfig;

  @BeforeAll
  void start() {
    rawConfig = GatewayFixture.baseConfig(TestDatabases.postgres(), "rights_counters");
    JsonArray tokens = new JsonArray();
    for (Caller caller : Caller.values()) {
      if (caller != Caller.NONE && caller != Caller.UNKNOWN) {
        tokens.add(caller.token + ":" + caller.name().toLowerCase());
      }
    }
    rawConfig.put("auth", new JsonObject().put("tokens", tokens));
    // every beacon of this test comes from one client: the per-client limits are not what is tested here
    JsonObject noClientLimits = new JsonObject().put("perClientPerMinute", 0).put("idsPerClientPerHour", 0).put("dropBots", false);
    rawConfig.getJsonObject("namespaces").getJsonObject("pageviews").put("beacon", noClientLimits);
    rawConfig.getJsonObject("namespaces").getJsonObject("likes").put("beacon", noClientLimits.copy());
    fixture = GatewayFixture.start(rawConfig);
  }

  @AfterAll
  void stop() {
    fixture.close();
  }

  static Stream<Arguments> cells() {
    List<Arguments> cells = new ArrayList<>();
    for (Row row : MATRIX) {
      for (Caller caller : Caller.values()) {
        cells.add(Arguments.of(row.method() + " " + row.path(), caller, row.statuses()[caller.ordinal()], row));
      }
    }
    return cells.stream();
  }

  @ParameterizedTest(name = "{0} as {1} -> {2}")
  @MethodSource("cells")
  @DisplayName("each caller gets the route's status for its right, and a refused write leaves the table as it was")
  void cell(String route, Caller caller, int expected, Row row) {
    String id = "cell-" + CELLS.incrementAndGet();
    var request = fixture.http.request(HttpMethod.valueOf(row.method()), row.path().replace("{id}", id)).followRedirects(false)
      .putHeader("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36");
    if (caller.token != null) {
      request.putHeader("Authorization", "Bearer " + caller.token);
    }
    if (row.body() != null && !row.body().isEmpty()) {
      request.putHeader("Content-Type", "application/json");
    }
    long rowsBefore = await(fixture.rowsInTable());
    HttpResponse<Buffer> response = await(row.body() == null ? request.send()
      : request.sendBuffer(Buffer.buffer(row.body().replace("{id}", id))));
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(expected);
    if (expected == 401 || expected == 403 || expected == 404) {
      JsonObject error = response.bodyAsJsonObject();
      assertThat(error.getString("error")).isIn("unauthorized", "forbidden", "unknown_namespace");
      // a beacon is answered before it is written: give a wrongly taken one the time to reach the table
      if (row.path().startsWith("/v1/beacon")) {
        await(fixture.vertx.timer(300));
      }
      assertThat(await(fixture.rowsInTable())).isEqualTo(rowsBefore);
    } else if (row.writes() != null && expected < 300) {
      for (int i = 0; i < 100 && await(fixture.sumInTable(row.writes(), id)) == 0; i++) {
        await(fixture.vertx.timer(20));
      }
      assertThat(await(fixture.sumInTable(row.writes(), id))).isEqualTo(1L);
    }
  }

  @Test
  @DisplayName("the matrix names every route the router serves")
  void everyRouteIsInTheMatrix() {
    GatewayConfig config = GatewayConfig.fromJson(rawConfig);
    GatewayServices services = new GatewayServices(config, new GatewayState(), new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    Set<String> served = new TreeSet<>();
    for (Route route : HttpApi.router(fixture.vertx, services, null).getRoutes()) {
      if (route.getPath() != null && route.methods() != null && !route.methods().isEmpty()) {
        route.methods().forEach(method -> served.add(method.name() + " " + route.getPath()));
      }
    }
    Set<String> inMatrix = new TreeSet<>();
    MATRIX.forEach(row -> inMatrix.add(row.method() + " " + row.template()));
    assertThat(inMatrix).isEqualTo(served);
  }
}
