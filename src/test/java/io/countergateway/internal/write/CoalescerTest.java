package io.countergateway.internal.write;

import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.MemoryBounds.Bound;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.PinnedBounds;
import io.countergateway.testing.ScriptedStore;
import io.countergateway.testing.SettableClock;
import io.countergateway.testing.ScriptedStore.CommitThenLoseAnswer;
import io.countergateway.testing.ScriptedStore.Fail;
import io.countergateway.testing.ScriptedStore.Hold;
import io.countergateway.testing.TestBounds;
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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The coalescer and its flush writer on a {@link ScriptedStore}: the cases of the "never lost, never twice" issue in
 * milliseconds, without a database. The contract and fault tests check the same promises on real databases.
 */
@DisplayName("The coalescer and flush writer, on a scripted store")
class CoalescerTest {
  private Vertx vertx;
  private Context loop;
  private ScriptedStore store;
  private GatewayState state;
  /** The coalescer's time: tests move it instead of waiting for it. */
  private SettableClock clock;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
    store = new ScriptedStore();
    state = new GatewayState();
    clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(TestBounds.millis(10), TimeUnit.MILLISECONDS);
  }

  private static JsonObject config() {
    return new JsonObject()
      .put("batching", new JsonObject().put("maxDelay", "1ms").put("maxInFlight", 1).put("retryBackoff", "1ms").put("retryBackoffMax", "5ms"))
      .put("limits", new JsonObject().put("requestTimeout", "10s"))
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4)));
  }

  private Coalescer coalescer(JsonObject config) {
    return coalescer(config, Map.of());
  }

  /** {@code bounds}: the coalescer's bounds pinned, in place of what the test JVM's heap gives. */
  private Coalescer coalescer(JsonObject config, Map<Bound, Long> bounds) {
    GatewayConfig options = PinnedBounds.with(bounds, () -> GatewayConfig.fromJson(config));
    return onLoop(() -> {
      Coalescer coalescer = new Coalescer(vertx, store, options, state, 0, () -> 0, clock::nanoTime);
      coalescer.start();
      return coalescer;
    });
  }

  private <T> T onLoop(Callable<T> work) {
    return EventLoop.call(loop, work);
  }

  /** Waits for a future completed on the loop; returns its failure, or null on success. */
  private static Throwable outcome(Future<?> future) {
    try {
      future.toCompletionStage().toCompletableFuture().get(TestBounds.millis(20), TimeUnit.MILLISECONDS);
      return null;
    } catch (java.util.concurrent.ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static Increment increment(String id, long delta) {
    return new Increment(new CounterKey("likes", id), delta);
  }


  @Test
  @DisplayName("on virtual time: a pending delta is flushed once batching.maxDelay has passed on the clock, and an outage's retry waits for its backoff")
  void onVirtualTime() {
    VirtualTimers timers = new VirtualTimers();
    GatewayConfig options = GatewayConfig.fromJson(config().put("batching", new JsonObject().put("maxDelay", "50ms")
      .put("retryBackoff", "200ms").put("retryBackoffMax", "200ms")));
    store.then(new Fail(ScriptedStore.connectionLost()));
    Coalescer coalescer = onLoop(() -> {
      Coalescer onTimers = new Coalescer(vertx, store, options, state, 0, () -> 0, timers::nanoTime, null, timers::currentTimeMillis,
        FlushSources.TICK_MS, timers);
      onTimers.start();
      return onTimers;
    });
    onLoop(() -> coalescer.accept(increment("a", 1)));
    LongConsumer move = ms -> onLoop(() -> {
      timers.advance(ms);
      return null;
    });
    move.accept(49);
    assertThat(store.attempts).as("batching.maxDelay is not over").isEmpty();
    move.accept(1);
    assertThat(store.attempts).as("flushed, and failed").hasSize(1);
    move.accept(99);
    assertThat(store.attempts).as("the backoff is at least half of 200 ms").hasSize(1);
    move.accept(101);
    assertThat(store.attempts).hasSize(2);
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(onLoop(coalescer::countersHeld)).isZero();
  }

  @Test
  @DisplayName("a flush split down to its refused row, then 100 committing flushes: every id is new, every 200 counted")
  void splitThenManyFlushes() {
    store.refuseRows(row -> row.id().equals("full"));
    Coalescer coalescer = coalescer(config());
    List<Ack> first = onLoop(() -> coalescer.addAll(List.of(increment("full", 1_000), increment("other", 1),
      increment("third", 1), increment("fourth", 1)), true));
    List<Throwable> firstOutcomes = first.stream().map(ack -> outcome(ack.future())).toList();
    for (int i = 0; i < 100; i++) {
      Ack ack = onLoop(() -> coalescer.add(increment("z", 1), true));
      assertThat(outcome(ack.future())).as("commit %d of z", i).isNull();
    }

    assertThat(firstOutcomes.stream().filter(e -> e instanceof ApiError error && error.status() == 422)).hasSize(1);
    assertThat(firstOutcomes.stream().filter(e -> e == null)).hasSize(3);
    assertThat(store.value("likes", "z")).isEqualTo(100);
    assertThat(store.value("likes", "other")).isEqualTo(1);
    assertThat(store.value("likes", "full")).isZero();
    assertThat(store.committedIds).as("ids of committed flushes are all different").hasSize(store.commits);
    assertThat(store.attempts.stream().map(Flush::id).filter(FlushId::isSplit).map(FlushId::toString))
      .as("split halves").isNotEmpty().allMatch(id -> id.matches(".*:[0-9a-z]+\\.[01]+"));
  }

  @Test
  @DisplayName("the bucket is part of a counter's key: one flush carries each bucket of a counter as its own row, in lock order")
  void bucketsOfOneCounterAreRowsOfOneFlush() {
    Coalescer coalescer = coalescer(config());
    List<Ack> acks = onLoop(() -> coalescer.addAll(List.of(new Increment(new CounterKey("likes", "a", 7_200), 2),
      new Increment(new CounterKey("likes", "a", 3_600), 1), new Increment(new CounterKey("likes", "a"), 5)), true));
    acks.forEach(ack -> assertThat(outcome(ack.future())).isNull());

    assertThat(store.attempts).hasSize(1);
    assertThat(store.attempts.get(0).rows()).extracting(FlushRow::bucket, FlushRow::delta).containsExactly(
      tuple(CounterKey.PLAIN, 5L), tuple(3_600L, 1L),
      tuple(7_200L, 2L));
  }

  @Test
  @DisplayName("an ambiguous commit followed by an error nobody listed is retried under the same id: counted once, never split")
  void ambiguousThenUnlistedError() {
    store.then(new CommitThenLoseAnswer(), new Fail(ScriptedStore.sqlState("25006")),
      new Fail(new IllegalStateException("an error nobody listed")));
    Coalescer coalescer = coalescer(config());
    Ack ack = onLoop(() -> coalescer.add(increment("a", 1), true));

    assertThat(outcome(ack.future())).isNull();
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(store.attempts).hasSize(4);
    assertThat(store.attempts.stream().map(Flush::id).distinct()).hasSize(1);
    assertThat(store.attempts.stream().map(flush -> flush.rows().get(0).slot()).distinct())
      .as("retries move to other slots").hasSizeGreaterThan(1);
  }

  @Test
  @DisplayName("an outage marks the writer failing (readiness 503) until a retry lands")
  void outageFailsReadinessUntilItLands() {
    store.then(new Fail(ScriptedStore.sqlState("57014")), new Hold());
    Coalescer coalescer = coalescer(config());
    Ack ack = onLoop(() -> coalescer.add(increment("a", 1), true));
    outcome(onLoop(() -> store.whenHeld(1)));
    assertThat(state.writersHealthy()).isFalse();
    onLoop(store::release);
    assertThat(outcome(ack.future())).isNull();
    assertThat(state.writersHealthy()).isTrue();
  }

  @Test
  @DisplayName("a request timing out while its increment is pending gets 503 and is not counted; in a flush under way, 504")
  void timeoutWhilePendingOrInFlight() {
    JsonObject config = config();
    store.then(new Hold());
    Coalescer coalescer = coalescer(config);
    Ack inFlight = onLoop(() -> coalescer.add(increment("a", 1), true));
    Ack pending = onLoop(() -> coalescer.add(increment("a", 1), true));
    clock.advance(Duration.ofSeconds(11)); // past limits.requestTimeout: the next sweep expires them

    Throwable pendingOutcome = outcome(pending.future());
    Throwable inFlightOutcome = outcome(inFlight.future());
    onLoop(store::release);
    onLoop(coalescer::drain).toCompletionStage().toCompletableFuture().join();

    assertThat(pendingOutcome).isInstanceOfSatisfying(ApiError.class, e -> {
      assertThat(e.status()).isEqualTo(503);
      assertThat(e.code()).isEqualTo("timeout_withdrawn");
    });
    assertThat(inFlightOutcome).isInstanceOfSatisfying(ApiError.class, e -> {
      assertThat(e.status()).isEqualTo(504);
      assertThat(e.code()).isEqualTo("outcome_unknown");
    });
    assertThat(store.value("likes", "a")).as("only the in-flight increment").isEqualTo(1);
  }

  @Test
  @DisplayName("50,000 waiting requests on one hot counter expiring together are all withdrawn, none counted")
  void manyWaitersExpire() {
    store.then(new Hold());
    Coalescer coalescer = coalescer(config(), Map.of(Bound.WAITING_REQUESTS, 60_000L));
    Ack inFlight = onLoop(() -> coalescer.add(increment("hot", 1), true));
    List<Ack> waiters = onLoop(() -> {
      List<Ack> acks = new ArrayList<>();
      IntStream.range(0, 50_000).forEach(i -> acks.add(coalescer.add(increment("hot", 1), true)));
      return acks;
    });
    clock.advance(Duration.ofSeconds(11)); // past limits.requestTimeout: the next sweep expires them

    List<Throwable> outcomes = waiters.stream().map(ack -> outcome(ack.future())).toList();
    onLoop(store::release);
    assertThat(outcome(inFlight.future())).isInstanceOf(ApiError.class);
    onLoop(coalescer::drain).toCompletionStage().toCompletableFuture().join();

    assertThat(outcomes).allMatch(e -> e instanceof ApiError error && error.code().equals("timeout_withdrawn"));
    assertThat(store.value("likes", "hot")).isEqualTo(1);
    assertThat(onLoop(coalescer::pendingKeys)).isZero();
  }

  @Test
  @DisplayName("increments that cancel out are answered when their flush is formed, and never inherit another counter's refusal")
  void cancelledDeltasAnsweredAtOnce() {
    store.then(new Hold()).refuseRows(row -> row.id().equals("full"));
    Coalescer coalescer = coalescer(config());
    Ack blocker = onLoop(() -> coalescer.add(increment("blocker", 1), true));
    List<Ack> acks = onLoop(() -> List.of(coalescer.add(increment("x", 5), true), coalescer.add(increment("x", -5), true),
      coalescer.add(increment("full", 1), true)));
    onLoop(store::release);

    assertThat(outcome(blocker.future())).isNull();
    assertThat(outcome(acks.get(0).future())).isNull();
    assertThat(outcome(acks.get(1).future())).isNull();
    assertThat(outcome(acks.get(2).future())).isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status()).isEqualTo(422));
    assertThat(store.attempts.stream().flatMap(f -> f.rows().stream()).map(FlushRow::id)).doesNotContain("x");
  }

  @Test
  @DisplayName("a batch is taken whole, then flushed: one flush carries all of its counters")
  void batchTravelsInOneFlush() {
    Coalescer coalescer = coalescer(config());
    List<Increment> batch = IntStream.range(0, 50).mapToObj(i -> increment("c" + i, 1)).toList();
    List<Ack> acks = onLoop(() -> coalescer.addAll(batch, true));
    acks.forEach(ack -> assertThat(outcome(ack.future())).isNull());

    assertThat(store.attempts).hasSize(1);
    assertThat(store.attempts.get(0).rows()).hasSize(50);
  }

  @Test
  @DisplayName("a batch larger than a coalescer can ever hold gets 413 and does not make the gateway shed")
  void batchThatCanNeverFit() {
    JsonObject config = config();
    config.getJsonObject("batching").put("maxKeys", 10);
    config.getJsonObject("limits").put("maxBatchIncrements", 10);
    Coalescer coalescer = coalescer(config, Map.of(Bound.PENDING_KEYS, 10L, Bound.WAITING_REQUESTS, 10L));
    List<Increment> batch = IntStream.range(0, 11).mapToObj(i -> increment("c" + i, 1)).toList();

    assertThatThrownBy(() -> onLoop(() -> coalescer.addAll(batch, true)))
      .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status()).isEqualTo(413));
    assertThat(state.writersHealthy()).isTrue();
    assertThat(store.attempts).isEmpty();
  }

  @Test
  @DisplayName("readiness stays 503 while waiting requests are at the limit, though a flush starts, and recovers when room is made")
  void noFlapWhileWaitingAtLimit() {
    JsonObject config = config();
    config.getJsonObject("batching").put("maxInFlight", 2).put("maxDelay", "50ms");
    config.getJsonObject("limits").put("maxBatchIncrements", 3);
    store.then(new Hold(), new Hold());
    Coalescer coalescer = coalescer(config, Map.of(Bound.WAITING_REQUESTS, 3L));
    List<Ack> acks = onLoop(() -> List.of(coalescer.add(increment("a", 1), true), coalescer.add(increment("b", 1), true),
      coalescer.add(increment("c", 1), true)));
    assertThatThrownBy(() -> onLoop(() -> coalescer.add(increment("d", 1), true)))
      .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status()).isEqualTo(503));
    assertThat(state.writersHealthy()).isFalse();
    // the second flush starts (its maxDelay timer) while the three requests still wait
    outcome(onLoop(() -> store.whenHeld(2)));
    assertThat(state.writersHealthy()).as("ready while still at the limit").isFalse();

    onLoop(store::release);
    onLoop(store::release);
    acks.forEach(ack -> assertThat(outcome(ack.future())).isNull());
    assertThat(state.writersHealthy()).isTrue();
  }

  @Test
  @DisplayName("a call from a thread other than its event loop is refused, not a silent race")
  void confinementIsChecked() {
    Coalescer coalescer = coalescer(config());
    assertThatThrownBy(() -> coalescer.add(increment("a", 1), false)).isInstanceOf(IllegalStateException.class);
  }
}
