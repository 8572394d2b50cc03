package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import io.vertx.core.json.JsonObject;

import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.STRING;
import static io.countergateway.config.ConfigKey.between;
import static io.countergateway.config.ConfigKey.identifier;
import static io.countergateway.config.ConfigKey.notBlank;

/**
 * One roll-up: every {@code interval}, the counters of {@code namespace} changed since the last run get
 * {@code valueColumn = SUM(slots)} on the row of the application's {@code table} whose {@code keyColumn} equals the
 * counter id.
 */
public final class RollupOptions {
  static final ConfigDef KEYS = ConfigDef.section("rollups[]");
  public static final ConfigKey<String> NAMESPACE = KEYS.defineRequired("namespace", MEDIUM, STRING, notBlank(),
    "the declared plain namespace whose totals are copied (one roll-up per namespace)");
  public static final ConfigKey<String> TABLE = KEYS.defineRequired("table", MEDIUM, STRING, identifier(),
    "your table that receives the totals");
  public static final ConfigKey<String> KEY_COLUMN = KEYS.defineRequired("keyColumn", MEDIUM, STRING, identifier(),
    "its column holding the counter id");
  public static final ConfigKey<String> VALUE_COLUMN = KEYS.defineRequired("valueColumn", MEDIUM, STRING, identifier(),
    "its column set to the counter's total");
  public static final ConfigKey<Duration> INTERVAL = KEYS.define("interval", MEDIUM, DURATION, Duration.ofSeconds(10),
    between(Duration.ofSeconds(1), Duration.ofDays(1)), "how often changed counters are rolled up")
    .formerly("intervalSeconds", ChronoUnit.SECONDS);
  /** Their slot rows are locked for the transaction's few milliseconds. */
  public static final ConfigKey<Integer> BATCH_SIZE = KEYS.define("batchSize", LOW, INT, 1000, between(1, 10_000),
    "counters per roll-up transaction");
  public static final int DEFAULT_BATCH_SIZE = BATCH_SIZE.defaultValue();

  private final String key;
  private final String namespace;
  private final String table;
  private final String keyColumn;
  private final String valueColumn;
  private final int intervalSeconds;
  private final int batchSize;

  private RollupOptions(ConfigSection section) {
    key = section.path();
    namespace = section.get(NAMESPACE);
    table = section.get(TABLE);
    keyColumn = section.get(KEY_COLUMN);
    valueColumn = section.get(VALUE_COLUMN);
    intervalSeconds = (int) section.get(INTERVAL).toSeconds();
    batchSize = section.get(BATCH_SIZE);
  }

  static RollupOptions from(ConfigSection section) {
    return new RollupOptions(section);
  }

  /** A roll-up from a mapping as the file's {@code rollups[0]} would hold it (tests, tools). */
  public static RollupOptions fromJson(JsonObject json) {
    return ConfigSection.read(json, "rollups[0]", RollupOptions::from);
  }

  /** Where this roll-up was configured, e.g. {@code rollups[0]}. */
  public String key() {
    return key;
  }

  /** A name for locks, logs and the bookkeeping row: unique per namespace and target column. */
  public String name() {
    return namespace + "->" + table + "." + valueColumn;
  }

  public String getNamespace() {
    return namespace;
  }

  public String getTable() {
    return table;
  }

  public String getKeyColumn() {
    return keyColumn;
  }

  public String getValueColumn() {
    return valueColumn;
  }

  public int getIntervalSeconds() {
    return intervalSeconds;
  }

  /** Counters per roll-up transaction: their slot rows are locked for its few milliseconds. */
  public int getBatchSize() {
    return batchSize;
  }
}
