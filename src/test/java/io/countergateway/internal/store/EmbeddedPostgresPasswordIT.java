package io.countergateway.internal.store;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("The embedded PostgreSQL's password")
class EmbeddedPostgresPasswordIT {
  static final String DATABASE = "counters";

  static Path freshDirectory(String name) throws IOException {
    return Files.createTempDirectory(Files.createDirectories(Path.of("target").toAbsolutePath()), name).resolve("data");
  }

  static Connection connect(int port, String password) throws SQLException {
    Properties properties = new Properties();
    properties.setProperty("user", "postgres");
    if (password != null) {
      properties.setProperty("password", password);
    }
    return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/" + DATABASE, properties);
  }

  static long rows(int port, String password) throws SQLException {
    try (Connection connection = connect(port, password); Statement statement = connection.createStatement();
         ResultSet rows = statement.executeQuery("SELECT COUNT(*) FROM kept")) {
      rows.next();
      return rows.getLong(1);
    }
  }

  @Test
  @DisplayName("a new data directory gets a random password in an owner-only file; a connection without it is refused; a restart reuses it and keeps the data")
  void newDirectory() throws Exception {
    Path data = freshDirectory("embedded-password-");
    Path passwordFile = data.resolve(EmbeddedPostgresServer.PASSWORD_FILE);
    String password;
    try (EmbeddedPostgresServer server = EmbeddedPostgresServer.start(data, 0, DATABASE)) {
      password = server.password();
      assertThat(password).hasSizeGreaterThanOrEqualTo(32);
      assertThat(Files.readString(passwordFile).strip()).isEqualTo(password);
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(passwordFile))).isEqualTo("rw-------");
      assertThat(Files.readString(data.resolve("pg_hba.conf"))).doesNotContain("trust").contains("scram-sha-256");

      assertThatThrownBy(() -> connect(server.port(), null).close()).isInstanceOf(SQLException.class);
      assertThatThrownBy(() -> connect(server.port(), "guessed").close()).hasMessageContaining("password authentication failed");
      try (Connection connection = connect(server.port(), password); Statement statement = connection.createStatement()) {
        statement.execute("CREATE TABLE kept (n int)");
        statement.execute("INSERT INTO kept VALUES (1), (2), (3)");
      }
    }
    try (EmbeddedPostgresServer again = EmbeddedPostgresServer.start(data, 0, DATABASE)) {
      assertThat(again.password()).isEqualTo(password);
      assertThat(rows(again.port(), password)).isEqualTo(3);
      assertThatThrownBy(() -> connect(again.port(), null).close()).isInstanceOf(SQLException.class);
    }
  }

  @Test
  @DisplayName("a data directory of an older version, which trusted every local user, gets a password at its next start and keeps its data")
  void olderDirectoryIsUpgraded() throws Exception {
    Path data = freshDirectory("embedded-trust-");
    // as versions before the password made it: zonky's own initdb, trust for every local connection
    try (EmbeddedPostgres old = EmbeddedPostgres.builder().setDataDirectory(data).setCleanDataDirectory(false).start();
         Connection connection = old.getPostgresDatabase().getConnection();
         Statement statement = connection.createStatement()) {
      statement.execute("CREATE DATABASE " + DATABASE);
    }
    try (EmbeddedPostgresServer server = EmbeddedPostgresServer.start(data, 0, DATABASE)) {
      try (Connection connection = connect(server.port(), server.password());
           Statement statement = connection.createStatement()) {
        statement.execute("CREATE TABLE kept (n int)");
        statement.execute("INSERT INTO kept VALUES (7)");
      }
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(
        data.resolve(EmbeddedPostgresServer.PASSWORD_FILE)))).isEqualTo("rw-------");
      assertThatThrownBy(() -> connect(server.port(), null).close()).isInstanceOf(SQLException.class);
      assertThat(rows(server.port(), server.password())).isEqualTo(1);
    }
  }
}
