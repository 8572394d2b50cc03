package io.countergateway.internal.beacon;

import io.countergateway.internal.model.PageIds;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
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
import java.util.Random;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The beacon attacks of the issue, bounded and on loopback: a flood of made-up crawler user agents, one client
 * sending beacons as fast as it can, and one client inventing ids. "pageviews" has the defaults of a public namespace;
 * "open" switches the per-client rate off to show the id cap alone; "paths" narrows its ids. The gateway trusts
 * 127.0.0.1 as a proxy, so X-Forwarded-For names each request's client.
 */
@DisplayName("Beacons under abuse")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BeaconAbuseIT {
  static final String BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 "
    + "Safari/537.36";
  GatewayFixture fixture;
  WebClient wide;
  final Random random = new Random(42);

  @BeforeAll
  void start() {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "abuse_counters");
    // one ingest verticle, so the flood's 400 connections put 400 new user agents in flight on one event loop
    config.getJsonObject("http").put("instances", 1).put("trustedProxies", new JsonArray().add("127.0.0.1"));
    config.put("batching", new JsonObject().put("maxDelay", "1ms"));
    config.getJsonObject("namespaces")
      .put("open", new JsonObject().put("public", true).put("beacon", new JsonObject().put("perClientPerMinute", 0)))
      .put("paths", new JsonObject().put("public", true).put("maxIdLength", 64).put("idPattern", "[a-z0-9-]+"))
      .put("slow", new JsonObject().put("public", true).put("beacon", new JsonObject().put("perClientPerMinute", 6)
        .put("perClientBurst", 10)));
    fixture = GatewayFixture.start(config);
    wide = WebClient.create(fixture.vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
      .setDefaultPort(fixture.gateway.port()).setKeepAlive(true), new PoolOptions().setHttp1MaxSize(400));
  }

  @AfterAll
  void stop() {
    wide.close();
    fixture.close();
  }

  private Future<HttpResponse<Buffer>> beacon(String type, String id, String client, String userAgent) {
    return wide.get("/v1/beacon/" + type + "/" + id).putHeader("User-Agent", userAgent)
      .putHeader("X-Forwarded-For", client).send();
  }

  private String randomText(int length) {
    StringBuilder text = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      text.append((char) ('a' + random.nextInt(26)));
    }
    return text.toString();
  }

  /** Sends the beacons, all answered 204 (counted or not, the answer is the same), and lets them be written. */
  private void sendAll(List<Future<HttpResponse<Buffer>>> beacons) {
    for (HttpResponse<Buffer> response : await(Future.all(beacons)).<HttpResponse<Buffer>>list()) {
      assertThat(response.statusCode()).isEqualTo(204);
    }
    await(fixture.vertx.timer(300));
  }

  @Test
  @DisplayName("made-up crawler user agents from many addresses are never counted, and a browser meanwhile is")
  void crawlerFloodFailsClosed() {
    List<Future<HttpResponse<Buffer>>> beacons = new ArrayList<>();
    for (int i = 0; i < 1_500; i++) {
      beacons.add(beacon("pageviews", "bot-target", "198.18." + (i >> 8) + "." + (i & 255),
        "Googlebot/2.1 (+http://www.google.com/bot.html) " + randomText(20 + random.nextInt(400))));
      if (i % 15 == 0) {
        beacons.add(beacon("pageviews", "browser-page-" + i / 15, "203.0.113.5", BROWSER));
      }
    }
    for (int i = 0; i < 50; i++) {
      beacons.add(beacon("pageviews", "bot-target", "198.19.0." + i, "Googlebot/2.1 " + randomText(2_000)));
    }
    sendAll(beacons);
    assertThat(await(fixture.sumInTable("pageviews", "bot-target"))).as("crawler beacons counted").isZero();
    assertThat(await(fixture.sumsInTable("pageviews", "browser-page-")).values().stream().mapToLong(Long::longValue).sum())
      .as("browser beacons counted").isEqualTo(100L);
  }

  @Test
  @DisplayName("one client sending beacons of one page as fast as it can inflates it by the page's burst and rate, no more")
  void oneClientIsRateLimited() {
    long started = System.nanoTime();
    List<Future<HttpResponse<Buffer>>> beacons = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      beacons.add(beacon("pageviews", "hammered", "192.0.2.77", BROWSER));
    }
    sendAll(beacons);
    double seconds = (System.nanoTime() - started) / 1e9;
    // defaults: a burst of 30, then 60 a minute (one a second) per client and page
    assertThat(await(fixture.sumInTable("pageviews", "hammered"))).isBetween(30L, 30L + (long) Math.ceil(seconds) + 1);
  }

  @Test
  @DisplayName("one client inventing ids adds its budget of new ids; the views past it are counted under (other)")
  void inventedIdsAreBounded() {
    List<Future<HttpResponse<Buffer>>> beacons = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      beacons.add(beacon("pageviews", "inv-" + randomText(200), "192.0.2.88", BROWSER));
      beacons.add(beacon("open", "inv-" + randomText(200), "192.0.2.88", BROWSER));
    }
    sendAll(beacons);
    Map<String, Long> limited = await(fixture.sumsInTable("pageviews", "inv-"));
    Map<String, Long> open = await(fixture.sumsInTable("open", "inv-"));
    assertThat(limited.size()).as("new ids: the client's budget, 300 an hour").isBetween(300, 301);
    assertThat(open.size()).as("new ids, no flood ceiling: the same budget").isBetween(300, 301);
    // with the flood ceiling on, its burst of 1,200 (and 100 a second) passes: those past the budget of new ids fold
    assertThat(await(fixture.sumInTable("pageviews", ReservedIds.OTHER))).isBetween(1_200L - 301, 2_000L - limited.size());
    assertThat(await(fixture.sumInTable("open", ReservedIds.OTHER))).isEqualTo(2_000L - open.size());
  }

  @Test
  @DisplayName("beacons from 3,000 /64s of one /48 count within the /48's budget (16 clients' worth), not 3,000 clients'")
  void prefixesDoNotMultiplyTheLimits() {
    long started = System.nanoTime();
    List<Future<HttpResponse<Buffer>>> beacons = new ArrayList<>();
    for (int i = 0; i < 3_000; i++) {
      beacons.add(beacon("slow", "v6-" + i, "2001:db8:77:" + Integer.toHexString(i) + "::1", BROWSER));
    }
    sendAll(beacons);
    double seconds = (System.nanoTime() - started) / 1e9;
    Map<String, Long> counted = await(fixture.sumsInTable("slow", "v6-"));
    // "slow": bursts of 10, 6 a minute per client; the /48 gets 16 times that: 160, and 1.6 a second
    assertThat(counted.values().stream().mapToLong(Long::longValue).sum())
      .isBetween(160L, 160L + (long) Math.ceil(seconds * 1.6) + 1);
  }

  @Test
  @DisplayName("a namespace's own maxIdLength shortens longer ids; its idPattern folds other ids into (invalid), counted")
  void namespaceIdRules() {
    String longId = randomText(65);
    HttpResponse<Buffer> tooLong = await(beacon("paths", longId, "192.0.2.99", BROWSER));
    assertThat(tooLong.statusCode()).isEqualTo(204);
    assertThat(tooLong.getHeader("X-Counter-Folded")).isNull();
    long invalidBefore = await(fixture.sumInTable("paths", ReservedIds.INVALID));
    HttpResponse<Buffer> badCharacters = await(beacon("paths", "Upper:Case", "192.0.2.99", BROWSER));
    assertThat(badCharacters.statusCode()).isEqualTo(204);
    assertThat(badCharacters.getHeader("X-Counter-Folded")).isEqualTo("invalid_id");
    String fine = "fine-" + randomText(8);
    assertThat(await(beacon("paths", fine, "192.0.2.99", BROWSER)).statusCode()).isEqualTo(204);
    assertThat(fixture.sumInTableReaching("paths", PageIds.of(longId, 64), 1)).isEqualTo(1);
    assertThat(PageIds.of(longId, 64)).hasSize(64);
    assertThat(fixture.sumInTableReaching("paths", ReservedIds.INVALID, invalidBefore + 1)).isEqualTo(invalidBefore + 1);
    assertThat(fixture.sumInTableReaching("paths", fine, 1)).isEqualTo(1);
  }
}
