package io.countergateway.internal.beacon;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("What became of a public namespace's beacons")
class BeaconOutcomesTest {
  private final GatewayConfig config = GatewayConfig.fromJson(new JsonObject().put("namespaces", new JsonObject()
    .put("pageviews", new JsonObject().put("slots", 4).put("public", true))
    .put("likes", new JsonObject().put("slots", 4))));
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final BeaconOutcomes outcomes = new BeaconOutcomes(config, registry);
  private final NamespaceOptions pageviews = config.namespace("pageviews");

  @Test
  @DisplayName("counts each beacon counted or dropped, folded ones among the counted, by reason, as the metrics do")
  void countsByReason() {
    outcomes.counted(pageviews, null);
    outcomes.counted(pageviews, FoldReason.INVALID_ID);
    outcomes.dropped(pageviews, DropReason.CRAWLER, "192.0.2.1");
    JsonObject summary = outcomes.summary("pageviews");
    assertThat(summary.getLong("counted")).isEqualTo(2);
    assertThat(summary.getJsonObject("folded").getMap()).containsExactly(java.util.Map.entry("invalid_id", 1L));
    assertThat(summary.getJsonObject("dropped").getMap()).containsExactly(java.util.Map.entry("crawler", 1L));
    assertThat(registry.get("gateway.beacons.counted").tag("namespace", "pageviews").counter().count()).isEqualTo(2);
    assertThat(registry.get("gateway.beacons.folded").tag("reason", "invalid_id").counter().count()).isEqualTo(1);
  }

  @Test
  @DisplayName("tells that most rate-limited beacons came from one address, without keeping the address")
  void rateLimitedFromOneClient() {
    for (int i = 0; i < 900; i++) {
      outcomes.dropped(pageviews, DropReason.RATE_LIMITED, "198.51.100.7");
      outcomes.dropped(pageviews, DropReason.RATE_LIMITED, "203.0.113." + (i % 100));
    }
    JsonObject summary = outcomes.summary("pageviews");
    assertThat(summary.getLong("rateLimitedFromOneClient")).isBetween(900L - 1800 / 9, 900L);
    assertThat(summary.encode()).doesNotContain("198.51.100.7");
  }

  @Test
  @DisplayName("a namespace that takes no anonymous beacons has no summary")
  void onlyPublicNamespaces() {
    assertThat(outcomes.summary("likes")).isNull();
  }
}
