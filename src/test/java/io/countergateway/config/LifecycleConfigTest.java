package io.countergateway.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("Roll-up and compaction configuration")
class LifecycleConfigTest {

  private static JsonObject config(JsonObject rollup) {
    return new JsonObject().put("namespaces", new JsonObject().put("downloads", new JsonObject()))
      .put("rollups", new JsonArray().add(rollup));
  }

  private static JsonObject rollup() {
    return new JsonObject().put("namespace", "downloads").put("table", "repositories").put("keyColumn", "id")
      .put("valueColumn", "download_count");
  }

  @Test
  @DisplayName("reads a roll-up as the issue writes it, with defaults for interval and batch size")
  void readsARollup() {
    GatewayConfig config = GatewayConfig.fromJson(config(rollup().put("interval", "10s")));
    assertThat(config.getRollups()).singleElement().satisfies(rollup -> {
      assertThat(rollup.getTable()).isEqualTo("repositories");
      assertThat(rollup.getIntervalSeconds()).isEqualTo(10);
      assertThat(rollup.getBatchSize()).isEqualTo(RollupOptions.DEFAULT_BATCH_SIZE);
    });
    assertThat(config.getCompaction().isEnabled()).isFalse();
  }

  @Test
  @DisplayName("names the key of a bad roll-up or compaction value in one line")
  void namesTheKey() {
    assertThatThrownBy(() -> GatewayConfig.fromJson(config(rollup().put("namespace", "uploads"))))
      .hasMessage("rollups[0].namespace: 'uploads' is not a declared namespace");
    assertThatThrownBy(() -> GatewayConfig.fromJson(config(rollup().put("table", "repos; DROP TABLE x"))))
      .hasMessageStartingWith("rollups[0].table: must be a SQL identifier");
    JsonObject withoutKey = rollup();
    withoutKey.remove("keyColumn");
    assertThatThrownBy(() -> GatewayConfig.fromJson(config(withoutKey))).hasMessageStartingWith("rollups[0].keyColumn:");
    assertThatThrownBy(() -> GatewayConfig.fromJson(config(rollup().put("interval", "0s"))))
      .hasMessage("rollups[0].interval: must be between 1s and 1d, got 0s");
    assertThatThrownBy(() -> GatewayConfig.fromJson(config(rollup().put("valueColumm", "x"))))
      .hasMessage("rollups[0].valueColumm: unknown key (did you mean rollups[0].valueColumn?)");
    JsonObject twice = config(rollup());
    twice.getJsonArray("rollups").add(rollup().put("table", "other"));
    assertThatThrownBy(() -> GatewayConfig.fromJson(twice)).hasMessage("rollups[1].namespace: 'downloads' already has a roll-up");
    assertThatThrownBy(() -> GatewayConfig.fromJson(config(rollup()).put("rollups", "downloads")))
      .hasMessage("rollups: must be a list of mappings");
    assertThatThrownBy(() -> GatewayConfig.fromJson(config(rollup()).put("compaction", new JsonObject().put("idleAfter", "0s"))))
      .hasMessage("compaction.idleAfter: must be between 1s and 365d, got 0s");
  }
}
