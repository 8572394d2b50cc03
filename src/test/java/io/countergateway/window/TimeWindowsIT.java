package io.countergateway.window;

import io.countergateway.CounterClient;
import io.countergateway.CounterException;
import io.countergateway.internal.bus.Addresses;
import io.countergateway.testing.DirectSql;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.SettableClock;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("Time-windowed counters")
class TimeWindowsIT {
  private static final Instant START = Instant.parse("2026-11-22T10:59:30Z");
  private static final long TEN = Instant.parse("2026-11-22T10:00:00Z").getEpochSecond();
  private static final long ELEVEN = Instant.parse("2026-11-22T11:00:00Z").getEpochSecond();

  /** "views": hourly buckets kept two days, public (beacons); the fixture's plain namespaces beside it. */
  static GatewayFixture start(String database, SettableClock clock) {
    JsonObject config = GatewayFixture.baseConfig(DirectSql.config(database), "windowed_counters");
    config.getJsonObject("namespaces").put("views", new JsonObject().put("slots", 4).put("public", true)
      .put("window", new JsonObject().put("bucket", "hour").put("retention", "2d").put("maxFutureSkew", "5m")
        .put("maxRangeBuckets", 48)));
    return GatewayFixture.start(config, clock);
  }

  private static HttpResponse<Buffer> increment(GatewayFixture gateway, String type, String id, JsonObject body) {
    return await(gateway.http.post("/v1/counters/" + type + "/" + id + "/increments").sendJsonObject(body));
  }

