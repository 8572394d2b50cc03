package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.MAPPINGS;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;

/**
 * The whole, validated configuration; built once at start by {@link #fromJson} and shared read-only by every
 * verticle. Nothing changes it afterwards: a different value makes a copy ({@link #withDatabase}).
 */
public final class GatewayConfig {
  static final ConfigDef SHUTDOWN_KEYS = ConfigDef.section("shutdown");
  public static final ConfigKey<Duration> SHUTDOWN_TIMEOUT = SHUTDOWN_KEYS.define("timeout", MEDIUM, DURATION,
    Duration.ofSeconds(30), between(Duration.ofMillis(100), Duration.ofHours(1)), "how long a graceful stop may take to "
      + "flush what is pending")
    .formerly("timeoutMs", ChronoUnit.MILLIS);
  static final ConfigDef KEYS = ConfigDef.section("");
  public static final ConfigKey<List<Object>> ROLLUPS = KEYS.define("rollups", MEDIUM, MAPPINGS, List.of(), any(),
    "totals copied into a column of your own table, one entry per namespace (see *Roll-ups*)");

  private final HttpOptions http;
  private final ManagementOptions management;
  private final DatabaseOptions database;
  private final BatchingOptions batching;
  private final JournalOptions journal;
  private final LimitsOptions limits;
  private final ReadOptions reads;
  private final AuthOptions auth;
  private final List<RollupOptions> rollups;
  private final CompactionOptions compaction;
  private final IdempotencyOptions idempotency;
  private final UniquesOptions uniques;
  private final BeaconOptions beacon;
  private final ClusterOptions cluster;
  private final LaneOptions lanes;
  private final LoggingOptions logging;
  private final Map<String, NamespaceOptions> namespaces;
  private final int shutdownTimeoutMs;
  private final MemoryBounds memoryBounds;

  private GatewayConfig(GatewayConfig config, DatabaseOptions database) {
    this.http = config.http;
    this.management = config.management;
    this.database = database;
    this.batching = config.batching;
    this.journal = config.journal;
    this.limits = config.limits;
    this.reads = config.reads;
    this.auth = config.auth;
    this.rollups = config.rollups;
    this.compaction = config.compaction;
    this.idempotency = config.idempotency;
    this.uniques = config.uniques;
    this.beacon = config.beacon;
    this.cluster = config.cluster;
    this.lanes = config.lanes;
    this.logging = config.logging;
    this.namespaces = config.namespaces;
    this.shutdownTimeoutMs = config.shutdownTimeoutMs;
    this.memoryBounds = config.memoryBounds;
  }

  /**
   * Reads every option through {@code root}, which records each key asked for, and derives the memory bounds for
   * {@code machine}.
   */
  private GatewayConfig(ConfigSection root, Machine machine) {
    http = HttpOptions.from(root.section("http"));
    management = ManagementOptions.from(root.section("management"));
    if (management.isEnabled() && management.getPort() == http.getPort()) {
      throw new ConfigException(ManagementOptions.PORT.name(), "must differ from " + HttpOptions.PORT.name() + " ("
        + http.getPort() + ")");
    }
    database = DatabaseOptions.from(root.section("database"));
    batching = BatchingOptions.from(root.section("batching"));
    journal = JournalOptions.from(root.section("journal"));
    limits = LimitsOptions.from(root.section("limits"));
    reads = ReadOptions.from(root.section("reads"));
    auth = AuthOptions.from(root.section("auth"));
    beacon = BeaconOptions.from(root.section("beacon"));
    cluster = ClusterOptions.from(root.section("cluster"));
    lanes = LaneOptions.from(root.section("lanes"));
    logging = LoggingOptions.from(root.section("logging"));
    shutdownTimeoutMs = (int) root.section("shutdown").get(SHUTDOWN_TIMEOUT).toMillis();
    ConfigSection declared = root.section("namespaces");
    Map<String, NamespaceOptions> byName = new LinkedHashMap<>();
    for (String name : declared.json().fieldNames()) {
      NamespaceOptions namespace = NamespaceOptions.from(name, declared.section(name));
      byName.put(name, namespace);
      // the companions are namespaces like any other to the write path, the reads and the jobs (window, retention)
      namespace.companions().forEach(companion -> byName.put(companion.getName(), companion));
    }
    if (byName.isEmpty()) {
      throw new ConfigException("namespaces", "must declare at least one namespace (record type)");
    }
    namespaces = Collections.unmodifiableMap(byName);
    compaction = CompactionOptions.from(root.section("compaction"));
    idempotency = IdempotencyOptions.from(root.section("idempotency"));
    uniques = UniquesOptions.from(root.section("uniques"));
    List<RollupOptions> declaredRollups = new ArrayList<>();
    for (ConfigSection item : root.sections(ROLLUPS)) {
      RollupOptions rollup = RollupOptions.from(item);
      checkRollup(rollup, declaredRollups);
      declaredRollups.add(rollup);
      item.rejectUnknownKeys();
    }
    rollups = List.copyOf(declaredRollups);
    memoryBounds = MemoryBudget.derive(this, machine);
    checkJournalBesideEmbeddedData(database, journal);
    checkAuthFailsClosed(http, auth);
    checkTrackerNamespaces(beacon, namespaces);
  }

