package io.countergateway.internal.write;

import io.countergateway.CounterClient;
import io.countergateway.CounterException;
import io.countergateway.internal.bus.Addresses;
import io.countergateway.config.MemoryBounds.Bound;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.PinnedBounds;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.http.RequestOptions;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The same write, sent through every door, gets the same answer and leaves the same table: the HTTP batch route, the
 * event bus ({@code counters.increment} requests) and {@link CounterClient} for batches; the HTTP hot route, the router
 * (the same route, sent chunked so the hot path passes it on), the bus and the client for single increments. The
 * scenarios are the ones where doors used to disagree: a batch part of which committed while another part was refused
 * or timed out must never be answered "not counted", or a client retrying it counts it twice.
 *
 * <p>One ingest verticle, one flush at a time and one counter per flush, so a batch's parts land in separate flushes
 * and end differently; a transaction of the test holding a counter's slot rows is how a flush is kept in flight.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Every door answers a write alike")
class EveryDoorAnswersAlikeIT {
  private static final long NEAR_MAX = Long.MAX_VALUE - 10;
  private static final int SLOTS = 4;

  /** What a caller learns, whatever the door: the status (a bus failure code is one), the error code, a replay mark. */
  record Outcome(int status, String error, boolean replayed) {
    static final Outcome COMMITTED = new Outcome(200, null, false);
    static final Outcome REPLAYED = new Outcome(200, null, true);

    static Outcome refused(int status, String error) {
      return new Outcome(status, error, false);
    }
  }

  interface Door {
    Future<Outcome> send(GatewayFixture gateway, JsonArray increments, String idempotencyKey);
  }

  private final Map<String, GatewayFixture> gateways = new LinkedHashMap<>();

  @BeforeAll
  void startGateways() {
    // a coalescer of 2 counters and 4 waiting requests, so that a full one is easy to make
    Map<Bound, Long> small = Map.of(Bound.PENDING_KEYS, 2L, Bound.WAITING_REQUESTS, 4L);
    gateways.put("postgres", PinnedBounds.with(small, () -> GatewayFixture.start(config(TestDatabases.postgres()))));
    gateways.put("mariadb", PinnedBounds.with(small, () -> GatewayFixture.start(config(TestDatabases.mariadb()))));
  }

  @AfterAll
  void stopGateways() {
    CLIENTS.values().forEach(client -> await(client.close()));
    gateways.values().forEach(GatewayFixture::close);
  }

  private static JsonObject config(JsonObject database) {
    JsonObject config = GatewayFixture.baseConfig(database, "every_door_counters");
    config.getJsonObject("http").put("instances", 1);
    config.put("batching", new JsonObject().put("maxKeys", 1).put("maxInFlight", 1)
      .put("writeTimeout", "500ms").put("retryBackoff", "10ms").put("retryBackoffMax", "100ms"));
    config.getJsonObject("limits").put("requestTimeout", "1500ms").put("maxBatchIncrements", 2);
    return config;
  }

  static Stream<Arguments> databases() {
    return Stream.of(Arguments.of("postgres"), Arguments.of("mariadb"));
  }

  // ---- the doors ----

  /**
   * One HTTP client per gateway (a client per request would leave its connections open, past the per-client cap), on
   * fresh connections: the gateway closes a kept-alive connection idle past limits.headerTimeout, and a request
   * written into one as it closes is not what these scenarios test. A request without a connection or an answer for
   * 20 s fails the test (the connect timeout also bounds the wait for a slot in the client's pool).
   */
  private static final Map<GatewayFixture, HttpClient> CLIENTS = new java.util.concurrent.ConcurrentHashMap<>();
  private static final Map<String, Door> BATCH_DOORS = new LinkedHashMap<>();
  private static final Map<String, Door> SINGLE_DOORS = new LinkedHashMap<>();

  static {
    BATCH_DOORS.put("HTTP batch route", (gateway, increments, key) -> http(gateway, HttpMethod.POST, "/v1/increments", key,
      Buffer.buffer(increments.encode()), false));
    BATCH_DOORS.put("event bus request", EveryDoorAnswersAlikeIT::bus);
    BATCH_DOORS.put("CounterClient.incrementAll", (gateway, increments, key) -> {
      CounterClient client = new CounterClient(gateway.vertx);
      Future<Boolean> sent = key == null ? client.incrementAll(increments).map(false) : client.incrementAll(increments, key);
      return sent.map(replayed -> replayed ? Outcome.REPLAYED : Outcome.COMMITTED).recover(EveryDoorAnswersAlikeIT::outcome);
    });
    SINGLE_DOORS.put("HTTP hot route", (gateway, increments, key) -> http(gateway, HttpMethod.POST, singlePath(increments),
      key, delta(increments), false));
    SINGLE_DOORS.put("HTTP router", (gateway, increments, key) -> http(gateway, HttpMethod.POST, singlePath(increments),
      key, delta(increments), true));
    SINGLE_DOORS.put("event bus request", (gateway, increments, key) -> bus(gateway, increments.getJsonObject(0), key));
    SINGLE_DOORS.put("CounterClient.increment", (gateway, increments, key) -> {
      JsonObject increment = increments.getJsonObject(0);
      return new CounterClient(gateway.vertx).increment(increment.getString("type"), increment.getString("id"),
        increment.getLong("delta")).map(Outcome.COMMITTED).recover(EveryDoorAnswersAlikeIT::outcome);
    });
  }

