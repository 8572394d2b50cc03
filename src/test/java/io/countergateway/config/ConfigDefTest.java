package io.countergateway.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("The definition table of the configuration keys")
class ConfigDefTest {

  /** A tree with one entry of each per-entry section, so that every key is read. */
  private static JsonObject everySection() {
    return new JsonObject()
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("public", true).put("unique", true)
        .put("window", new JsonObject().put("bucket", "hour"))).put("downloads", new JsonObject()))
      .put("rollups", new JsonArray().add(new JsonObject().put("namespace", "downloads").put("table", "repos")
        .put("keyColumn", "id").put("valueColumn", "downloads")));
  }

  @Test
  @DisplayName("the code reads exactly the defined keys: none it reads is undefined, none defined goes unread")
  void codeReadsTheDefinedKeys() {
    JsonObject tree = everySection();
    ConfigSection root = new ConfigSection(tree, "");
    GatewayConfig.read(root);
    List<String> all = new ArrayList<>(root.keys().values());
    // a roll-up records its keys in its own item
    ConfigSection rollup = new ConfigSection(tree.getJsonArray("rollups").getJsonObject(0), "rollups[0]");
    RollupOptions.from(rollup);
    all.addAll(rollup.keys().values());
    assertThat(all).allSatisfy(key -> assertThat(ConfigDef.find(key)).as(key).isNotNull());
    assertThat(ConfigDef.allKeys()).allSatisfy(key ->
      assertThat(all.stream().anyMatch(key::matches)).as(key.name() + " is read").isTrue());
  }

  @Test
  @DisplayName("an unset key reads as its definition's default")
  void defaultsComeFromTheDefinitions() {
    GatewayConfig config = GatewayConfig.fromJson(everySection());
    assertThat(config.getBatching().getMaxDelayMs()).isEqualTo(BatchingOptions.MAX_DELAY.defaultValue().toMillis());
    assertThat(config.getHttp().getPort()).isEqualTo(HttpOptions.PORT.defaultValue());
    assertThat(config.getHttp().getCorsOrigins()).isEqualTo(HttpOptions.CORS_ORIGINS.defaultValue());
    assertThat(config.getLimits().getMinDelta()).isEqualTo(LimitsOptions.MIN_DELTA.defaultValue());
    assertThat(config.getShutdownTimeoutMs()).isEqualTo(GatewayConfig.SHUTDOWN_TIMEOUT.defaultValue().toMillis());
    assertThat(config.namespace("downloads").getSlots()).isEqualTo(NamespaceOptions.SLOTS.defaultValue());
    assertThat(config.namespace("likes").getWindow().getRetention()).isEqualTo(WindowOptions.RETENTION.defaultValue());
    assertThat(config.getRollups().get(0).getBatchSize()).isEqualTo(RollupOptions.BATCH_SIZE.defaultValue());
    assertThat(config.getLogging().getLevel()).isEqualTo(LoggingOptions.LEVEL.defaultValue());
    // derived defaults follow their setting
    assertThat(config.getDatabase().getPort()).isZero();
    assertThat(config.namespace("likes").isDropBots()).isTrue();
    assertThat(config.namespace("downloads").isDropBots()).isFalse();
  }

  @Test
  @DisplayName("every default, written as the docs write it, reads back as itself")
  void defaultsRoundTrip() {
    Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
    for (ConfigKey<?> key : ConfigDef.allKeys()) {
      if (key.defaultKind() == ConfigKey.DefaultKind.VALUE) {
        boolean list = key.type() == ConfigKey.LIST || key.type() == ConfigKey.MAPPINGS;
        String text = list || key.defaultText().equals("\"\"") ? key.defaultText() : "'" + key.defaultText() + "'";
        Map<String, Object> parsed = yaml.load("value: " + text);
        assertThat((Object) key.parse(key.name(), parsed.get("value"))).as(key.name()).isEqualTo(key.defaultValue());
      }
    }
  }

  @Test
  @DisplayName("just outside a defined range, the value is refused naming its key and the range")
  void rangesAreEnforced() {
    Pattern range = Pattern.compile("(-?\\d+) – (-?\\d+)");
    Pattern durations = Pattern.compile("(\\d+(?:ms|s|m|h|d)) – (\\d+(?:ms|s|m|h|d))");
    int checked = 0;
    for (ConfigKey<?> key : ConfigDef.allKeys()) {
      Matcher bounds = range.matcher(key.allowedText());
      Matcher spans = durations.matcher(key.allowedText());
      List<String> outside = new ArrayList<>();
      String rule;
      if (key.name().startsWith("rollups[]")) {
        continue;
      } else if (key.type() == ConfigKey.DURATION && spans.find()) {
        long min = ConfigKey.DURATION.parse("min", spans.group(1)).toMillis();
        long max = ConfigKey.DURATION.parse("max", spans.group(2)).toMillis();
        if (min > 0) {
          outside.add((min - 1) + "ms");
        }
        outside.add((max + 1) + "ms");
        rule = "must be between " + spans.group(1) + " and " + spans.group(2);
      } else if (bounds.find()) {
        outside.add(Long.toString(Long.parseLong(bounds.group(1)) - 1));
        outside.add(Long.toString(Long.parseLong(bounds.group(2)) + 1));
        rule = "must be between " + bounds.group(1) + " and " + bounds.group(2);
      } else {
        continue;
      }
      String dotted = key.name().replace("<name>", "likes");
      for (String value : outside) {
        JsonObject raw = everySection();
        ConfigLoader.put(raw, dotted, value);
        assertThatThrownBy(() -> GatewayConfig.fromJson(raw)).as(dotted + " = " + value)
          .isInstanceOf(ConfigException.class).hasMessageStartingWith(dotted + ": " + rule);
      }
      checked++;
    }
    assertThat(checked).isGreaterThan(50);
  }

  @Test
  @DisplayName("the names are unique, per-entry names carry their placeholder, and each key has a one-line doc")
  void namesAndDocs() {
    List<String> names = ConfigDef.allKeys().stream().map(ConfigKey::name).toList();
    assertThat(names).doesNotHaveDuplicates().contains("http.port", "namespaces.<name>.slots",
      "namespaces.<name>.beacon.dropBots", "namespaces.<name>.window.maxRangeBuckets", "rollups[].table", "rollups");
    assertThat(ConfigDef.allKeys()).allSatisfy(key -> assertThat(key.doc()).isNotBlank().doesNotContain("\n"));
    assertThat(ConfigDef.find("namespaces.likes.window.bucket")).isSameAs(WindowOptions.BUCKET);
    assertThat(ConfigDef.find("rollups[3].keyColumn")).isSameAs(RollupOptions.KEY_COLUMN);
    assertThat(ConfigDef.find("namespaces.likes")).isNull();
    assertThat(ConfigDef.markdownTable().lines().filter(line -> line.startsWith("| `")).count()).isEqualTo(names.size());
    assertThat(ConfigDef.markdownTable().lines().filter(line -> line.startsWith("### ")))
      .containsExactly("### What you set", "### What you turn on or change", "### Tuning");
  }

  @Test
  @DisplayName("the keys a user sets are of high importance, tuning of low, and the high ones are few")
  void importance() {
    assertThat(ConfigDef.allKeys().stream().filter(key -> key.importance() == ConfigKey.Importance.HIGH)
      .map(ConfigKey::name)).contains("http.host", "http.port", "database.kind", "database.host", "database.password",
        "journal.dir", "auth.tokens", "namespaces.<name>.slots", "namespaces.<name>.public").hasSizeLessThan(20);
    assertThat(BatchingOptions.RETRY_BACKOFF.importance()).isEqualTo(ConfigKey.Importance.LOW);
    assertThat(LaneOptions.LEASE.importance()).isEqualTo(ConfigKey.Importance.LOW);
    assertThat(HttpOptions.TLS_CERT_FILE.importance()).isEqualTo(ConfigKey.Importance.MEDIUM);
  }

  @Test
  @DisplayName("a required key without a value is refused naming it and what it allows")
  void requiredKeys() {
    JsonObject raw = everySection();
    raw.getJsonObject("namespaces").getJsonObject("likes").getJsonObject("window").remove("bucket");
    assertThatThrownBy(() -> GatewayConfig.fromJson(raw))
      .hasMessage("namespaces.likes.window.bucket: is required: minute, hour, day");
  }

  @Test
  @DisplayName("options built from a section's mapping are validated like the file's")
  void optionsFromJson() {
    assertThat(DatabaseOptions.fromJson(new JsonObject().put("kind", "mariadb")).getPort()).isEqualTo(3306);
    assertThat(DatabaseOptions.fromJson(new JsonObject().put("kind", "mariadb")).getUser()).isEqualTo("root");
    DatabaseOptions embedded = DatabaseOptions.fromJson(new JsonObject());
    DatabaseOptions moved = embedded.withEndpoint("127.0.0.1", 54321, "gateway", "secret");
    assertThat(moved.getPort()).isEqualTo(54321);
    assertThat(embedded.getPort()).as("the original is unchanged").isZero();
    assertThatThrownBy(() -> CompactionOptions.fromJson(new JsonObject().put("batchSiz", 3)))
      .hasMessage("compaction.batchSiz: unknown key (did you mean compaction.batchSize?)");
  }
}