  /**
   * A tracker's script sends no token, so every namespace a site is mapped to must be declared and public; the default
   * {@code pageviews} is checked only when written (without it the endpoints answer as a beacon to it is answered).
   */
  private static void checkTrackerNamespaces(BeaconOptions beacon, Map<String, NamespaceOptions> namespaces) {
    if (beacon.isTrackerNamespaceSet()) {
      checkTrackerNamespace(BeaconOptions.TRACKER_NAMESPACE.name(), beacon.getTrackerNamespace(), namespaces);
    }
    beacon.getTrackerSites().forEach((site, namespace) ->
      checkTrackerNamespace(BeaconOptions.TRACKER_SITES.name(), namespace, namespaces));
  }

  private static void checkTrackerNamespace(String key, String name, Map<String, NamespaceOptions> namespaces) {
    NamespaceOptions namespace = namespaces.get(name);
    if (namespace == null) {
      throw new ConfigException(key, "'" + name + "' is not a declared namespace");
    }
    if (!namespace.isPublic()) {
      throw new ConfigException(key, "'" + name + "' is not public: tracker scripts send no token (namespaces."
        + name + ".public: true)");
    }
  }

  /**
   * Without tokens every route is open to whoever reaches the port: that is the sidecar's loopback bind, or what an
   * operator asked for by name. An absent or empty tokens Secret on a network bind must stop the start, not open it.
   */
  private static void checkAuthFailsClosed(HttpOptions http, AuthOptions auth) {
    if (!auth.isEnabled() && !auth.isAnonymous() && !http.isLoopback()) {
      throw new ConfigException(HttpOptions.HOST.name(), "'" + http.getHost() + "' is not a loopback address and no "
        + "tokens are set: set " + AuthOptions.TOKENS.name() + " or " + AuthOptions.TOKENS_FILE.name()
        + ", or " + AuthOptions.ANONYMOUS.name() + ": true to serve the network without authentication");
    }
  }

  /**
   * The embedded PostgreSQL owns its data directory: a journal inside it would outlive a reset of the database files
   * (and initdb refuses a directory that is not empty), so the two are kept apart.
   */
  private static void checkJournalBesideEmbeddedData(DatabaseOptions database, JournalOptions journal) {
    if (database.getKind() != DatabaseOptions.Kind.EMBEDDED_POSTGRES || !journal.isEnabled()) {
      return;
    }
    java.nio.file.Path data = java.nio.file.Path.of(database.getDataDir()).toAbsolutePath().normalize();
    java.nio.file.Path dir = java.nio.file.Path.of(journal.getDir()).toAbsolutePath().normalize();
    if (dir.startsWith(data)) {
      throw new ConfigException(JournalOptions.DIR.name(), "must not be inside " + DatabaseOptions.DATA_DIR.name() + " ("
        + database.getDataDir() + "), which the embedded PostgreSQL owns; use a directory beside it, e.g. ./journal "
        + "(move any journal-*.seg files already there into it first: they hold accepted increments)");
    }
  }

