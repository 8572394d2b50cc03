package io.countergateway.internal.beacon;

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
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 40's flood of undecidable user agents: three networks send made-up user agents that a Spider rule and a phone
 * rule both match (the kind the classifier it replaced sent to one thread, dropping the rest as filter_busy), as fast as
 * 400 connections carry them, while people on Silk, Cubot, Samsung, UC, Opera Mini and in-app browsers view a page
 * from networks of their own. One ingest verticle, so the whole flood meets one event loop. The gateway trusts
 * 127.0.0.1 as a proxy, so X-Forwarded-For names each request's client.
 */
@DisplayName("The bot filter under a flood of undecidable user agents")
class BotFilterFloodIT {
  static final int FLOOD_PER_NETWORK = 300;
  static final int VIEWS_PER_BROWSER = 3;

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("no real browser view is lost, and no view waits for a verdict")
  void realViewsAreAllCounted(String database) {
    JsonObject config = GatewayFixture.baseConfig("postgres".equals(database) ? TestDatabases.postgres()
      : TestDatabases.mariadb(), "bot_flood_counters");
    config.getJsonObject("http").put("instances", 1).put("trustedProxies", new JsonArray().add("127.0.0.1"));
    config.put("batching", new JsonObject().put("maxDelay", "1ms"));
    GatewayFixture fixture = GatewayFixture.start(config);
    WebClient client = WebClient.create(fixture.vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
      .setDefaultPort(fixture.gateway.port()).setKeepAlive(true), new PoolOptions().setHttp1MaxSize(400));
    try {
      List<String> browsers = UserAgentCorpus.of(UserAgentCorpus.Kind.BROWSER);
      List<String> flood = UserAgentCorpus.crafted(3 * FLOOD_PER_NETWORK, 40);
      Random random = new Random(40);
      List<Future<HttpResponse<Buffer>>> beacons = new ArrayList<>();
      List<Future<HttpResponse<Buffer>>> views = new ArrayList<>();
      int viewer = 0;
      for (int i = 0; i < flood.size(); i++) {
        String network = new String[] {"198.51.100.", "203.0.113.", "192.0.2."}[i % 3];
        beacons.add(beacon(client, "flood-" + random.nextInt(50), network + (1 + random.nextInt(254)), flood.get(i)));
        if (i % 4 == 0 && viewer < browsers.size() * VIEWS_PER_BROWSER) {
          // a person of a network of their own: 100.64.0.0/10, one /24 each
          views.add(beacon(client, "real-page", "100.64." + viewer + ".7", browsers.get(viewer % browsers.size())));
          viewer++;
        }
      }
      assertThat(viewer).isEqualTo(browsers.size() * VIEWS_PER_BROWSER);
      for (HttpResponse<Buffer> response : await(Future.all(beacons)).<HttpResponse<Buffer>>list()) {
        assertThat(response.statusCode()).isEqualTo(204);
      }
      for (HttpResponse<Buffer> response : await(Future.all(views)).<HttpResponse<Buffer>>list()) {
        assertThat(response.statusCode()).isEqualTo(204);
        assertThat(response.getHeader("X-Counter-Dropped")).as("a real browser's view").isNull();
      }
      // every view was taken (204, not dropped) once answered; a flush held back by a slow connection is retried
      long taken = (long) browsers.size() * VIEWS_PER_BROWSER;
      assertThat(await(fixture.sumInTableReaching("pageviews", "real-page", taken, 10_000)))
        .as("real browser views in the table").isEqualTo(taken);
    } finally {
      client.close();
      fixture.close();
    }
  }

  private static Future<HttpResponse<Buffer>> beacon(WebClient client, String id, String address, String userAgent) {
    return client.get("/v1/beacon/pageviews/" + id).putHeader("User-Agent", userAgent)
      .putHeader("X-Forwarded-For", address).send();
  }
}
