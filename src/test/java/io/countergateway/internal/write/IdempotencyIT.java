package io.countergateway.internal.write;

import io.countergateway.internal.bus.Addresses;
import io.countergateway.internal.store.KeyedWrites;
import io.countergateway.testing.DirectSql;
import io.countergateway.testing.GatewayFixture;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Idempotency keys")
class IdempotencyIT {

  private static JsonObject config(String database, String table) {
    return GatewayFixture.baseConfig(DirectSql.config(database), table);
  }

  private static String table() {
    return "idem_" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static Future<HttpResponse<Buffer>> increment(GatewayFixture gateway, String id, String key, int delta) {
    return gateway.http.post("/v1/counters/likes/" + id + "/increments").putHeader("Idempotency-Key", key)
      .sendJsonObject(new JsonObject().put("delta", delta));
  }

  /** Every answer is the first answer, a replay of it, or 409 while the first was in flight. */
  private static void assertOneCounted(List<Future<HttpResponse<Buffer>>> answers) {
    int firsts = 0;
    for (Future<HttpResponse<Buffer>> answer : answers) {
      HttpResponse<Buffer> response = answer.result();
      assertThat(response.statusCode()).isIn(200, 409);
      if (response.statusCode() == 200 && response.getHeader("Idempotent-Replayed") == null) {
        firsts++;
      }
      if (response.statusCode() == 409) {
        assertThat(response.bodyAsJsonObject().getString("error")).isEqualTo("idempotency_key_in_use");
      }
    }
    assertThat(firsts).as("answers that were not replays").isLessThanOrEqualTo(1);
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("the same key sent 50 times at once, to two gateways, counts once; a later repeat is a marked replay")
  void fiftyRepeatsAcrossTwoGatewaysCountOnce(String database) {
    String table = table();
    try (GatewayFixture first = GatewayFixture.start(config(database, table));
         GatewayFixture second = GatewayFixture.start(config(database, table))) {
      String id = "idem-" + System.nanoTime();
      String key = UUID.randomUUID().toString();
      List<Future<HttpResponse<Buffer>>> answers = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        answers.add(increment(i % 2 == 0 ? first : second, id, key, 7));
      }
      await(Future.join(answers));
      assertOneCounted(answers);
      assertThat(await(first.sumInTable("likes", id))).isEqualTo(7);

      HttpResponse<Buffer> replay = await(increment(second, id, key, 7));
      assertThat(replay.statusCode()).isEqualTo(200);
      assertThat(replay.getHeader("Idempotent-Replayed")).isEqualTo("true");
      assertThat(replay.bodyAsJsonObject()).isEqualTo(new JsonObject().put("type", "likes").put("id", id).put("delta", 7)
        .put("ack", "commit"));
      assertThat(await(first.sumInTable("likes", id))).isEqualTo(7);
      assertThat(await(second.http.get("/metrics").send()).bodyAsString())
        .contains("gateway_idempotency_requests_total{outcome=\"replayed\"");
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a key reused with another body gets 422 and counts nothing; a bad key gets 400")
  void reuseWithAnotherBodyIsRefused(String database) {
    try (GatewayFixture gateway = GatewayFixture.start(config(database, table()))) {
      String id = "idem-" + System.nanoTime();
      String key = UUID.randomUUID().toString();
      assertThat(await(increment(gateway, id, key, 2)).statusCode()).isEqualTo(200);
      HttpResponse<Buffer> reused = await(increment(gateway, id, key, 3));
      assertThat(reused.statusCode()).isEqualTo(422);
      assertThat(reused.bodyAsJsonObject().getString("error")).isEqualTo("idempotency_key_reused");
      assertThat(reused.bodyAsJsonObject().getString("field")).isEqualTo("Idempotency-Key");
      HttpResponse<Buffer> bad = await(increment(gateway, id, "", 1));
      assertThat(bad.statusCode()).isEqualTo(400);
      assertThat(bad.bodyAsJsonObject().getString("error")).isEqualTo("invalid_idempotency_key");
      assertThat(await(gateway.sumInTable("likes", id))).isEqualTo(2);
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a batch and an event-bus request with a key count once, across a gateway restart, replays marked")
  void batchesAndBusAcrossARestart(String database) {
    String table = table();
    String id = "idem-" + System.nanoTime();
    String batchKey = UUID.randomUUID().toString();
    String busKey = UUID.randomUUID().toString();
    JsonArray batch = new JsonArray().add(new JsonObject().put("type", "likes").put("id", id).put("delta", 2))
      .add(new JsonObject().put("type", "likes").put("id", id).put("delta", 3));
    DeliveryOptions keyed = new DeliveryOptions().addHeader(Addresses.IDEMPOTENCY_KEY, busKey);
    JsonObject busIncrement = new JsonObject().put("type", "likes").put("id", id).put("delta", 10);
    try (GatewayFixture gateway = GatewayFixture.start(config(database, table))) {
      HttpResponse<Buffer> first = await(gateway.http.post("/v1/increments").putHeader("Idempotency-Key", batchKey).sendJson(batch));
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.getHeader("Idempotent-Replayed")).isNull();
      Message<Object> reply = await(gateway.vertx.eventBus().request(Addresses.INCREMENT, busIncrement, keyed));
      assertThat(reply.headers().get(Addresses.IDEMPOTENT_REPLAYED)).isNull();
      assertThat(await(gateway.sumInTable("likes", id))).isEqualTo(15);
    }
    try (GatewayFixture restarted = GatewayFixture.start(config(database, table))) {
      HttpResponse<Buffer> again = await(restarted.http.post("/v1/increments").putHeader("Idempotency-Key", batchKey).sendJson(batch));
      assertThat(again.statusCode()).isEqualTo(200);
      assertThat(again.getHeader("Idempotent-Replayed")).isEqualTo("true");
      assertThat(again.bodyAsJsonObject().getLong("delta")).isEqualTo(5);
      Message<Object> reply = await(restarted.vertx.eventBus().request(Addresses.INCREMENT, busIncrement, keyed));
      assertThat(reply.headers().get(Addresses.IDEMPOTENT_REPLAYED)).isEqualTo("true");
      assertThat(await(restarted.sumInTable("likes", id))).isEqualTo(15);

      // past the retention the key is forgotten: expiry deletes it, and the same key counts anew
      await(restarted.sql().query("UPDATE " + table + "_idempotency SET created_at = created_at - INTERVAL '2' DAY").execute());
      int expired = await(restarted.sql().withConnection(conn ->
        KeyedWrites.expire(conn, database.equals("postgres"), table, 86_400, 100)));
      assertThat(expired).isEqualTo(2);
      assertThat(await(restarted.vertx.eventBus().request(Addresses.INCREMENT, busIncrement, keyed)).headers()
        .get(Addresses.IDEMPOTENT_REPLAYED)).isNull();
      assertThat(await(restarted.sumInTable("likes", id))).isEqualTo(25);
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("with ack=accepted a keyed request gets 202 at once and is counted once; a repeat after its commit is a replay")
  void acceptedWithAKey(String database) throws InterruptedException {
    try (GatewayFixture gateway = GatewayFixture.start(config(database, table()))) {
      String id = "idem-" + System.nanoTime();
      String key = UUID.randomUUID().toString();
      HttpResponse<Buffer> accepted = await(gateway.http.post("/v1/counters/likes/" + id + "/increments?ack=accepted")
        .putHeader("Idempotency-Key", key).send());
      assertThat(accepted.statusCode()).isEqualTo(202);
      long deadline = System.currentTimeMillis() + 5_000;
      while (await(gateway.sumInTable("likes", id)) == 0 && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      HttpResponse<Buffer> repeat = await(gateway.http.post("/v1/counters/likes/" + id + "/increments?ack=accepted")
        .putHeader("Idempotency-Key", key).send());
      assertThat(repeat.statusCode()).isIn(202, 409);
      Thread.sleep(300);
      HttpResponse<Buffer> replay = await(gateway.http.post("/v1/counters/likes/" + id + "/increments?ack=accepted")
        .putHeader("Idempotency-Key", key).send());
      assertThat(replay.statusCode()).isEqualTo(202);
      assertThat(await(gateway.sumInTable("likes", id))).isEqualTo(1);
    }
  }
}
