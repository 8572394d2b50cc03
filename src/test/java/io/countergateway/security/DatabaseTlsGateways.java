package io.countergateway.security;

import io.countergateway.Gateway;
import io.countergateway.config.GatewayConfig;
import io.countergateway.testing.GatewayFixture;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Gateways started against a database with one {@code database.ssl} setting or another, for the TLS tests. */
final class DatabaseTlsGateways {
  private DatabaseTlsGateways() {
  }

  /** {@code database} with {@code ssl.mode} and, when not null, {@code ssl.caFile}. */
  static JsonObject withSsl(JsonObject database, String mode, java.nio.file.Path caFile) {
    JsonObject ssl = new JsonObject().put("mode", mode);
    if (caFile != null) {
      ssl.put("caFile", caFile.toString());
    }
    return database.copy().put("ssl", ssl);
  }

  /** Starts a gateway on {@code database}, answers the status of one increment of 3 to likes/over-tls, stops it. */
  static int incrementOnce(JsonObject database, String table) {
    try (GatewayFixture fixture = GatewayFixture.start(GatewayFixture.baseConfig(database, table))) {
      return GatewayFixture.await(fixture.http.post("/v1/counters/likes/over-tls/increments")
        .putHeader("Content-Type", "application/json").sendBuffer(Buffer.buffer("{\"delta\":3}"))).statusCode();
    }
  }

  /** The message for a start on {@code database} with the CA file {@code otherCa} (not the server's) says so. */
  static String wrongCaRefusal(JsonObject database, String table) throws Exception {
    return oneLineRefusal(database, table, "database.ssl.mode verify-full", "database.ssl.caFile");
  }

  /** The message for a start with {@code ssl.mode: disable} on {@code database}, which wants TLS, says so. */
  static String plainRefusal(JsonObject database, String table) throws Exception {
    return oneLineRefusal(database, table, "refused a connection without TLS", "database.ssl.mode disable");
  }

  private static String oneLineRefusal(JsonObject database, String table, String... saying) throws Exception {
    String message = startFailure(database, table).getMessage();
    assertThat(message).contains(saying).doesNotContain("\n");
    return message;
  }

  /** The failure of a gateway's start on {@code database}, as {@code Main} prints it. */
  static Throwable startFailure(JsonObject database, String table) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      Future<Gateway> started = Gateway.start(vertx, GatewayConfig.fromJson(GatewayFixture.baseConfig(database, table)),
        new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
      started.toCompletionStage().toCompletableFuture().handle((gateway, failure) -> null).get(120, TimeUnit.SECONDS);
      if (started.succeeded()) {
        await(started.result().stop());
        throw new AssertionError("the gateway started");
      }
      return started.cause();
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static <T> T await(Future<T> future) {
    return GatewayFixture.await(future);
  }
}
