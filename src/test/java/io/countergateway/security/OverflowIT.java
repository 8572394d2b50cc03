package io.countergateway.security;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("A counter at the edge of the 64-bit range")
class OverflowIT {

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("refuses an increment that would overflow with 422, while the other counters of its flush are counted")
  void overflowIsRefusedNotWrapped(String database) {
    JsonObject db = database.equals("postgres") ? TestDatabases.postgres() : TestDatabases.mariadb();
    JsonObject config = GatewayFixture.baseConfig(db, "overflow_counters");
    // one coalescer whose accepted deltas wait for company: the committing request below flushes both counters together
    config.put("batching", new JsonObject().put("maxDelay", "5s"));
    config.getJsonObject("http").put("instances", 1);
    try (GatewayFixture fixture = GatewayFixture.start(config)) {
      String mark = database.equals("postgres") ? "$" : "?";
      for (int slot = 0; slot < 4; slot++) {
        String insert = "INSERT INTO overflow_counters (record_type, record_id, slot, count) VALUES ("
          + p(mark, 1) + ", " + p(mark, 2) + ", " + p(mark, 3) + ", " + p(mark, 4) + ")";
        await(fixture.sql().preparedQuery(insert).execute(Tuple.of("likes", "full", (short) slot, Long.MAX_VALUE - 10)));
      }
      Long before = await(fixture.sumInTable("likes", "bystander"));

      HttpResponse<Buffer> bystander = await(fixture.http.post("/v1/counters/likes/bystander/increments?ack=accepted").send());
      assertThat(bystander.statusCode()).isEqualTo(202);
      HttpResponse<Buffer> refused = await(fixture.http.post("/v1/counters/likes/full/increments")
        .sendJsonObject(new JsonObject().put("delta", 100)));

      assertThat(refused.statusCode()).isEqualTo(422);
      assertThat(refused.bodyAsJsonObject().getString("error")).isEqualTo("counter_overflow");
      assertThat(refused.bodyAsJsonObject().getString("field")).isEqualTo("delta");
      assertThat(await(fixture.sumInTable("likes", "bystander"))).isEqualTo(before + 1);
      HttpResponse<Buffer> read = await(fixture.http.get("/v1/counters/likes/full").send());
      assertThat(read.statusCode()).isEqualTo(500);
      assertThat(read.bodyAsJsonObject().getString("error")).isEqualTo("counter_overflow");
      await(fixture.sql().query("DELETE FROM overflow_counters").execute().compose(r -> Future.succeededFuture()));
    }
  }

  private static String p(String mark, int position) {
    return mark.equals("$") ? "$" + position : "?";
  }
}
