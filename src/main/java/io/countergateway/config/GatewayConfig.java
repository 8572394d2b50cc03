package io.countergateway.config;

import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;

/** The whole, validated configuration; built once at start and shared read-only by every verticle. */
public class GatewayConfig {
  private HttpOptions http = new HttpOptions();
  private DatabaseOptions database = new DatabaseOptions();
  private BatchingOptions batching = new BatchingOptions();
  private LimitsOptions limits = new LimitsOptions();
  private ReadOptions reads = new ReadOptions();
  private AuthOptions auth = new AuthOptions();
  private final List<RollupOptions> rollups = new ArrayList<>();
  private CompactionOptions compaction = new CompactionOptions();
  private IdempotencyOptions idempotency = new IdempotencyOptions();
  private UniquesOptions uniques = UniquesOptions.defaults();
  private BeaconOptions beacon = new BeaconOptions();
  private ClusterOptions cluster = new ClusterOptions();
  private LaneOptions lanes = new LaneOptions();
  private LoggingOptions logging = new LoggingOptions();
  private final Map<String, NamespaceOptions> namespaces = new LinkedHashMap<>();
  private int shutdownTimeoutMs = 30_000;

  /**
   * Validates the raw tree; the first bad value, or a key no option reads, throws a {@link ConfigException}
   * naming its key.
   */
  public static GatewayConfig fromJson(JsonObject json) {
    ConfigSection root = new ConfigSection(json, "");
    GatewayConfig config = read(root);
    root.rejectUnknownKeys();
    return config;
  }

  /** Reads every option through {@code root}, which records each key asked for. */
  static GatewayConfig read(ConfigSection root) {
    GatewayConfig config = new GatewayConfig();
    config.http = HttpOptions.from(root.section("http"));
    config.database = DatabaseOptions.from(root.section("database"));
    config.batching = BatchingOptions.from(root.section("batching"));
    config.limits = LimitsOptions.from(root.section("limits"));
    config.reads = ReadOptions.from(root.section("reads"));
    config.auth = AuthOptions.from(root.section("auth"));
    config.beacon = BeaconOptions.from(root.section("beacon"));
    config.cluster = ClusterOptions.from(root.section("cluster"));
    config.lanes = LaneOptions.from(root.section("lanes"));
    config.logging = LoggingOptions.from(root.section("logging"));
    config.shutdownTimeoutMs = root.section("shutdown").intValue("timeoutMs", 30_000, 100, 3_600_000);
    ConfigSection namespaces = root.section("namespaces");
    for (String name : namespaces.json().fieldNames()) {
      config.addNamespace(NamespaceOptions.from(name, namespaces.section(name)));
    }
    if (config.namespaces.isEmpty()) {
      throw new ConfigException("namespaces", "must declare at least one namespace (record type)");
    }
    config.compaction = CompactionOptions.from(root.section("compaction"));
    config.idempotency = IdempotencyOptions.from(root.section("idempotency"));
    config.uniques = UniquesOptions.from(root.section("uniques"));
    for (ConfigSection rollup : root.sections("rollups")) {
      config.addRollup(RollupOptions.from(rollup));
      rollup.rejectUnknownKeys();
    }
    checkBatchesFit(config.batching, config.limits);
    return config;
  }

  /**
   * A batch is taken by one coalescer whole or not at all, one pending counter and one waiting request per counter:
   * a batch the limits allow must fit in an empty coalescer, or it would get 503 forever and shed for nothing.
   */
  private static void checkBatchesFit(BatchingOptions batching, LimitsOptions limits) {
    int batch = limits.getMaxBatchIncrements();
    if (batching.getMaxPendingKeys() < batch) {
      throw new ConfigException("batching.maxPendingKeys", "must be at least limits.maxBatchIncrements (" + batch
        + "), got " + batching.getMaxPendingKeys());
    }
    if (batching.getMaxWaitingRequests() < batch) {
      throw new ConfigException("batching.maxWaitingRequests", "must be at least limits.maxBatchIncrements (" + batch
        + "), got " + batching.getMaxWaitingRequests());
    }
  }

