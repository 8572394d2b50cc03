package io.countergateway.internal.beacon;

import io.countergateway.config.MemoryBounds.Bound;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.PinnedBounds;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The beacon limits against the attacks, on a real database: many people behind one address are all counted,
 * a repeater inflates a page by its rate only, burnt budgets fold new ids into {@code (other)} and never cost a
 * neighbour a view of an existing page, and neither a flood nor a crowd of other networks resets a budget. Each case
 * has a namespace of its own, with budgets small enough to spend in a second; the gateway's client tables are pinned
 * to 100 records, so that the crowds below are many times what they hold. The gateway trusts 127.0.0.1 as a proxy,
 * so X-Forwarded-For names each request's client. The gateway is started twice: "burnt" has ten ids written before
 * the second start, which it reads as existing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class BeaconLimitsContract {
  private static final String BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    + "Chrome/120.0 Safari/537.36";
  GatewayFixture fixture;
  WebClient client;

  abstract JsonObject database();

  @BeforeAll
  void start() {
    JsonObject config = GatewayFixture.baseConfig(database(), "limits_counters");
    config.getJsonObject("http").put("trustedProxies", new JsonArray().add("127.0.0.1"));
    config.put("batching", new JsonObject().put("maxDelay", "1ms"));
    config.getJsonObject("namespaces")
      .put("office", new JsonObject().put("public", true))
      .put("hammered", new JsonObject().put("public", true))
      .put("burnt", budgets(20))
      .put("flooded", budgets(5).put("beacon", budgets(5).getJsonObject("beacon").put("perClientPerMinute", 60)
        .put("perClientBurst", 10)))
      .put("capped", budgets(10));
    GatewayFixture first = PinnedBounds.with(Map.of(Bound.TRACKED_CLIENTS, 100L), () -> GatewayFixture.start(config));
    for (int i = 0; i < 10; i++) {
      HttpResponse<Buffer> written = await(WebClient.create(first.vertx).post(first.gateway.port(), "127.0.0.1",
        "/v1/counters/burnt/existing-" + i + "/increments").send());
      assertThat(written.statusCode()).isEqualTo(200);
    }
    first.close();
    fixture = PinnedBounds.with(Map.of(Bound.TRACKED_CLIENTS, 100L), () -> GatewayFixture.start(config));
    client = WebClient.create(fixture.vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
      .setDefaultPort(fixture.gateway.port()).setKeepAlive(true), new PoolOptions().setHttp1MaxSize(64));
    await(fixture.vertx.timer(500)); // the existing ids are read as the gateway starts
  }

  /** A public namespace whose clients may add {@code idsPerClient} new ids an hour ({@code 16 ×} that a network). */
  private static JsonObject budgets(int idsPerClient) {
    return new JsonObject().put("public", true).put("beacon", new JsonObject().put("idsPerClientPerHour", idsPerClient));
  }

  @AfterAll
  void stop() {
    client.close();
    fixture.close();
  }

  private Future<HttpResponse<Buffer>> beacon(String type, String id, String address, String userAgent) {
    return client.get("/v1/beacon/" + type + "/" + id).putHeader("User-Agent", userAgent)
      .putHeader("X-Forwarded-For", address).send();
  }

  /** Waits for the beacons (each answered 204, counted or not) and lets the counted ones be written. */
  private void sendAll(List<Future<HttpResponse<Buffer>>> beacons) {
    for (HttpResponse<Buffer> response : await(Future.all(beacons)).<HttpResponse<Buffer>>list()) {
      assertThat(response.statusCode()).isEqualTo(204);
    }
    await(fixture.vertx.timer(300));
  }

  private long sum(String type, String id) {
    return await(fixture.sumInTable(type, id));
  }

  private long sumOf(String type, String prefix) {
    return await(fixture.sumsInTable(type, prefix)).values().stream().mapToLong(Long::longValue).sum();
  }

  /** The namespace's beacon outcomes as the dashboard reads them ({@code GET /v1/namespaces}). */
  private JsonObject outcomes(String type) {
    JsonArray namespaces = await(client.get("/v1/namespaces").send()).bodyAsJsonObject().getJsonArray("namespaces");
    for (int i = 0; i < namespaces.size(); i++) {
      if (namespaces.getJsonObject(i).getString("name").equals(type)) {
        return namespaces.getJsonObject(i).getJsonObject("beacons");
      }
    }
    throw new AssertionError("no namespace " + type);
  }

  @Test
  @DisplayName("30 people behind one address, 300 pages at 40 views a second for 3 s, default limits: every view counted")
  void peopleBehindOneAddress() {
    List<Future<HttpResponse<Buffer>>> beacons = new ArrayList<>();
    for (int view = 0; view < 120; view++) {
      String browser = BROWSER + " person/" + view % 30;
      beacons.add(beacon("office", "page-" + view * 7 % 300, "203.0.113.9", browser));
      await(fixture.vertx.timer(25));
    }
    sendAll(beacons);
    assertThat(sumOf("office", "page-")).isEqualTo(120);
    assertThat(outcomes("office").getJsonObject("dropped")).isEmpty();
  }

  @Test
  @DisplayName("one client repeating one page 100 times a second inflates it by 30 and one a second, no more")
  void repeaterIsLimited() {
    long started = System.nanoTime();
    List<Future<HttpResponse<Buffer>>> beacons = new ArrayList<>();
    for (int view = 0; view < 200; view++) {
      beacons.add(beacon("hammered", "home", "192.0.2.77", BROWSER));
      await(fixture.vertx.timer(10));
    }
    sendAll(beacons);
    double seconds = (System.nanoTime() - started) / 1e9;
    assertThat(sum("hammered", "home")).isBetween(30L, 30L + (long) Math.ceil(seconds) + 1);
    assertThat(await(beacon("hammered", "about", "192.0.2.77", BROWSER)).getHeader("X-Counter-Dropped")).isNull();
    sendAll(List.of());
    assertThat(sum("hammered", "about")).as("its other pages").isEqualTo(1);
  }

  @Test
  @DisplayName("16 addresses of a /24 burning ids: neighbours' views of existing pages all count, the junk lands in "
    + "(other) with its count")
  void burntNetworkFoldsNeverDrops() {
    List<Future<HttpResponse<Buffer>>> beacons = new ArrayList<>();
    for (int i = 0; i < 16 * 25; i++) {
      beacons.add(beacon("burnt", "junk-" + i, "198.51.100." + i % 16, BROWSER));
    }
    sendAll(beacons);
    long junkRows = await(fixture.sumsInTable("burnt", "junk-")).size();
    assertThat(junkRows).as("new ids of the /24: 16 clients' budgets of 20").isEqualTo(16 * 20);
    beacons.clear();
    for (int neighbour = 100; neighbour < 103; neighbour++) {
      for (int page = 0; page < 10; page++) {
        beacons.add(beacon("burnt", "existing-" + page, "198.51.100." + neighbour, BROWSER));
      }
      beacons.add(beacon("burnt", "fresh-" + neighbour, "198.51.100." + neighbour, BROWSER));
    }
    sendAll(beacons);
    assertThat(sumOf("burnt", "existing-")).as("10 written, 30 neighbours' views").isEqualTo(10 + 30);
    assertThat(sumOf("burnt", "fresh-")).as("neighbours' new ids").isZero();
    assertThat(sum("burnt", ReservedIds.OTHER)).as("junk and new ids past the /24's budget")
      .isEqualTo(16 * 25 - 16 * 20 + 3);
    JsonObject outcomes = outcomes("burnt");
    // the 16 clients' budgets and the /24's are spent together: each fold is the client's or the network's
    assertThat(outcomes.getJsonObject("folded").getLong("client_new_ids", 0L)
      + outcomes.getJsonObject("folded").getLong("network_new_ids", 0L)).isEqualTo(16 * 25 - 16 * 20 + 3);
    assertThat(outcomes.getJsonObject("dropped")).isEmpty();
  }

  @Test
  @DisplayName("a /48 flood of refused beacons resets no other client's budget")
  void floodResetsNoBudget() {
    List<Future<HttpResponse<Buffer>>> beacons = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      beacons.add(beacon("flooded", "own-" + i, "192.0.2.1", BROWSER));
    }
    sendAll(beacons);
    assertThat(await(fixture.sumsInTable("flooded", "own-"))).as("its budget of 5 new ids").hasSize(5);
    beacons.clear();
    for (int i = 0; i < 1_000; i++) {
      beacons.add(beacon("flooded", "flood-" + i, "2001:db8:66:" + Integer.toHexString(i) + "::1", BROWSER));
    }
    sendAll(beacons);
    assertThat(outcomes("flooded").getJsonObject("dropped").getLong("rate_limited")).isGreaterThan(700);
    // its flood ceiling refills at one a second: a beacon passes it, and its ids are still spent
    await(fixture.vertx.timer(1_100));
    beacons.clear();
    for (int i = 0; i < 5; i++) {
      beacons.add(beacon("flooded", "after-" + i, "192.0.2.1", BROWSER));
    }
    sendAll(beacons);
    assertThat(await(fixture.sumsInTable("flooded", "after-"))).as("new ids of the capped client").isEmpty();
  }

  @Test
  @DisplayName("a capped /24 stays capped while 1,500 other networks visit")
  void cappedNetworkStaysCapped() {
    List<Future<HttpResponse<Buffer>>> beacons = new ArrayList<>();
    for (int i = 0; i < 16 * 12; i++) {
      beacons.add(beacon("capped", "burn-" + i, "198.51.100." + i % 16, BROWSER));
    }
    sendAll(beacons);
    assertThat(await(fixture.sumsInTable("capped", "burn-"))).hasSize(16 * 10);
    beacons.clear();
    for (int network = 0; network < 1_500; network++) {
      beacons.add(beacon("capped", "visit-" + network, "10." + (network >> 8) + "." + (network & 255) + ".1", BROWSER));
    }
    sendAll(beacons);
    assertThat(await(fixture.sumsInTable("capped", "visit-"))).as("the other networks' pages").hasSize(1_500);
    beacons.clear();
    for (int i = 0; i < 16; i++) {
      beacons.add(beacon("capped", "again-" + i, "198.51.100." + (200 + i), BROWSER));
    }
    sendAll(beacons);
    assertThat(await(fixture.sumsInTable("capped", "again-"))).as("new ids of the capped /24").isEmpty();
  }
}
