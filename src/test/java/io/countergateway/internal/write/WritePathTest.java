package io.countergateway.internal.write;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.internal.store.KeyedStatements;
import io.countergateway.internal.store.KeyedWrites;
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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
  /** The counters whose value an add-and-get read, in order. */
  private final List<String> valuesRead = new ArrayList<>();
  /** The key table of the keyed statements: key to the first request's fingerprint, status and answer. */
  private final Map<String, KeyedWrites.Outcome> keys = new HashMap<>();
  private boolean keyedClosed;
  /** While set, each keyed write waits here until the test completes it. */
  private io.vertx.core.Promise<Void> keyedHeld;

  /** Keyed statements on {@link #keys}; a request's rows are counted in the scripted store when its key is new. */
  private final KeyedStatements keyedStatements = new KeyedStatements() {
    @Override
    public Future<KeyedWrites.Outcome> write(KeyedWrites.Request request) {
      if (keyedHeld != null) {
        return keyedHeld.future().compose(released -> writeNow(request));
      }
      return writeNow(request);
    }

    private Future<KeyedWrites.Outcome> writeNow(KeyedWrites.Request request) {
      KeyedWrites.Outcome there = keys.get(request.key());
      if (there != null) {
        return Future.succeededFuture(there);
      }
      keys.put(request.key(), new KeyedWrites.Outcome(false, request.fingerprint(), request.status(), request.answer()));
      request.rows().forEach(row -> store.set(row.type(), row.id(), java.math.BigInteger.valueOf(
        store.value(row.type(), row.id()) + row.delta())));
      return Future.succeededFuture(new KeyedWrites.Outcome(true, null, 0, null));
    }

    @Override
    public Future<Void> close() {
      keyedClosed = true;
      return Future.succeededFuture();
    }
  };

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
    store = new ScriptedStore();
    clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    GatewayConfig config = GatewayConfig.fromJson(new JsonObject()
      .put("batching", new JsonObject().put("maxDelay", "1ms").put("maxKeys", 1).put("maxInFlight", 1).put("retryBackoff", "1ms").put("retryBackoffMax", "5ms"))
      .put("limits", new JsonObject().put("requestTimeout", "10s"))
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4))));
    state = new GatewayState();
    writes = EventLoop.call(loop, () -> {
      Coalescer coalescer = new Coalescer(vertx, store, config, state, 0, () -> 0, clock::nanoTime);
      coalescer.start();
      return new WritePath(coalescer, new IdempotentIncrements(vertx, config, state.keysInFlight(), new SimpleMeterRegistry(),
        keyedStatements, clock::millis), (type, id) -> {
          valuesRead.add(id);
          return Future.succeededFuture(store.value(type, id));
        }, store, state.taken());
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
    assertThat(state.taken().taken("likes")).as("a single committed increment is taken too").isEqualTo(1);
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

  /** An ack settled as {@code settle} says, for the rule alone. */
  private static Ack settled(java.util.function.Consumer<Ack> settle) {
    Ack ack = new Ack(new CounterKey("likes", "a"), 1, 0);
    settle.accept(ack);
    return ack;
  }

  private static Ack committedAck() {
    return settled(Ack::committed);
  }

  private static Ack refusedAck(ApiError refusal) {
    return settled(ack -> ack.failed(refusal));
  }

  private static final ApiError OVERLOADED = ApiError.unavailable("overloaded", "full");
  private static final ApiError WITHDRAWN = ApiError.unavailable("timeout_withdrawn", "withdrawn");
  private static final ApiError OVERFLOW = new ApiError(422, "counter_overflow", "too large", "delta");

  @Test
  @DisplayName("the rule: of parts none of which can have been counted, the refusal a retry would not cure is answered, else the first")
  void refusalAnsweredWhenNothingCounted() {
    assertThat(WritePath.answerOf(List.of(refusedAck(OVERLOADED), refusedAck(OVERFLOW))).refusal()).isSameAs(OVERFLOW);
    assertThat(WritePath.answerOf(List.of(refusedAck(OVERFLOW), refusedAck(OVERLOADED))).refusal()).isSameAs(OVERFLOW);
    assertThat(WritePath.answerOf(List.of(refusedAck(OVERLOADED), refusedAck(WITHDRAWN))).refusal())
      .isSameAs(OVERLOADED);
    ApiError tooLarge = new ApiError(413, "batch_too_large", "too many", "body");
    assertThat(WritePath.answerOf(List.of(refusedAck(tooLarge))).refusal()).isSameAs(tooLarge);
    ApiError writeFailed = new ApiError(500, "write_failed", "refused", null);
    WriteAnswer failed = WritePath.answerOf(List.of(refusedAck(writeFailed), refusedAck(OVERLOADED)));
    assertThat(failed.status()).isEqualTo(500);
    assertThat(failed.refusal()).isSameAs(writeFailed);
  }

  @Test
  @DisplayName("the rule: every part committed is 200; a part counted or maybe counted beside a refused one is 504 outcome_unknown")
  void outcomeUnknownWhenAnyPartMayBeCounted() {
    assertThat(WritePath.answerOf(List.of(committedAck(), committedAck()))).isEqualTo(WriteAnswer.COMMITTED);
    WriteAnswer partCounted = WritePath.answerOf(List.of(committedAck(), refusedAck(OVERLOADED)));
    assertThat(partCounted.status()).isEqualTo(504);
    assertThat(partCounted.refusal().getMessage()).isEqualTo(WritePath.outcomeUnknown().getMessage());
    ApiError unlisted = new ApiError(500, "internal_error", "", null);
    WriteAnswer maybeCounted = WritePath.answerOf(List.of(refusedAck(OVERFLOW), refusedAck(unlisted)));
    assertThat(maybeCounted.status()).isEqualTo(504);
    assertThat(maybeCounted.refusal().getMessage()).isEqualTo(WritePath.outcomeUnknown().getMessage());
    assertThat(WritePath.answerOf(List.of(refusedAck(unlisted))).refusal().getMessage())
      .as("one part, an error nobody listed").isEqualTo(WritePath.outcomeUnknown().getMessage());
  }

  @Test
  @DisplayName("the rule: a single part timed out in flight is answered its own 504; two such parts, the batch's 504")
  void timedOutInFlight() {
    Ack timedOut = settled(Ack::timedOutInFlight);
    WriteAnswer single = WritePath.answerOf(List.of(timedOut));
    assertThat(single.status()).isEqualTo(504);
    assertThat(single.refusal()).isSameAs(timedOut.future().cause());

    WriteAnswer batch = WritePath.answerOf(List.of(settled(Ack::timedOutInFlight), settled(Ack::timedOutInFlight)));
    assertThat(batch.status()).isEqualTo(504);
    assertThat(batch.refusal().getMessage()).isEqualTo(WritePath.outcomeUnknown().getMessage());
  }

  @Test
  @DisplayName("the rule: a 413 proves nothing was written; a 400 or a 500 other than write_failed does not")
  void provenNotCountedEdges() {
    assertThat(WritePath.provenNotCounted(new ApiError(413, "batch_too_large", "", "body"))).isTrue();
    assertThat(WritePath.provenNotCounted(new ApiError(400, "invalid", "", "delta"))).isFalse();
    assertThat(WritePath.provenNotCounted(new ApiError(500, "pool_closed", "", null))).isFalse();
  }

  @Test
  @DisplayName("an accepted batch is 202 and each of its counters written; an empty batch is answered as asked, nothing written")
  void acceptedBatchAndEmptyBatch() {
    WriteAnswer batch = submit(WriteRequest.of(List.of(increment("a", 2), increment("b", 5)), AckMode.ACCEPTED));
    assertThat(submit(WriteRequest.of(List.of(), AckMode.COMMIT)).status()).isEqualTo(200);
    assertThat(submit(WriteRequest.of(List.of(), AckMode.ACCEPTED)).status()).isEqualTo(202);
    EventLoop.call(loop, () -> writes.drain()).toCompletionStage().toCompletableFuture().join();

    assertThat(batch.status()).isEqualTo(202);
    assertThat(store.value("likes", "a")).isEqualTo(2);
    assertThat(store.value("likes", "b")).isEqualTo(5);
    assertThat(state.taken().taken("likes")).isEqualTo(2);
    assertThat(state.taken().values("likes")).isEqualTo(7);
  }

  @Test
  @DisplayName("a single increment refused (the coalescer stopping) is that refusal, and add-and-get reads no value for it")
  void refusedAddAndGetReadsNothing() {
    EventLoop.call(loop, () -> writes.drain()).toCompletionStage().toCompletableFuture().join();

    WriteAnswer answer = submit(WriteRequest.of(increment("a", 3), AckMode.COMMIT).returningValue(true));
    WriteAnswer batch = submit(WriteRequest.of(List.of(increment("a", 1), increment("b", 1)), AckMode.COMMIT));

    assertThat(answer.status()).isEqualTo(503);
    assertThat(answer.value()).isNull();
    assertThat(valuesRead).isEmpty();
    assertThat(batch.refusal().code()).isEqualTo("shutting_down");
    assertThat(state.taken().taken("likes")).as("nothing taken").isZero();
  }

  @Test
  @DisplayName("a committed single increment refused a value is 422; one whose flush timed out in flight is 504")
  void singleIncrementRefusedOrTimedOut() {
    store.refuseRows(row -> row.id().equals("full"));
    WriteAnswer refused = submit(WriteRequest.of(increment("full", 1), AckMode.COMMIT));
    assertThat(refused.status()).isEqualTo(422);
    assertThat(refused.refusal().code()).isEqualTo("counter_overflow");

    store.then(new Hold());
    Future<WriteAnswer> pending = EventLoop.call(loop, () -> writes.submit(WriteRequest.of(increment("a", 1),
      AckMode.COMMIT)));
    clock.advance(Duration.ofSeconds(11));
    WriteAnswer timedOut = pending.toCompletionStage().toCompletableFuture().join();
    EventLoop.call(loop, store::release);
    assertThat(timedOut.status()).isEqualTo(504);
    assertThat(timedOut.refusal().getMessage()).contains("being written when the request timed out");
  }

  @Test
  @DisplayName("with an idempotency key: 200 with the stored body, a repeat is that answer replayed and not counted again")
  void keyedCommit() {
    WriteRequest request = WriteRequest.of(List.of(increment("a", 2), increment("b", 1)), AckMode.COMMIT)
      .withIdempotencyKey("k1", "{\"first\":true}");

    WriteAnswer first = submit(request);
    assertThat(state.taken().taken("likes")).as("taken once written").isEqualTo(2);
    WriteAnswer repeat = submit(request);

    assertThat(first.status()).isEqualTo(200);
    assertThat(first.storedBody()).isEqualTo("{\"first\":true}");
    assertThat(first.replayed()).isFalse();
    assertThat(repeat.status()).isEqualTo(200);
    assertThat(repeat.replayed()).isTrue();
    assertThat(repeat.storedBody()).isEqualTo("{\"first\":true}");
    assertThat(store.value("likes", "a")).isEqualTo(2);
    assertThat(state.taken().taken("likes")).as("the repeat is not taken again").isEqualTo(2);
    assertThat(state.taken().values("likes")).isEqualTo(3);
  }

  @Test
  @DisplayName("with an idempotency key: accepted is 202, a key reused for another request is 422, and add-and-get reads the value")
  void keyedAcceptedReusedAndValue() {
    WriteAnswer accepted = submit(WriteRequest.of(increment("a", 2), AckMode.ACCEPTED).withIdempotencyKey("k1", "{}"));
    WriteAnswer reused = submit(WriteRequest.of(increment("a", 5), AckMode.COMMIT).withIdempotencyKey("k1", "{}"));
    WriteAnswer withValue = submit(WriteRequest.of(increment("b", 4), AckMode.COMMIT).returningValue(true)
      .withIdempotencyKey("k2", "{}"));
    EventLoop.call(loop, () -> writes.drain()).toCompletionStage().toCompletableFuture().join();

    assertThat(accepted.status()).isEqualTo(202);
    assertThat(reused.status()).isEqualTo(422);
    assertThat(reused.refusal().code()).isEqualTo("idempotency_key_reused");
    assertThat(withValue.status()).isEqualTo(200);
    assertThat(withValue.value()).isEqualTo(4);
    assertThat(valuesRead).containsExactly("b");
    assertThat(store.value("likes", "a")).isEqualTo(2);
    assertThat(keyedClosed).as("the drain closed the keyed statements' pool").isTrue();
  }

  @Test
  @DisplayName("a drain waits for keyed requests still being written, then closes; what they carry is counted")
  void drainWaitsForKeyedRequests() throws Exception {
    keyedHeld = io.vertx.core.Promise.promise();
    Future<WriteAnswer> keyedAnswer = EventLoop.call(loop, () -> writes.submit(WriteRequest.of(increment("k", 2),
      AckMode.COMMIT).withIdempotencyKey("k1", "{}")));
    submit(WriteRequest.of(increment("a", 1), AckMode.COMMIT));

    Future<Void> drained = EventLoop.call(loop, () -> writes.drain());
    assertThat(EventLoop.call(loop, drained::isComplete)).as("a keyed request is still being written").isFalse();
    EventLoop.call(loop, () -> keyedHeld.tryComplete());

    drained.toCompletionStage().toCompletableFuture().join();
    assertThat(keyedAnswer.toCompletionStage().toCompletableFuture().join().status()).isEqualTo(200);
    assertThat(store.value("likes", "k")).isEqualTo(2);
    assertThat(keyedClosed).isTrue();
    assertThat(EventLoop.call(loop, () -> writes.close()).toCompletionStage().toCompletableFuture()
      .get(TestBounds.millis(10), TimeUnit.MILLISECONDS)).isNull();
  }
}
