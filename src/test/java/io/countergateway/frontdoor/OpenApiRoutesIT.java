package io.countergateway.frontdoor;

import io.countergateway.internal.runtime.GatewayServices;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.http.HttpApi;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import io.vertx.junit5.VertxExtension;

import java.util.Set;
import java.util.TreeSet;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/** The OpenAPI document and the router cannot drift apart: each lists exactly the routes of the other. */
@ExtendWith(VertxExtension.class)
class OpenApiRoutesIT {
  @Test
  @DisplayName("every route the router serves is in the OpenAPI document, and every documented operation is served")
  void documentAndRouterListTheSameRoutes(Vertx vertx) {
    DocumentedApi api = DocumentedApi.load(vertx);
    Set<String> documented = new TreeSet<>();
    api.contract.operations().forEach(op -> documented.add(op.getHttpMethod().name() + " " + op.getOpenAPIPath()));

    assertThat(servedRoutes(vertx)).isEqualTo(documented);
  }

  @Test
  @DisplayName("every operation of the document has an id and a summary")
  void everyOperationIsDescribed(Vertx vertx) {
    DocumentedApi api = DocumentedApi.load(vertx);
    assertThat(api.contract.operations()).allSatisfy(op -> {
      assertThat(op.getOperationId()).isNotBlank();
      assertThat(op.getOpenAPIModel().getString("summary")).as(op.getOperationId()).isNotBlank();
    });
  }

  /** "METHOD /path/{param}" for each route of a router built from a test configuration. */
  private Set<String> servedRoutes(Vertx vertx) {
    JsonObject raw = GatewayFixture.baseConfig(new JsonObject().put("kind", "postgres").put("host", "127.0.0.1")
      .put("port", 1).put("name", TestDatabases.DATABASE).put("user", "nobody"), "unused");
    GatewayServices services = new GatewayServices(GatewayConfig.fromJson(raw), new GatewayState(),
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    // built on an event loop as an ingest verticle builds it; no request is served, so no coalescer is needed
    Router router = await(Future.<Router>future(promise -> vertx.runOnContext(v -> {
      try {
        promise.complete(HttpApi.router(vertx, services, null));
      } catch (RuntimeException e) {
        promise.fail(e);
      }
    })));
    Set<String> served = new TreeSet<>();
    for (Route route : router.getRoutes()) {
      if (route.getPath() == null || route.methods() == null || route.methods().isEmpty()) {
        continue; // handlers for every request of a prefix (framing checks, CORS), not endpoints
      }
      String path = route.getPath().replaceAll(":([A-Za-z]+)", "{$1}");
      route.methods().forEach(method -> served.add(method.name() + " " + path));
    }
    return served;
  }
}
