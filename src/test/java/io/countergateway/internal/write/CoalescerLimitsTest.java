package io.countergateway.internal.write;

import io.countergateway.config.ConfigException;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.MemoryBounds.Bound;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.internal.write.journal.Journal;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.PinnedBounds;
import io.countergateway.testing.ScriptedStore;
import io.countergateway.testing.ScriptedStore.Hold;
import io.countergateway.testing.TestBounds;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The coalescer's bounds, timers and meters on virtual time and a {@link ScriptedStore}: when a flush starts, what a
 * full coalescer refuses and when it sheds, when a waiting request is answered, and what its meters count. Each test
 * runs on one event loop and moves the time itself, so nothing waits.
 */
@DisplayName("The coalescer's bounds, timers and meters, on virtual time")
class CoalescerLimitsTest {
  private static Vertx vertx;
  private Context loop;
  private final ScriptedStore store = new ScriptedStore();
  private final GatewayState state = new GatewayState();
  private final VirtualTimers timers = new VirtualTimers();
  private Coalescer coalescer;

  @BeforeAll
  static void startVertx() {
    vertx = Vertx.vertx();
  }

  @AfterAll
  static void closeVertx() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(TestBounds.millis(10), TimeUnit.MILLISECONDS);
  }

  @BeforeEach
  void setUp() {
    loop = vertx.getOrCreateContext();
  }

  /** batching.maxDelay 50 ms, one flush in flight, a request timeout of {@code timeout}. */
  private static JsonObject config(String timeout) {
    return new JsonObject()
      .put("batching", new JsonObject().put("maxDelay", "50ms").put("maxInFlight", 1).put("retryBackoff", "1ms").put("retryBackoffMax", "5ms"))
      .put("limits", new JsonObject().put("requestTimeout", timeout))
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4)));
  }

  private static JsonObject config() {
    return config("10s");
  }

  private Coalescer start(JsonObject config, Map<Bound, Long> bounds) {
    GatewayConfig options = PinnedBounds.with(bounds, () -> GatewayConfig.fromJson(config));
    coalescer = onLoop(() -> {
      Coalescer started = new Coalescer(vertx, store, options, state, 0, () -> 0, timers::nanoTime, null,
        timers::currentTimeMillis, FlushSources.TICK_MS, timers);
      started.start();
      return started;
    });
    return coalescer;
  }

  private <T> T onLoop(Callable<T> work) {
    return EventLoop.call(loop, work);
  }

  private void advance(long ms) {
    onLoop(() -> {
      timers.advance(ms);
      return null;
    });
  }

  private void accept(String id, long delta) {
    onLoop(() -> coalescer.accept(increment(id, delta)));
  }

  private Ack waitFor(String id, long delta) {
    return onLoop(() -> coalescer.add(increment(id, delta), true));
  }

  private void release() {
    onLoop(store::release);
  }

  private static Increment increment(String id, long delta) {
    return new Increment(new CounterKey("likes", id), delta);
  }

  /** The refusal {@code take} throws on the loop; fails the test when it takes the increment instead. */
  private ApiError refusal(Callable<?> take) {
    Throwable[] thrown = {null};
    assertThatThrownBy(() -> onLoop(take)).isInstanceOfSatisfying(ApiError.class, refused -> thrown[0] = refused);
    return (ApiError) thrown[0];
  }

  /** Null while unanswered or committed; the refusal once refused. */
  private static ApiError answer(Ack ack) {
    return ack.future().failed() ? (ApiError) ack.future().cause() : null;
  }

  private double meter(SimpleMeterRegistry registry, String name) {
    return registry.get(name).tag("verticle", "3").meter().measure().iterator().next().getValue();
  }

  @Test
  @DisplayName("the meters count increments taken and refused, flushes and their rows, counters pending and requests waiting")
  void meters() {
    store.then(new Hold());
    start(config(), Map.of(Bound.PENDING_KEYS, 2L));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    onLoop(() -> {
      coalescer.registerMetrics(registry, 3);
      return null;
    });
    accept("a", 1);
    accept("a", 2);
    Ack b = waitFor("b", 1);
    accept("c", 1);
    accept("d", 1);
    assertThat(refusal(() -> coalescer.accept(increment("e", 1))).status()).isEqualTo(503);

    assertThat(meter(registry, "gateway.increments.taken")).isEqualTo(5);
    assertThat(meter(registry, "gateway.increments.refused")).isEqualTo(1);
    assertThat(meter(registry, "gateway.flushes")).as("a and b, held by the database").isEqualTo(1);
    assertThat(meter(registry, "gateway.flush.rows")).isEqualTo(2);
    assertThat(meter(registry, "gateway.pending.counters")).as("c and d").isEqualTo(2);
    assertThat(meter(registry, "gateway.waiting.requests")).isEqualTo(1);
    assertThat(meter(registry, "gateway.flushes.held.replication")).isZero();
    assertThat(onLoop(coalescer::countersHeld)).as("two in flight, two pending").isEqualTo(4);

    release();
    advance(50);

    assertThat(b.future().succeeded()).isTrue();
    assertThat(meter(registry, "gateway.flushes")).isEqualTo(2);
    assertThat(meter(registry, "gateway.flush.rows")).isEqualTo(4);
    assertThat(meter(registry, "gateway.pending.counters")).isZero();
    assertThat(meter(registry, "gateway.waiting.requests")).isZero();
    assertThat(onLoop(coalescer::countersHeld)).isZero();
    assertThat(List.of(store.value("likes", "a"), store.value("likes", "b"), store.value("likes", "c"),
      store.value("likes", "d"), store.value("likes", "e"))).containsExactly(3L, 1L, 1L, 1L, 0L);
    onLoop(() -> coalescer.drain());
    assertThat(refusal(() -> coalescer.accept(increment("e", 1))).code()).isEqualTo("shutting_down");
    assertThat(meter(registry, "gateway.increments.refused")).as("refused while stopping too").isEqualTo(2);
  }

  @Test
  @DisplayName("a counter's pending delta takes an increment that reaches the 64-bit limit and refuses one past it, in either sign")
  void pendingDeltaAtItsLimit() {
    start(config(), Map.of());
    accept("up", Long.MAX_VALUE - 1);
    accept("up", 1);
    accept("down", Long.MIN_VALUE + 1);
    onLoop(() -> coalescer.acceptAll(List.of(increment("down", -1))));

    ApiError past = refusal(() -> coalescer.accept(increment("up", 1)));
    assertThat(past.status()).isEqualTo(503);
    assertThat(past.getMessage()).contains("pending delta is at its limit");
    assertThat(refusal(() -> coalescer.add(increment("down", -1), true)).status()).isEqualTo(503);
    assertThat(refusal(() -> coalescer.addAll(List.of(increment("new", 1), increment("up", 1)), false)).status())
      .isEqualTo(503);
    assertThat(refusal(() -> coalescer.acceptAll(List.of(increment("new", 1), increment("down", -1)))).status())
      .isEqualTo(503);
    assertThat(onLoop(coalescer::pendingKeys)).as("nothing of a refused batch is taken").isEqualTo(2);

    advance(50);
    assertThat(store.value("likes", "up")).isEqualTo(Long.MAX_VALUE);
    assertThat(store.value("likes", "down")).isEqualTo(Long.MIN_VALUE);
    assertThat(store.value("likes", "new")).isZero();
  }

  @Test
  @DisplayName("counters fill the coalescer exactly to its bound; the next new counter is refused 503 and sheds, an increment of a pending one still fits")
  void pendingKeysBound() {
    store.then(new Hold());
    start(config(), Map.of(Bound.PENDING_KEYS, 3L));
    onLoop(() -> coalescer.acceptAll(List.of(increment("a", 1), increment("b", 1), increment("c", 1))));
    assertThat(state.writersHealthy()).as("full, but nothing refused yet").isTrue();
    accept("a", 1);

    ApiError full = refusal(() -> coalescer.accept(increment("d", 1)));
    assertThat(full.status()).isEqualTo(503);
    assertThat(full.getMessage()).isEqualTo("too many counters are waiting to be written; retry shortly");
    assertThat(state.writersHealthy()).as("not even one more counter fits: shed").isFalse();
    assertThat(refusal(() -> coalescer.add(increment("d", 1), false)).status()).isEqualTo(503);
    assertThat(refusal(() -> coalescer.addAll(List.of(increment("d", 1)), false)).status()).isEqualTo(503);
    onLoop(() -> coalescer.addAll(List.of(increment("a", 1), increment("b", 1)), false));

    advance(50);
    assertThat(state.writersHealthy()).as("the flush, though still in flight, made room").isTrue();
    release();
    assertThat(store.value("likes", "a")).isEqualTo(3);
  }

  @Test
  @DisplayName("a batch that does not fit in what is left is refused 503 without shedding, and takes nothing; one that fits is taken")
  void batchLargerThanWhatIsLeft() {
    start(config(), Map.of(Bound.PENDING_KEYS, 3L));
    accept("a", 1);

    assertThat(refusal(() -> coalescer.acceptAll(List.of(increment("b", 1), increment("c", 1), increment("d", 1))))
      .status()).isEqualTo(503);
    assertThat(state.writersHealthy()).as("a single counter still fits: no shed").isTrue();
    assertThat(onLoop(coalescer::pendingKeys)).isEqualTo(1);
    onLoop(() -> coalescer.addAll(List.of(increment("b", 1), increment("c", 1)), false));

    advance(50);
    assertThat(store.attempts).hasSize(1);
    assertThat(store.attempts.get(0).rows()).extracting(FlushRow::id).containsExactly("a", "b", "c");
  }

  @Test
  @DisplayName("waiting requests fill the coalescer exactly to their bound; one more is refused 503 naming the waiting requests")
  void waitingRequestsBound() {
    store.then(new Hold());
    start(config(), Map.of(Bound.WAITING_REQUESTS, 3L, Bound.PENDING_KEYS, 10L));
    Ack blocker = waitFor("blocker", 1);
    List<Ack> batch = onLoop(() -> coalescer.addAll(List.of(increment("a", 1), increment("b", 1)), true));

    ApiError full = refusal(() -> coalescer.add(increment("a", 1), true));
    assertThat(full.status()).isEqualTo(503);
    assertThat(full.getMessage()).isEqualTo("too many requests are waiting for a commit; retry shortly");
    assertThat(state.writersHealthy()).isFalse();
    accept("a", 1);

    release();
    advance(1);
    assertThat(blocker.future().succeeded()).isTrue();
    assertThat(batch).allMatch(ack -> ack.future().succeeded());
    assertThat(state.writersHealthy()).isTrue();
    assertThat(store.value("likes", "a")).isEqualTo(2);
  }

  @Test
  @DisplayName("a batch of exactly as many counters and waiting requests as a coalescer may hold is taken; one more is 413 naming that size")
  void batchAtTheBound() {
    start(config(), Map.of(Bound.WAITING_REQUESTS, 2L, Bound.PENDING_KEYS, 3L));
    List<Ack> two = onLoop(() -> coalescer.addAll(List.of(increment("a", 1), increment("b", 1)), true));
    assertThat(two).allMatch(ack -> ack.future().succeeded());
    onLoop(() -> coalescer.acceptAll(List.of(increment("c", 1), increment("d", 1), increment("e", 1))));

    ApiError tooLarge = refusal(() -> coalescer.acceptAll(List.of(increment("f", 1), increment("g", 1),
      increment("h", 1), increment("i", 1))));
    assertThat(tooLarge.status()).isEqualTo(413);
    assertThat(tooLarge.getMessage()).contains("(2)");
    assertThat(refusal(() -> coalescer.addAll(List.of(increment("c", 1), increment("d", 1), increment("e", 1)), true))
      .status()).isEqualTo(413);
    assertThat(state.writersHealthy()).isTrue();
  }

  @Test
  @DisplayName("a flush starts as soon as batching.maxKeys counters are pending, and a new counter after it waits a whole maxDelay")
  void maxKeysStartsAFlush() {
    start(config().put("batching", config().getJsonObject("batching").put("maxKeys", 2)), Map.of());
    accept("a", 1);
    assertThat(store.attempts).isEmpty();
    accept("b", 1);
    assertThat(store.attempts).as("two counters pending: at once").hasSize(1);

    advance(10);
    accept("c", 1);
    advance(49);
    assertThat(store.attempts).as("c waited 49 ms").hasSize(1);
    advance(1);
    assertThat(store.attempts).hasSize(2);
    assertThat(store.attempts.get(1).rows()).extracting(FlushRow::id).containsExactly("c");
  }

  @Test
  @DisplayName("after a flush settles, the next one waits what is left of maxDelay for its oldest pending delta, or none once it is over")
  void nextFlushWaitsTheRestOfMaxDelay() {
    store.then(new Hold(), new Hold());
    start(config(), Map.of());
    accept("a", 1);
    advance(50);
    assertThat(store.attempts).hasSize(1);
    advance(10);
    accept("b", 1);
    advance(20);
    release();
    advance(29);
    assertThat(store.attempts).as("b pending for 49 ms").hasSize(1);
    advance(1);
    assertThat(store.attempts).hasSize(2);

    accept("c", 1);
    advance(50);
    assertThat(store.attempts).as("a flush in flight: c waits for it").hasSize(2);
    release();
    assertThat(store.attempts).as("c's maxDelay is over: at once").hasSize(3);
    assertThat(store.value("likes", "c")).isEqualTo(1);
  }

  @Test
  @DisplayName("a waiting request is answered at its deadline: withdrawn (503) while pending, taking back only its own delta")
  void withdrawnAtItsDeadline() {
    store.then(new Hold());
    start(config("250ms"), Map.of(Bound.WAITING_REQUESTS, 3L));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    onLoop(() -> {
      coalescer.registerMetrics(registry, 3);
      return null;
    });
    Ack blocker = waitFor("blocker", 1);
    accept("a", 5);
    Ack a = waitFor("a", 1);
    Ack b = waitFor("b", 1);
    assertThat(refusal(() -> coalescer.add(increment("c", 1), true)).status()).isEqualTo(503);
    assertThat(state.writersHealthy()).isFalse();

    advance(249);
    assertThat(a.future().isComplete()).isFalse();
    advance(1);

    assertThat(answer(a).code()).isEqualTo("timeout_withdrawn");
    assertThat(answer(b).code()).isEqualTo("timeout_withdrawn");
    assertThat(answer(blocker).status()).as("in flight at its deadline").isEqualTo(504);
    assertThat(onLoop(coalescer::pendingKeys)).as("b had nothing else pending: gone").isEqualTo(1);
    assertThat(meter(registry, "gateway.waiting.requests")).as("the blocker's flush is still under way").isEqualTo(1);
    assertThat(state.writersHealthy()).as("the withdrawn requests made room").isTrue();
    release();
    advance(50);
    assertThat(store.value("likes", "a")).as("the accepted delta, not the withdrawn one").isEqualTo(5);
    assertThat(store.value("likes", "b")).isZero();
    assertThat(store.value("likes", "blocker")).isEqualTo(1);
    assertThat(meter(registry, "gateway.waiting.requests")).isZero();
  }

  @Test
  @DisplayName("increments that cancel out leave nothing to write: their waiting requests are answered, the counter is gone")
  void cancelledOutIsAnsweredAndGone() {
    store.then(new Hold());
    start(config(), Map.of());
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    onLoop(() -> {
      coalescer.registerMetrics(registry, 3);
      return null;
    });
    Ack blocker = waitFor("blocker", 1);
    Ack up = waitFor("x", 3);
    Ack down = waitFor("x", -3);
    release();
    advance(1);

    assertThat(blocker.future().succeeded()).isTrue();
    assertThat(up.future().succeeded()).isTrue();
    assertThat(down.future().succeeded()).isTrue();
    assertThat(meter(registry, "gateway.waiting.requests")).isZero();
    assertThat(onLoop(coalescer::countersHeld)).isZero();
    assertThat(store.attempts).hasSize(1);
    assertThat(onLoop(() -> coalescer.drain()).isComplete()).isTrue();
  }

  @Test
  @DisplayName("once no request waits any more (committed, or withdrawn at its deadline), an accepted increment waits batching.maxDelay again")
  void noWaiterNoHurry() {
    start(config("250ms"), Map.of());
    Ack committed = waitFor("w", 1);
    assertThat(committed.future().succeeded()).isTrue();
    store.then(new Hold());
    accept("blocker", 1);
    assertThat(store.attempts).as("nobody waits for the blocker: it waits its maxDelay").hasSize(1);
    advance(50);
    assertThat(store.attempts).hasSize(2);
    Ack withdrawn = waitFor("p", 1);
    advance(250);
    assertThat(answer(withdrawn).code()).isEqualTo("timeout_withdrawn");
    release();

    accept("a", 1);
    advance(49);
    assertThat(store.attempts).as("nobody waits for a: it waits its maxDelay").hasSize(2);
    advance(1);
    assertThat(store.attempts).hasSize(3);
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(store.value("likes", "p")).isZero();
  }

  @Test
  @DisplayName("a replay's pending deltas are held again and its unsettled flushes written again under their own ids, readiness waiting for them")
  void restoreHoldsAndRewrites() {
    store.sources.put("dead", 0L);
    store.then(new Hold(), new Hold());
    start(config(), Map.of());
    Flush seven = new Flush(FlushId.formed("dead", 7), List.of(new FlushRow("likes", "b", (short) 0, 2)));
    Flush eight = new Flush(FlushId.formed("dead", 8), List.of(new FlushRow("likes", "c", (short) 1, 4),
      new FlushRow("likes", "d", (short) 1, 5)));
    Journal.Recovered recovered = new Journal.Recovered(Map.of(new CounterKey("likes", "a"), 3L), List.of(seven, eight),
      Set.of(), null);
    onLoop(() -> {
      coalescer.restore(recovered);
      return null;
    });

    assertThat(state.writersHealthy()).as("replaying").isFalse();
    assertThat(onLoop(coalescer::countersHeld)).isEqualTo(4);
    assertThat(store.attempts).extracting(Flush::id).containsExactly(seven.id(), eight.id());
    release();
    assertThat(state.writersHealthy()).as("one unsettled flush left").isFalse();
    release();
    assertThat(state.writersHealthy()).isTrue();
    assertThat(onLoop(coalescer::countersHeld)).isEqualTo(1);
    advance(50);
    assertThat(List.of(store.value("likes", "a"), store.value("likes", "b"), store.value("likes", "c"),
      store.value("likes", "d"))).containsExactly(3L, 2L, 4L, 5L);
    assertThat(onLoop(coalescer::countersHeld)).isZero();
  }

  @Test
  @DisplayName("a drain writes what is pending at once, as many flushes in flight as allowed, and completes when all settled")
  void drainWritesAtOnce() {
    store.then(new Hold(), new Hold());
    start(config().put("batching", config().getJsonObject("batching").put("maxKeys", 1).put("maxInFlight", 2)),
      Map.of());
    onLoop(() -> coalescer.acceptAll(List.of(increment("a", 1), increment("b", 1), increment("c", 1))));
    assertThat(store.attempts).hasSize(1);

    Future<Void> drained = onLoop(() -> coalescer.drain());
    assertThat(store.attempts).as("a second flush at once, a third once one settles").hasSize(2);
    assertThat(onLoop(() -> coalescer.countersHeld())).isEqualTo(3);
    release();
    assertThat(store.attempts).hasSize(3);
    assertThat(drained.isComplete()).isFalse();
    release();
    assertThat(drained.isComplete()).isTrue();
    assertThat(refusal(() -> coalescer.accept(increment("d", 1))).code()).isEqualTo("shutting_down");
    assertThat(List.of(store.value("likes", "a"), store.value("likes", "b"), store.value("likes", "c")))
      .containsExactly(1L, 1L, 1L);
    assertThat(onLoop(() -> coalescer.close()).succeeded()).isTrue();
  }

  @Test
  @DisplayName("every way in refuses a call from a thread other than its event loop, taking nothing")
  void everyWayInIsConfined() {
    start(config(), Map.of());
    List<Runnable> ways = List.of(() -> coalescer.addAll(List.of(increment("a", 1)), true),
      () -> coalescer.accept(increment("a", 1)), () -> coalescer.acceptAll(List.of(increment("a", 1))),
      () -> coalescer.restore(new Journal.Recovered(Map.of(new CounterKey("likes", "a"), 1L), List.of(), Set.of(), null)),
      () -> coalescer.drain());
    for (Runnable way : ways) {
      assertThatThrownBy(way::run).isInstanceOf(IllegalStateException.class);
    }
    assertThat(onLoop(coalescer::countersHeld)).isZero();
    onLoop(() -> coalescer.acceptAll(List.of(increment("a", 1))));
    assertThat(onLoop(coalescer::countersHeld)).as("still open on its own loop").isEqualTo(1);
  }

  @Test
  @DisplayName("a replay's pending deltas alone are flushed batching.maxDelay after the restore, as if taken then")
  void restoredPendingWaitsMaxDelay() {
    start(config(), Map.of());
    advance(100);
    onLoop(() -> {
      coalescer.restore(new Journal.Recovered(Map.of(new CounterKey("likes", "a"), 3L), List.of(), Set.of(), null));
      return null;
    });
    assertThat(state.writersHealthy()).as("nothing to write again first").isTrue();
    advance(49);
    assertThat(store.attempts).isEmpty();
    advance(1);
    assertThat(store.value("likes", "a")).isEqualTo(3);
    onLoop(() -> coalescer.drain());
    assertThat(refusal(() -> coalescer.acceptAll(List.of(increment("b", 1)))).code()).isEqualTo("shutting_down");
  }

  @Test
  @DisplayName("a journal holding increments of namespaces no longer declared refuses the start, naming each with what it holds, and takes nothing")
  void restoreOfUndeclaredNamespaces() {
    start(config(), Map.of());
    Map<CounterKey, Long> pending = new LinkedHashMap<>();
    pending.put(new CounterKey("likes", "a"), 3L);
    pending.put(new CounterKey("gone", "x"), 5L);
    pending.put(new CounterKey("gone", "y"), 2L);
    pending.put(new CounterKey("old", "z"), 1L);
    Flush unsettled = new Flush(FlushId.formed("dead", 7), List.of(new FlushRow("gone", "w", (short) 0, 4),
      new FlushRow("likes", "b", (short) 0, 6)));
    Journal.Recovered recovered = new Journal.Recovered(pending, List.of(unsettled), Set.of(), null);

    assertThatThrownBy(() -> onLoop(() -> {
      coalescer.restore(recovered);
      return null;
    })).isInstanceOfSatisfying(ConfigException.class, refused -> assertThat(refused.getMessage())
      .contains("namespaces.gone")
      .contains("gone (7 pending, 4 in unsettled flushes), old (1 pending, 0 in unsettled flushes);"));
    assertThat(onLoop(coalescer::countersHeld)).isZero();
    assertThat(state.writersHealthy()).isTrue();
  }
}
