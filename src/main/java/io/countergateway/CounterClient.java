package io.countergateway;

import io.countergateway.internal.bus.BusClient;
import io.countergateway.internal.bus.IncrementCoalescer;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/**
 * A typed client for verticles that share a Vert.x (or a cluster) with the gateway: it sends to the gateway's
 * event-bus addresses (docs/api.md). Failures are {@link CounterException}s with the status and code the HTTP API
 * answers the same request with.
 */
public final class CounterClient {
  private final BusClient bus;
  private final IncrementCoalescer coalescer;

  /** Requests unanswered within 30 s fail with {@code timeout}. */
  public CounterClient(Vertx vertx) {
    this(vertx, 30_000);
  }

  public CounterClient(Vertx vertx, long timeoutMs) {
    this.bus = new BusClient(vertx, timeoutMs);
    this.coalescer = new IncrementCoalescer(bus);
  }

  /**
   * Adds {@code delta}; the future completes once the increment is committed to the database. Called on an event
   * loop, the increments of one turn travel as one message (each still gets its own answer: {@link
   * IncrementCoalescer}).
   */
  public Future<Void> increment(String type, String id, long delta) {
    return answer(coalescer.increment(type, id, delta));
  }

  /**
   * Adds {@code delta} to a windowed counter's bucket holding {@code at} (inside the namespace's retention, at most
   * its maxFutureSkew ahead); completes once committed.
   */
  public Future<Void> increment(String type, String id, long delta, Instant at) {
    return answer(bus.increment(type, id, delta, at));
  }

  /**
   * Adds {@code delta} and answers the counter's value read after the commit: it includes this increment (and
   * whatever else committed by then).
   */
  public Future<Long> incrementAndGet(String type, String id, long delta) {
    return answer(bus.incrementAndGet(type, id, delta));
  }

  /**
   * Adds {@code delta} without waiting: the gateway takes it into its next flush. Called on an event loop, the
   * increments of one turn travel as one message.
   */
  public void incrementAccepted(String type, String id, long delta) {
    coalescer.incrementAccepted(type, id, delta);
  }

  /**
   * Adds {@code delta}; the future completes once the gateway has taken it into its next flush — the answer the HTTP
   * API gives {@code ack=accepted} with 202 (with a journal, once appended as its policy asks) — not once committed.
   * It fails with the refusal when the increment was not taken (503 when the gateway is full or stopping), so a
   * sender that waits for it never holds more than the gateway takes. Called on an event loop, the increments of one
   * turn travel as one message.
   */
  public Future<Void> incrementTaken(String type, String id, long delta) {
    return answer(coalescer.incrementTaken(type, id, delta));
  }

  /**
   * Adds a batch of {@code {"type","id","delta"}} objects, all validated before any is taken; completes once all are
   * committed. One message for many increments: the way to feed the gateway at high rates over the event bus. A failure
   * is the answer the HTTP batch route gives: 504 {@code outcome_unknown} when part of the batch may have been counted
   * (repeat it only with an idempotency key), any other refusal when none of it was.
   */
  public Future<Void> incrementAll(JsonArray increments) {
    return answer(bus.incrementAll(increments));
  }

  /**
   * {@link #incrementAll(JsonArray)} under an idempotency key (1 to 255 printable ASCII characters): written in one
   * transaction with the key, so a repeat after a 504 or a lost reply is counted once. Completes with true when the
   * answer is a replay of an earlier request with this key.
   */
  public Future<Boolean> incrementAll(JsonArray increments, String idempotencyKey) {
    return answer(bus.incrementAll(increments, idempotencyKey));
  }

  /** Adds a batch without waiting for its commit. */
  public void incrementAllAccepted(JsonArray increments) {
    bus.incrementAllAccepted(increments);
  }

  /** The counter's value, the SUM over its slots (through the gateway's read cache). */
  public Future<Long> get(String type, String id) {
    return answer(bus.get(type, id));
  }

  /** The values of several counters of one namespace, by id (0 for a counter never incremented). */
  public Future<Map<String, Long>> get(String type, List<String> ids) {
    return answer(bus.get(type, ids));
  }

  /** The value read now from the database, past the read cache and any read already in flight. */
  public Future<Long> getFresh(String type, String id) {
    return answer(bus.getFresh(type, id));
  }

  /**
   * A {@code counters.get} request as JSON, answered as JSON: {@code {"type","id"|"ids","from","to","top"}}
   * (docs/api.md). For callers that pass a request through.
   */
  public Future<JsonObject> query(JsonObject request) {
    return answer(bus.query(request));
  }

  /**
   * A windowed counter's non-empty buckets starting in [{@code from}, {@code to}), by bucket start. Both null: the
   * current bucket only.
   */
  public Future<SortedMap<Instant, Long>> buckets(String type, String id, Instant from, Instant to) {
    return answer(bus.buckets(type, id, from, to));
  }

  /** Windowed counters' totals over the buckets starting in [{@code from}, {@code to}); both null: the retention. */
  public Future<Map<String, Long>> totals(String type, List<String> ids, Instant from, Instant to) {
    return answer(bus.totals(type, ids, from, to));
  }

  /** The {@code count} ids of a windowed namespace with the largest totals over the range, largest first. */
  public Future<List<Map.Entry<String, Long>>> top(String type, int count, Instant from, Instant to) {
    return answer(bus.top(type, count, from, to));
  }

  /** Deletes the counter (every slot). */
  public Future<Void> reset(String type, String id) {
    return answer(bus.reset(type, id));
  }

  /** Succeeds when the gateway's read side reached the database. */
  public Future<Void> ping() {
    return answer(bus.ping());
  }

  private static <T> Future<T> answer(Future<T> request) {
    return request.recover(failure -> Future.failedFuture(CounterException.from(failure)));
  }
}
