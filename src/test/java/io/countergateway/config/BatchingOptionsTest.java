package io.countergateway.config;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("Batching configuration: flush-id retention and the flush sources' heartbeat")
class BatchingOptionsTest {

  private static BatchingOptions batching(JsonObject batching) {
    return GatewayConfig.fromJson(new JsonObject().put("batching", batching)
      .put("namespaces", new JsonObject().put("downloads", new JsonObject()))).getBatching();
  }

  @Test
  @DisplayName("an idle flush source beats at least ten times within the retention, even at the smallest one accepted")
  void heartbeatWithinRetention() {
    BatchingOptions smallest = batching(new JsonObject().put("flushIdRetention", "1m").put("writeTimeout", "100ms")
      .put("retryBackoffMax", "500ms"));
    assertThat(smallest.flushSourceHeartbeatMs()).isEqualTo(6_000);
    assertThat(smallest.getFlushIdRetentionSeconds() * 1000L)
      .isGreaterThanOrEqualTo(BatchingOptions.HEARTBEATS_WITHIN_RETENTION * smallest.flushSourceHeartbeatMs());
    assertThat(batching(new JsonObject()).flushSourceHeartbeatMs()).as("at the default day").isEqualTo(60_000);
    assertThat(batching(new JsonObject().put("flushIdRetention", "5m").put("writeTimeout", "1s")
      .put("retryBackoffMax", "2s")).flushSourceHeartbeatMs()).isEqualTo(30_000);
  }

  @Test
  @DisplayName("a retention shorter than a hundred retries is refused, naming the key")
  void retentionCoversRetries() {
    assertThatThrownBy(() -> batching(new JsonObject().put("flushIdRetention", "1m")))
      .isInstanceOf(ConfigException.class).hasMessageStartingWith("batching.flushIdRetention: must be at least");
  }
}
