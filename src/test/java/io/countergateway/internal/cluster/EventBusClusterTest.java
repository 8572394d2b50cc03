package io.countergateway.internal.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import io.countergateway.config.ClusterOptions;
import io.countergateway.config.ConfigException;
import io.countergateway.config.GatewayConfig;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EventBusClusterTest {

  @Test
  @DisplayName("members join over TCP on the listed addresses only: never multicast, never auto-detection")
  void tcpJoin(@TempDir Path dir) throws IOException {
    Config config = EventBusCluster.hazelcastConfig(ClusterOptions.fromJson(member(dir).put("host", "10.0.0.5")
      .put("port", 5801).put("members", new JsonArray(List.of("10.0.0.6:5801", "10.0.0.7")))));
    JoinConfig join = config.getNetworkConfig().getJoin();
    assertThat(join.getMulticastConfig().isEnabled()).isFalse();
    assertThat(join.getAutoDetectionConfig().isEnabled()).isFalse();
    assertThat(join.getKubernetesConfig().isEnabled()).isFalse();
    assertThat(join.getTcpIpConfig().isEnabled()).isTrue();
    assertThat(join.getTcpIpConfig().getMembers()).containsExactly("10.0.0.6:5801", "10.0.0.7", "10.0.0.5:5801");
    assertThat(config.getNetworkConfig().getPort()).isEqualTo(5801);
    assertThat(config.getNetworkConfig().isPortAutoIncrement()).isFalse();
    assertThat(config.getProperty("hazelcast.local.localAddress")).isEqualTo("10.0.0.5");
    // Vert.x's subscription maps keep their backups
    assertThat(config.getMultiMapConfig("__vertx.subs").getBackupCount()).isEqualTo(1);
    // Hazelcast admits members and clients by this name alone: it holds the secret
    assertThat(config.getClusterName()).startsWith("counter-gateway-").isNotEqualTo("counter-gateway")
      .doesNotContain(SECRET);
    assertThat(config.getProperty("hazelcast.logging.details.enabled")).as("no log line carries that name").isEqualTo("false");
  }

  private static final String SECRET = "0123456789abcdef0123456789abcdef";

  /** A member's cluster section: enabled, with TLS files and the secret. */
  private static JsonObject member(Path dir) throws IOException {
    return new JsonObject().put("enabled", true).put("secret", SECRET).put("tls", tlsFiles(dir));
  }

  private static JsonObject tlsFiles(Path dir) throws IOException {
    JsonObject tls = new JsonObject();
    for (String name : List.of("certFile", "keyFile", "caFile")) {
      tls.put(name, Files.writeString(dir.resolve(name), "-----BEGIN CERTIFICATE-----\n").toString());
    }
    return tls;
  }

  @Test
  @DisplayName("joining without the cluster's certificate or secret fails naming the key, for an application's Vert.x too")
  void joinNeedsCertificateAndSecret(@TempDir Path dir) throws IOException {
    assertThat(EventBusCluster.join(ClusterOptions.fromJson(new JsonObject())).cause())
      .isInstanceOf(ConfigException.class).hasMessageStartingWith("cluster.tls.certFile: required");
    assertThat(EventBusCluster.join(ClusterOptions.fromJson(new JsonObject().put("tls", tlsFiles(dir)))).cause())
      .isInstanceOf(ConfigException.class).hasMessageStartingWith("cluster.secret: required");
  }

  @Test
  @DisplayName("the event bus runs TLS with the member's certificate and requires one of the cluster's CA from every peer")
  void mutualTls(@TempDir Path dir) throws IOException {
    JsonObject cluster = member(dir);
    JsonObject tls = cluster.getJsonObject("tls");
    EventBusOptions secured = EventBusCluster.eventBusOptions(ClusterOptions.fromJson(cluster));
    assertThat(secured.isSsl()).isTrue();
    assertThat(secured.getClientAuth()).isEqualTo(ClientAuth.REQUIRED);
    assertThat(secured.isTrustAll()).isFalse();
    assertThat(((PemKeyCertOptions) secured.getKeyCertOptions()).getCertPath()).isEqualTo(tls.getString("certFile"));
    assertThat(((PemTrustOptions) secured.getTrustOptions()).getCertPaths()).containsExactly(tls.getString("caFile"));
  }

  @Test
  @DisplayName("in Kubernetes, members find each other through a headless service's DNS name, without API permissions")
  void kubernetesJoin(@TempDir Path dir) throws IOException {
    Config config = EventBusCluster.hazelcastConfig(ClusterOptions.fromJson(member(dir).put("join", "kubernetes")
      .put("kubernetesServiceDns", "counter-gateway-cluster.prod.svc.cluster.local")));
    JoinConfig join = config.getNetworkConfig().getJoin();
    assertThat(join.getTcpIpConfig().isEnabled()).isFalse();
    assertThat(join.getMulticastConfig().isEnabled()).isFalse();
    assertThat(join.getKubernetesConfig().isEnabled()).isTrue();
    assertThat(join.getKubernetesConfig().getProperty("service-dns")).isEqualTo("counter-gateway-cluster.prod.svc.cluster.local");
  }

  @Test
  @DisplayName("a bad cluster setting stops start-up with one line naming its key")
  void badSettingsNameTheirKey() {
    JsonObject base = new JsonObject().put("namespaces", new JsonObject().put("likes", new JsonObject()));
    assertThatThrownBy(() -> GatewayConfig.fromJson(base.copy().put("cluster", new JsonObject().put("join", "multicast"))))
      .isInstanceOf(ConfigException.class).hasMessageContaining("cluster.join").hasMessageContaining("tcp or kubernetes");
    assertThatThrownBy(() -> GatewayConfig.fromJson(base.copy().put("cluster", new JsonObject().put("members", "a b"))))
      .isInstanceOf(ConfigException.class).hasMessageContaining("cluster.members");
    assertThatThrownBy(() -> GatewayConfig.fromJson(base.copy().put("lanes", new JsonObject().put("lease", "10ms"))))
      .isInstanceOf(ConfigException.class).hasMessageContaining("lanes.lease");
    GatewayConfig defaults = GatewayConfig.fromJson(base);
    assertThat(defaults.getCluster().isEnabled()).isFalse();
  }
}