  /**
   * Validates the raw tree, with memory bounds for this JVM ({@link Machine#current()}); the first bad value, or a key
   * no option reads, throws a {@link ConfigException} naming its key.
   */
  public static GatewayConfig fromJson(JsonObject json) {
    return fromJson(json, Machine.current());
  }

  /** The same, with the memory bounds {@code machine}'s heap and cores give. */
  public static GatewayConfig fromJson(JsonObject json, Machine machine) {
    ConfigSection root = new ConfigSection(json, "");
    GatewayConfig config = new GatewayConfig(root, machine);
    root.rejectUnknownKeys();
    return config;
  }

  /** Reads every option through {@code root}, which records each key asked for. */
  static GatewayConfig read(ConfigSection root) {
    return new GatewayConfig(root, Machine.current());
  }

  /** A copy with other database options: the embedded database's endpoint, known once it has started. */
  public GatewayConfig withDatabase(DatabaseOptions database) {
    return new GatewayConfig(this, database);
  }

  /**
   * One roll-up per namespace: a roll-up marks the slot rows it has written as rolled, so a second one on the same
   * namespace would miss them.
   */
  private void checkRollup(RollupOptions rollup, List<RollupOptions> earlier) {
    String key = rollup.key() + "." + RollupOptions.NAMESPACE.localName();
    NamespaceOptions namespace = namespaces.get(rollup.getNamespace());
    if (namespace == null) {
      throw new ConfigException(key, "'" + rollup.getNamespace() + "' is not a declared namespace");
    }
    if (namespace.isWindowed()) {
      throw new ConfigException(key, "'" + rollup.getNamespace() + "' is windowed: roll-ups copy the totals of plain namespaces");
    }
    if (earlier.stream().anyMatch(other -> other.getNamespace().equals(rollup.getNamespace()))) {
      throw new ConfigException(key, "'" + rollup.getNamespace() + "' already has a roll-up");
    }
  }

  public List<RollupOptions> getRollups() {
    return rollups;
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

  public CompactionOptions getCompaction() {
    return compaction;
  }

  /** The declared namespace or a windowed one's companion, or null: undeclared record types are refused. */
  public NamespaceOptions namespace(String name) {
    return namespaces.get(name);
  }

  /** The declared namespaces and, after each windowed one, its companions. */
  public Map<String, NamespaceOptions> getNamespaces() {
    return namespaces;
  }

  public HttpOptions getHttp() {
    return http;
  }

  /** Health and metrics on a port of their own, or not. */
  public ManagementOptions getManagement() {
    return management;
  }

  public DatabaseOptions getDatabase() {
    return database;
  }

  public BatchingOptions getBatching() {
    return batching;
  }

  public JournalOptions getJournal() {
    return journal;
  }

  public LimitsOptions getLimits() {
    return limits;
  }

  public ReadOptions getReads() {
    return reads;
  }

  public AuthOptions getAuth() {
    return auth;
  }

  public BeaconOptions getBeacon() {
    return beacon;
  }

  public ClusterOptions getCluster() {
    return cluster;
  }

  public LaneOptions getLanes() {
    return lanes;
  }

  public LoggingOptions getLogging() {
    return logging;
  }

  public int getShutdownTimeoutMs() {
    return shutdownTimeoutMs;
  }

  /**
   * How many of each thing the bounded holders keep at most (pending counters, waiting requests, bodies in flight,
   * connections…): derived from the heap, so that all of them full at once fit it (config.MemoryBudget).
   */
  public MemoryBounds getMemoryBounds() {
    return memoryBounds;
  }
}
