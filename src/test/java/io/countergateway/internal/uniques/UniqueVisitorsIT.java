package io.countergateway.internal.uniques;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import io.countergateway.internal.store.SchemaUpgrade;
import io.countergateway.testing.DirectSql;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.SettableClock;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Unique visitors without cookies")
class UniqueVisitorsIT {
  private static final Instant MORNING = Instant.parse("2026-11-22T09:30:00Z");
  private static final long DAY = MORNING.getEpochSecond() / 86_400;
  private static final String BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0";
  /** A salt the test stores itself for the first day, so the 10,000-visitor estimate is the same on every run. */
  private static final byte[] FIXED_SALT = HexFormat.of().parseHex("5e1f0c2a9b7d4e3f60718293a4b5c6d7e8f901122334455667788990aabbccdd");

  /** "visits": daily buckets kept three days, public, counting unique visitors; merges every 100 ms. */
  static JsonObject config(String database, String table, List<String> trustedProxies) {
    JsonObject config = GatewayFixture.baseConfig(DirectSql.config(database), table);
    config.getJsonObject("http").put("instances", 1).put("trustedProxies", new JsonArray(trustedProxies));
    config.put("uniques", new JsonObject().put("flushInterval", "100ms"));
    // many visits come from one address here: the per-client beacon limits are off (BeaconAbuseIT holds them)
    config.getJsonObject("namespaces").put("visits", new JsonObject().put("slots", 4).put("public", true).put("unique", true)
      .put("beacon", new JsonObject().put("perClientPerMinute", 0).put("idsPerClientPerHour", 0))
      .put("window", new JsonObject().put("bucket", "day").put("retention", "3d").put("maxRangeBuckets", 10)));
    return config;
  }

  private static Future<HttpResponse<Buffer>> beacon(GatewayFixture gateway, String id, String forwardedFor, String userAgent) {
    var request = gateway.http.get("/v1/beacon/visits/" + id).putHeader("User-Agent", userAgent);
    if (forwardedFor != null) {
      request.putHeader("X-Forwarded-For", forwardedFor);
    }
    return request.send();
  }

  /** Sends the visits {@code from}…{@code to}-1 as beacons, at most 128 at a time, spread over the gateways. */
  private static void visit(List<GatewayFixture> gateways, String id, int from, int to, boolean distinctAddresses) {
    List<Future<?>> window = new ArrayList<>();
    for (int i = from; i < to; i++) {
      GatewayFixture gateway = gateways.get(i % gateways.size());
      window.add(beacon(gateway, id, distinctAddresses ? address(i) : "10.0.0.1", BROWSER)
        .map(response -> {
          assertThat(response.statusCode()).isEqualTo(204);
          return response;
        }));
      if (window.size() == 128) {
        await(Future.all(window));
        window.clear();
      }
    }
    await(Future.all(window));
  }

  private static String address(int visitor) {
    return "10." + (visitor >> 16 & 0xFF) + "." + (visitor >> 8 & 0xFF) + "." + (visitor & 0xFF);
  }

  private static JsonObject read(GatewayFixture gateway, String uri) {
    HttpResponse<Buffer> response = await(gateway.http.get(uri).send());
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(200);
    return response.bodyAsJsonObject();
  }

  /** The counter's distinct visitors once its count has reached {@code total} and the sketches have been merged. */
  private static JsonObject settled(GatewayFixture gateway, String uri, long total) {
    for (int attempt = 0; attempt < 100; attempt++) {
      JsonObject answer = read(gateway, uri);
      if (answer.getLong("total") == total) {
        await(gateway.vertx.timer(500)); // a few merge intervals
        return read(gateway, uri);
      }
      await(gateway.vertx.timer(100));
    }
    throw new AssertionError("the total never reached " + total + ": " + read(gateway, uri));
  }

