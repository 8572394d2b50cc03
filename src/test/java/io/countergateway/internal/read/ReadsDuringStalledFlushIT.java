package io.countergateway.internal.read;

import io.countergateway.testing.Eventually;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.sqlclient.SqlConnection;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reads have connections of their own: a flush that cannot commit (its table held by another session against writes,
 * reads still allowed) holds up the increments behind it, never a read. Each read answers, at once, the value
 * committed before the stall, on the hot route, the router's route and a multi-get alike.
 */
@DisplayName("A read during a stalled flush answers")
class ReadsDuringStalledFlushIT {

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("while a flush waits for the table, reads answer the committed value, and the stalled increment counts once the table is free")
  void readsAnswerDuringAStalledFlush(String database) {
    JsonObject db = database.equals("postgres") ? TestDatabases.postgres() : TestDatabases.mariadb();
    JsonObject config = GatewayFixture.baseConfig(db, "stalled_flush_reads_" + database);
    try (GatewayFixture fixture = GatewayFixture.start(config)) {
      HttpResponse<Buffer> first = await(fixture.http.post("/v1/counters/likes/hot/increments")
        .sendJson(new JsonObject().put("delta", 5)));
      assertThat(first.statusCode()).isEqualTo(200);

      SqlConnection holder = await(fixture.sql().getConnection());
      try {
        // writes wait for the holder; plain SELECTs do not (PostgreSQL's EXCLUSIVE mode, MariaDB's READ lock)
        if (fixture.isPostgres()) {
          await(holder.query("BEGIN").execute());
          await(holder.query("LOCK TABLE " + fixture.table + " IN EXCLUSIVE MODE").execute());
        } else {
          await(holder.query("LOCK TABLES " + fixture.table + " READ").execute());
        }
        Future<HttpResponse<Buffer>> stalled = fixture.http.post("/v1/counters/likes/hot/increments")
          .sendJson(new JsonObject().put("delta", 2));
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
          answers.add(await(fixture.http.get("/v1/counters/likes/hot").send()).bodyAsString());
          answers.add(await(fixture.http.get("/v1/counters/likes/hot?").send()).bodyAsString());
          answers.add(await(fixture.http.get("/v1/counters/likes?id=hot&id=cold").send()).bodyAsString());
        }
        assertThat(stalled.isComplete()).as("the increment waits for its flush").isFalse();
        for (int i = 0; i < answers.size(); i += 3) {
          assertThat(new JsonObject(answers.get(i))).isEqualTo(new JsonObject().put("type", "likes").put("id", "hot")
            .put("value", 5));
          assertThat(new JsonObject(answers.get(i + 1))).isEqualTo(new JsonObject(answers.get(i)));
          assertThat(new JsonObject(answers.get(i + 2)).getJsonArray("counters").getJsonObject(0).getLong("value"))
            .isEqualTo(5L);
        }
      } finally {
        await(holder.query(fixture.isPostgres() ? "COMMIT" : "UNLOCK TABLES").execute());
        holder.close();
      }
      Eventually.value(() -> new JsonObject(await(fixture.http.get("/v1/counters/likes/hot").send()).bodyAsString())
        .getLong("value"), 7L, Duration.ofSeconds(20));
    }
  }
}
