package io.countergateway.frontdoor;

import io.countergateway.testing.DirectSql;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.SettableClock;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("The OpenAPI document describes the answers of windowed namespaces")
class WindowedAnswersDocumentedIT {
  @Test
  @DisplayName("windowed reads, totals, top-N (with and without unique visitors), an increment with \"at\" and a refused range or unique answer as documented")
  void windowedAnswersMatchTheDocument() {
    JsonObject config = GatewayFixture.baseConfig(DirectSql.config("postgres"), "documented_windows");
    config.getJsonObject("namespaces").put("views", new JsonObject().put("public", true).put("unique", true)
      .put("window", new JsonObject().put("bucket", "day").put("retention", "7d")));
    try (GatewayFixture gateway = GatewayFixture.start(config, new SettableClock(Instant.parse("2026-11-22T10:00:00Z")))) {
      DocumentedApi api = DocumentedApi.load(gateway.vertx);
      HttpResponse<Buffer> increment = await(gateway.http.post("/v1/counters/views/doc/increments")
        .sendJsonObject(new JsonObject().put("delta", 2).put("at", "2026-11-21T08:00:00Z")));
      api.check(api.operation(HttpMethod.POST, "/v1/counters/views/doc/increments"), increment);
      assertThat(increment.statusCode()).isEqualTo(200);
      assertThat(await(gateway.http.get("/v1/beacon/views/doc").putHeader("User-Agent", "Mozilla/5.0 Firefox/132.0")
        .send()).statusCode()).isEqualTo(204);
      await(gateway.vertx.timer(1_500)); // one merge of the visitor sketches
      for (String uri : List.of("/v1/counters/views/doc", "/v1/counters/views/doc?from=2026-11-20T00:00:00Z&to=2026-11-23T00:00:00Z",
        "/v1/counters/views?id=doc&id=other", "/v1/counters/views?top=5&from=2026-11-20T00:00:00Z&to=2026-11-23T00:00:00Z",
        "/v1/counters/views?top=5", "/v1/counters/views/doc?unique=true", "/v1/counters/views?id=doc&id=other&unique=true",
        "/v1/counters/views?top=5&unique=true", "/v1/counters/pageviews/doc?unique=true", "/v1/counters/likes?top=5",
        "/v1/counters/views/doc?from=2026-11-22T00:00:00Z&to=2026-11-20T00:00:00Z")) {
        HttpResponse<Buffer> response = await(gateway.http.get(uri).send());
        api.check(api.operation(HttpMethod.GET, uri), response);
        assertThat(response.statusCode()).as(uri)
          .isEqualTo(uri.endsWith("2026-11-20T00:00:00Z") || uri.contains("pageviews") ? 400 : 200);
        if (uri.equals("/v1/counters/views/doc?unique=true")) {
          assertThat(response.bodyAsJsonObject().getLong("unique")).isEqualTo(1);
        }
      }
    }
  }
}
