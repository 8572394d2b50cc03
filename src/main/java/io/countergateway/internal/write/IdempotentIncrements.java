package io.countergateway.internal.write;

import io.countergateway.internal.store.FlushRow;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.Failures;
import io.countergateway.internal.store.KeyedStatements;
import io.countergateway.internal.store.KeyedWrites;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

/**
 * Requests with an {@code Idempotency-Key} (IETF draft "The Idempotency-Key HTTP Header Field"), for one ingest
 * verticle. Such a request is written on its own, its increments in the same statement or transaction as the key's
 * row ({@link KeyedWrites}), so it is counted once whatever the number of repeats, replicas or restarts:
 * <ul>
 *   <li>a repeat after the commit gets the first answer again, marked replayed;</li>
 *   <li>a repeat with another body (another fingerprint) gets 422 {@code idempotency_key_reused};</li>
 *   <li>a repeat while the first is in flight on this gateway gets 409 {@code idempotency_key_in_use}; on another
 *   replica it waits for the first's transaction, then is answered as a repeat after the commit.</li>
 * </ul>
 * With {@code ack=accepted} the 202 comes before the write, which then retries until it commits: the gateway
 * promises at most once, and a repeat once the key committed is a replay. If the gateway stops before that commit,
 * neither the increment nor the key is in the database, and a repeat is counted (once).
 */
public final class IdempotentIncrements {
  private static final Logger LOG = LoggerFactory.getLogger(IdempotentIncrements.class);
  public static final String HEADER = "Idempotency-Key";
  /** The draft makes the key a structured-field string: printable ASCII. We bound its length for the key column. */
  private static final Pattern KEY = Pattern.compile("[\\x20-\\x7E]{1,255}");

  /** What to answer: the status and JSON body, and whether they are a replay of the first request's. */
  public record Answer(int status, String body, boolean replayed) {
  }

  private final Vertx vertx;
  private final GatewayConfig config;
  private final KeysInFlight keysInFlight;
  private final KeyedStatements writes;
  /** Milliseconds of the wall clock, for a committing request's deadline: passed in, so tests move time. */
  private final LongSupplier millisClock;
  private boolean draining;
  private final List<Future<?>> inFlight = new ArrayList<>();
  private final Counter written;
  private final Counter replayed;
  private final Counter refused;

  /** {@code keysInFlight}: one set for the whole gateway, shared by every ingest verticle's instance. */
  public IdempotentIncrements(Vertx vertx, GatewayConfig config, KeysInFlight keysInFlight, MeterRegistry registry) {
    this(vertx, config, keysInFlight, registry, new KeyedWrites(vertx, config.getDatabase(),
      config.getIdempotency().getPoolSize(), config.getBatching().getWriteTimeoutMs()), System::currentTimeMillis);
  }

  /** {@code writes}: the keyed statements (scripted in tests); {@code millisClock}: {@code System::currentTimeMillis}. */
  IdempotentIncrements(Vertx vertx, GatewayConfig config, KeysInFlight keysInFlight, MeterRegistry registry,
                       KeyedStatements writes, LongSupplier millisClock) {
    this.vertx = vertx;
    this.config = config;
    this.keysInFlight = keysInFlight;
    this.writes = writes;
    this.millisClock = millisClock;
    // the same meters for every ingest verticle: Micrometer hands back the one already registered
    written = outcome(registry, "written");
    replayed = outcome(registry, "replayed");
    refused = outcome(registry, "refused");
  }

  private static Counter outcome(MeterRegistry registry, String outcome) {
    return Counter.builder("gateway.idempotency.requests").tag("outcome", outcome)
      .description("requests with an idempotency key: written (counted), replayed (answered again, not counted), "
        + "refused (409 key in use, 422 key reused)")
      .register(registry);
  }

  /** The key as sent, checked: 1 to 255 printable ASCII characters. Null when absent. */
  public static String key(String raw, String field) {
    if (raw == null) {
      return null;
    }
    if (!KEY.matcher(raw).matches()) {
      throw ApiError.badRequest("invalid_idempotency_key", field, "the idempotency key must be 1 to 255 printable ASCII characters");
    }
    return raw;
  }

