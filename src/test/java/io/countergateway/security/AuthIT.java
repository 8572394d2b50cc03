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

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("With auth.tokens set")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AuthIT {
  static final String WRITER = "writer-token-0123456789";
  static final String ADMIN = "admin-token-0123456789";
  static final String BEACON_ONLY = "beacon-token-0123456789";
  static final String READER = "reader-token-0123456789";
  static final String HASTY = "hasty-writer-0123456789";

  GatewayFixture fixture;

  @BeforeAll
  void start() {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "auth_counters");
    config.put("auth", new JsonObject().put("tokens", new JsonArray()
      .add(WRITER + ":write").add(ADMIN + ":admin+write").add(BEACON_ONLY + ":beacon").add(READER + ":read")
      .add(HASTY + ":write")).put("perTokenPerSecond", 2).put("perTokenBurst", 30));
    config.getJsonObject("namespaces").getJsonObject("downloads").put("anonymousReads", true);
    fixture = GatewayFixture.start(config);
  }

  @AfterAll
  void stop() {
    fixture.close();
  }

  HttpResponse<Buffer> send(String method, String path, String token, String body) {
    var request = fixture.http.request(HttpMethod.valueOf(method), path);
    if (token != null) {
      request.putHeader("Authorization", "Bearer " + token);
    }
    if (!body.isEmpty()) {
      request.putHeader("Content-Type", "application/json");
    }
    return await(request.sendBuffer(Buffer.buffer(body)));
  }

  @ParameterizedTest(name = "{0} {1} with {2} -> {3}")
  @CsvSource(delimiter = '|', nullValues = "none", value = {
    "POST   | /v1/counters/likes/guarded/increments | none                    | 401 | unauthorized",
    "POST   | /v1/counters/likes/guarded/increments | wrong-token-0123456789  | 401 | unauthorized",
    "POST   | /v1/counters/likes/guarded/increments | beacon-token-0123456789 | 403 | forbidden",
    "POST   | /v1/increments                        | none                    | 401 | unauthorized",
    "POST   | /v1/increments                        | beacon-token-0123456789 | 403 | forbidden",
    "DELETE | /v1/counters/likes/guarded            | none                    | 401 | unauthorized",
    "DELETE | /v1/counters/likes/guarded            | writer-token-0123456789 | 403 | forbidden",
    "POST   | /v1/counters/likes/guarded/increments | reader-token-0123456789 | 403 | forbidden",
    "GET    | /v1/counters/likes/guarded            | none                    | 401 | unauthorized",
    "GET    | /v1/counters/likes?id=guarded         | none                    | 401 | unauthorized",
    "GET    | /v1/counters/likes/guarded            | beacon-token-0123456789 | 403 | forbidden",
    "GET    | /v1/namespaces                        | none                    | 401 | unauthorized",
  })
  @DisplayName("write, admin and read routes refuse a missing, unknown or underprivileged token and write nothing")
  void refused(String method, String path, String token, int status, String error) {
    long rowsBefore = await(fixture.rowsInTable());
    String body = path.equals("/v1/increments") ? "[{\"type\":\"likes\",\"id\":\"guarded\"}]" : "";
    HttpResponse<Buffer> response = send(method, path, token, body);
    assertThat(response.statusCode()).isEqualTo(status);
    assertThat(response.bodyAsJsonObject().getString("error")).isEqualTo(error);
    assertThat(response.bodyAsJsonObject().getString("field")).isEqualTo("Authorization");
    if (status == 401) {
      assertThat(response.getHeader("WWW-Authenticate")).isEqualTo("Bearer");
    }
    assertThat(await(fixture.rowsInTable())).isEqualTo(rowsBefore);
    assertThat(await(fixture.sumInTable("likes", "guarded"))).isZero();
  }

  @Test
  @DisplayName("the right token writes, reads and resets; beacons on public namespaces and reads of anonymousReads namespaces need none")
  void allowed() {
    assertThat(send("POST", "/v1/counters/likes/allowed/increments", WRITER, "{\"delta\":2}").statusCode()).isEqualTo(200);
    assertThat(send("POST", "/v1/increments", ADMIN, "[{\"type\":\"likes\",\"id\":\"allowed\"}]").statusCode()).isEqualTo(200);
    assertThat(await(fixture.sumInTable("likes", "allowed"))).isEqualTo(3L);
    assertThat(send("GET", "/v1/counters/likes/allowed", READER, "").bodyAsJsonObject().getLong("value")).isEqualTo(3L);
    assertThat(send("GET", "/v1/counters/likes/allowed", WRITER, "").bodyAsJsonObject().getLong("value")).isEqualTo(3L);
    assertThat(send("GET", "/v1/counters/likes?id=allowed", ADMIN, "").statusCode()).isEqualTo(200);
    assertThat(send("GET", "/v1/counters/downloads/anything", null, "").statusCode()).isEqualTo(200);
    assertThat(send("GET", "/v1/beacon/pageviews/allowed", null, "").statusCode()).isEqualTo(204);
    // the beacon is acknowledged before it is written: wait for it, so later tests see a quiet table
    for (int i = 0; i < 100 && await(fixture.sumInTable("pageviews", "allowed")) == 0; i++) {
      await(fixture.vertx.timer(20));
    }
    assertThat(send("DELETE", "/v1/counters/likes/allowed", ADMIN, "").statusCode()).isEqualTo(204);
    assertThat(await(fixture.sumInTable("likes", "allowed"))).isZero();
  }

  @Test
  @DisplayName("a token past auth.perTokenPerSecond gets 429 rate_limited with Retry-After, and nothing of those requests is written")
  void perTokenLimit() {
    int ok = 0;
    int limited = 0;
    for (int i = 0; i < 60; i++) {
      HttpResponse<Buffer> response = send("POST", "/v1/counters/likes/hasty/increments", HASTY, "");
      if (response.statusCode() == 200) {
        ok++;
      } else {
        assertThat(response.statusCode()).isEqualTo(429);
        assertThat(response.bodyAsJsonObject().getString("error")).isEqualTo("rate_limited");
        assertThat(response.getHeader("Retry-After")).isNotNull();
        limited++;
      }
    }
    assertThat(limited).isGreaterThanOrEqualTo(20);
    assertThat(await(fixture.sumInTable("likes", "hasty"))).isEqualTo((long) ok);
  }
}
