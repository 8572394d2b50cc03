package io.countergateway.config;

/**
 * One roll-up: every {@code intervalSeconds}, the counters of {@code namespace} changed since the last run get
 * {@code valueColumn = SUM(slots)} on the row of the application's {@code table} whose {@code keyColumn} equals the
 * counter id.
 */
public class RollupOptions {
  public static final int DEFAULT_INTERVAL_SECONDS = 10;
  public static final int DEFAULT_BATCH_SIZE = 1000;

  private final String key;
  private String namespace;
  private String table;
  private String keyColumn;
  private String valueColumn;
  private int intervalSeconds = DEFAULT_INTERVAL_SECONDS;
  private int batchSize = DEFAULT_BATCH_SIZE;

  /** {@code key} is where it was configured, e.g. {@code rollups[0]}, for messages. */
  public RollupOptions(String key) {
    this.key = key;
  }

  static RollupOptions from(ConfigSection section) {
    return new RollupOptions(section.path())
      .setNamespace(section.stringValue("namespace", null))
      .setTable(section.stringValue("table", null))
      .setKeyColumn(section.stringValue("keyColumn", null))
      .setValueColumn(section.stringValue("valueColumn", null))
      .setIntervalSeconds(section.intValue("intervalSeconds", DEFAULT_INTERVAL_SECONDS))
      .setBatchSize(section.intValue("batchSize", DEFAULT_BATCH_SIZE));
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

  public RollupOptions setNamespace(String namespace) {
    this.namespace = Checks.notBlank(key + ".namespace", namespace);
    return this;
  }

  public String getTable() {
    return table;
  }

  public RollupOptions setTable(String table) {
    this.table = Checks.identifier(key + ".table", table);
    return this;
  }

  public String getKeyColumn() {
    return keyColumn;
  }

  public RollupOptions setKeyColumn(String keyColumn) {
    this.keyColumn = Checks.identifier(key + ".keyColumn", keyColumn);
    return this;
  }

  public String getValueColumn() {
    return valueColumn;
  }

  public RollupOptions setValueColumn(String valueColumn) {
    this.valueColumn = Checks.identifier(key + ".valueColumn", valueColumn);
    return this;
  }

  public int getIntervalSeconds() {
    return intervalSeconds;
  }

  public RollupOptions setIntervalSeconds(int intervalSeconds) {
    this.intervalSeconds = Checks.range(key + ".intervalSeconds", intervalSeconds, 1, 86_400);
    return this;
  }

  public int getBatchSize() {
    return batchSize;
  }

  /** Counters per roll-up transaction: their slot rows are locked for its few milliseconds. */
  public RollupOptions setBatchSize(int batchSize) {
    this.batchSize = Checks.range(key + ".batchSize", batchSize, 1, 10_000);
    return this;
  }
}