  private static String singlePath(JsonArray increments) {
    JsonObject increment = increments.getJsonObject(0);
    return "/v1/counters/" + increment.getString("type") + "/" + increment.getString("id") + "/increments";
  }

  private static Buffer delta(JsonArray increments) {
    return Buffer.buffer(new JsonObject().put("delta", increments.getJsonObject(0).getLong("delta")).encode());
  }

  /** {@code chunked}: no Content-Length, which the hot path leaves to the router. */
  private static Future<Outcome> http(GatewayFixture gateway, HttpMethod method, String path, String key, Buffer body,
                                      boolean chunked) {
    RequestOptions options = new RequestOptions().setMethod(method).setHost("127.0.0.1").setPort(gateway.gateway.port())
      .setURI(path).putHeader("Content-Type", "application/json");
    if (key != null) {
      options.putHeader("Idempotency-Key", key);
    }
    // the body is asked for in the step that gets the answer, on the client's event loop: a step this thread adds to
    // the chain runs whenever this thread gets there, and an answer given at once (a shed batch) may be read whole by
    // then; Vert.x keeps no body nobody asked for, and its idle timeout ends with the answer's headers, so the body
    // asked for late never comes and the door seems never to answer
    return CLIENTS.computeIfAbsent(gateway, g -> g.vertx.createHttpClient(new HttpClientOptions().setKeepAlive(false)))
      .request(options.setIdleTimeout(20_000).setConnectTimeout(20_000))
      .compose(request -> request.setChunked(chunked).send(body)
        .compose(response -> response.body().map(answer -> response.statusCode() < 300
          ? new Outcome(response.statusCode(), null, "true".equals(response.getHeader("Idempotent-Replayed")))
          : Outcome.refused(response.statusCode(), new JsonObject(answer).getString("error")))));
  }

  private static Future<Outcome> bus(GatewayFixture gateway, Object body, String key) {
    DeliveryOptions options = new DeliveryOptions().setSendTimeout(30_000);
    if (key != null) {
      options.addHeader(Addresses.IDEMPOTENCY_KEY, key);
    }
    return gateway.vertx.eventBus().request(Addresses.INCREMENT, body, options)
      .map(reply -> "true".equals(reply.headers().get(Addresses.IDEMPOTENT_REPLAYED)) ? Outcome.REPLAYED : Outcome.COMMITTED)
      .recover(failure -> failure instanceof ReplyException reply
        ? Future.succeededFuture(Outcome.refused(reply.failureCode(), new JsonObject(reply.getMessage()).getString("error")))
        : Future.failedFuture(failure));
  }

  private static Future<Outcome> outcome(Throwable failure) {
    return failure instanceof CounterException error ? Future.succeededFuture(Outcome.refused(error.status(), error.code()))
      : Future.failedFuture(failure);
  }

  // ---- the scenarios: batches ----

  @ParameterizedTest(name = "on {0}")
  @MethodSource("databases")
  @DisplayName("a batch whose counters all commit: 200 through every door, each counter counted once")
  void allCommitted(String database) {
    GatewayFixture gateway = gateways.get(database);
    forEachDoor(BATCH_DOORS, (door, ids) -> {
      Outcome outcome = await(door.send(gateway, batch(ids[0], 2, ids[1], 3), null));
      assertThat(outcome).isEqualTo(Outcome.COMMITTED);
      assertThat(sums(gateway, ids)).containsExactly(2L, 3L);
    });
  }

  @ParameterizedTest(name = "on {0}")
  @MethodSource("databases")
  @DisplayName("a batch where one counter overflows and the other commits: 504 outcome_unknown through every door, never 'not counted'")
  void oneRefusedValue(String database) {
    GatewayFixture gateway = gateways.get(database);
    forEachDoor(BATCH_DOORS, (door, ids) -> {
      fillToNearMax(gateway, ids[0]);
      Outcome outcome = await(door.send(gateway, batch(ids[0], 100, ids[1], 1), null));
      assertThat(outcome).isEqualTo(Outcome.refused(504, "outcome_unknown"));
      assertThat(sums(gateway, ids)).containsExactly(SLOTS * NEAR_MAX, 1L);
    });
  }

