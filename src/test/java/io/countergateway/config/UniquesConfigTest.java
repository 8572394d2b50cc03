package io.countergateway.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class UniquesConfigTest {
  private static JsonObject window() {
    return new JsonObject().put("bucket", "day");
  }

  private static JsonObject withVisits(JsonObject visits) {
    return new JsonObject().put("namespaces", new JsonObject().put("visits", visits));
  }

  @Test
  @DisplayName("unique visitors are off by default, and on for a public windowed namespace that asks; no proxy is trusted by default")
  void defaults() {
    GatewayConfig plain = GatewayConfig.fromJson(withVisits(new JsonObject().put("window", window())));
    assertThat(plain.namespace("visits").isUnique()).isFalse();
    assertThat(plain.hasUniques()).isFalse();
    assertThat(plain.getHttp().getTrustedProxies().isEmpty()).isTrue();
    assertThat(plain.getUniques().getLgK()).isEqualTo(12);
    GatewayConfig unique = GatewayConfig.fromJson(withVisits(new JsonObject().put("public", true).put("unique", true)
      .put("window", window())).put("uniques", new JsonObject().put("lgK", 14).put("flushInterval", "250ms")));
    assertThat(unique.namespace("visits").isUnique()).isTrue();
    assertThat(unique.hasUniques()).isTrue();
    assertThat(unique.getUniques().getLgK()).isEqualTo(14);
    assertThat(unique.getUniques().getFlushIntervalMs()).isEqualTo(250);
  }

  @Test
  @DisplayName("uniques.newSketchesPerClientPerMinute, removed (many visitors share one address), stops the start naming it")
  void perClientSketchCapIsGone() {
    assertThatThrownBy(() -> GatewayConfig.fromJson(withVisits(new JsonObject()).put("uniques",
      new JsonObject().put("newSketchesPerClientPerMinute", 60))))
      .hasMessageStartingWith("uniques.newSketchesPerClientPerMinute: is no longer a key: many visitors share one address");
  }

  @Test
  @DisplayName("unique: true on a namespace without a window, or that takes no beacons, stops the start naming the key")
  void uniqueNeedsAWindowAndBeacons() {
    assertThatThrownBy(() -> GatewayConfig.fromJson(withVisits(new JsonObject().put("public", true).put("unique", true))))
      .hasMessageStartingWith("namespaces.visits.unique: unique visitors are counted per bucket: only a windowed namespace");
    assertThatThrownBy(() -> GatewayConfig.fromJson(withVisits(new JsonObject().put("unique", true).put("window", window()))))
      .hasMessageStartingWith("namespaces.visits.unique: unique visitors are counted from beacons: only a public namespace");
    assertThatThrownBy(() -> GatewayConfig.fromJson(withVisits(new JsonObject().put("public", true)
      .put("unique", "maybe").put("window", window()))))
      .hasMessageContaining("namespaces.visits.unique: must be true or false");
  }

  @Test
  @DisplayName("bad sketch settings and unknown uniques keys stop the start naming the key")
  void badSketchSettings() {
    JsonObject visits = new JsonObject().put("public", true).put("unique", true).put("window", window());
    assertThatThrownBy(() -> GatewayConfig.fromJson(withVisits(visits.copy()).put("uniques", new JsonObject().put("lgK", 30))))
      .hasMessageContaining("uniques.lgK: must be between 4 and 21, got 30");
    assertThatThrownBy(() -> GatewayConfig.fromJson(withVisits(visits.copy())
      .put("uniques", new JsonObject().put("flushInterval", "0s"))))
      .hasMessageContaining("uniques.flushInterval: must be between 10ms and 1m, got 0s");
    assertThatThrownBy(() -> GatewayConfig.fromJson(withVisits(visits.copy()).put("uniques", new JsonObject().put("lgk", 12))))
      .hasMessageContaining("uniques.lgk: unknown key (did you mean uniques.lgK?)");
  }

  @Test
  @DisplayName("unique visitors, sketch settings and trusted proxies can be set from the environment")
  void environmentOverrides() {
    JsonObject raw = withVisits(new JsonObject().put("public", true).put("window", window()));
    GatewayConfig config = GatewayConfig.fromJson(ConfigLoader.applyEnvironment(raw, Map.of(
      "CG_NAMESPACES_VISITS_UNIQUE", "true", "CG_UNIQUES_LG_K", "14", "CG_HTTP_TRUSTED_PROXIES", "10.0.0.0/8,192.0.2.1")));
    assertThat(config.namespace("visits").isUnique()).isTrue();
    assertThat(config.getUniques().getLgK()).isEqualTo(14);
    assertThat(config.getHttp().getTrustedProxies().contains("10.1.2.3")).isTrue();
    assertThat(config.getHttp().getTrustedProxies().contains("192.0.2.1")).isTrue();
  }

  @Test
  @DisplayName("trusted proxies are IP addresses or CIDR blocks, IPv4 or IPv6, matched without any name lookup")
  void trustedProxies() {
    TrustedProxies proxies = TrustedProxies.parse("http.trustedProxies", List.of("10.0.0.0/8", "192.0.2.7", "fd00::/8"));
    assertThat(proxies.contains("10.200.3.4")).isTrue();
    assertThat(proxies.contains("11.0.0.1")).isFalse();
    assertThat(proxies.contains("192.0.2.7")).isTrue();
    assertThat(proxies.contains("192.0.2.8")).isFalse();
    assertThat(proxies.contains("fd12:3456::1")).isTrue();
    assertThat(proxies.contains("fe80::1")).isFalse();
    assertThat(proxies.contains("localhost")).as("a name, never resolved").isFalse();
    assertThat(TrustedProxies.parse("k", List.of("0.0.0.0/0")).contains("203.0.113.5")).isTrue();
    assertThatThrownBy(() -> GatewayConfig.fromJson(withVisits(new JsonObject())
      .put("http", new JsonObject().put("trustedProxies", new JsonArray().add("proxy.internal")))))
      .hasMessageStartingWith("http.trustedProxies: 'proxy.internal' is not an IP address or CIDR block");
    assertThatThrownBy(() -> GatewayConfig.fromJson(withVisits(new JsonObject())
      .put("http", new JsonObject().put("trustedProxies", "10.0.0.0/33"))))
      .hasMessageStartingWith("http.trustedProxies: '10.0.0.0/33': the prefix length must be between 0 and 32");
  }
}
