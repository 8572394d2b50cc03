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
  @DisplayName("a cluster member on a network address without TLS refuses the start naming cluster.host, unless cluster.insecure")
  void openClusterFailsClosed(@TempDir Path dir) throws IOException {
    JsonObject open = new JsonObject().put("enabled", true).put("host", "10.0.0.5");
    assertThatThrownBy(() -> ClusterOptions.fromJson(open.copy()))
      .hasMessageStartingWith("cluster.host: '10.0.0.5' is not a loopback address and the event bus has no TLS")
      .hasMessageContaining("cluster.insecure: true");
    assertThat(ClusterOptions.fromJson(open.copy().put("insecure", true)).isInsecure()).isTrue();
    assertThat(ClusterOptions.fromJson(new JsonObject().put("enabled", true).put("host", "127.0.0.1")).isEnabled()).isTrue();
    assertThat(ClusterOptions.fromJson(open.copy().put("tls", new JsonObject().put("certFile", pem(dir, "m.crt").toString())
      .put("keyFile", pem(dir, "m.key").toString()).put("caFile", pem(dir, "ca.crt").toString()))).getTls().isEnabled())
      .isTrue();
  }
}
