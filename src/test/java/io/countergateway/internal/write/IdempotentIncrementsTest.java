package io.countergateway.internal.write;

import io.countergateway.testing.TestBounds;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.MemoryBounds.Bound;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.KeyedStatements;
import io.countergateway.internal.store.KeyedWrites;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.PinnedBounds;
import io.countergateway.testing.ScriptedStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Requests with an idempotency key on scripted keyed statements: what each outcome of the key's row is answered,
 * and that an error nobody foresaw is retried under the same key until the request's time is up (504), never answered
 * as "not counted". The clock is the test's.
 */
@DisplayName("Requests with an idempotency key, on scripted statements")
class IdempotentIncrementsTest {
  private Vertx vertx;
  private Context loop;
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final KeysInFlight keysInFlight = new KeysInFlight();
  /** The key table: key to the first request's fingerprint, status and answer. */
  private final Map<String, KeyedWrites.Outcome> keys = new HashMap<>();
  /** What the next attempts do, in order; once empty, attempts go through to the key table. */
  private final Deque<Function<KeyedWrites.Request, Future<KeyedWrites.Outcome>>> script = new ArrayDeque<>();
  private final List<KeyedWrites.Request> attempts = new ArrayList<>();
  private boolean closed;

  private final KeyedStatements statements = new KeyedStatements() {
    @Override
    public Future<KeyedWrites.Outcome> write(KeyedWrites.Request request) {
      attempts.add(request);
      return script.isEmpty() ? commit(request) : script.pollFirst().apply(request);
    }

    @Override
    public Future<Void> close() {
      closed = true;
      return Future.succeededFuture();
    }
  };

