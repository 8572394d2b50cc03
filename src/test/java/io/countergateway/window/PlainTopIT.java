package io.countergateway.window;

import io.countergateway.testing.DirectSql;
import io.countergateway.testing.GatewayFixture;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Top-N of a plain namespace")
class PlainTopIT {
  /** "ranked": a plain namespace of its own, emptied first, so the whole namespace is what the test wrote. */
  private static GatewayFixture start(String database) {
    JsonObject config = GatewayFixture.baseConfig(DirectSql.config(database), "plain_top");
    config.getJsonObject("namespaces").put("ranked", new JsonObject().put("slots", 4));
    config.getJsonObject("limits").put("maxReadIds", 50);
    GatewayFixture gateway = GatewayFixture.start(config);
    await(gateway.sql().query("DELETE FROM plain_top WHERE record_type = 'ranked'").execute());
    return gateway;
  }

  private static HttpResponse<Buffer> get(GatewayFixture gateway, String uri) {
    return await(gateway.http.get(uri).send());
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("?top=N answers the N counters with the largest sums over their slots, largest first, ties by id")
  void topRanksTheWholeNamespace(String database) {
    try (GatewayFixture gateway = start(database)) {
      // c and d tie at 12: the id breaks the tie; each counter written by several requests spread over slots
      Map<String, Long> deltas = new LinkedHashMap<>();
      deltas.put("a", 5L);
      deltas.put("b", 30L);
      deltas.put("c", 12L);
      deltas.put("d", 12L);
      deltas.put("e", 1L);
      List<Future<HttpResponse<Buffer>>> writes = new ArrayList<>();
      deltas.forEach((id, total) -> {
        for (int i = 0; i < 3; i++) {
          long part = i < 2 ? total / 3 : total - 2 * (total / 3);
          writes.add(gateway.http.post("/v1/counters/ranked/" + id + "/increments")
            .sendJsonObject(new JsonObject().put("delta", part)));
        }
      });
      await(Future.all(writes));
      assertThat(writes).allMatch(w -> w.result().statusCode() == 200);
      deltas.forEach((id, total) -> gateway.sumInTableReaching("ranked", id, total));

      HttpResponse<Buffer> response = get(gateway, "/v1/counters/ranked?top=3");
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.bodyAsJsonObject()).isEqualTo(new JsonObject().put("type", "ranked").put("top", new JsonArray()
        .add(new JsonObject().put("id", "b").put("total", 30))
        .add(new JsonObject().put("id", "c").put("total", 12))
        .add(new JsonObject().put("id", "d").put("total", 12))));
      assertThat(get(gateway, "/v1/counters/ranked?top=50").bodyAsJsonObject().getJsonArray("top").stream()
        .map(item -> ((JsonObject) item).getString("id")).toList()).containsExactly("b", "c", "d", "a", "e");
      assertThat(get(gateway, "/v1/counters/downloads?top=1").bodyAsJsonObject())
        .as("a namespace with no counters").isEqualTo(new JsonObject().put("type", "downloads").put("top", new JsonArray()));
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a top outside 1 to limits.maxReadIds, with ids, a range or unique gets a 400 naming the field")
  void badTopIsRefused(String database) {
    try (GatewayFixture gateway = start(database)) {
      Map<String, String> refused = new LinkedHashMap<>();
      refused.put("/v1/counters/ranked?top=0", "invalid_top top");
      refused.put("/v1/counters/ranked?top=51", "invalid_top top");
      refused.put("/v1/counters/ranked?top=many", "invalid_top top");
      refused.put("/v1/counters/ranked?top=3&id=a", "invalid_top top");
      refused.put("/v1/counters/ranked?top=3&top=4", "invalid_top top");
      refused.put("/v1/counters/ranked?top=3&from=2026-11-22T10:00:00Z&to=2026-11-22T11:00:00Z", "invalid_from from");
      refused.put("/v1/counters/ranked?top=3&unique=true", "invalid_unique unique");
      refused.forEach((uri, expected) -> {
        HttpResponse<Buffer> response = get(gateway, uri);
        assertThat(response.statusCode()).as(uri).isEqualTo(400);
        JsonObject body = response.bodyAsJsonObject();
        assertThat(body.getString("error") + " " + body.getString("field")).as(uri).isEqualTo(expected);
        assertThat(body.getString("message")).as(uri).isNotBlank();
      });
      assertThat(get(gateway, "/v1/counters/ranked?top=51").bodyAsJsonObject().getString("message"))
        .isEqualTo("top must be a whole number between 1 and 50");
    }
  }
}
