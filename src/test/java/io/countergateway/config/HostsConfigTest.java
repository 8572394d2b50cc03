package io.countergateway.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("database.hosts")
class HostsConfigTest {
  private static DatabaseOptions postgres(Object hosts) {
    return DatabaseOptions.fromJson(new JsonObject().put("kind", "postgres").put("hosts", hosts));
  }

  @Test
  @DisplayName("is empty by default: the one server of database.host and database.port")
  void emptyByDefault() {
    DatabaseOptions options = DatabaseOptions.fromJson(new JsonObject().put("kind", "postgres").put("host", "db"));
    assertThat(options.getHosts()).isEmpty();
    assertThat(options.endpointText()).isEqualTo("db:5432");
  }

  @Test
  @DisplayName("reads a YAML list or a comma-separated variable, IPv6 in brackets; the first host is what the journal records")
  void listed() {
    DatabaseOptions options = postgres(new JsonArray().add("pg-a:5432").add("[::1]:5433"));
    assertThat(options.getHosts()).containsExactly(new DatabaseOptions.Endpoint("pg-a", 5432),
      new DatabaseOptions.Endpoint("::1", 5433));
    assertThat(options.getHost()).isEqualTo("pg-a");
    assertThat(options.getPort()).isEqualTo(5432);
    assertThat(options.endpointText()).isEqualTo("pg-a:5432, [::1]:5433");
    assertThat(postgres("pg-a:5432, pg-b:5432").getHosts()).hasSize(2);
  }

  @Test
  @DisplayName("refuses a host without a port, a port out of range, a host twice and the embedded PostgreSQL, naming the key")
  void refusals() {
    assertThatThrownBy(() -> postgres(List.of("pg-a")))
      .hasMessageStartingWith("database.hosts: must be host:port entries, got 'pg-a'");
    assertThatThrownBy(() -> postgres(List.of("pg-a:70000")))
      .hasMessageStartingWith("database.hosts: 'pg-a:70000': the port must be within 1 – 65535");
    assertThatThrownBy(() -> postgres(List.of("pg-a:5432", "pg-a:5432")))
      .hasMessageStartingWith("database.hosts: lists pg-a:5432 twice");
    assertThatThrownBy(() -> DatabaseOptions.fromJson(new JsonObject().put("kind", "postgres").put("port", 5433)
      .put("hosts", new JsonArray().add("a:1"))))
      .hasMessageStartingWith("database.port: must not be set with database.hosts");
    assertThatThrownBy(() -> DatabaseOptions.fromJson(new JsonObject().put("hosts", new JsonArray().add("a:1"))))
      .hasMessageStartingWith("database.hosts: must be empty with database.kind embedded-postgres");
  }
}