  public GatewayConfig addNamespace(NamespaceOptions namespace) {
    namespaces.put(namespace.getName(), namespace);
    return this;
  }

  /**
   * One roll-up per namespace: a roll-up marks the slot rows it has written as rolled, so a second one on the same
   * namespace would miss them.
   */
  public GatewayConfig addRollup(RollupOptions rollup) {
    if (namespaces.get(rollup.getNamespace()) == null) {
      throw new ConfigException(rollup.key() + ".namespace", "'" + rollup.getNamespace() + "' is not a declared namespace");
    }
    if (namespaces.get(rollup.getNamespace()).isWindowed()) {
      throw new ConfigException(rollup.key() + ".namespace", "'" + rollup.getNamespace()
        + "' is windowed: roll-ups copy the totals of plain namespaces");
    }
    if (rollups.stream().anyMatch(other -> other.getNamespace().equals(rollup.getNamespace()))) {
      throw new ConfigException(rollup.key() + ".namespace", "'" + rollup.getNamespace() + "' already has a roll-up");
    }
    rollups.add(rollup);
    return this;
  }

  public List<RollupOptions> getRollups() {
    return Collections.unmodifiableList(rollups);
  }

  public UniquesOptions getUniques() {
    return uniques;
  }

  /** Whether any namespace counts unique visitors (and so needs the sketch tables' writers and readers). */
  public boolean hasUniques() {
    return namespaces.values().stream().anyMatch(NamespaceOptions::isUnique);
  }

  public IdempotencyOptions getIdempotency() {
    return idempotency;
  }

  public GatewayConfig setIdempotency(IdempotencyOptions idempotency) {
    this.idempotency = idempotency;
    return this;
  }

  public CompactionOptions getCompaction() {
    return compaction;
  }

  public GatewayConfig setCompaction(CompactionOptions compaction) {
    this.compaction = compaction;
    return this;
  }

  /** The declared namespace, or null: undeclared record types are refused. */
  public NamespaceOptions namespace(String name) {
    return namespaces.get(name);
  }

  public Map<String, NamespaceOptions> getNamespaces() {
    return Collections.unmodifiableMap(namespaces);
  }

  public HttpOptions getHttp() {
    return http;
  }

  public GatewayConfig setHttp(HttpOptions http) {
    this.http = http;
    return this;
  }

  public DatabaseOptions getDatabase() {
    return database;
  }

  public GatewayConfig setDatabase(DatabaseOptions database) {
    this.database = database;
    return this;
  }

  public BatchingOptions getBatching() {
    return batching;
  }

  public GatewayConfig setBatching(BatchingOptions batching) {
    this.batching = batching;
    return this;
  }

  public LimitsOptions getLimits() {
    return limits;
  }

  public GatewayConfig setLimits(LimitsOptions limits) {
    this.limits = limits;
    return this;
  }

  public ReadOptions getReads() {
    return reads;
  }

  public GatewayConfig setReads(ReadOptions reads) {
    this.reads = reads;
    return this;
  }

  public AuthOptions getAuth() {
    return auth;
  }

  public GatewayConfig setAuth(AuthOptions auth) {
    this.auth = auth;
    return this;
  }

  public BeaconOptions getBeacon() {
    return beacon;
  }

  public GatewayConfig setBeacon(BeaconOptions beacon) {
    this.beacon = beacon;
    return this;
  }

  public ClusterOptions getCluster() {
    return cluster;
  }

  public GatewayConfig setCluster(ClusterOptions cluster) {
    this.cluster = cluster;
    return this;
  }

  public LaneOptions getLanes() {
    return lanes;
  }

  public GatewayConfig setLanes(LaneOptions lanes) {
    this.lanes = lanes;
    return this;
  }

  public LoggingOptions getLogging() {
    return logging;
  }

  public int getShutdownTimeoutMs() {
    return shutdownTimeoutMs;
  }

  public GatewayConfig setShutdownTimeoutMs(int shutdownTimeoutMs) {
    this.shutdownTimeoutMs = Checks.range("shutdown.timeoutMs", shutdownTimeoutMs, 100, 3_600_000);
    return this;
  }
}