  /**
   * Writes the request guarded by {@code key}, its increments summed per counter; {@code status} and
   * {@code body} are the answer a successful first request gets, stored for repeats.
   */
  public Future<Answer> submit(String key, List<Increment> increments, boolean waitForCommit, int status, String body) {
    Map<CounterKey, Long> perCounter = new TreeMap<>();
    increments.forEach(increment -> perCounter.merge(increment.key(), increment.delta(), Long::sum));
    if (perCounter.keySet().stream().anyMatch(CounterKey::windowed)) {
      // keyed writes go to the plain table in one statement with the key; windowed buckets are not part of it yet
      return Future.failedFuture(ApiError.badRequest("idempotency_unsupported", HEADER,
        "idempotency keys are not supported on windowed namespaces"));
    }
    if (draining) {
      return Future.failedFuture(ApiError.unavailable("shutting_down", "the gateway is shutting down"));
    }
    if (inFlight.size() >= config.getMemoryBounds().maxIdempotentInFlight()) {
      return Future.failedFuture(ApiError.unavailable("overloaded", "too many requests with idempotency keys in flight"));
    }
    if (!keysInFlight.claim(key)) {
      refused.increment();
      return Future.failedFuture(new ApiError(409, "idempotency_key_in_use",
        "a request with this idempotency key is still being written; repeat it later", HEADER));
    }
    KeyedWrites.Request request = new KeyedWrites.Request(key, fingerprint(waitForCommit, perCounter), status, body,
      rows(perCounter));
    long deadline = waitForCommit ? millisClock.getAsLong() + config.getLimits().getRequestTimeoutMs() : Long.MAX_VALUE;
    Promise<Answer> answered = Promise.promise();
    attempt(request, 0, deadline, answered);
    Future<Answer> written = answered.future().onComplete(done -> keysInFlight.release(key));
    inFlight.add(written);
    written.onComplete(done -> inFlight.remove(written));
    return waitForCommit ? written : Future.succeededFuture(new Answer(status, body, false));
  }

  private void attempt(KeyedWrites.Request request, int attemptNo, long deadline, Promise<Answer> answered) {
    writes.write(request).onComplete(result -> {
      if (result.succeeded()) {
        KeyedWrites.Outcome outcome = result.result();
        if (outcome.written()) {
          written.increment();
          answered.complete(new Answer(request.status(), request.answer(), false));
        } else if (outcome.fingerprint().equals(request.fingerprint())) {
          replayed.increment();
          answered.complete(new Answer(outcome.status(), outcome.answer(), true));
        } else {
          refused.increment();
          answered.fail(new ApiError(422, "idempotency_key_reused",
            "this idempotency key was used for a different request; nothing was counted", HEADER));
        }
      } else if (Failures.isValueRefused(result.cause())) {
        answered.fail(Failures.isOverflow(result.cause())
          ? new ApiError(422, "counter_overflow", "the increment would take the counter beyond the 64-bit range; it was not counted", "delta")
          : new ApiError(500, "write_failed", "the database refused a value of the write: " + result.cause().getMessage(), null));
      } else {
        long delay = config.getBatching().retryDelayMs(attemptNo);
        if (millisClock.getAsLong() + delay >= deadline) {
          answered.fail(new ApiError(504, "outcome_unknown",
            "the request may or may not be counted; repeat it with the same idempotency key", null));
          return;
        }
        LOG.warn("keyed write failed, retry {} in {} ms under the same key: {}", attemptNo + 1, delay, result.cause().toString());
        vertx.setTimer(delay, id -> attempt(request, attemptNo + 1, deadline, answered));
      }
    });
  }

  /** The request's meaning, not its bytes: the acknowledgement asked for and the summed delta of each counter. */
  static String fingerprint(boolean waitForCommit, Map<CounterKey, Long> perCounter) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update((waitForCommit ? "commit" : "accepted").getBytes(StandardCharsets.UTF_8));
      new TreeMap<>(perCounter).forEach((key, delta) -> sha.update(("\n" + key.type() + "\u0000" + key.id() + "\u0000" + delta)
        .getBytes(StandardCharsets.UTF_8)));
      return HexFormat.of().formatHex(sha.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** One row per counter on a random slot of its namespace, in the flushes' lock order. */
  private List<FlushRow> rows(Map<CounterKey, Long> perCounter) {
    List<FlushRow> rows = new ArrayList<>();
    perCounter.forEach((key, delta) -> rows.add(new FlushRow(key.type(), key.id(),
      (short) ThreadLocalRandom.current().nextInt(config.namespace(key.type()).getSlots()), delta)));
    rows.sort(null);
    return rows;
  }

  /**
   * Refuses new keyed requests (503 {@code shutting_down}), waits for those in flight (accepted ones are still being
   * written), then closes the pool.
   */
  public Future<Void> drain() {
    draining = true;
    return Future.join(new ArrayList<>(inFlight)).transform(done -> writes.close());
  }
}