  @ParameterizedTest(name = "on {0}")
  @MethodSource("databases")
  @DisplayName("a batch whose every counter overflows: 422 counter_overflow through every door, nothing counted")
  void everyValueRefused(String database) {
    GatewayFixture gateway = gateways.get(database);
    forEachDoor(BATCH_DOORS, (door, ids) -> {
      fillToNearMax(gateway, ids[0]);
      fillToNearMax(gateway, ids[1]);
      Outcome outcome = await(door.send(gateway, batch(ids[0], 100, ids[1], 100), null));
      assertThat(outcome).isEqualTo(Outcome.refused(422, "counter_overflow"));
      assertThat(sums(gateway, ids)).containsExactly(SLOTS * NEAR_MAX, SLOTS * NEAR_MAX);
    });
  }

  @ParameterizedTest(name = "on {0}")
  @MethodSource("databases")
  @DisplayName("a batch whose first part times out in flight while the second is withdrawn: 504 through every door; "
    + "the part in flight is counted once it lands, the withdrawn one never")
  void partTimedOutInFlight(String database) {
    GatewayFixture gateway = gateways.get(database);
    forEachDoor(BATCH_DOORS, (door, ids) -> {
      SqlConnection blocker = holdRows(gateway, ids[0]);
      Outcome outcome = await(door.send(gateway, batch(ids[0], 5, ids[1], 7), null));
      release(blocker);
      assertThat(outcome).isEqualTo(Outcome.refused(504, "outcome_unknown"));
      awaitSum(gateway, ids[0], 5);
      assertThat(sums(gateway, ids)).containsExactly(5L, 0L);
    });
  }

  @ParameterizedTest(name = "on {0}")
  @MethodSource("databases")
  @DisplayName("a batch that does not fit in what the coalescer has left: 503 through every door, nothing counted")
  void batchShed(String database) {
    GatewayFixture gateway = gateways.get(database);
    String[] stuck = {"shed-stuck-" + database, "shed-waiting-" + database};
    SqlConnection blocker = holdRows(gateway, stuck[0]);
    try {
      // one flush in flight (held), one counter pending behind it: room for one more counter, not for two
      assertThat(await(http(gateway, HttpMethod.POST, "/v1/counters/likes/" + stuck[0] + "/increments?ack=accepted", null,
        Buffer.buffer(), false)).status()).isEqualTo(202);
      assertThat(await(http(gateway, HttpMethod.POST, "/v1/counters/likes/" + stuck[1] + "/increments?ack=accepted", null,
        Buffer.buffer(), false)).status()).isEqualTo(202);
      forEachDoor(BATCH_DOORS, (door, ids) -> {
        Outcome outcome = await(door.send(gateway, batch(ids[0], 1, ids[1], 1), null));
        assertThat(outcome).isEqualTo(Outcome.refused(503, "overloaded"));
        assertThat(sums(gateway, ids)).containsExactly(0L, 0L);
      });
    } finally {
      release(blocker);
    }
    awaitSum(gateway, stuck[1], 1);
  }

  @ParameterizedTest(name = "on {0}")
  @MethodSource("databases")
  @DisplayName("a batch repeated with its idempotency key: 200, then 200 replayed through every door, counted once")
  void idempotentReplay(String database) {
    GatewayFixture gateway = gateways.get(database);
    forEachDoor(BATCH_DOORS, (door, ids) -> {
      String key = "replay-" + ids[0];
      assertThat(await(door.send(gateway, batch(ids[0], 4, ids[1], 6), key))).isEqualTo(Outcome.COMMITTED);
      assertThat(await(door.send(gateway, batch(ids[0], 4, ids[1], 6), key))).isEqualTo(Outcome.REPLAYED);
      assertThat(sums(gateway, ids)).containsExactly(4L, 6L);
    });
  }

  // ---- the scenarios: single increments ----

  @ParameterizedTest(name = "on {0}")
  @MethodSource("databases")
  @DisplayName("single increments: committed 200, overflow 422, in flight at the timeout 504, alike through the hot "
    + "route, the router, the bus and the client")
  void singleIncrements(String database) {
    GatewayFixture gateway = gateways.get(database);
    forEachDoor(SINGLE_DOORS, (door, ids) -> {
      assertThat(await(door.send(gateway, single(ids[0], 3), null))).isEqualTo(Outcome.COMMITTED);
      fillToNearMax(gateway, ids[1]);
      assertThat(await(door.send(gateway, single(ids[1], 100), null))).isEqualTo(Outcome.refused(422, "counter_overflow"));
      assertThat(sums(gateway, ids)).containsExactly(3L, SLOTS * NEAR_MAX);

      SqlConnection blocker = holdRows(gateway, ids[2]);
      Outcome timedOut = await(door.send(gateway, single(ids[2], 2), null));
      release(blocker);
      assertThat(timedOut).isEqualTo(Outcome.refused(504, "outcome_unknown"));
      awaitSum(gateway, ids[2], 2);
    });
  }

