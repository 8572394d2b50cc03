package io.countergateway.config;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(VertxExtension.class)
class GatewayConfigTest {

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"conf/gateway.yaml", "conf/postgres.yaml", "conf/mysql.yaml"})
  @DisplayName("every shipped configuration file loads and validates")
  void shippedFilesLoad(String path, Vertx vertx) {
    GatewayConfig config = await(ConfigLoader.load(vertx, path));
    assertThat(config.getNamespaces()).containsKeys("pageviews", "downloads", "likes");
    assertThat(config.namespace("pageviews").isPublic()).isTrue();
    assertThat(config.getHttp().getHost()).isEqualTo("127.0.0.1");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"conf/postgres.yaml", "conf/mysql.yaml"})
  @DisplayName("each real-database file starts beside the quick start: a port and a journal directory of its own, and "
    + "pageviews counted as there")
  void realDatabaseFilesStartBesideTheQuickStart(String path, Vertx vertx) {
    GatewayConfig quickStart = await(ConfigLoader.load(vertx, "conf/gateway.yaml"));
    GatewayConfig config = await(ConfigLoader.load(vertx, path));
    assertThat(config.getHttp().getPort()).isNotEqualTo(quickStart.getHttp().getPort());
    assertThat(config.getManagement().isEnabled()).as("health and metrics on http.port, as in the quick start")
      .isEqualTo(quickStart.getManagement().isEnabled());
    assertThat(Path.of(config.getJournal().getDir()).normalize())
      .isNotEqualTo(Path.of(quickStart.getJournal().getDir()).normalize());
    NamespaceOptions pageviews = config.namespace("pageviews");
    NamespaceOptions quickPageviews = quickStart.namespace("pageviews");
    assertThat(pageviews.isWindowed()).as("?top=N needs a window").isTrue();
    assertThat(pageviews.getWindow().getBucket()).isEqualTo(quickPageviews.getWindow().getBucket());
    assertThat(pageviews.getWindow().getRetention()).isEqualTo(quickPageviews.getWindow().getRetention());
    assertThat(pageviews.isUnique()).isEqualTo(quickPageviews.isUnique()).isTrue();
    assertThat(pageviews.isPublic()).isEqualTo(quickPageviews.isPublic()).isTrue();
  }

  @Test
  @DisplayName("the real-database files do not share a port or a journal directory with each other")
  void realDatabaseFilesApart(Vertx vertx) {
    GatewayConfig postgres = await(ConfigLoader.load(vertx, "conf/postgres.yaml"));
    GatewayConfig mysql = await(ConfigLoader.load(vertx, "conf/mysql.yaml"));
    assertThat(postgres.getHttp().getPort()).isNotEqualTo(mysql.getHttp().getPort());
    assertThat(postgres.getJournal().getDir()).isNotEqualTo(mysql.getJournal().getDir());
  }

  @Test
  @DisplayName("the default configuration runs on an embedded PostgreSQL kept in ./data")
  void defaultIsEmbedded(Vertx vertx) {
    DatabaseOptions database = await(ConfigLoader.load(vertx, "conf/gateway.yaml")).getDatabase();
    assertThat(database.getKind()).isEqualTo(DatabaseOptions.Kind.EMBEDDED_POSTGRES);
    assertThat(database.getDataDir()).isEqualTo("./data");
  }

  @Test
  @DisplayName("a journal inside the embedded PostgreSQL's data directory is refused at start, naming journal.dir")
  void journalBesideEmbeddedData() {
    JsonObject inside = minimal().put("journal", new JsonObject().put("dir", "./data/journal"));
    assertThatThrownBy(() -> GatewayConfig.fromJson(inside))
      .hasMessageStartingWith("journal.dir: must not be inside database.dataDir (./data)");
    JsonObject external = minimal().put("journal", new JsonObject().put("dir", "./data/journal"))
      .put("database", new JsonObject().put("kind", "postgres"));
    assertThat(GatewayConfig.fromJson(external).getJournal().getDir()).as("beside an external database").isEqualTo("./data/journal");
    assertThat(GatewayConfig.fromJson(minimal()).getJournal().getDir()).isEqualTo("./journal");
  }

  @Test
  @DisplayName("environment variables named after a key's path override the file")
  void environmentOverrides() {
    JsonObject raw = minimal().put("batching", new JsonObject().put("maxDelay", "2ms"));
    JsonObject merged = ConfigLoader.applyEnvironment(raw, Map.of(
      "CG_BATCHING_MAX_DELAY", "7ms",
      "CG_HTTP_PORT", "9090",
      "CG_DATABASE_PASSWORD", "s3cret",
      "CG_NAMESPACES_PAGEVIEWS_SLOTS", "32"));
    GatewayConfig config = GatewayConfig.fromJson(merged);
    assertThat(config.getBatching().getMaxDelayMs()).isEqualTo(7);
    assertThat(config.getHttp().getPort()).isEqualTo(9090);
    assertThat(config.getDatabase().getPassword()).isEqualTo("s3cret");
    assertThat(config.namespace("pageviews").getSlots()).isEqualTo(32);
    assertThat(config.getDatabase().toString()).doesNotContain("s3cret");
  }

  @Test
  @DisplayName("environment variable names follow the dotted key in upper snake case")
  void environmentNames() {
    assertThat(ConfigLoader.envName("batching.maxPendingKeys")).isEqualTo("CG_BATCHING_MAX_PENDING_KEYS");
    assertThat(ConfigLoader.envName("namespaces.page-views.public")).isEqualTo("CG_NAMESPACES_PAGE_VIEWS_PUBLIC");
  }

  @ParameterizedTest(name = "{0} = {1}")
  @CsvSource(delimiter = '|', value = {
    "batching.maxDelay | 2m | batching.maxDelay: must be between 0s and 1m, got 2m",
    "batching.maxDelay | 5 | batching.maxDelay: must be a duration, a whole number followed by ms, s, m, h or d (e.g. 30s), got '5'",
    "batching.maxKeys | many | batching.maxKeys: must be a whole number",
    "http.port | 70000 | http.port: must be between 0 and 65535",
    "database.kind | oracle | database.kind: must be one of embedded-postgres, postgres, mysql",
    "database.table | drop table; | database.table: must be a SQL identifier",
    "limits.maxIdLength | 300 | limits.maxIdLength: must be between 1 and 255",
    "limits.idPattern | [a- | limits.idPattern: is not a valid regular expression",
    "limits.minDelta | 5 | limits.minDelta: must not exceed limits.maxDelta",
    "namespaces.likes.slots | 0 | namespaces.likes.slots: must be between 1 and 1024",
    "namespaces.likes.public | perhaps | namespaces.likes.public: must be true or false",
  })
  @DisplayName("a bad value stops start-up with a message naming its key and the rule")
  void badValuesNameTheirKey(String key, String value, String message) {
    JsonObject raw = minimal();
    ConfigLoader.put(raw, key, value);
    if (key.equals("limits.minDelta")) {
      raw.getJsonObject("limits").put("maxDelta", 1);
    }
    assertThatThrownBy(() -> GatewayConfig.fromJson(raw)).isInstanceOf(ConfigException.class).hasMessageStartingWith(message);
  }

  @Test
  @DisplayName("a configuration without namespaces is refused")
  void namespacesRequired() {
    assertThatThrownBy(() -> GatewayConfig.fromJson(new JsonObject()))
      .isInstanceOf(ConfigException.class).hasMessageStartingWith("namespaces:");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"conf/gateway.yaml", "conf/postgres.yaml", "conf/mysql.yaml"})
  @DisplayName("CG_DATABASE_PASSWORD_FILE gives the password with every shipped configuration file, as CG_DATABASE_PASSWORD does")
  void passwordFileFromTheEnvironment(String path, @TempDir Path dir) throws Exception {
    Path secret = dir.resolve("password");
    Files.writeString(secret, "s3cret\n");
    JsonObject shipped = new JsonObject(new ObjectMapper(new YAMLFactory()).readValue(Path.of(path).toFile(), Map.class));

    GatewayConfig fromFile = GatewayConfig.fromJson(ConfigLoader.applyEnvironment(shipped,
      Map.of("CG_DATABASE_PASSWORD_FILE", secret.toString())));
    assertThat(fromFile.getDatabase().getPassword()).isEqualTo("s3cret");
    GatewayConfig fromVariable = GatewayConfig.fromJson(ConfigLoader.applyEnvironment(shipped,
      Map.of("CG_DATABASE_PASSWORD", "other")));
    assertThat(fromVariable.getDatabase().getPassword()).isEqualTo("other");
  }

  @Test
  @DisplayName("a password and a password file both given are refused naming both keys, never one silently ignored")
  void passwordAndFileConflict(@TempDir Path dir) throws Exception {
    Path secret = dir.resolve("password");
    Files.writeString(secret, "s3cret");
    JsonObject both = minimal().put("database", new JsonObject().put("password", "x").put("passwordFile", secret.toString()));
    assertThatThrownBy(() -> GatewayConfig.fromJson(both)).isInstanceOf(ConfigException.class)
      .hasMessage("database.passwordFile: set either database.password or database.passwordFile, not both");
  }

  private static JsonObject minimal() {
    return new JsonObject().put("namespaces", new JsonObject()
      .put("pageviews", new JsonObject().put("public", true))
      .put("likes", new JsonObject().put("slots", 4)));
  }
}
