package io.countergateway.security;

import io.countergateway.testing.TestCertificates;
import io.vertx.core.json.JsonObject;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A PostgreSQL that takes TLS connections only ({@code hostssl} lines alone in its pg_hba.conf), with a certificate
 * of a CA the test makes, reached by gateways with each {@code database.ssl.mode}.
 */
@DisplayName("TLS to the database (database.ssl.mode, database.ssl.caFile)")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DatabaseTlsIT {
  static final String DATABASE = "counters";

  Path dir;
  Path caFile;
  Path otherCaFile;
  EmbeddedPostgres server;

  @BeforeAll
  void startServer() throws IOException, SQLException {
    dir = Files.createTempDirectory(Files.createDirectories(Path.of("target").toAbsolutePath()), "database-tls-");
    TestCertificates.Authority authority = TestCertificates.authority("database test CA");
    authority.issue("localhost", "localhost", "127.0.0.1").write(dir.resolve("server.crt"), dir.resolve("server.key"));
    caFile = authority.writeCertificate(dir.resolve("ca.crt"));
    otherCaFile = TestCertificates.authority("some other CA").writeCertificate(dir.resolve("other-ca.crt"));
    Path hba = Files.writeString(dir.resolve("pg_hba.conf"), """
      local     all   all                  trust
      hostssl   all   all   127.0.0.1/32   trust
      hostssl   all   all   ::1/128        trust
      """);
    server = EmbeddedPostgres.builder()
      .setDataDirectory(dir.resolve("data")).setCleanDataDirectory(true)
      .setServerConfig("ssl", "on")
      .setServerConfig("ssl_cert_file", dir.resolve("server.crt").toString())
      .setServerConfig("ssl_key_file", dir.resolve("server.key").toString())
      .setServerConfig("hba_file", hba.toString())
      .start();
    try (Connection connection = server.getPostgresDatabase().getConnection();
         Statement statement = connection.createStatement()) {
      statement.execute("CREATE DATABASE " + DATABASE);
    }
  }

  @AfterAll
  void stopServer() throws IOException {
    if (server != null) {
      server.close();
    }
  }

  JsonObject database(String mode, Path ca) {
    return DatabaseTlsGateways.withSsl(new JsonObject().put("kind", "postgres").put("host", "localhost")
      .put("port", server.getPort()).put("name", DATABASE).put("user", "postgres").put("password", ""), mode, ca);
  }

  long sumInTable(String table, String id) throws SQLException {
    try (Connection connection = server.getDatabase("postgres", DATABASE).getConnection();
         PreparedStatement sum = connection.prepareStatement(
           "SELECT COALESCE(SUM(count), 0) FROM " + table + " WHERE record_type = 'likes' AND record_id = ?")) {
      sum.setString(1, id);
      try (ResultSet rows = sum.executeQuery()) {
        rows.next();
        return rows.getLong(1);
      }
    }
  }

  void countsThrough(String table, String mode, Path ca) throws SQLException {
    assertThat(DatabaseTlsGateways.incrementOnce(database(mode, ca), table)).isEqualTo(200);
    assertThat(sumInTable(table, "over-tls")).isEqualTo(3L);
  }

  @Test
  @DisplayName("require: the gateway connects over TLS and its increments are committed")
  void requireConnects() throws SQLException {
    countsThrough("tls_require", "require", null);
  }

  @Test
  @DisplayName("verify-ca and verify-full with the server's CA: the gateway connects and counts")
  void verifyWithTheRightCaConnects() throws SQLException {
    countsThrough("tls_verify_ca", "verify-ca", caFile);
    countsThrough("tls_verify_full", "verify-full", caFile);
  }

  @Test
  @DisplayName("verify-full with a CA that did not sign the server's certificate: the start is refused in one line naming database.ssl")
  void verifyFullWithAnotherCaIsRefused() throws Exception {
    System.out.println(DatabaseTlsGateways.wrongCaRefusal(database("verify-full", otherCaFile), "tls_wrong_ca"));
  }

  @Test
  @DisplayName("disable against a server that takes TLS only: the start is refused, saying the server wants TLS")
  void disableAgainstTlsOnlyServerIsRefused() throws Exception {
    System.out.println(DatabaseTlsGateways.plainRefusal(database("disable", null), "tls_disabled"));
  }
}
