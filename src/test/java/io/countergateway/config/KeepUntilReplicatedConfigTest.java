package io.countergateway.config;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("database.keepUntilReplicated and database.replicationLagMax")
class KeepUntilReplicatedConfigTest {
  @Test
  @DisplayName("off by default with a 30 s lag bound; on for PostgreSQL and the embedded one")
  void defaults() {
    DatabaseOptions defaults = DatabaseOptions.fromJson(new JsonObject());
    assertThat(defaults.isKeepUntilReplicated()).isFalse();
    assertThat(defaults.getReplicationLagMaxMs()).isEqualTo(30_000);
    DatabaseOptions on = DatabaseOptions.fromJson(new JsonObject().put("kind", "postgres")
      .put("keepUntilReplicated", true).put("replicationLagMax", "5s"));
    assertThat(on.isKeepUntilReplicated()).isTrue();
    assertThat(on.getReplicationLagMaxMs()).isEqualTo(5_000);
    assertThat(on.withSynchronousCommit("on").isKeepUntilReplicated()).as("kept by the start's copy").isTrue();
  }

  @Test
  @DisplayName("refused for MySQL / MariaDB naming the key and what keeps a failover there, and a lag bound below 1 s naming its key")
  void refusals() {
    assertThatThrownBy(() -> DatabaseOptions.fromJson(new JsonObject().put("kind", "mysql")
      .put("keepUntilReplicated", true)))
      .hasMessageStartingWith("database.keepUntilReplicated: must be false with database.kind mysql")
      .hasMessageContaining("semi-synchronous");
    assertThatThrownBy(() -> DatabaseOptions.fromJson(new JsonObject().put("replicationLagMax", "10ms")))
      .hasMessageStartingWith("database.replicationLagMax");
  }
}
