package io.countergateway;

import io.countergateway.config.GatewayConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The public types fail with {@link CounterException}, the API's own type, carrying the status, code and field the
 * HTTP API answers with: a library user never needs an internal type to read why a request was refused.
 */
@DisplayName("The library's failures")
class PublicFailuresTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  @DisplayName("CounterClient: the gateway's refusal keeps its status, code, message and field")
  void clientRefusal() {
    vertx.eventBus().consumer("counters.increment", message -> message.fail(400,
      new JsonObject().put("error", "invalid_delta").put("message", "delta must be between …").put("field", "delta")
        .encode()));
    CounterException refused = failureOf(new CounterClient(vertx, 5_000).increment("likes", "a", 1));
    assertThat(refused.status()).isEqualTo(400);
    assertThat(refused.code()).isEqualTo("invalid_delta");
    assertThat(refused.field()).isEqualTo("delta");
    assertThat(refused).hasMessage("delta must be between …");
  }

  @Test
  @DisplayName("CounterClient: no gateway on the bus is 503 unavailable")
  void clientWithoutGateway() {
    CounterException refused = failureOf(new CounterClient(vertx, 5_000).get("likes", "a"));
    assertThat(refused.status()).isEqualTo(503);
    assertThat(refused.code()).isEqualTo("unavailable");
  }

  @Test
  @DisplayName("InTransactionCounters: bad input is refused before the transaction is touched")
  void inTransactionRefusal() {
    InTransactionCounters counters = InTransactionCounters.of(GatewayConfig.fromJson(new JsonObject()
      .put("database", new JsonObject().put("kind", "postgres").put("host", "127.0.0.1").put("port", 5432))
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4)))));
    CounterException undeclared = failureOf(counters.incrementAll(null, Map.of(new Counter("nope", "x"), 1L)));
    assertThat(undeclared.status()).isEqualTo(404);
    assertThat(undeclared).hasMessageContaining("not declared");
    CounterException outOfRange = failureOf(counters.increment(null, "likes", "x", Long.MAX_VALUE));
    assertThat(outOfRange.status()).isEqualTo(400);
    assertThat(outOfRange.field()).isEqualTo("delta");
  }

  private static CounterException failureOf(Future<?> request) {
    Throwable failure = request.toCompletionStage().toCompletableFuture().handle((ok, e) -> e).join();
    assertThat(failure).isInstanceOf(CounterException.class);
    return (CounterException) (failure instanceof java.util.concurrent.CompletionException c ? c.getCause() : failure);
  }
}
