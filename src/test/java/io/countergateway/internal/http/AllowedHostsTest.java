package io.countergateway.internal.http;

import io.countergateway.config.GatewayConfig;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.HostAndPort;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("The names the gateway answers to (http.allowedHosts)")
class AllowedHostsTest {
  private static AllowedHosts hosts(JsonObject http, JsonObject auth) {
    return AllowedHosts.of(GatewayConfig.fromJson(new JsonObject().put("http", http).put("auth", auth)
      .put("namespaces", new JsonObject().put("likes", new JsonObject()))));
  }

  private static boolean allows(AllowedHosts hosts, String host) {
    return hosts.allows(HostAndPort.create(host, 8080));
  }

  @Test
  @DisplayName("without tokens: addresses, localhost and http.host pass, any other name is refused")
  void sidecarDefault() {
    AllowedHosts hosts = hosts(new JsonObject(), new JsonObject());
    assertThat(hosts.checks()).isTrue();
    assertThat(allows(hosts, "127.0.0.1")).isTrue();
    assertThat(allows(hosts, "[::1]")).isTrue();
    assertThat(allows(hosts, "10.1.2.3")).isTrue();
    assertThat(allows(hosts, "localhost")).isTrue();
    assertThat(allows(hosts, "LOCALHOST.")).isTrue();
    assertThat(allows(hosts, "api.localhost")).isTrue();
    assertThat(allows(hosts, "evil.test")).isFalse();
    assertThat(allows(hosts, "127.0.0.1.evil.test")).isFalse();
    assertThat(allows(hosts, "localhost.evil.test")).isFalse();
    assertThat(hosts.allows(null)).as("HTTP/1.0 without Host").isTrue();
    AllowedHosts named = hosts(new JsonObject().put("host", "gateway.internal"), new JsonObject().put("anonymous", true));
    assertThat(allows(named, "gateway.internal")).isTrue();
    assertThat(allows(named, "evil.test")).isFalse();
  }

  @Test
  @DisplayName("with tokens and no list, names are not checked (a rebinding page has no token); a list checks them")
  void withTokens() {
    JsonObject tokens = new JsonObject().put("tokens", new JsonArray().add("t-0123456789abcdef:write"));
    assertThat(hosts(new JsonObject(), tokens).checks()).isFalse();
    AllowedHosts listed = hosts(new JsonObject().put("allowedHosts", new JsonArray().add(".example.com").add("counter.test")),
      tokens);
    assertThat(allows(listed, "example.com")).isTrue();
    assertThat(allows(listed, "beacons.example.com")).isTrue();
    assertThat(allows(listed, "counter.test")).isTrue();
    assertThat(allows(listed, "badexample.com")).isFalse();
    assertThat(allows(listed, "other.test")).isFalse();
    assertThat(hosts(new JsonObject().put("allowedHosts", new JsonArray().add("*")), new JsonObject()).checks()).isFalse();
  }
}