  private Future<KeyedWrites.Outcome> commit(KeyedWrites.Request request) {
    KeyedWrites.Outcome there = keys.get(request.key());
    if (there != null) {
      return Future.succeededFuture(there);
    }
    keys.put(request.key(), new KeyedWrites.Outcome(false, request.fingerprint(), request.status(), request.answer()));
    return Future.succeededFuture(new KeyedWrites.Outcome(true, null, 0, null));
  }

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(TestBounds.millis(10), TimeUnit.MILLISECONDS);
  }

  private IdempotentIncrements keyed(int maxInFlight) {
    GatewayConfig config = PinnedBounds.with(Map.of(Bound.IDEMPOTENT_IN_FLIGHT, (long) maxInFlight), () -> GatewayConfig.fromJson(new JsonObject()
      .put("batching", new JsonObject().put("retryBackoff", "1ms").put("retryBackoffMax", "2ms"))
      .put("limits", new JsonObject().put("requestTimeout", "1s"))
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4))
        .put("views", new JsonObject().put("window", new JsonObject().put("bucket", "hour").put("retention", "2d"))))));
    return EventLoop.call(loop, () -> new IdempotentIncrements(vertx, config, keysInFlight, new SimpleMeterRegistry(),
      statements, now::get));
  }

  private static List<Increment> likes(String... ids) {
    List<Increment> increments = new ArrayList<>();
    for (String id : ids) {
      increments.add(new Increment(new CounterKey("likes", id), 1));
    }
    return increments;
  }

  private Future<IdempotentIncrements.Answer> submit(IdempotentIncrements keyed, String key, List<Increment> increments,
                                                     boolean commit) {
    return EventLoop.call(loop, () -> keyed.submit(key, increments, commit, commit ? 200 : 202, "{\"ok\":true}"));
  }

  private static Object outcome(Future<?> future) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(TestBounds.millis(10), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static void assertRefused(Object outcome, int status, String code) {
    assertThat(outcome).isInstanceOfSatisfying(ApiError.class, error -> {
      assertThat(error.status()).isEqualTo(status);
      assertThat(error.code()).isEqualTo(code);
    });
  }

  @Test
  @DisplayName("the first request is written and answered; a repeat gets the first answer, marked replayed; another body under the key is 422")
  void firstRepeatAndReuse() {
    IdempotentIncrements keyed = keyed(8);
    assertThat(outcome(submit(keyed, "k1", likes("a", "b", "a"), true)))
      .isEqualTo(new IdempotentIncrements.Answer(200, "{\"ok\":true}", false));
    assertThat(attempts.get(0).rows()).as("one row per counter, summed").hasSize(2)
      .anySatisfy(row -> assertThat(row.delta()).isEqualTo(2));
    assertThat(outcome(submit(keyed, "k1", likes("b", "a", "a"), true)))
      .as("the same meaning in another order").isEqualTo(new IdempotentIncrements.Answer(200, "{\"ok\":true}", true));
    assertRefused(outcome(submit(keyed, "k1", likes("a"), true)), 422, "idempotency_key_reused");
  }

  @Test
  @DisplayName("a key whose request is still being written is 409; once answered, it is free again")
  void keyInUse() {
    IdempotentIncrements keyed = keyed(8);
    Promise<KeyedWrites.Outcome> held = Promise.promise();
    script.add(request -> held.future());
    Future<IdempotentIncrements.Answer> first = submit(keyed, "k2", likes("a"), true);
    assertRefused(outcome(submit(keyed, "k2", likes("a"), true)), 409, "idempotency_key_in_use");
    EventLoop.call(loop, () -> held.tryComplete(new KeyedWrites.Outcome(true, null, 0, null)));
    assertThat(outcome(first)).isEqualTo(new IdempotentIncrements.Answer(200, "{\"ok\":true}", false));
    assertThat(outcome(submit(keyed, "k3", likes("a"), true))).isInstanceOf(IdempotentIncrements.Answer.class);
  }

  @Test
  @DisplayName("an error nobody foresaw is retried under the same key; past the request's time it is 504 outcome_unknown, never 'not counted'")
  void outageRetriedThen504() {
    IdempotentIncrements keyed = keyed(8);
    script.add(request -> Future.failedFuture(ScriptedStore.connectionLost()));
    script.add(request -> Future.failedFuture(new IllegalStateException("nobody foresaw this")));
    assertThat(outcome(submit(keyed, "k4", likes("a"), true))).isInstanceOf(IdempotentIncrements.Answer.class);
    assertThat(attempts).hasSize(3).allMatch(request -> request.key().equals("k4"));

    script.add(request -> {
      now.addAndGet(2_000);
      return Future.failedFuture(ScriptedStore.connectionLost());
    });
    assertRefused(outcome(submit(keyed, "k5", likes("a"), true)), 504, "outcome_unknown");
  }

  @Test
  @DisplayName("ack=accepted with a key is answered at once and written in the background until it lands")
  void acceptedIsRetriedUntilWritten() {
    IdempotentIncrements keyed = keyed(8);
    for (int i = 0; i < 5; i++) {
      script.add(request -> {
        now.addAndGet(60_000);
        return Future.failedFuture(ScriptedStore.connectionLost());
      });
    }
    assertThat(outcome(submit(keyed, "k6", likes("a"), false)))
      .isEqualTo(new IdempotentIncrements.Answer(202, "{\"ok\":true}", false));
    assertThat(outcome(EventLoop.call(loop, keyed::drain))).as("the drain waits for it").isNull();
    assertThat(keys).containsKey("k6");
    assertThat(attempts).hasSize(6);
    assertThat(closed).isTrue();
  }

  @Test
  @DisplayName("a value the database refuses is 422 counter_overflow (or 500 write_failed), not retried")
  void refusedValues() {
    IdempotentIncrements keyed = keyed(8);
    script.add(request -> Future.failedFuture(ScriptedStore.sqlState("22003")));
    assertRefused(outcome(submit(keyed, "k7", likes("a"), true)), 422, "counter_overflow");
    script.add(request -> Future.failedFuture(ScriptedStore.sqlState("22001")));
    assertRefused(outcome(submit(keyed, "k8", likes("a"), true)), 500, "write_failed");
    assertThat(attempts).hasSize(2);
  }

  @Test
  @DisplayName("refused before anything is written: a windowed namespace (400), too many in flight or a drain (503)")
  void refusedBeforeWriting() {
    IdempotentIncrements keyed = keyed(1);
    assertRefused(outcome(submit(keyed, "w", List.of(new Increment(new CounterKey("views", "a", 3_600), 1)), true)),
      400, "idempotency_unsupported");
    Promise<KeyedWrites.Outcome> held = Promise.promise();
    script.add(request -> held.future());
    Future<IdempotentIncrements.Answer> first = submit(keyed, "k9", likes("a"), true);
    assertRefused(outcome(submit(keyed, "k10", likes("a"), true)), 503, "overloaded");
    Future<Void> drained = EventLoop.call(loop, keyed::drain);
    assertRefused(outcome(submit(keyed, "k11", likes("a"), true)), 503, "shutting_down");
    assertThat(drained.isComplete()).as("waits for the request in flight").isFalse();
    EventLoop.call(loop, () -> held.tryComplete(new KeyedWrites.Outcome(true, null, 0, null)));
    assertThat(outcome(first)).isInstanceOf(IdempotentIncrements.Answer.class);
    assertThat(outcome(drained)).isNull();
    assertThat(attempts).hasSize(1);
  }

  @Test
  @DisplayName("a key must be 1 to 255 printable ASCII characters; none at all is no key")
  void keyFormat() {
    assertThat(IdempotentIncrements.key(null, "Idempotency-Key")).isNull();
    assertThat(IdempotentIncrements.key("order-7f9c-1", "Idempotency-Key")).isEqualTo("order-7f9c-1");
    assertRefused(catching(() -> IdempotentIncrements.key("", "Idempotency-Key")), 400, "invalid_idempotency_key");
    assertRefused(catching(() -> IdempotentIncrements.key("é", "Idempotency-Key")), 400, "invalid_idempotency_key");
    assertRefused(catching(() -> IdempotentIncrements.key("x".repeat(256), "Idempotency-Key")), 400,
      "invalid_idempotency_key");
  }

  private static Object catching(Runnable work) {
    try {
      work.run();
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }

  @Test
  @DisplayName("the fingerprint is the request's meaning: the ack asked for and each counter's summed delta")
  void fingerprint() {
    Map<CounterKey, Long> one = Map.of(new CounterKey("likes", "a"), 2L, new CounterKey("likes", "b"), 1L);
    assertThat(IdempotentIncrements.fingerprint(true, one)).isEqualTo(IdempotentIncrements.fingerprint(true,
      new HashMap<>(one))).isNotEqualTo(IdempotentIncrements.fingerprint(false, one))
      .isNotEqualTo(IdempotentIncrements.fingerprint(true, Map.of(new CounterKey("likes", "a"), 3L)));
  }
}
