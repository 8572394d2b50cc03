package io.countergateway.security;

import io.countergateway.testing.DirectSql;
import io.countergateway.testing.TestCertificates;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.mysqlclient.MySQLConnection;
import io.vertx.mysqlclient.SslMode;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tests' MariaDB offers TLS with a certificate of a CA the tests make (for localhost and 127.0.0.1): gateways
 * reach it with each {@code database.ssl.mode}; for one test it requires TLS of every TCP client
 * ({@code require_secure_transport}).
 */
@DisplayName("TLS to MariaDB (database.ssl.mode, database.ssl.caFile)")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MariaDbTlsIT {
  Vertx vertx;
  Pool sql;
  Path otherCaFile;

  @BeforeAll
  void start() throws IOException {
    vertx = Vertx.vertx();
    sql = DirectSql.pool(vertx, "mariadb");
    Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target").toAbsolutePath()), "mariadb-tls-");
    otherCaFile = TestCertificates.authority("some other CA").writeCertificate(dir.resolve("other-ca.crt"));
  }

  @AfterAll
  void stop() {
    await(vertx.close());
  }

  JsonObject database(String mode, Path ca) {
    return DatabaseTlsGateways.withSsl(TestDatabases.mariadb().put("host", "localhost"), mode, ca);
  }

  long sumInTable(String table) {
    return await(sql.preparedQuery("SELECT COALESCE(SUM(count), 0) FROM " + table + " WHERE record_type = ? AND record_id = ?")
      .execute(Tuple.of("likes", "over-tls")).map(rows -> rows.iterator().next().getNumeric(0).longValue()));
  }

  @Test
  @DisplayName("require, verify-ca and verify-full with the server's CA: the gateway connects over TLS and counts")
  void modesConnect() {
    for (String mode : new String[] {"require", "verify-ca", "verify-full"}) {
      String table = "mariadb_tls_" + mode.replace('-', '_');
      Path ca = mode.equals("require") ? null : TestDatabases.mariaDbCaFile();
      assertThat(DatabaseTlsGateways.incrementOnce(database(mode, ca), table)).as(mode).isEqualTo(200);
      assertThat(sumInTable(table)).as(mode).isEqualTo(3L);
    }
  }

  @Test
  @DisplayName("verify-full with a CA that did not sign the server's certificate: the start is refused in one line naming database.ssl")
  void verifyFullWithAnotherCaIsRefused() throws Exception {
    System.out.println(DatabaseTlsGateways.wrongCaRefusal(database("verify-full", otherCaFile), "mariadb_tls_wrong_ca"));
  }

  @Test
  @DisplayName("disable against a server that requires TLS: the start is refused, saying the server wants TLS")
  void disableAgainstServerRequiringTlsIsRefused() throws Exception {
    JsonObject db = TestDatabases.mariadb();
    // set and reset over TLS: while it is on, a plain TCP connection is refused
    MySQLConnectOptions overTls = new MySQLConnectOptions().setHost("127.0.0.1").setPort(db.getInteger("port"))
      .setUser(db.getString("user")).setPassword(db.getString("password")).setSslMode(SslMode.REQUIRED)
      .setSslOptions(new ClientSSLOptions().setTrustAll(true).setHostnameVerificationAlgorithm(""));
    MySQLConnection admin = await(MySQLConnection.connect(vertx, overTls));
    try {
      await(admin.query("SET GLOBAL require_secure_transport = ON").execute());
      System.out.println(DatabaseTlsGateways.plainRefusal(database("disable", null), "mariadb_tls_disabled"));
    } finally {
      await(admin.query("SET GLOBAL require_secure_transport = OFF").execute());
      await(admin.close());
    }
  }
}
