package io.countergateway.config;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("TLS settings (http.tls, database.ssl, cluster.tls)")
class TlsConfigTest {
  static JsonObject config(String section, JsonObject values) {
    JsonObject config = new JsonObject().put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4)));
    config.put(section, values);
    return config;
  }

  static Path pem(Path dir, String name) throws IOException {
    return Files.writeString(dir.resolve(name), "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");
  }

  @Test
  @DisplayName("an HTTPS certificate without its key, or a key without its certificate, refuses the start naming the missing key")
  void httpFilesGoTogether(@TempDir Path dir) throws IOException {
    String cert = pem(dir, "tls.crt").toString();
    assertThatThrownBy(() -> GatewayConfig.fromJson(config("http", new JsonObject().put("tls", new JsonObject()
      .put("certFile", cert))))).isInstanceOf(ConfigException.class)
      .hasMessage("http.tls.keyFile: must be set too: http.tls.certFile and http.tls.keyFile go together");
    assertThatThrownBy(() -> GatewayConfig.fromJson(config("http", new JsonObject().put("tls", new JsonObject()
      .put("keyFile", cert))))).hasMessageStartingWith("http.tls.certFile: must be set too");
  }

  @Test
  @DisplayName("a TLS file that cannot be read refuses the start naming its key")
  void unreadableFileNamesItsKey(@TempDir Path dir) throws IOException {
    String cert = pem(dir, "tls.crt").toString();
    String absent = dir.resolve("absent.key").toString();
    assertThatThrownBy(() -> GatewayConfig.fromJson(config("http", new JsonObject().put("tls", new JsonObject()
      .put("certFile", cert).put("keyFile", absent))))).hasMessage("http.tls.keyFile: cannot read " + absent);
    assertThatThrownBy(() -> GatewayConfig.fromJson(config("database", new JsonObject().put("kind", "postgres")
      .put("ssl", new JsonObject().put("mode", "verify-ca").put("caFile", absent)))))
      .hasMessage("database.ssl.caFile: cannot read " + absent);
  }

  @Test
  @DisplayName("both files set: HTTPS on, checked every 5 s by default; neither: plain HTTP")
  void httpTlsOnOrOff(@TempDir Path dir) throws IOException {
    HttpOptions plain = GatewayConfig.fromJson(config("http", new JsonObject())).getHttp();
    assertThat(plain.getTls().isEnabled()).isFalse();
    HttpOptions secured = GatewayConfig.fromJson(config("http", new JsonObject().put("tls", new JsonObject()
      .put("certFile", pem(dir, "tls.crt").toString()).put("keyFile", pem(dir, "tls.key").toString())))).getHttp();
    assertThat(secured.getTls().isEnabled()).isTrue();
    assertThat(secured.getTlsFileCheckMs()).isEqualTo(5_000);
  }

  @Test
  @DisplayName("database.ssl.mode takes libpq's four modes; the verify modes need a CA file; the embedded database none")
  void databaseModes(@TempDir Path dir) throws IOException {
    String ca = pem(dir, "ca.crt").toString();
    assertThat(DatabaseOptions.fromJson(new JsonObject()).getSslMode()).isEqualTo(DatabaseOptions.SslMode.DISABLE);
    assertThat(DatabaseOptions.fromJson(new JsonObject().put("kind", "mysql").put("ssl", new JsonObject()
      .put("mode", "require"))).getSslMode()).isEqualTo(DatabaseOptions.SslMode.REQUIRE);
    DatabaseOptions full = DatabaseOptions.fromJson(new JsonObject().put("kind", "postgres").put("ssl", new JsonObject()
      .put("mode", "verify-full").put("caFile", ca)));
    assertThat(full.getSslMode()).isEqualTo(DatabaseOptions.SslMode.VERIFY_FULL);
    assertThat(full.getSslCaFile()).isEqualTo(ca);

    assertThatThrownBy(() -> DatabaseOptions.fromJson(new JsonObject().put("kind", "postgres")
      .put("ssl", new JsonObject().put("mode", "verify-ca"))))
      .hasMessageStartingWith("database.ssl.caFile: is required with database.ssl.mode verify-ca");
    assertThatThrownBy(() -> DatabaseOptions.fromJson(new JsonObject().put("kind", "postgres")
      .put("ssl", new JsonObject().put("mode", "prefer"))))
      .hasMessageStartingWith("database.ssl.mode: must be one of disable, require, verify-ca, verify-full");
    assertThatThrownBy(() -> DatabaseOptions.fromJson(new JsonObject().put("ssl", new JsonObject().put("mode", "require"))))
      .hasMessageStartingWith("database.ssl.mode: must be disable with the embedded PostgreSQL");
  }

  @Test
  @DisplayName("the cluster's certificate, key and CA go together: one missing refuses the start naming it")
  void clusterFilesGoTogether(@TempDir Path dir) throws IOException {
    String cert = pem(dir, "member.crt").toString();
    String key = pem(dir, "member.key").toString();
    assertThatThrownBy(() -> ClusterOptions.fromJson(new JsonObject().put("tls", new JsonObject()
      .put("certFile", cert).put("keyFile", key))))
      .hasMessage("cluster.tls.caFile: must be set too: cluster.tls.certFile, cluster.tls.keyFile and cluster.tls.caFile go together");
    ClusterOptions mutual = ClusterOptions.fromJson(new JsonObject().put("tls", new JsonObject()
      .put("certFile", cert).put("keyFile", key).put("caFile", pem(dir, "ca.crt").toString())));
    assertThat(mutual.getTls().isEnabled()).isTrue();
  }

  @Test
  @DisplayName("a clustered start without the cluster's certificate is refused in one line naming cluster.tls.certFile, on loopback too")
  void clusterWithoutCertificateIsRefused() {
    for (String host : new String[] {"127.0.0.1", "10.0.0.5"}) {
      JsonObject cluster = new JsonObject().put("enabled", true).put("host", host).put("secret", SECRET);
      assertThatThrownBy(() -> GatewayConfig.fromJson(config("cluster", cluster)))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("cluster.tls.certFile: required: the clustered event bus runs only TLS with client certificates")
        .hasMessageNotContaining("\n");
    }
  }

  @Test
  @DisplayName("a clustered start without the cluster's secret, or with a short one, is refused naming cluster.secret")
  void clusterWithoutSecretIsRefused(@TempDir Path dir) throws IOException {
    JsonObject certified = new JsonObject().put("enabled", true).put("tls", memberFiles(dir));
    assertThatThrownBy(() -> ClusterOptions.fromJson(certified.copy()))
      .hasMessageStartingWith("cluster.secret: required: set cluster.secret or cluster.secretFile");
    assertThatThrownBy(() -> ClusterOptions.fromJson(certified.copy().put("secret", "tiny-value")))
      .hasMessageStartingWith("cluster.secret: must be at least 32 characters").hasMessageNotContaining("tiny-value");
    Path file = Files.writeString(dir.resolve("cluster-secret"), SECRET + "\n");
    assertThat(ClusterOptions.fromJson(certified.copy().put("secretFile", file.toString())).getMembershipName())
      .isEqualTo(ClusterOptions.fromJson(certified.copy().put("secret", SECRET)).getMembershipName());
  }

  @Test
  @DisplayName("the membership name is the cluster's name and a digest of its secret, never the secret itself")
  void membershipNameHoldsTheSecret(@TempDir Path dir) throws IOException {
    JsonObject member = new JsonObject().put("enabled", true).put("tls", memberFiles(dir)).put("secret", SECRET);
    String name = ClusterOptions.fromJson(member.copy()).getMembershipName();
    assertThat(name).startsWith("counter-gateway-").hasSize("counter-gateway-".length() + 64).doesNotContain(SECRET);
    assertThat(ClusterOptions.fromJson(member.copy().put("secret", SECRET.replace('a', 'b'))).getMembershipName())
      .isNotEqualTo(name);
    assertThat(ClusterOptions.fromJson(member.copy().put("name", "other")).getMembershipName()).startsWith("other-");
  }

  @Test
  @DisplayName("cluster.insecure is refused as no longer a key: an open clustered bus cannot be configured")
  void insecureIsRetired() {
    assertThatThrownBy(() -> GatewayConfig.fromJson(config("cluster", new JsonObject().put("insecure", true))))
      .isInstanceOf(ConfigException.class).hasMessageContaining("cluster.insecure: is no longer a key");
  }

  private static final String SECRET = "a-cluster-secret-of-forty-characters-aaa";

  private static JsonObject memberFiles(Path dir) throws IOException {
    return new JsonObject().put("certFile", pem(dir, "m.crt").toString()).put("keyFile", pem(dir, "m.key").toString())
      .put("caFile", pem(dir, "ca.crt").toString());
  }
}
