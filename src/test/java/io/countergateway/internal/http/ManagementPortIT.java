package io.countergateway.internal.http;

import io.countergateway.testing.FreePorts;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/** Health and metrics on management.port, and only there; the API on http.port, and only there. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("The management port")
class ManagementPortIT {
  private GatewayFixture gateway;
  private int management;

  @BeforeAll
  void start() {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "management_counters");
    config.put("management", new JsonObject().put("port", FreePorts.take()));
    gateway = GatewayFixture.start(config);
    management = gateway.gateway.managementPort();
  }

  @AfterAll
  void stop() {
    gateway.close();
  }

  private HttpResponse<Buffer> get(int port, String path) {
    return await(gateway.http.get(port, "127.0.0.1", path).send());
  }

  @Test
  @DisplayName("serves /health/* and /metrics; the API's port answers them 404 naming management.port")
  void healthAndMetricsMoved() {
    assertThat(management).isPositive().isNotEqualTo(gateway.gateway.port());
    assertThat(get(management, "/health/live").bodyAsJsonObject().getString("status")).isEqualTo("live");
    assertThat(get(management, "/health/ready").statusCode()).isEqualTo(200);
    assertThat(get(management, "/health/accepting").statusCode()).isEqualTo(200);
    HttpResponse<Buffer> metrics = get(management, "/metrics");
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.bodyAsString()).contains("gateway_");
    for (String path : new String[] {"/health/live", "/health/ready", "/metrics"}) {
      HttpResponse<Buffer> there = get(gateway.gateway.port(), path);
      assertThat(there.statusCode()).as(path).isEqualTo(404);
      assertThat(there.bodyAsJsonObject().getString("message")).contains("management.port");
    }
  }

  @Test
  @DisplayName("serves nothing of the API")
  void noApi() {
    assertThat(get(management, "/v1/namespaces").statusCode()).isEqualTo(404);
    assertThat(await(gateway.http.post(management, "127.0.0.1", "/v1/counters/likes/m/increments").send()).statusCode())
      .isEqualTo(404);
    assertThat(get(gateway.gateway.port(), "/v1/namespaces").statusCode()).isEqualTo(200);
  }
}
