package io.countergateway.internal.bus;

import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.write.AckMode;
import io.countergateway.internal.write.CommittedValues;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The event-bus client behind the gateway's own doors (its HTTP reads, resets, readiness ping, add-and-get reads) and
 * behind the public {@code io.countergateway.CounterClient}. Failures are {@link ApiError}s with the same codes the
 * HTTP API uses.
 */
public final class BusClient implements CommittedValues {
  private static final Logger LOG = LoggerFactory.getLogger(BusClient.class);
  private final EventBus bus;
  private final DeliveryOptions delivery;
  /** {@link #delivery} asking for the answer {@code ack=accepted} gives: once taken, not once committed. */
  private final DeliveryOptions taken;

  public BusClient(Vertx vertx, long timeoutMs) {
    this(vertx, new DeliveryOptions().setSendTimeout(timeoutMs));
  }

  private BusClient(Vertx vertx, DeliveryOptions delivery) {
    this.bus = vertx.eventBus();
    this.delivery = delivery;
    this.taken = new DeliveryOptions(delivery).addHeader(Addresses.ACK, AckMode.ACCEPTED.label);
  }

  /**
   * The gateway's own client (its HTTP reads, resets, readiness ping, add-and-get reads): every request is answered by
   * a consumer of this process, never sent over a clustered bus, where any member with a consumer on the same address
   * would get a turn to answer it (docs/security.md).
   */
  public static BusClient inProcess(Vertx vertx, long timeoutMs) {
    return new BusClient(vertx, new DeliveryOptions().setSendTimeout(timeoutMs).setLocalOnly(true));
  }

  /** Adds {@code delta}; the future completes once the increment is committed to the database. */
  public Future<Void> increment(String type, String id, long delta) {
    return bus.request(Addresses.INCREMENT, body(type, id).put("delta", delta), delivery)
      .recover(failure -> Future.failedFuture(BusErrors.toApiError(failure)))
      .mapEmpty();
  }

  /**
   * Adds {@code delta} to a windowed counter's bucket holding {@code at} (inside the namespace's retention, at most
   * its maxFutureSkew ahead); completes once committed.
   */
  public Future<Void> increment(String type, String id, long delta, Instant at) {
    return bus.request(Addresses.INCREMENT, body(type, id).put("delta", delta).put("at", at.toString()), delivery)
      .recover(failure -> Future.failedFuture(BusErrors.toApiError(failure)))
      .mapEmpty();
  }

  /**
   * Adds {@code delta} and answers the counter's value read after the commit: it includes this increment (and
   * whatever else committed by then).
   */
  public Future<Long> incrementAndGet(String type, String id, long delta) {
    return bus.<JsonObject>request(Addresses.INCREMENT, body(type, id).put("delta", delta).put("return", "value"), delivery)
      .recover(failure -> Future.failedFuture(BusErrors.toApiError(failure)))
      .map(reply -> reply.body().getLong("value"));
  }

  /** The value read now from the database, past the read cache and any read already in flight. */
  public Future<Long> getFresh(String type, String id) {
    JsonObject request = new JsonObject().put("type", type).put("id", id).put("fresh", true);
    return bus.<JsonObject>request(Addresses.GET, request, delivery)
      .recover(failure -> Future.failedFuture(BusErrors.toApiError(failure)))
      .map(reply -> ((Number) reply.body().getJsonObject("values").getValue(id)).longValue());
  }

  /**
   * For add-and-get answers: the fresh value, or null when that read fails. The increment has committed by then,
   * so a failed read must not turn into an error the client would retry (and count twice).
   */
  @Override
  public Future<Long> valueAfterCommit(String type, String id) {
    return getFresh(type, id).otherwise(failure -> {
      LOG.warn("add-and-get: {} {} committed, reading its value failed: {}", type, id, failure.toString());
      return null;
    });
  }

  /** Adds {@code delta} without waiting: the gateway takes it into its next flush. */
  public void incrementAccepted(String type, String id, long delta) {
    bus.send(Addresses.INCREMENT, body(type, id).put("delta", delta));
  }

  /**
   * Adds {@code delta}; the future completes once the gateway has taken it into its next flush (the HTTP API's 202
   * with {@code ack=accepted}), or fails with the refusal when it was not taken (503 full or stopping).
   */
  public Future<Void> incrementTaken(String type, String id, long delta) {
    return bus.request(Addresses.INCREMENT, body(type, id).put("delta", delta), taken)
      .recover(failure -> Future.failedFuture(BusErrors.toApiError(failure)))
      .mapEmpty();
  }

  /**
   * Adds a batch of {@code {"type","id","delta"}} objects, all validated before any is taken; completes once all are
   * committed. One message for many increments: the way to feed the gateway at high rates over the event bus. A failure
   * is the answer the HTTP batch route gives: 504 {@code outcome_unknown} when part of the batch may have been counted
   * (repeat it only with an idempotency key), any other refusal when none of it was.
   */
  public Future<Void> incrementAll(JsonArray increments) {
    return bus.request(Addresses.INCREMENT, increments, delivery)
      .recover(failure -> Future.failedFuture(BusErrors.toApiError(failure)))
      .mapEmpty();
  }

