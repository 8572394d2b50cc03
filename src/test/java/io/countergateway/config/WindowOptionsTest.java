package io.countergateway.config;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("namespaces.<name>.window")
class WindowOptionsTest {
  private static GatewayConfig withWindow(JsonObject window) {
    return GatewayConfig.fromJson(new JsonObject().put("namespaces", new JsonObject()
      .put("views", new JsonObject().put("window", window))));
  }

  @Test
  @DisplayName("a window of hourly buckets, its defaults, and the bucket an instant falls in")
  void readsAWindow() {
    WindowOptions window = withWindow(new JsonObject().put("bucket", "hour")).namespace("views").getWindow();
    assertThat(window.getRetention()).isEqualTo(Duration.ofDays(30));
    assertThat(window.getMaxFutureSkew()).isEqualTo(Duration.ofMinutes(5));
    assertThat(window.bucketOf(Instant.parse("2026-11-22T10:59:59Z"))).isEqualTo(Instant.parse("2026-11-22T10:00:00Z").getEpochSecond());
    assertThat(withWindow(new JsonObject().put("bucket", "day")).namespace("views").getWindow()
      .bucketOf(Instant.parse("2026-11-22T23:59:59Z"))).isEqualTo(Instant.parse("2026-11-22T00:00:00Z").getEpochSecond());
    assertThat(GatewayConfig.fromJson(new JsonObject().put("namespaces", new JsonObject().put("plain", new JsonObject())))
      .namespace("plain").isWindowed()).isFalse();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
    "{\"bucket\":\"week\"}|namespaces.views.window.bucket: must be one of minute, hour, day",
    "{\"retention\":\"30d\"}|namespaces.views.window.bucket: is required",
    "{\"bucket\":\"day\",\"retention\":\"2h\"}|namespaces.views.window.retention: must be at least one bucket",
    "{\"bucket\":\"hour\",\"retention\":\"thirty days\"}|namespaces.views.window.retention: must be a duration, a whole number followed by",
    "{\"bucket\":\"hour\",\"maxFutureSkew\":\"2d\"}|namespaces.views.window.maxFutureSkew: must be at most 1d",
    "{\"bucket\":\"hour\",\"maxRangeBuckets\":0}|namespaces.views.window.maxRangeBuckets: must be between 1",
    "{\"bucket\":\"hour\",\"size\":3}|namespaces.views.window.size"})
  @DisplayName("a bad window is refused in one line naming its key")
  void refusesBadWindows(String window, String message) {
    assertThatThrownBy(() -> withWindow(new JsonObject(window))).isInstanceOf(ConfigException.class)
      .hasMessageContaining(message).satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }

  @Test
  @DisplayName("a roll-up of a windowed namespace is refused: roll-ups copy plain totals")
  void refusesRollupsOfWindowedNamespaces() {
    JsonObject config = new JsonObject().put("namespaces", new JsonObject()
        .put("views", new JsonObject().put("window", new JsonObject().put("bucket", "day"))))
      .put("rollups", new io.vertx.core.json.JsonArray().add(new JsonObject().put("namespace", "views")
        .put("table", "pages").put("keyColumn", "id").put("valueColumn", "views")));
    assertThatThrownBy(() -> GatewayConfig.fromJson(config)).isInstanceOf(ConfigException.class)
      .hasMessageContaining("rollups[0].namespace: 'views' is windowed");
  }
}
