package io.countergateway.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BeaconConfigTest {
  static JsonObject withNamespaces(JsonObject namespaces) {
    return new JsonObject().put("namespaces", namespaces);
  }

  @Test
  @DisplayName("bots are dropped by default on public namespaces only; privacy signals are honoured when asked")
  void defaults() {
    GatewayConfig config = GatewayConfig.fromJson(withNamespaces(new JsonObject()
      .put("pageviews", new JsonObject().put("public", true))
      .put("likes", new JsonObject())
      .put("docs", new JsonObject().put("public", true).put("beacon", new JsonObject().put("dropBots", false)
        .put("honorDoNotTrack", true).put("honorGlobalPrivacyControl", "true")))));
    assertThat(config.namespace("pageviews").isDropBots()).isTrue();
    assertThat(config.namespace("pageviews").isHonorDoNotTrack()).isFalse();
    assertThat(config.namespace("likes").isDropBots()).isFalse();
    assertThat(config.namespace("docs").isDropBots()).isFalse();
    assertThat(config.namespace("docs").isHonorDoNotTrack()).isTrue();
    assertThat(config.namespace("docs").isHonorGlobalPrivacyControl()).isTrue();
    assertThat(config.getBeacon().getMaxBodyBytes()).isEqualTo(65_536);
    assertThat(config.getHttp().getCorsMaxAgeSeconds()).isEqualTo(7200);
  }

  @Test
  @DisplayName("bad beacon settings stop the start with one line naming the key")
  void badValuesNameTheirKey() {
    JsonObject namespaces = new JsonObject().put("pageviews", new JsonObject().put("public", true));
    assertThatThrownBy(() -> GatewayConfig.fromJson(withNamespaces(namespaces.copy())
      .put("beacon", new JsonObject().put("botPatterns", new JsonArray().add("(unclosed")))))
      .hasMessageStartingWith("beacon.botPatterns: '(unclosed' is not a regular expression");
    assertThatThrownBy(() -> GatewayConfig.fromJson(withNamespaces(namespaces.copy())
      .put("beacon", new JsonObject().put("maxBodyBytes", -1))))
      .hasMessageContaining("beacon.maxBodyBytes: must be between 0 and 1048576, got -1");
    assertThatThrownBy(() -> GatewayConfig.fromJson(withNamespaces(namespaces.copy())
      .put("http", new JsonObject().put("corsMaxAge", "100000s"))))
      .hasMessageContaining("http.corsMaxAge: must be between 0s and 1d, got 100000s");
    assertThatThrownBy(() -> GatewayConfig.fromJson(withNamespaces(new JsonObject().put("pageviews",
      new JsonObject().put("beacon", new JsonObject().put("dropBots", "sometimes"))))))
      .hasMessageContaining("namespaces.pageviews.beacon.dropBots: must be true or false");
  }

  @Test
  @DisplayName("beacon keys can be set from the environment")
  void environmentOverrides() {
    JsonObject raw = withNamespaces(new JsonObject().put("pageviews", new JsonObject().put("public", true)));
    JsonObject merged = ConfigLoader.applyEnvironment(raw, Map.of(
      "CG_NAMESPACES_PAGEVIEWS_BEACON_DROP_BOTS", "false",
      "CG_NAMESPACES_PAGEVIEWS_BEACON_HONOR_DO_NOT_TRACK", "true",
      "CG_BEACON_BOT_PATTERNS", "uptime,monitor",
      "CG_HTTP_CORS_MAX_AGE", "10m"));
    GatewayConfig config = GatewayConfig.fromJson(merged);
    assertThat(config.namespace("pageviews").isDropBots()).isFalse();
    assertThat(config.namespace("pageviews").isHonorDoNotTrack()).isTrue();
    assertThat(config.getBeacon().getBotPatterns()).hasSize(2);
    assertThat(config.getHttp().getCorsMaxAgeSeconds()).isEqualTo(600);
  }

  @Test
  @DisplayName("tracker sites map to public namespaces, compared without case; the default namespace is pageviews")
  void trackerSites() {
    GatewayConfig config = GatewayConfig.fromJson(withNamespaces(new JsonObject()
      .put("pageviews", new JsonObject().put("public", true)).put("shop", new JsonObject().put("public", true)))
      .put("beacon", new JsonObject().put("trackerSites", "Stats.Shop.Example=shop, 5a1c0d8e=shop")));
    assertThat(config.getBeacon().getTrackerNamespace()).isEqualTo("pageviews");
    assertThat(config.getBeacon().getTrackerSites()).containsExactly(Map.entry("stats.shop.example", "shop"),
      Map.entry("5a1c0d8e", "shop"));
    // the default may be undeclared: the endpoints then refuse a site no entry names (404 unknown_site)
    assertThat(GatewayConfig.fromJson(withNamespaces(new JsonObject().put("likes", new JsonObject())))
      .getBeacon().isTrackerNamespaceSet()).isFalse();
  }

  @Test
  @DisplayName("a tracker namespace that is undeclared or not public, a malformed entry or a site named twice stop the start naming the key")
  void badTrackerSettingsNameTheirKey() {
    JsonObject namespaces = new JsonObject().put("pageviews", new JsonObject().put("public", true))
      .put("likes", new JsonObject());
    assertThatThrownBy(() -> GatewayConfig.fromJson(withNamespaces(namespaces.copy())
      .put("beacon", new JsonObject().put("trackerNamespace", "visits"))))
      .hasMessageStartingWith("beacon.trackerNamespace: 'visits' is not a declared namespace");
    assertThatThrownBy(() -> GatewayConfig.fromJson(withNamespaces(namespaces.copy())
      .put("beacon", new JsonObject().put("trackerSites", new JsonArray().add("shop.example=likes")))))
      .hasMessageStartingWith("beacon.trackerSites: 'likes' is not public");
    assertThatThrownBy(() -> GatewayConfig.fromJson(withNamespaces(namespaces.copy())
      .put("beacon", new JsonObject().put("trackerSites", new JsonArray().add("shop.example")))))
      .hasMessageStartingWith("beacon.trackerSites: must be site=namespace entries, got 'shop.example'");
    assertThatThrownBy(() -> GatewayConfig.fromJson(withNamespaces(namespaces.copy())
      .put("beacon", new JsonObject().put("trackerSites", new JsonArray().add("a.example=pageviews")
        .add("A.example=pageviews")))))
      .hasMessageStartingWith("beacon.trackerSites: names the site 'a.example' twice");
  }
}
