package io.countergateway.internal.beacon;

import io.countergateway.testing.DirectSql;
import io.countergateway.testing.GatewayFixture;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.LinkedHashMap;
import java.util.Map;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * On each real database: beacons carrying referrers, campaign tags and the user agents of real browsers are broken
 * down into the namespace's companions, read back through the windowed read API with exact counts, each companion
 * (campaigns apart) summing to the views.
 */
@DisplayName("Sources, campaigns, browsers, systems and devices of a windowed namespace")
class CompanionNamespacesIT {
  private static final String CHROME_WINDOWS = VisitDimensionsTest.CHROME_WINDOWS;
  private static final String SAFARI_IPHONE = VisitDimensionsTest.SAFARI_IPHONE;
  private static final String CHROME_TABLET = VisitDimensionsTest.CHROME_ANDROID_TABLET;
  /** A browser's user agent with extensions' tokens past 300 characters: counted, never parsed. */
  private static final String LONG = CHROME_WINDOWS + " Ext/1.0".repeat(30);

  static JsonObject config(String database, String table) {
    JsonObject config = GatewayFixture.baseConfig(DirectSql.config(database), table);
    config.getJsonObject("http").put("trustedProxies", new JsonArray().add("127.0.0.1").add("::1"));
    config.put("uniques", new JsonObject().put("flushInterval", "100ms"));
    // many views come from few addresses here: the per-client beacon limits are off (BeaconAbuseIT holds them)
    config.getJsonObject("namespaces").put("shop", new JsonObject().put("slots", 4).put("public", true).put("unique", true)
      .put("beacon", new JsonObject().put("perClientPerMinute", 0).put("idsPerClientPerHour", 0))
      .put("window", new JsonObject().put("bucket", "hour").put("retention", "2d").put("maxRangeBuckets", 48)));
    return config;
  }

  private static void view(GatewayFixture gateway, String page, String query, int visitor, String userAgent,
                           String... headers) {
    HttpRequest<Buffer> request = gateway.http.get("/v1/beacon/shop/" + page + query).putHeader("User-Agent", userAgent)
      .putHeader("X-Forwarded-For", "10.0.0." + visitor);
    for (int i = 0; i < headers.length; i += 2) {
      request.putHeader(headers[i], headers[i + 1]);
    }
    HttpResponse<Buffer> answer = await(request.send());
    assertThat(answer.statusCode()).isEqualTo(204);
    assertThat(answer.getHeader("X-Counter-Dropped")).as(userAgent).isNull();
    assertThat(answer.getHeader("X-Counter-Ignored-Parameters")).as(query).isNull();
  }

  private static JsonObject read(GatewayFixture gateway, String uri) {
    HttpResponse<Buffer> response = await(gateway.http.get(uri).send());
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(200);
    return response.bodyAsJsonObject();
  }

  /** The top list of {@code uri} as id → total, once its totals sum to {@code sum}. */
  private static Map<String, Long> top(GatewayFixture gateway, String uri, long sum) {
    Map<String, Long> top = new LinkedHashMap<>();
    for (int attempt = 0; attempt < 100; attempt++) {
      top.clear();
      for (Object item : read(gateway, uri).getJsonArray("top")) {
        JsonObject entry = (JsonObject) item;
        top.put(entry.getString("id"), entry.getLong("total"));
      }
      if (top.values().stream().mapToLong(Long::longValue).sum() == sum) {
        return top;
      }
      await(gateway.vertx.timer(100));
    }
    throw new AssertionError("the totals of " + uri + " never summed to " + sum + ": " + top);
  }

