package io.countergateway.internal.http;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.LimitsOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("The Keep-Alive timeout the gateway announces")
class KeepAliveTimeoutTest {
  private static LimitsOptions limits(String headerTimeout, String idleTimeout) {
    return GatewayConfig.fromJson(new JsonObject()
      .put("limits", new JsonObject().put("headerTimeout", headerTimeout).put("idleTimeout", idleTimeout))
      .put("namespaces", new JsonObject().put("likes", new JsonObject()))).getLimits();
  }

  @ParameterizedTest(name = "headerTimeout {0}, idleTimeout {1}: timeout={2}")
  @CsvSource({"10s, 1m, 5", "2s, 1m, 1", "30s, 8s, 4", "100ms, 1m, 1", "10m, 1h, 300", "3s, 1s, 1"})
  @DisplayName("is half the shorter of the header and idle timeouts, in whole seconds, at least 1")
  void halfTheShorterDeadline(String headerTimeout, String idleTimeout, int seconds) {
    assertThat(ConnectionGuard.keepAlive(limits(headerTimeout, idleTimeout))).isEqualTo("timeout=" + seconds);
  }
}