  /**
   * {@link #incrementAll(JsonArray)} under an idempotency key (1 to 255 printable ASCII characters): written in one
   * transaction with the key, so a repeat after a 504 or a lost reply is counted once. Completes with true when the
   * answer is a replay of an earlier request with this key.
   */
  public Future<Boolean> incrementAll(JsonArray increments, String idempotencyKey) {
    DeliveryOptions keyed = new DeliveryOptions(delivery).addHeader(Addresses.IDEMPOTENCY_KEY, idempotencyKey);
    return bus.request(Addresses.INCREMENT, increments, keyed)
      .recover(failure -> Future.failedFuture(BusErrors.toApiError(failure)))
      .map(reply -> "true".equals(reply.headers().get(Addresses.IDEMPOTENT_REPLAYED)));
  }

  /**
   * Adds a batch whose increments are each answered as if sent alone ({@link Addresses#ANSWER}): once committed, or
   * with {@code ack} accepted once taken. The reply names the increments refused, by index ({@code "refused"}).
   */
  public Future<JsonObject> incrementEach(JsonArray increments, AckMode ack) {
    DeliveryOptions each = new DeliveryOptions(delivery).addHeader(Addresses.ANSWER, Addresses.ANSWER_EACH)
      .addHeader(Addresses.ACK, ack.label);
    return bus.<JsonObject>request(Addresses.INCREMENT, increments, each)
      .recover(failure -> Future.failedFuture(BusErrors.toApiError(failure)))
      .map(reply -> reply.body());
  }

  /** Adds a batch without waiting for its commit. */
  public void incrementAllAccepted(JsonArray increments) {
    bus.send(Addresses.INCREMENT, increments);
  }

  public Future<Long> get(String type, String id) {
    return get(type, List.of(id)).map(values -> values.get(id));
  }

  public Future<Map<String, Long>> get(String type, List<String> ids) {
    JsonObject request = new JsonObject().put("type", type).put("ids", new JsonArray(List.copyOf(ids)));
    return bus.<JsonObject>request(Addresses.GET, request, delivery)
      .recover(failure -> Future.failedFuture(BusErrors.toApiError(failure)))
      .map(reply -> values(reply.body()));
  }

  /**
   * A {@code counters.get} request as JSON, answered as JSON: {@code {"type","id"|"ids","from","to","top"}} (see
   * {@link Addresses#GET}). For callers that pass a request through, such as the HTTP routes.
   */
  public Future<JsonObject> query(JsonObject request) {
    return bus.<JsonObject>request(Addresses.GET, request, delivery)
      .recover(failure -> Future.failedFuture(BusErrors.toApiError(failure)))
      .map(reply -> reply.body());
  }

  /**
   * A windowed counter's non-empty buckets starting in [{@code from}, {@code to}), by bucket start. Both null: the
   * current bucket only.
   */
  public Future<SortedMap<Instant, Long>> buckets(String type, String id, Instant from, Instant to) {
    return query(range(body(type, id), from, to)).map(reply -> {
      SortedMap<Instant, Long> buckets = new TreeMap<>();
      reply.getJsonArray("buckets").forEach(item -> {
        JsonObject bucket = (JsonObject) item;
        buckets.put(Instant.parse(bucket.getString("start")), bucket.getLong("value"));
      });
      return buckets;
    });
  }

  /** Windowed counters' totals over the buckets starting in [{@code from}, {@code to}); both null: the retention. */
  public Future<Map<String, Long>> totals(String type, List<String> ids, Instant from, Instant to) {
    JsonObject request = new JsonObject().put("type", type).put("ids", new JsonArray(List.copyOf(ids)));
    return query(range(request, from, to)).map(BusClient::values);
  }

  /** The {@code count} ids of a windowed namespace with the largest totals over the range, largest first. */
  public Future<List<Map.Entry<String, Long>>> top(String type, int count, Instant from, Instant to) {
    return query(range(new JsonObject().put("type", type).put("top", count), from, to)).map(reply -> {
      List<Map.Entry<String, Long>> ranked = new ArrayList<>();
      reply.getJsonArray("top").forEach(item -> {
        JsonObject entry = (JsonObject) item;
        ranked.add(Map.entry(entry.getString("id"), entry.getLong("total")));
      });
      return ranked;
    });
  }

  private static JsonObject range(JsonObject request, Instant from, Instant to) {
    if (from != null) {
      request.put("from", from.toString());
    }
    if (to != null) {
      request.put("to", to.toString());
    }
    return request;
  }

  private static Map<String, Long> values(JsonObject reply) {
    Map<String, Long> values = new HashMap<>();
    reply.getJsonObject("values").forEach(e -> values.put(e.getKey(), ((Number) e.getValue()).longValue()));
    return values;
  }

  /** Deletes the counter (every slot). */
  public Future<Void> reset(String type, String id) {
    return bus.request(Addresses.RESET, body(type, id), delivery)
      .recover(failure -> Future.failedFuture(BusErrors.toApiError(failure)))
      .mapEmpty();
  }

  /** Succeeds when the gateway's read side reached the database. */
  public Future<Void> ping() {
    return bus.request(Addresses.PING, new JsonObject(), new DeliveryOptions(delivery).setSendTimeout(2_000))
      .recover(failure -> Future.failedFuture(BusErrors.toApiError(failure)))
      .mapEmpty();
  }

  private static JsonObject body(String type, String id) {
    return new JsonObject().put("type", type).put("id", id);
  }
}
