package io.countergateway.internal.uniques;

import io.countergateway.config.MemoryBounds.Bound;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.PinnedBounds;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The attack on unique visitors: random ids on a unique namespace filled uniques.maxPendingSketches, and a
 * page with real visitors then showed "unique": 0. Here one address floods made-up ids for three seconds while 300
 * real visitors (distinct addresses) come to one page; the page's estimate must stay within the sketch's error.
 * The per-client beacon limits are off ({@link UniqueVisitorsIT#config}), so only the sketches' own defences act.
 */
@DisplayName("A flood of made-up ids on a unique namespace")
class UniqueFloodIT {
  static final String BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 "
    + "Safari/537.36";

  @Test
  @DisplayName("does not blank the unique visitors of a real page")
  void realPageKeepsItsVisitors() {
    JsonObject config = UniqueVisitorsIT.config("postgres", "unique_flood_" + System.nanoTime() % 1_000_000,
      List.of("127.0.0.1"));
    config.getJsonObject("uniques").put("flushInterval", "1s");
    try (GatewayFixture gateway = PinnedBounds.with(Map.of(Bound.PENDING_SKETCHES, 200L), () -> GatewayFixture.start(config))) {
      WebClient wide = WebClient.create(gateway.vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
        .setDefaultPort(gateway.gateway.port()), new PoolOptions().setHttp1MaxSize(128));
      Random random = new Random(3);
      long end = System.nanoTime() + 3_000_000_000L;
      int real = 0;
      while (System.nanoTime() < end) {
        List<Future<HttpResponse<Buffer>>> round = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
          round.add(wide.get("/v1/beacon/visits/made-up-" + Long.toHexString(random.nextLong()))
            .putHeader("User-Agent", BROWSER).putHeader("X-Forwarded-For", "192.0.2.66").send());
        }
        // the real visitors come once the flood's sketches are in
        await(Future.all(round));
        round.clear();
        for (int i = 0; i < 5 && real < 300; i++, real++) {
          round.add(wide.get("/v1/beacon/visits/home").putHeader("User-Agent", BROWSER)
            .putHeader("X-Forwarded-For", "10.9." + (real >> 8) + "." + (real & 255)).send());
        }
        await(Future.all(round));
      }
      for (; real < 300; real++) {
        await(wide.get("/v1/beacon/visits/home").putHeader("User-Agent", BROWSER)
          .putHeader("X-Forwarded-For", "10.9." + (real >> 8) + "." + (real & 255)).send());
      }
      await(gateway.vertx.timer(2_500)); // two merge intervals
      JsonObject home = await(gateway.http.get("/v1/counters/visits/home?unique=true").send()).bodyAsJsonObject();
      assertThat(home.getLong("total")).isEqualTo(300L);
      assertThat(home.getLong("unique")).as(home.encode()).isBetween(285L, 315L);
      wide.close();
    }
  }
}
