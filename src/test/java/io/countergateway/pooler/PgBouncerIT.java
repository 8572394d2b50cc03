package io.countergateway.pooler;

import io.countergateway.testing.Eventually;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.PgBouncer;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The gateway through PgBouncer (docs/scaling.md "Poolers"), started here in front of the embedded PostgreSQL: session
 * pooling works with {@code database.pooler: session}; transaction and statement pooling are refused at start in one line.
 */
@DisplayName("The gateway behind PgBouncer")
class PgBouncerIT {
  private static final int COMMITS = 50;

  @BeforeAll
  static void pgbouncerInstalled() {
    PgBouncer.assumeInstalled();
  }

  @Test
  @DisplayName("in session pooling, commits are counted exactly once, reads answer, and accepted increments land")
  void sessionPooling() throws Exception {
    JsonObject server = TestDatabases.postgres();
    try (PgBouncer bouncer = PgBouncer.start(server, "session");
         GatewayFixture fixture = GatewayFixture.start(GatewayFixture.baseConfig(
           bouncer.database(server).put("pooler", "session"), "pooled_session"))) {
      String id = "pooled-" + UUID.randomUUID();
      List<Future<HttpResponse<Buffer>>> commits = new ArrayList<>();
      for (int i = 0; i < COMMITS; i++) {
        commits.add(fixture.http.post("/v1/counters/likes/" + id + "/increments")
          .sendJsonObject(new JsonObject().put("delta", 2)));
      }
      for (Future<HttpResponse<Buffer>> commit : commits) {
        assertThat(await(commit).statusCode()).isEqualTo(200);
      }
      assertThat(await(fixture.sumInTable("likes", id))).isEqualTo(2L * COMMITS);

      HttpResponse<Buffer> read = await(fixture.http.get("/v1/counters/likes/" + id).send());
      assertThat(read.statusCode()).isEqualTo(200);
      assertThat(read.bodyAsJsonObject().getLong("value")).isEqualTo(2L * COMMITS);

      HttpResponse<Buffer> accepted = await(fixture.http.post("/v1/counters/likes/" + id + "/increments?ack=accepted")
        .sendJsonObject(new JsonObject().put("delta", 5)));
      assertThat(accepted.statusCode()).isEqualTo(202);
      long committedAndAccepted = 2L * COMMITS + 5;
      assertThat(Eventually.value(() -> await(fixture.sumInTable("likes", id)), committedAndAccepted))
        .isEqualTo(committedAndAccepted);
    }
  }

  @Test
  @DisplayName("database.pooler: session straight to PostgreSQL counts as well: the settings are SET once connected")
  void sessionKeyWithoutPooler() {
    try (GatewayFixture fixture = GatewayFixture.start(GatewayFixture.baseConfig(
      TestDatabases.postgres().put("pooler", "session"), "pooled_direct"))) {
      String id = "direct-" + UUID.randomUUID();
      assertThat(await(fixture.http.post("/v1/counters/likes/" + id + "/increments")
        .sendJsonObject(new JsonObject().put("delta", 3))).statusCode()).isEqualTo(200);
      assertThat(await(fixture.sumInTable("likes", id))).isEqualTo(3L);
    }
  }

  @Test
  @DisplayName("in session pooling without database.pooler, the start is refused in one line naming the key")
  void sessionPoolingNeedsTheKey() {
    JsonObject server = TestDatabases.postgres();
    try (PgBouncer bouncer = PgBouncer.start(server, "session")) {
      JsonObject withoutKey = bouncer.database(server);
      assertThatThrownBy(() -> GatewayFixture.start(GatewayFixture.baseConfig(withoutKey, "pooled_nokey")))
        .hasMessageContaining("database.pooler: the database endpoint 127.0.0.1:" + bouncer.port()
          + " refused a start-up parameter")
        .hasMessageContaining("set database.pooler: session")
        .hasMessageNotContaining("\n");
    }
  }

  @Test
  @DisplayName("a session pool too small for the gateway is refused at start in one line, not after a time-out")
  void tooSmallPoolRefused() {
    JsonObject server = TestDatabases.postgres();
    try (PgBouncer bouncer = PgBouncer.start(server, "session", 2)) {
      assertThatThrownBy(() -> GatewayFixture.start(GatewayFixture.baseConfig(
        bouncer.database(server).put("pooler", "session"), "pooled_small")))
        .hasMessageContaining("database.host / database.port: a connection to 127.0.0.1:" + bouncer.port()
          + " waited 3000 ms for a server session while the probe's other connections held theirs")
        .hasMessageContaining("default_pool_size")
        .hasMessageNotContaining("\n");
    }
  }

  @ParameterizedTest(name = "pool_mode = {0}")
  @ValueSource(strings = {"transaction", "statement"})
  @DisplayName("transaction and statement pooling are refused at start in one line naming the key")
  void sharedSessionsRefused(String poolMode) {
    JsonObject server = TestDatabases.postgres();
    try (PgBouncer bouncer = PgBouncer.start(server, poolMode)) {
      assertThatThrownBy(() -> GatewayFixture.start(GatewayFixture.baseConfig(
        bouncer.database(server).put("pooler", "session"), "pooled_" + poolMode)))
        .hasMessageContaining("database.pooler: the database endpoint 127.0.0.1:" + bouncer.port()
          + " shares server sessions between connections")
        .hasMessageContaining("pool_mode = session")
        .hasMessageNotContaining("\n");
    }
  }
}