  /** A replica of {@code config} with a journal directory of its own: two gateways never share one. */
  private static JsonObject withOwnJournal(JsonObject config) {
    return config.copy().put("journal", new JsonObject().put("dir", GatewayFixture.freshJournalDir()));
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("10,000 distinct visitors behind a trusted proxy, spread over three replicas, are estimated within the sketch's two-sigma error and inside the bounds the answer gives")
  void tenThousandVisitorsOverThreeReplicas(String database) {
    String table = "uniques_replicas_" + System.nanoTime() % 1_000_000;
    SettableClock clock = new SettableClock(MORNING);
    JsonObject config = config(database, table, List.of("127.0.0.1", "::1"));
    List<GatewayFixture> gateways = new ArrayList<>();
    try {
      gateways.add(GatewayFixture.start(config, clock));
      String salts = table + "_visitor_salts (day, salt) VALUES (" + (database.equals("postgres") ? "$1, $2)" : "?, ?)");
      await(gateways.get(0).sql().preparedQuery("INSERT INTO " + salts).execute(Tuple.of(DAY, Buffer.buffer(FIXED_SALT))));
      gateways.add(GatewayFixture.start(withOwnJournal(config), clock));
      gateways.add(GatewayFixture.start(withOwnJournal(config), clock));

      visit(gateways, "home", 0, 10_000, true);

      JsonObject answer = settled(gateways.get(1), "/v1/counters/visits/home?unique=true", 10_000);
      long unique = answer.getLong("unique");
      double error = VisitorSketches.relativeError(12);
      assertThat(Math.abs(unique - 10_000)).as("estimate %d", unique).isLessThanOrEqualTo((long) (10_000 * error));
      assertThat(answer.getJsonObject("uniqueBounds").getLong("lower")).isLessThanOrEqualTo(10_000);
      assertThat(answer.getJsonObject("uniqueBounds").getLong("upper")).isGreaterThanOrEqualTo(10_000);
      List<Short> slots = await(gateways.get(0).sql().query("SELECT DISTINCT slot FROM " + table + "_uniques").execute()
        .map(rows -> {
          List<Short> found = new ArrayList<>();
          rows.forEach(row -> found.add(row.getShort(0)));
          return found;
        }));
      assertThat(slots).as("one slot row per replica's lane").hasSize(3);
    } finally {
      gateways.forEach(GatewayFixture::close);
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("repeat visits on the same day add no visitor, a new day's salt counts the same visitors afresh, and a range sums the days")
  void repeatVisitsAndANewDay(String database) {
    String table = "uniques_days_" + System.nanoTime() % 1_000_000;
    SettableClock clock = new SettableClock(MORNING);
    try (GatewayFixture gateway = GatewayFixture.start(config(database, table, List.of("127.0.0.1", "::1")), clock)) {
      visit(List.of(gateway), "pricing", 0, 50, true);
      visit(List.of(gateway), "pricing", 0, 50, true);
      visit(List.of(gateway), "pricing", 0, 50, true);
      JsonObject today = settled(gateway, "/v1/counters/visits/pricing?unique=true", 150);
      assertThat(today.getLong("unique")).isEqualTo(50);

      clock.advance(Duration.ofDays(1));
      visit(List.of(gateway), "pricing", 0, 50, true);
      JsonObject tomorrow = settled(gateway, "/v1/counters/visits/pricing?unique=true&from=2026-11-23T00:00:00Z"
        + "&to=2026-11-24T00:00:00Z", 50);
      assertThat(tomorrow.getLong("unique")).as("the same 50 visitors, hashed with the new day's salt").isEqualTo(50);

      JsonObject twoDays = read(gateway, "/v1/counters/visits/pricing?unique=true&from=2026-11-22T00:00:00Z"
        + "&to=2026-11-24T00:00:00Z");
      assertThat(twoDays.getLong("total")).isEqualTo(200);
      assertThat(twoDays.getLong("unique")).as("distinct visitors of each day, summed").isEqualTo(100);
      assertThat(await(gateway.sql().query("SELECT COUNT(DISTINCT salt) FROM " + table + "_visitor_salts").execute())
        .iterator().next().getLong(0)).isEqualTo(2);
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("X-Forwarded-For from a peer that is not a trusted proxy is ignored: every beacon is the peer's one visitor")
  void forwardedForFromAnUntrustedPeerIsIgnored(String database) {
    String table = "uniques_untrusted_" + System.nanoTime() % 1_000_000;
    try (GatewayFixture gateway = GatewayFixture.start(config(database, table, List.of("192.0.2.0/24")),
      new SettableClock(MORNING))) {
      // 25: within one client's burst of views of one page (beacon.perPageBurst, 30)
      visit(List.of(gateway), "about", 0, 25, true);
      assertThat(settled(gateway, "/v1/counters/visits/about?unique=true", 25).getLong("unique")).isEqualTo(1);
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("unique=true adds distinct visitors to range and top-N answers; a bad value or a namespace without uniques gets 400 naming the field")
  void uniqueOnRangeAndTopReads(String database) {
    String table = "uniques_reads_" + System.nanoTime() % 1_000_000;
    try (GatewayFixture gateway = GatewayFixture.start(config(database, table, List.of("127.0.0.1", "::1")),
      new SettableClock(MORNING))) {
      visit(List.of(gateway), "a", 0, 30, true);
      visit(List.of(gateway), "b", 0, 12, true);
      visit(List.of(gateway), "b", 0, 12, true);
      settled(gateway, "/v1/counters/visits/a?unique=true", 30);
      settled(gateway, "/v1/counters/visits/b?unique=true", 24);

      JsonObject totals = read(gateway, "/v1/counters/visits?id=a&id=b&unique=true");
      assertThat(totals.getJsonArray("counters").getJsonObject(1).getLong("total")).isEqualTo(24);
      assertThat(totals.getJsonArray("counters").getJsonObject(1).getLong("unique")).isEqualTo(12);
      JsonObject top = read(gateway, "/v1/counters/visits?top=2&unique=true");
      assertThat(top.getJsonArray("top").getJsonObject(0).getString("id")).isEqualTo("a");
      assertThat(top.getJsonArray("top").getJsonObject(0).getLong("unique")).isEqualTo(30);
      assertThat(top.getJsonArray("top").getJsonObject(1).getLong("unique")).isEqualTo(12);
      assertThat(read(gateway, "/v1/counters/visits/a").containsKey("unique")).as("absent unless asked for").isFalse();

      for (String uri : List.of("/v1/counters/visits/a?unique=yes", "/v1/counters/pageviews/a?unique=true",
        "/v1/counters/visits/a?unique=true&unique=true")) {
        HttpResponse<Buffer> refused = await(gateway.http.get(uri).send());
        assertThat(refused.statusCode()).as(uri).isEqualTo(400);
        assertThat(refused.bodyAsJsonObject().getString("field")).as(uri).isEqualTo("unique");
      }
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("no IP address, User-Agent or salt is ever written to a table (salts only to theirs) or to a log line")
  void nothingThatIdentifiesAVisitorIsKept(String database) {
    String table = "uniques_private_" + System.nanoTime() % 1_000_000;
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    Logger ours = (Logger) LoggerFactory.getLogger("io.countergateway");
    Level before = ours.getLevel();
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    root.addAppender(logged);
    ours.setLevel(Level.DEBUG);
    List<String> addresses = new ArrayList<>();
    String userAgent = BROWSER + " private-marker-7f3a";
    SettableClock clock = new SettableClock(MORNING);
    try (GatewayFixture gateway = GatewayFixture.start(config(database, table, List.of("127.0.0.1", "::1")), clock)) {
      List<Future<?>> sent = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        String address = "198.51.100." + (i + 1);
        addresses.add(address);
        sent.add(beacon(gateway, "secret-page", "203.0.113.9, " + address, userAgent));
      }
      await(Future.all(sent));
      clock.advance(Duration.ofDays(1));
      await(beacon(gateway, "secret-page", addresses.get(0), userAgent));
      settled(gateway, "/v1/counters/visits/secret-page?unique=true&from=2026-11-22T00:00:00Z&to=2026-11-24T00:00:00Z", 21);
      assertThat(read(gateway, "/v1/counters/visits/secret-page?unique=true&from=2026-11-22T00:00:00Z"
        + "&to=2026-11-23T00:00:00Z").getLong("unique")).isEqualTo(20);

      List<String> salts = new ArrayList<>();
      for (Row row : await(gateway.sql().query("SELECT salt FROM " + table + "_visitor_salts").execute())) {
        salts.add(HexFormat.of().formatHex(row.getBuffer(0).getBytes()));
      }
      assertThat(salts).hasSize(2);
      for (String each : SchemaUpgrade.tables(table)) {
        String dump = dump(gateway, each);
        for (String address : addresses) {
          assertThat(dump).as(each).doesNotContain(address);
        }
        assertThat(dump).as(each).doesNotContain("private-marker");
        // the browser's name is kept only as the count of the site's views in that browser, never beside a visitor
        assertThat(dump.lines().filter(line -> line.contains("Firefox"))).as(each)
          .allMatch(line -> line.startsWith("visits~browsers|Firefox|"));
        if (!each.endsWith("_visitor_salts")) {
          salts.forEach(salt -> assertThat(dump).as(each).doesNotContainIgnoringCase(salt));
        }
      }
    } finally {
      root.detachAppender(logged);
      ours.setLevel(before);
    }
    assertThat(logged.list).as("log lines captured").isNotEmpty();
    for (ILoggingEvent event : logged.list) {
      String line = event.getFormattedMessage() + (event.getThrowableProxy() == null ? ""
        : ThrowableProxyUtil.asString(event.getThrowableProxy()));
      assertThat(line).doesNotContain("private-marker").doesNotContain("198.51.100.");
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a graceful stop merges the sketches held, a merge that fails is retried until it lands, and sketches and salts leave with the retention")
  void sketchesSurviveStopsAndFailuresAndLeaveWithTheRetention(String database) {
    String table = "uniques_life_" + System.nanoTime() % 1_000_000;
    SettableClock clock = new SettableClock(MORNING);
    JsonObject config = config(database, table, List.of("127.0.0.1", "::1"));
    config.getJsonObject("namespaces").getJsonObject("visits").getJsonObject("window").put("expiryInterval", "1s");
    JsonObject rarely = config.copy().put("uniques", new JsonObject().put("flushInterval", "1m"));
    try (GatewayFixture first = GatewayFixture.start(rarely, clock)) {
      visit(List.of(first), "docs", 0, 25, true);
      // no wait: the sketch waits for its minute, or for the stop, which merges every visit it answered (its day's
      // salt perhaps still on its way)
    }

    try (GatewayFixture gateway = GatewayFixture.start(config, clock)) {
      assertThat(read(gateway, "/v1/counters/visits/docs?unique=true").getLong("unique")).as("merged by the stop")
        .isEqualTo(25);
      String away = database.equals("postgres") ? "ALTER TABLE " + table + "_uniques RENAME TO " + table + "_away"
        : "RENAME TABLE " + table + "_uniques TO " + table + "_away";
      String back = database.equals("postgres") ? "ALTER TABLE " + table + "_away RENAME TO " + table + "_uniques"
        : "RENAME TABLE " + table + "_away TO " + table + "_uniques";
      await(gateway.sql().query(away).execute());
      visit(List.of(gateway), "docs", 20, 40, true);
      await(gateway.vertx.timer(600)); // merges fail meanwhile
      await(gateway.sql().query(back).execute());
      assertThat(settled(gateway, "/v1/counters/visits/docs?unique=true", 45).getLong("unique"))
        .as("visitors 0-39: the stop's 25 and the retried 20, 5 of them the same").isEqualTo(40);

      clock.advance(Duration.ofDays(1));
      visit(List.of(gateway), "docs", 0, 1, true); // the second day's salt
      clock.advance(Duration.ofDays(3)); // day 1 past the 3-day retention, both salts older than 48 hours
      long deadline = System.nanoTime() + 10_000_000_000L;
      long sketches;
      long salts;
      do {
        await(gateway.vertx.timer(200));
        sketches = await(gateway.sql().query("SELECT COUNT(*) FROM " + table + "_uniques WHERE bucket_start = "
          + DAY * 86_400).execute()).iterator().next().getLong(0);
        salts = await(gateway.sql().query("SELECT COUNT(*) FROM " + table + "_visitor_salts").execute()).iterator().next()
          .getLong(0);
      } while ((sketches > 0 || salts > 0) && System.nanoTime() < deadline);
      assertThat(sketches).as("the first day's sketches").isZero();
      assertThat(salts).as("salts of days more than 48 hours old").isZero();
      assertThat(await(gateway.bucketsInTable("visits", "docs"))).containsOnlyKeys((DAY + 1) * 86_400);
    }
  }

  /** Every value of every row of {@code table}, bytes as hex, as one text. */
  private static String dump(GatewayFixture gateway, String table) {
    StringBuilder text = new StringBuilder();
    for (Row row : await(gateway.sql().query("SELECT * FROM " + table).execute())) {
      for (int i = 0; i < row.size(); i++) {
        Object value = row.getValue(i);
        text.append(value instanceof Buffer bytes ? HexFormat.of().formatHex(bytes.getBytes()) : String.valueOf(value))
          .append('|');
      }
      text.append('\n');
    }
    return text.toString();
  }
}
