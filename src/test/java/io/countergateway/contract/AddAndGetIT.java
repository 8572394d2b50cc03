package io.countergateway.contract;

import io.countergateway.CounterClient;
import io.countergateway.testing.DirectSql;
import io.countergateway.testing.GatewayFixture;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("Add-and-get (return=value)")
class AddAndGetIT {

  /** A read cache of a minute: add-and-get must read past it. */
  private static GatewayFixture start(String database) {
    return GatewayFixture.start(GatewayFixture.baseConfig(DirectSql.config(database), "addget_counters")
      .put("reads", new JsonObject().put("cacheMaxAge", "1m")));
  }

  private static Future<HttpResponse<Buffer>> addAndGet(GatewayFixture gateway, String id, String query) {
    return gateway.http.post("/v1/counters/likes/" + id + "/increments" + query).sendJsonObject(new JsonObject().put("delta", 1));
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("answers 200 with the value read after the commit: at least the caller's own increment, past the read cache")
  void answersTheValueAfterTheCommit(String database) {
    try (GatewayFixture gateway = start(database)) {
      String id = "addget-" + System.nanoTime();
      assertThat(await(gateway.http.get("/v1/counters/likes/" + id).send()).bodyAsJsonObject().getLong("value"))
        .as("cached as 0 for a minute").isZero();
      List<Future<HttpResponse<Buffer>>> requests = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        requests.add(addAndGet(gateway, id, "?return=value"));
      }
      await(Future.all(requests));
      List<Long> values = new ArrayList<>();
      for (Future<HttpResponse<Buffer>> request : requests) {
        HttpResponse<Buffer> response = request.result();
        assertThat(response.statusCode()).isEqualTo(200);
        JsonObject body = response.bodyAsJsonObject();
        assertThat(body.getString("ack")).isEqualTo("commit");
        values.add(body.getLong("value"));
      }
      assertThat(values).allMatch(value -> value >= 1 && value <= 40);
      assertThat(values).as("the last commit's read sees every increment").contains(40L);
      assertThat(await(gateway.sumInTable("likes", id))).isEqualTo(40);

      CounterClient client = new CounterClient(gateway.vertx);
      assertThat(await(client.incrementAndGet("likes", id, 5))).isGreaterThanOrEqualTo(45);
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("refuses a bad return or return=value with ack=accepted with 400 naming the field, writing nothing")
  void refusesBadReturns(String database) {
    try (GatewayFixture gateway = start(database)) {
      String id = "addget-bad-" + System.nanoTime();
      for (String query : List.of("?return=values", "?ack=accepted&return=value", "?return=value&return=value")) {
        HttpResponse<Buffer> response = await(addAndGet(gateway, id, query));
        assertThat(response.statusCode()).as(query).isEqualTo(400);
        assertThat(response.bodyAsJsonObject().getString("error")).isEqualTo("invalid_return");
        assertThat(response.bodyAsJsonObject().getString("field")).isEqualTo("return");
      }
      CounterClient client = new CounterClient(gateway.vertx);
      assertThatThrownBy(() -> await(gateway.vertx.eventBus().request("counters.increment",
        new JsonObject().put("type", "likes").put("id", id).put("return", "everything"))))
        .hasMessageContaining("return must be 'value'");
      assertThat(await(gateway.sumInTable("likes", id))).isZero();
      assertThat(await(client.getFresh("likes", id))).isZero();
    }
  }
}
