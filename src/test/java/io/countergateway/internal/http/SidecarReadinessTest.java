package io.countergateway.internal.http;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.runtime.GatewayServices;
import io.countergateway.internal.runtime.GatewayState;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /health/accepting}, the readiness of a web pod whose gateway is a sidecar (k8s/overlays/sidecar): it follows
 * what the gateway can take, not the counter database, which {@code /health/ready} follows. Served by the real router
 * over HTTP; the gateway's state is set as its coalescers would set it.
 */
@DisplayName("The sidecar's readiness, /health/accepting")
class SidecarReadinessTest {
  private Vertx vertx;
  private GatewayState state;
  private WebClient client;
  private int port;

  @BeforeEach
  void serve() {
    vertx = Vertx.vertx();
    state = new GatewayState();
    JsonObject config = new JsonObject().put("namespaces", new JsonObject().put("pageviews", new JsonObject()));
    GatewayServices services = new GatewayServices(GatewayConfig.fromJson(config), state,
      new SimpleMeterRegistry());
    HttpServer server = await(vertx.createHttpServer().requestHandler(HttpApi.router(vertx, services, null))
      .listen(0, "127.0.0.1"));
    port = server.actualPort();
    client = WebClient.create(vertx);
  }

  @AfterEach
  void close() {
    await(vertx.close());
  }

  @Test
  @DisplayName("stays 200 while the database is down (flushes failing), when /health/ready is 503")
  void readyThroughADatabaseOutage() {
    assertThat(get("/health/accepting").statusCode()).isEqualTo(200);
    state.writerFailing(true);
    HttpResponse<Buffer> accepting = get("/health/accepting");
    assertThat(accepting.statusCode()).isEqualTo(200);
    assertThat(accepting.bodyAsJsonObject()).isEqualTo(new JsonObject().put("status", "accepting"));
    HttpResponse<Buffer> ready = get("/health/ready");
    assertThat(ready.statusCode()).isEqualTo(503);
    assertThat(ready.bodyAsJsonObject().getString("status")).isEqualTo("not_ready");
  }

  @Test
  @DisplayName("is 503 naming the reason while pending counters or the journal are full, and while the gateway stops")
  void notAcceptingWhenFullOrStopping() {
    state.writerShedding(true);
    HttpResponse<Buffer> full = get("/health/accepting");
    assertThat(full.statusCode()).isEqualTo(503);
    assertThat(full.bodyAsJsonObject()).isEqualTo(new JsonObject().put("status", "not_accepting")
      .put("reason", "pending counters or the journal are full"));
    state.writerShedding(false);
    assertThat(get("/health/accepting").statusCode()).isEqualTo(200);
    state.startDraining();
    HttpResponse<Buffer> stopping = get("/health/accepting");
    assertThat(stopping.statusCode()).isEqualTo(503);
    assertThat(stopping.bodyAsJsonObject().getString("reason")).isEqualTo("shutting down");
  }

  private HttpResponse<Buffer> get(String path) {
    return await(client.get(port, "127.0.0.1", path).send());
  }
}