  private static HttpResponse<Buffer> get(GatewayFixture gateway, String uri) {
    return await(gateway.http.get(uri).send());
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("increments land in the bucket of the gateway's clock, across an hour boundary, by HTTP, beacon and event bus")
  void incrementsLandInTheBucketOfTheirTime(String database) {
    SettableClock clock = new SettableClock(START);
    try (GatewayFixture gateway = start(database, clock)) {
      String id = "boundary-" + System.nanoTime();
      CounterClient client = new CounterClient(gateway.vertx);
      assertThat(increment(gateway, "views", id, new JsonObject().put("delta", 3)).statusCode()).isEqualTo(200);
      assertThat(get(gateway, "/v1/beacon/views/" + id).statusCode()).isEqualTo(204);
      await(client.increment("views", id, 1));
      clock.advance(Duration.ofSeconds(40)); // 11:00:10
      assertThat(increment(gateway, "views", id, new JsonObject().put("delta", 2)).statusCode()).isEqualTo(200);
      await(gateway.vertx.timer(300)); // the beacon was only accepted: let its flush commit

      assertThat(await(gateway.bucketsInTable("views", id))).isEqualTo(Map.of(TEN, 5L, ELEVEN, 2L));
      assertThat(await(gateway.sumInTable("views", id))).as("nothing in the plain table").isZero();

      JsonObject range = get(gateway, "/v1/counters/views/" + id + "?from=2026-11-22T10:00:00Z&to=2026-11-22T12:00:00Z")
        .bodyAsJsonObject();
      assertThat(range.getString("bucket")).isEqualTo("hour");
      assertThat(range.getJsonArray("buckets")).isEqualTo(new JsonArray()
        .add(new JsonObject().put("start", "2026-11-22T10:00:00Z").put("value", 5))
        .add(new JsonObject().put("start", "2026-11-22T11:00:00Z").put("value", 2)));
      assertThat(range.getLong("total")).isEqualTo(7);

      JsonObject current = get(gateway, "/v1/counters/views/" + id).bodyAsJsonObject();
      assertThat(current.getJsonArray("buckets")).as("the current bucket only").isEqualTo(new JsonArray()
        .add(new JsonObject().put("start", "2026-11-22T11:00:00Z").put("value", 2)));
      assertThat(current.getLong("total")).as("over the retention").isEqualTo(7);

      assertThat(await(client.buckets("views", id, Instant.ofEpochSecond(TEN), Instant.ofEpochSecond(ELEVEN))))
        .containsExactly(Map.entry(Instant.ofEpochSecond(TEN), 5L));

      clock.advance(Duration.ofDays(3));
      assertThat(get(gateway, "/v1/counters/views/" + id).bodyAsJsonObject().getLong("total"))
        .as("past the retention nothing is counted any more").isZero();
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("an explicit \"at\" is honoured inside the retention and refused (400 invalid_at, nothing written) outside it")
  void atIsHonouredAndBounded(String database) {
    SettableClock clock = new SettableClock(START);
    try (GatewayFixture gateway = start(database, clock)) {
      String id = "at-" + System.nanoTime();
      assertThat(increment(gateway, "views", id, new JsonObject().put("delta", 4).put("at", "2026-11-22T08:15:00Z"))
        .statusCode()).isEqualTo(200);
      assertThat(increment(gateway, "views", id, new JsonObject().put("at", "2026-11-22T11:04:00Z")).statusCode())
        .as("within maxFutureSkew").isEqualTo(200);
      await(new CounterClient(gateway.vertx).increment("views", id, 3, Instant.parse("2026-11-22T11:00:00Z")));
      await(new CounterClient(gateway.vertx).incrementAll(new JsonArray()
        .add(new JsonObject().put("type", "views").put("id", id).put("delta", 2).put("at", "2026-11-21T12:30:00+01:00"))));
      long eight = Instant.parse("2026-11-22T08:00:00Z").getEpochSecond();
      long elevenYesterday = Instant.parse("2026-11-21T11:00:00Z").getEpochSecond();
      assertThat(await(gateway.bucketsInTable("views", id))).isEqualTo(Map.of(eight, 4L, ELEVEN, 4L, elevenYesterday, 2L));
      assertThat(get(gateway, "/v1/counters/views/" + id).bodyAsJsonObject().getLong("total"))
        .as("the retention's total counts what is up to maxFutureSkew ahead").isEqualTo(10);

      long rowsBefore = await(gateway.rowsInWindows()) + await(gateway.rowsInTable());
      for (JsonObject refused : List.of(
        new JsonObject().put("at", "2026-11-22T11:05:01Z"),
        new JsonObject().put("at", "2026-11-19T23:59:59Z"),
        new JsonObject().put("at", "yesterday"),
        new JsonObject().put("at", "2026-11-22T10:00:00"),
        new JsonObject().putNull("at"))) {
        HttpResponse<Buffer> response = increment(gateway, "views", id, refused);
        assertThat(response.statusCode()).as(refused.encode()).isEqualTo(400);
        assertThat(response.bodyAsJsonObject().getString("error")).isEqualTo("invalid_at");
        assertThat(response.bodyAsJsonObject().getString("field")).isEqualTo("at");
      }
      HttpResponse<Buffer> plain = increment(gateway, "likes", id, new JsonObject().put("at", "2026-11-22T10:00:00Z"));
      assertThat(plain.statusCode()).isEqualTo(400);
      assertThat(plain.bodyAsJsonObject().getString("field")).isEqualTo("at");
      HttpResponse<Buffer> batch = await(gateway.http.post("/v1/increments").putHeader("Content-Type", "application/json").sendBuffer(new JsonArray()
        .add(new JsonObject().put("type", "views").put("id", id))
        .add(new JsonObject().put("type", "views").put("id", id).put("at", "2027-01-01T00:00:00Z")).toBuffer()));
      assertThat(batch.statusCode()).as("a batch is refused whole").isEqualTo(400);
      assertThat(batch.bodyAsJsonObject().getString("field")).isEqualTo("increments[1].at");
      assertThatThrownBy(() -> await(new CounterClient(gateway.vertx).incrementAll(new JsonArray()
        .add(new JsonObject().put("type", "views").put("id", id).put("at", "2020-01-01T00:00:00Z")))))
        .hasCauseInstanceOf(CounterException.class).cause().hasMessageContaining("retention");
      HttpResponse<Buffer> keyed = await(gateway.http.post("/v1/counters/views/" + id + "/increments")
        .putHeader("Idempotency-Key", "k-" + id).sendJsonObject(new JsonObject()));
      assertThat(keyed.statusCode()).as("idempotency keys write the plain table").isEqualTo(400);
      assertThat(keyed.bodyAsJsonObject().getString("error")).isEqualTo("idempotency_unsupported");
      assertThat(await(gateway.rowsInWindows()) + await(gateway.rowsInTable())).isEqualTo(rowsBefore);
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("range reads, totals and top-N are exact after 32 concurrent writers over two buckets")
  void rangeReadsTotalsAndTopAreExactUnderConcurrentWriters(String database) {
    SettableClock clock = new SettableClock(START);
    try (GatewayFixture gateway = start(database, clock)) {
      String prefix = "conc-" + System.nanoTime() + "-";
      Map<String, Long> expected = new HashMap<>();
      List<Future<HttpResponse<Buffer>>> writes = new ArrayList<>();
      for (int writer = 0; writer < 32; writer++) {
        for (int i = 0; i < 25; i++) {
          String id = prefix + ThreadLocalRandom.current().nextInt(12);
          long delta = 1 + ThreadLocalRandom.current().nextInt(5);
          String at = i % 2 == 0 ? "2026-11-22T10:30:00Z" : "2026-11-22T09:10:00Z";
          expected.merge(id, delta, Long::sum);
          writes.add(gateway.http.post("/v1/counters/views/" + id + "/increments")
            .sendJsonObject(new JsonObject().put("delta", delta).put("at", at)));
        }
      }
      await(Future.all(writes));
      assertThat(writes).allMatch(w -> w.result().statusCode() == 200);

      StringBuilder ids = new StringBuilder();
      expected.keySet().forEach(id -> ids.append("&id=").append(id));
      JsonObject totals = get(gateway, "/v1/counters/views?from=2026-11-22T09:00:00Z&to=2026-11-22T11:00:00Z" + ids)
        .bodyAsJsonObject();
      Map<String, Long> read = new HashMap<>();
      totals.getJsonArray("counters").forEach(c -> read.put(((JsonObject) c).getString("id"), ((JsonObject) c).getLong("total")));
      assertThat(read).isEqualTo(expected);

      List<Map.Entry<String, Long>> ranked = expected.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey())).toList();
      JsonObject top = get(gateway, "/v1/counters/views?top=3&from=2026-11-22T09:00:00Z&to=2026-11-22T11:00:00Z")
        .bodyAsJsonObject();
      assertThat(top.getJsonArray("top")).isEqualTo(new JsonArray(ranked.subList(0, 3).stream()
        .map(e -> new JsonObject().put("id", e.getKey()).put("total", e.getValue())).toList()));
      assertThat(await(new CounterClient(gateway.vertx).top("views", 3, Instant.parse("2026-11-22T09:00:00Z"),
        Instant.parse("2026-11-22T11:00:00Z")))).isEqualTo(ranked.subList(0, 3));
      assertThat(await(new CounterClient(gateway.vertx).totals("views", List.copyOf(expected.keySet()),
        Instant.parse("2026-11-22T10:00:00Z"), Instant.parse("2026-11-22T10:00:01Z"))).values().stream()
        .mapToLong(Long::longValue).sum()).as("the 10:00 bucket alone").isLessThan(expected.values().stream()
          .mapToLong(Long::longValue).sum());
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("bad ranges and top-N requests get a 400 naming the field, and write nothing")
  void badRangesAreRefused(String database) {
    SettableClock clock = new SettableClock(START);
    try (GatewayFixture gateway = start(database, clock)) {
      long rowsBefore = await(gateway.rowsInWindows()) + await(gateway.rowsInTable());
      Map<String, String> refused = Map.of(
        "/v1/counters/views/x?from=2026-11-22T11:00:00Z&to=2026-11-22T10:00:00Z", "to",
        "/v1/counters/views/x?from=2026-11-01T00:00:00Z&to=2026-11-22T10:00:00Z", "to",
        "/v1/counters/views/x?from=2026-11-22T10:00:00Z", "to",
        "/v1/counters/views/x?from=soon&to=2026-11-22T10:00:00Z", "from",
        "/v1/counters/likes/x?from=2026-11-22T10:00:00Z&to=2026-11-22T11:00:00Z", "from",
        "/v1/counters/likes?top=3&unique=true", "unique",
        "/v1/counters/views?top=0", "top",
        "/v1/counters/views?top=3&id=a", "top",
        "/v1/counters/views/x?to=2026-11-22T11:00:00Z&to=2026-11-22T12:00:00Z", "to");
      refused.forEach((uri, field) -> {
        HttpResponse<Buffer> response = get(gateway, uri);
        assertThat(response.statusCode()).as(uri).isEqualTo(400);
        assertThat(response.bodyAsJsonObject().getString("field")).as(uri).isEqualTo(field);
        assertThat(response.bodyAsJsonObject().getString("message")).as(uri).isNotBlank();
      });
      assertThatThrownBy(() -> await(gateway.vertx.eventBus().request(Addresses.GET, new JsonObject().put("type", "views")
        .put("id", "x").put("from", "2026-11-22T11:00:00Z").put("to", "2026-11-22T10:00:00Z"))))
        .hasMessageContaining("to must be after");
      assertThat(await(gateway.rowsInWindows()) + await(gateway.rowsInTable())).isEqualTo(rowsBefore);
    }
  }
}
