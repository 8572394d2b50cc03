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
    BatchingOptions smallest = batching(new JsonObject().put("flushIdRetentionSeconds", 60).put("writeTimeoutMs", 100)
      .put("retryMaxMs", 500));
    assertThat(smallest.flushSourceHeartbeatMs()).isEqualTo(6_000);
    assertThat(smallest.getFlushIdRetentionSeconds() * 1000L)
      .isGreaterThanOrEqualTo(BatchingOptions.HEARTBEATS_WITHIN_RETENTION * smallest.flushSourceHeartbeatMs());
    assertThat(batching(new JsonObject()).flushSourceHeartbeatMs()).as("at the default day").isEqualTo(60_000);
    assertThat(batching(new JsonObject().put("flushIdRetentionSeconds", 300).put("writeTimeoutMs", 1_000)
      .put("retryMaxMs", 2_000)).flushSourceHeartbeatMs()).isEqualTo(30_000);
  }

  @Test
  @DisplayName("a retention shorter than a hundred retries is refused, naming the key")
  void retentionCoversRetries() {
    assertThatThrownBy(() -> batching(new JsonObject().put("flushIdRetentionSeconds", 60)))
      .isInstanceOf(ConfigException.class).hasMessageStartingWith("batching.flushIdRetentionSeconds: must be at least");
  }
}