  // ---- helpers ----

  private interface DoorCase {
    void run(Door door, String[] ids);
  }

  /** Every door's own timeout is at most 30 s (the bus's send timeout); past this, the door has lost the request. */
  private static final long DOOR_ANSWER_SECONDS = 45;

  /**
   * Runs the case once per door, each on counters of its own, and names the door when an assertion fails or the door
   * never answers.
   */
  private static void forEachDoor(Map<String, Door> doors, DoorCase scenario) {
    List<AssertionError> failures = new ArrayList<>();
    int index = 0;
    StackWalker.StackFrame caller = StackWalker.getInstance().walk(frames -> frames.skip(1).findFirst().orElseThrow());
    for (Map.Entry<String, Door> door : doors.entrySet()) {
      String prefix = caller.getMethodName() + "-" + index++ + "-" + System.nanoTime() % 100_000;
      Door answered = (gateway, increments, key) -> door.getValue().send(gateway, increments, key)
        .timeout(DOOR_ANSWER_SECONDS, TimeUnit.SECONDS);
      try {
        scenario.run(answered, new String[] {prefix + "-a", prefix + "-b", prefix + "-c"});
      } catch (AssertionError | IllegalStateException e) {
        failures.add(new AssertionError("through the " + door.getKey() + ": " + e.getMessage(), e));
      }
    }
    if (!failures.isEmpty()) {
      throw failures.get(0);
    }
  }

  private static JsonArray batch(String first, long firstDelta, String second, long secondDelta) {
    return new JsonArray().add(increment(first, firstDelta)).add(increment(second, secondDelta));
  }

  private static JsonArray single(String id, long delta) {
    return new JsonArray().add(increment(id, delta));
  }

  private static JsonObject increment(String id, long delta) {
    return new JsonObject().put("type", "likes").put("id", id).put("delta", delta);
  }

  /**
   * The SUMs of the first two counters, as longs: four slots near the limit sum past it, and both the table's exact SUM
   * and {@code SLOTS * NEAR_MAX} keep the same low 64 bits, so they still compare equal.
   */
  private static List<Long> sums(GatewayFixture gateway, String[] ids) {
    List<Long> sums = new ArrayList<>();
    for (String id : List.of(ids[0], ids[1])) {
      sums.add(await(gateway.sumInTable("likes", id)));
    }
    return sums;
  }

  /** Every slot of the counter a little below the 64-bit limit: any positive flush on it overflows. */
  private static void fillToNearMax(GatewayFixture gateway, String id) {
    String marks = gateway.isPostgres() ? "($1, $2, $3, $4)" : "(?, ?, ?, ?)";
    for (int slot = 0; slot < SLOTS; slot++) {
      await(gateway.sql().preparedQuery("INSERT INTO " + gateway.table + " (record_type, record_id, slot, count) VALUES "
        + marks).execute(Tuple.of("likes", id, (short) slot, NEAR_MAX)));
    }
  }

  /**
   * A transaction of the test that inserts every slot row of the counter and stays open: the gateway's flush of that
   * counter waits on those rows until {@link #release}, which rolls back.
   */
  private static SqlConnection holdRows(GatewayFixture gateway, String id) {
    SqlConnection connection = await(gateway.sql().getConnection());
    Transaction transaction = await(connection.begin());
    String marks = gateway.isPostgres() ? "($1, $2, $3, $4)" : "(?, ?, ?, ?)";
    for (int slot = 0; slot < SLOTS; slot++) {
      await(connection.preparedQuery("INSERT INTO " + gateway.table + " (record_type, record_id, slot, count) VALUES "
        + marks).execute(Tuple.of("likes", id, (short) slot, 0L)));
    }
    return connection;
  }

  private static void release(SqlConnection blocker) {
    await(blocker.transaction().rollback().eventually(blocker::close));
  }

  private static void awaitSum(GatewayFixture gateway, String id, long expected) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (await(gateway.sumInTable("likes", id)) != expected && System.nanoTime() < deadline) {
      await(Future.<Void>future(done -> gateway.vertx.setTimer(50, timer -> done.complete())));
    }
    assertThat(await(gateway.sumInTable("likes", id))).as("SUM of %s once the flush in flight landed", id).isEqualTo(expected);
  }
}