  private static long siteSumInTable(GatewayFixture gateway) {
    return await(gateway.bucketsInTable("shop~site", "total")).values().stream().mapToLong(Long::longValue).sum();
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("14 views of 12 visitors are counted by page, source, campaign, browser, system and device, exactly")
  void breakdowns(String database) {
    try (GatewayFixture gateway = GatewayFixture.start(config(database, "companions_" + System.nanoTime() % 1_000_000))) {
      for (int visitor = 1; visitor <= 5; visitor++) {
        view(gateway, "%2Fa", "?r=https%3A%2F%2Fwww.google.com", visitor, CHROME_WINDOWS);
      }
      for (int visitor = 1; visitor <= 2; visitor++) {
        view(gateway, "%2Fc", "?r=https%3A%2F%2Fwww.google.com", visitor, CHROME_WINDOWS); // the same visitors again
      }
      for (int visitor = 6; visitor <= 8; visitor++) {
        view(gateway, "%2Fb", "?utm_source=newsletter&utm_medium=email&utm_campaign=spring", visitor, SAFARI_IPHONE);
      }
      for (int visitor = 9; visitor <= 10; visitor++) {
        view(gateway, "%2Fa", "?r=https%3A%2F%2Fnews.ycombinator.com&utm_source=twitter", visitor, CHROME_TABLET);
      }
      view(gateway, "%2Fa", "?r=https%3A%2F%2Fblog.example", 11, CHROME_WINDOWS, "Origin", "https://www.blog.example");
      view(gateway, "%2Fb", "", 12, LONG);

      assertThat(top(gateway, "/v1/counters/shop?top=10", 14)).containsExactly(Map.entry("/a", 8L), Map.entry("/b", 4L),
        Map.entry("/c", 2L));
      assertThat(top(gateway, "/v1/counters/shop~sources?top=10", 14)).containsExactly(Map.entry("google.com", 7L),
        Map.entry("(direct)", 5L), Map.entry("news.ycombinator.com", 2L));
      assertThat(top(gateway, "/v1/counters/shop~campaigns?top=10", 5)).containsExactly(
        Map.entry("newsletter / email / spring", 3L), Map.entry("twitter / (none) / (none)", 2L));
      assertThat(top(gateway, "/v1/counters/shop~browsers?top=10", 14)).containsExactly(Map.entry("Chrome", 10L),
        Map.entry("Mobile Safari", 3L), Map.entry("(other)", 1L));
      assertThat(top(gateway, "/v1/counters/shop~os?top=10", 14)).containsExactly(Map.entry("Windows", 8L),
        Map.entry("iOS", 3L), Map.entry("Android", 2L), Map.entry("(other)", 1L));
      assertThat(top(gateway, "/v1/counters/shop~devices?top=10", 14)).containsExactly(Map.entry("desktop", 8L),
        Map.entry("mobile", 3L), Map.entry("tablet", 2L), Map.entry("(other)", 1L));
      assertThat(siteSumInTable(gateway)).as("SUM in the windows table").isEqualTo(14);
      JsonObject minutes = read(gateway, "/v1/counters/shop~minutes/total");
      assertThat(minutes.getString("bucket")).isEqualTo("minute");
      assertThat(minutes.getLong("total")).as("the site's views per minute, kept two hours").isEqualTo(14);

      // the site's visitors: a visitor of two pages is one visitor of the site
      JsonObject site = null;
      for (int attempt = 0; attempt < 100; attempt++) {
        site = read(gateway, "/v1/counters/shop~site/total?unique=true");
        if (site.getLong("total") == 14 && site.getLong("unique") == 12) {
          break;
        }
        await(gateway.vertx.timer(100));
      }
      assertThat(site.getLong("total")).isEqualTo(14);
      assertThat(site.getLong("unique")).isEqualTo(12);

      // the companions are the gateway's to write
      HttpResponse<Buffer> written = await(gateway.http.post("/v1/counters/shop~sources/google.com/increments").send());
      assertThat(written.statusCode()).isEqualTo(403);
      assertThat(written.bodyAsJsonObject().getString("error")).isEqualTo("companion_namespace");
      assertThat(written.bodyAsJsonObject().getString("field")).isEqualTo("type");
      HttpResponse<Buffer> batch = await(gateway.http.post("/v1/increments")
        .sendJson(new JsonArray().add(new JsonObject().put("type", "shop~site").put("id", "total"))));
      assertThat(batch.statusCode()).isEqualTo(403);
      assertThat(batch.bodyAsJsonObject().getString("error")).isEqualTo("companion_namespace");
      assertThat(await(gateway.http.get("/v1/beacon/shop~sources/x").putHeader("User-Agent", CHROME_WINDOWS).send())
        .statusCode()).isEqualTo(404);
      assertThat(siteSumInTable(gateway)).as("nothing written by a client").isEqualTo(14);

      JsonObject shop = read(gateway, "/v1/namespaces").getJsonArray("namespaces").stream().map(JsonObject.class::cast)
        .filter(namespace -> namespace.getString("name").equals("shop")).findFirst().orElseThrow();
      assertThat(shop.getJsonObject("companions").getString("sources")).isEqualTo("shop~sources");
      assertThat(read(gateway, "/v1/namespaces").getJsonArray("namespaces").stream().map(JsonObject.class::cast)
        .map(namespace -> namespace.getString("name"))).as("companions are listed under their namespace")
        .noneMatch(name -> name.contains("~"));
    }
  }
}
