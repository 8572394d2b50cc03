package io.countergateway.security;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.concurrent.atomic.AtomicInteger;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a web page could make its visitors' browsers send to a gateway without tokens (the sidecar, the default): the
 * JSON write routes refuse it on its headers, and beacons, cross-site by nature, keep working.
 */
@DisplayName("Cross-site writes")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CrossSiteWritesIT {
  static final String ALLOWED = "https://app.example.com";
  static final AtomicInteger IDS = new AtomicInteger();

  GatewayFixture fixture;

  @BeforeAll
  void start() {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "cross_site_counters");
    config.getJsonObject("http").put("allowedOrigins", new JsonArray().add(ALLOWED));
    fixture = GatewayFixture.start(config);
  }

  @AfterAll
  void stop() {
    fixture.close();
  }

  HttpResponse<Buffer> post(String path, String origin, String contentType, String body) {
    var request = fixture.http.request(HttpMethod.POST, path);
    if (origin != null) {
      request.putHeader("Origin", origin);
    }
    if (contentType != null) {
      request.putHeader("Content-Type", contentType);
    }
    return await(request.sendBuffer(Buffer.buffer(body)));
  }

  @ParameterizedTest(name = "{0} {1} from {2} -> {4}")
  @CsvSource(delimiter = '|', nullValues = "none", value = {
    // a form or a text/plain fetch of another site, with or without its Origin
    "single | text/plain;charset=UTF-8          | https://evil.example | {\"delta\":5}  | 403 | origin_not_allowed    | Origin",
    "single | text/plain;charset=UTF-8          | none                 | {\"delta\":5}  | 415 | unsupported_media_type | Content-Type",
    "single | application/x-www-form-urlencoded | none                 | delta=5        | 415 | unsupported_media_type | Content-Type",
    "single | multipart/form-data; boundary=x   | none                 | --x--          | 415 | unsupported_media_type | Content-Type",
    "single | none                              | none                 | {\"delta\":5}  | 415 | unsupported_media_type | Content-Type",
    "single | application/json                  | https://evil.example | {\"delta\":5}  | 403 | origin_not_allowed    | Origin",
    "single | none                              | https://evil.example | ''             | 403 | origin_not_allowed    | Origin",
    "single | application/json                  | null                 | {\"delta\":5}  | 403 | origin_not_allowed    | Origin",
    "single | application/json                  | http://127.0.0.1     | {\"delta\":5}  | 403 | origin_not_allowed    | Origin",
    "batch  | text/plain                        | none                 | [{\"type\":\"likes\",\"id\":\"{id}\",\"delta\":5}] | 415 | unsupported_media_type | Content-Type",
    "batch  | application/json                  | https://evil.example | [{\"type\":\"likes\",\"id\":\"{id}\",\"delta\":5}] | 403 | origin_not_allowed | Origin",
  })
  @DisplayName("a write from a foreign page or with a body not declared JSON is refused, and nothing is written")
  void refused(String route, String contentType, String origin, String body, int status, String error, String field) {
    String id = "refused-" + IDS.incrementAndGet();
    String path = route.equals("single") ? "/v1/counters/likes/" + id + "/increments" : "/v1/increments";
    long rowsBefore = await(fixture.rowsInTable());
    HttpResponse<Buffer> response = post(path, origin, contentType, body.replace("{id}", id));
    assertThat(response.statusCode()).isEqualTo(status);
    assertThat(response.bodyAsJsonObject().getString("error")).isEqualTo(error);
    assertThat(response.bodyAsJsonObject().getString("field")).isEqualTo(field);
    assertThat(await(fixture.sumInTable("likes", id))).isZero();
    assertThat(await(fixture.rowsInTable())).isEqualTo(rowsBefore);
  }

  @Test
  @DisplayName("a reset from a foreign page is refused and the counter keeps its value")
  void foreignReset() {
    String id = "kept-" + IDS.incrementAndGet();
    assertThat(post("/v1/counters/likes/" + id + "/increments", null, "application/json", "{\"delta\":3}").statusCode())
      .isEqualTo(200);
    HttpResponse<Buffer> reset = await(fixture.http.request(HttpMethod.DELETE, "/v1/counters/likes/" + id)
      .putHeader("Origin", "https://evil.example").send());
    assertThat(reset.statusCode()).isEqualTo(403);
    assertThat(reset.bodyAsJsonObject().getString("error")).isEqualTo("origin_not_allowed");
    assertThat(await(fixture.sumInTable("likes", id))).isEqualTo(3L);
  }

  @Test
  @DisplayName("JSON and NDJSON bodies, empty bodies, no Origin, the gateway's own origin and http.allowedOrigins all count")
  void accepted() {
    String id = "counted-" + IDS.incrementAndGet();
    String single = "/v1/counters/likes/" + id + "/increments";
    String self = "http://127.0.0.1:" + fixture.gateway.port();
    assertThat(post(single, null, "application/json", "{\"delta\":2}").statusCode()).isEqualTo(200);
    assertThat(post(single, null, "application/json; charset=utf-8", "{\"delta\":2}").statusCode()).isEqualTo(200);
    assertThat(post(single, null, null, "").statusCode()).isEqualTo(200);
    assertThat(post(single, self, "application/json", "{\"delta\":2}").statusCode()).isEqualTo(200);
    assertThat(post(single, ALLOWED, "application/json", "{\"delta\":2}").statusCode()).isEqualTo(200);
    assertThat(post("/v1/increments", null, "application/x-ndjson", "{\"type\":\"likes\",\"id\":\"" + id + "\",\"delta\":10}\n")
      .statusCode()).isEqualTo(200);
    assertThat(post("/v1/increments", ALLOWED, "application/json", "[{\"type\":\"likes\",\"id\":\"" + id + "\",\"delta\":100}]")
      .statusCode()).isEqualTo(200);
    assertThat(await(fixture.sumInTable("likes", id))).isEqualTo(2 + 2 + 1 + 2 + 2 + 10 + 100L);
  }

  @Test
  @DisplayName("beacons keep working from any page, with a text/plain body as navigator.sendBeacon sends it")
  void beaconsStayCrossSite() {
    String id = "beacon-" + IDS.incrementAndGet();
    HttpResponse<Buffer> beacon = await(fixture.http.request(HttpMethod.POST, "/v1/beacon/pageviews/" + id)
      .putHeader("Origin", "https://blog.example").putHeader("Content-Type", "text/plain;charset=UTF-8")
      .putHeader("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36")
      .sendBuffer(Buffer.buffer("/home")));
    assertThat(beacon.statusCode()).isEqualTo(204);
    assertThat(beacon.getHeader("Access-Control-Allow-Origin")).isEqualTo("https://blog.example");
    for (int i = 0; i < 100 && await(fixture.sumInTable("pageviews", id)) == 0; i++) {
      await(fixture.vertx.timer(20));
    }
    assertThat(await(fixture.sumInTable("pageviews", id))).isEqualTo(1L);
  }
}
