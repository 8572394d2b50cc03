package io.countergateway.internal.write;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.ScriptedStore;
import io.countergateway.testing.ScriptedStore.Hold;
import io.countergateway.testing.SettableClock;
import io.countergateway.testing.TestBounds;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The answer rule of {@link WritePath} on a {@link ScriptedStore}: what a caller is told for each way the parts of a
 * write can end, in milliseconds. {@code EveryDoorAnswersAlikeIT} sends the same cases through every door to real
 * databases.
 */
@DisplayName("The write path's answer, on a scripted store")
class WritePathTest {
  private Vertx vertx;
  private Context loop;
  private ScriptedStore store;
  private SettableClock clock;
  private WritePath writes;
  private GatewayState state;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
    store = new ScriptedStore();
    clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    GatewayConfig config = GatewayConfig.fromJson(new JsonObject()
      .put("batching", new JsonObject().put("maxDelay", "1ms").put("maxKeys", 1).put("retryBackoff", "1ms").put("retryBackoffMax", "5ms"))
      .put("limits", new JsonObject().put("requestTimeout", "10s"))
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4))));
    state = new GatewayState();
    writes = EventLoop.call(loop, () -> {
      Coalescer coalescer = new Coalescer(vertx, store, config, state, 0, () -> 0, clock::nanoTime);
      coalescer.start();
      return new WritePath(coalescer, new IdempotentIncrements(vertx, config, state.keysInFlight(), new SimpleMeterRegistry()),
        (type, id) -> Future.succeededFuture(store.value(type, id)), store, state.taken());
    });
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(TestBounds.millis(10), TimeUnit.MILLISECONDS);
  }

  private WriteAnswer submit(WriteRequest request) {
    Future<WriteAnswer> answer = EventLoop.call(loop, () -> writes.submit(request));
    try {
      return answer.toCompletionStage().toCompletableFuture().get(TestBounds.millis(20), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("submit must never fail", e);
    }
  }

  /** A batch of a (1) and b (2), ack=commit, its first flush held by the database. */
  private Future<WriteAnswer> heldBatch() {
    store.then(new Hold());
    return EventLoop.call(loop, () ->
      writes.submit(WriteRequest.of(List.of(increment("a", 1), increment("b", 2)), AckMode.COMMIT)));
  }

  private static Increment increment(String id, long delta) {
    return new Increment(new CounterKey("likes", id), delta);
  }

  @Test
  @DisplayName("a batch whose counters all commit is 200, each counter counted")
  void allCommitted() {
    WriteAnswer answer = submit(WriteRequest.of(List.of(increment("a", 1), increment("b", 2)), AckMode.COMMIT));

    assertThat(answer.status()).isEqualTo(200);
    assertThat(answer.isRefused()).isFalse();
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(store.value("likes", "b")).isEqualTo(2);
  }

  @Test
  @DisplayName("a batch with one refused value and one committed counter is 504 outcome_unknown, never 'not counted'")
  void partRefusedPartCommitted() {
    store.refuseRows(row -> row.id().equals("full"));

    WriteAnswer answer = submit(WriteRequest.of(List.of(increment("full", 1), increment("b", 2)), AckMode.COMMIT));

    assertThat(answer.status()).isEqualTo(504);
    assertThat(answer.refusal().code()).isEqualTo("outcome_unknown");
    assertThat(store.value("likes", "b")).isEqualTo(2);
  }

  @Test
  @DisplayName("a batch whose every part is refused a value is that refusal (422), nothing counted")
  void everyPartRefused() {
    store.refuseRows(row -> true);

    WriteAnswer answer = submit(WriteRequest.of(List.of(increment("a", 1), increment("b", 2)), AckMode.COMMIT));

    assertThat(answer.status()).isEqualTo(422);
    assertThat(answer.refusal().code()).isEqualTo("counter_overflow");
    assertThat(store.commits).isZero();
  }

  @Test
  @DisplayName("a part in flight at the timeout and a part withdrawn: 504, and the part in flight lands once")
  void inFlightAndWithdrawn() {
    Future<WriteAnswer> pending = heldBatch();
    clock.advance(Duration.ofSeconds(11)); // past limits.requestTimeout: the next sweep expires both waiters
    WriteAnswer answer = pending.toCompletionStage().toCompletableFuture().join();
    EventLoop.call(loop, store::release);

    assertThat(answer.status()).isEqualTo(504);
    assertThat(answer.refusal().code()).isEqualTo("outcome_unknown");
    EventLoop.call(loop, () -> writes.drain()).toCompletionStage().toCompletableFuture().join();
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(store.value("likes", "b")).as("withdrawn before its flush").isZero();
  }

  @Test
  @DisplayName("every part withdrawn before its flush: 503, nothing counted")
  void allWithdrawn() {
    store.then(new Hold());
    Future<WriteAnswer> blocker = EventLoop.call(loop, () -> writes.submit(WriteRequest.of(increment("x", 1), AckMode.COMMIT)));
    Future<WriteAnswer> pending = EventLoop.call(loop, () ->
      writes.submit(WriteRequest.of(List.of(increment("a", 1), increment("b", 2)), AckMode.COMMIT)));
    clock.advance(Duration.ofSeconds(11));
    WriteAnswer answer = pending.toCompletionStage().toCompletableFuture().join();
    EventLoop.call(loop, store::release);

    assertThat(answer.status()).isEqualTo(503);
    assertThat(answer.refusal().code()).isEqualTo("timeout_withdrawn");
    assertThat(blocker.toCompletionStage().toCompletableFuture().join().status()).isEqualTo(504);
    assertThat(store.value("likes", "a") + store.value("likes", "b")).isZero();
  }

  @Test
  @DisplayName("ack=accepted is 202 once held, and the increment is written")
  void accepted() {
    WriteAnswer answer = submit(WriteRequest.of(increment("a", 3), AckMode.ACCEPTED));
    EventLoop.call(loop, () -> writes.drain()).toCompletionStage().toCompletableFuture().join();

    assertThat(answer.status()).isEqualTo(202);
    assertThat(store.value("likes", "a")).isEqualTo(3);
  }

  @Test
  @DisplayName("every increment taken counts once in its namespace's live rate, accepted or committed")
  void namespaceTally() {
    submit(WriteRequest.of(increment("a", 3), AckMode.ACCEPTED));
    submit(WriteRequest.of(List.of(increment("b", 1), increment("c", 1)), AckMode.COMMIT));

    assertThat(state.taken().taken("likes")).isEqualTo(3);
  }

  @Test
  @DisplayName("a stopping write path refuses with 503 shutting_down and takes nothing")
  void refusedWhileStopping() {
    EventLoop.call(loop, () -> writes.drain()).toCompletionStage().toCompletableFuture().join();

    WriteAnswer answer = submit(WriteRequest.of(increment("a", 3), AckMode.ACCEPTED));

    assertThat(answer.status()).isEqualTo(503);
    assertThat(answer.refusal().code()).isEqualTo("shutting_down");
    assertThat(store.attempts).isEmpty();
  }

  @Test
  @DisplayName("add-and-get answers the value read after the commit")
  void addAndGet() {
    WriteAnswer answer = submit(WriteRequest.of(increment("a", 3), AckMode.COMMIT).returningValue(true));

    assertThat(answer.status()).isEqualTo(200);
    assertThat(answer.value()).isEqualTo(3);
  }

  @Test
  @DisplayName("the rule: only refusals that prove nothing was written count as 'not counted'")
  void provenNotCounted() {
    assertThat(WritePath.provenNotCounted(ApiError.unavailable("overloaded", "full"))).isTrue();
    assertThat(WritePath.provenNotCounted(new ApiError(422, "counter_overflow", "", "delta"))).isTrue();
    assertThat(WritePath.provenNotCounted(new ApiError(500, "write_failed", "", null))).isTrue();
    assertThat(WritePath.provenNotCounted(new ApiError(504, "outcome_unknown", "", null))).isFalse();
    assertThat(WritePath.provenNotCounted(new ApiError(500, "internal_error", "", null))).isFalse();
  }

  @Test
  @DisplayName("counters held while their flush is in flight are counted, and none once drained; nothing is left to a journal")
  void countersHeld() {
    Future<WriteAnswer> pending = heldBatch();

    assertThat(EventLoop.call(loop, writes::countersHeld)).as("held while the first flush is in flight").isPositive();
    EventLoop.call(loop, store::release);
    EventLoop.call(loop, () -> writes.drain()).toCompletionStage().toCompletableFuture().join();
    assertThat(pending.toCompletionStage().toCompletableFuture().join().status()).isEqualTo(200);
    assertThat(EventLoop.call(loop, writes::countersHeld)).isZero();
    assertThat(EventLoop.call(loop, writes::leftInJournal)).as("no journal: nothing left to a replay").isFalse();
    assertThat(EventLoop.call(loop, writes::journalUnreachable)).isFalse();
  }
}
