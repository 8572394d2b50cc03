package io.countergateway.config;

import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.LIST;
import static io.countergateway.config.ConfigKey.Importance.HIGH;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.STRING;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;
import static io.countergateway.config.ConfigKey.choice;
import static io.countergateway.config.ConfigKey.identifier;
import static io.countergateway.config.ConfigKey.items;
import static io.countergateway.config.ConfigKey.notBlank;

/** Which database holds the slotted counters and how to reach it. */
public final class DatabaseOptions {
  public enum Kind { EMBEDDED_POSTGRES, POSTGRES, MYSQL }

  /** libpq's names: what a connection asks of the server's certificate. */
  public enum SslMode {
    /** Plain TCP. */
    DISABLE,
    /** Encrypted; the certificate is not checked (checked against {@code ssl.caFile} when one is given, as libpq). */
    REQUIRE,
    /** Encrypted; the certificate must chain to {@code ssl.caFile}. */
    VERIFY_CA,
    /** As {@link #VERIFY_CA}, and it must name {@code database.host}. */
    VERIFY_FULL;

    /** As the configuration writes it, e.g. {@code verify-full}. */
    public String text() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  /** What stands between the gateway and PostgreSQL (docs/scaling.md "Poolers"). */
  public enum Pooler {
    /** The server itself, or a pooler that keeps one server session per client connection and passes start-up settings. */
    NONE,
    /** A pooler in session mode that refuses unknown start-up parameters (PgBouncer {@code pool_mode = session}). */
    SESSION;

    public String text() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** One server of {@code database.hosts}. */
  public record Endpoint(String host, int port) {
    @Override
    public String toString() {
      return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
  }

  static final ConfigDef KEYS = ConfigDef.section("database");
  public static final ConfigKey<String> KIND = KEYS.define("kind", HIGH,
    choice(List.of("embedded-postgres", "postgres", "mysql"), Map.of("postgresql", "postgres", "mariadb", "mysql")),
    "embedded-postgres", any(), "which database: an embedded PostgreSQL, a PostgreSQL, or MySQL / MariaDB");
  public static final ConfigKey<String> HOST = KEYS.define("host", HIGH, STRING, "127.0.0.1", notBlank(),
    "the database server's host (embedded: ignored)");
  public static final ConfigKey<Integer> PORT = KEYS.defineDerived("port", HIGH, INT, "5432 / 3306 / 0 by kind",
    between(0, 65_535), "the server's port; embedded: 0 = a free port at every start");
  public static final ConfigKey<List<String>> HOSTS = KEYS.define("hosts", MEDIUM, LIST, List.of(),
    items("(\\[[0-9A-Fa-f:.]+\\]|[^:\\s\\[\\]]+):[0-9]{1,5}", "host:port"),
    "a primary and its standbys, tried in order; connections go only to the one that takes writes, found again after "
      + "a failover (instead of `host` and `port`; see *Failover*)");
  public static final ConfigKey<String> NAME = KEYS.define("name", HIGH, STRING, "counters", identifier(), "the database");
  public static final ConfigKey<String> USER = KEYS.defineDerived("user", HIGH, STRING, "postgres / root (mysql)", notBlank(),
    "the database user (embedded: ignored)");
  /** Usually an environment override or a file: a password is never logged. */
  public static final ConfigKey<String> PASSWORD = KEYS.define("password", HIGH, STRING, "", any(),
    "the password (never logged); usually from `CG_DATABASE_PASSWORD`");
  public static final ConfigKey<String> PASSWORD_FILE = KEYS.defineOptional("passwordFile", HIGH, STRING, any(),
    "a file holding the password (a mounted secret), instead of `password`");
  public static final ConfigKey<String> TABLE = KEYS.define("table", MEDIUM, STRING, "slotted_counters", identifier(),
    "the counters table (flush ids go to `<table>_flushes`)");
  /** Kept across restarts. */
  public static final ConfigKey<String> DATA_DIR = KEYS.define("dataDir", HIGH, STRING, "./data", notBlank(),
    "embedded PostgreSQL only: its files, kept across restarts");
  public static final ConfigKey<Integer> READ_POOL_SIZE = KEYS.define("readPoolSize", LOW, INT, 4, between(1, 256),
    "connections of each read verticle");
  public static final ConfigKey<Boolean> CREATE_SCHEMA = KEYS.define("createSchema", MEDIUM, BOOLEAN, true, any(),
    "apply the missing schema steps at start; `false`: only check that a DBA applied them (see *Schema versions*)");
  public static final ConfigKey<String> SSL_MODE = KEYS.define("ssl.mode", MEDIUM,
    choice("disable", "require", "verify-ca", "verify-full"), "disable", any(),
    "TLS to the database server: `require` encrypts, `verify-ca` also checks its certificate against `ssl.caFile`, "
      + "`verify-full` also checks that it names `host` (embedded: `disable` only)");
  public static final ConfigKey<String> SSL_CA_FILE = KEYS.defineOptional("ssl.caFile", MEDIUM, STRING, any(),
    "PEM CA certificate(s) the server's certificate must chain to; required by `verify-ca` and `verify-full`");

  public static final ConfigKey<String> POOLER = KEYS.define("pooler", MEDIUM, choice("none", "session"), "none", any(),
    "PostgreSQL behind a pooler: `session` for PgBouncer in `pool_mode = session` (the session settings are sent as "
      + "`SET` after connecting, as PgBouncer refuses them at start-up); transaction and statement pooling are refused "
      + "at start (see *Poolers*)");

  /**
   * Off by default: it costs one statement per coalescer every 100 ms and holds each flush (in memory and in the journal)
   * until the standbys have it, and without standbys it changes nothing.
   */
  public static final ConfigKey<Boolean> KEEP_UNTIL_REPLICATED = KEYS.define("keepUntilReplicated", MEDIUM, BOOLEAN,
    false, any(), "PostgreSQL with asynchronous standbys: keep every committed flush (in memory and its journal "
      + "frames) until each standby has flushed its commit, and after a failover write again under the same flush id "
      + "what the promoted server lacks (see *Replicated databases*)");
  public static final ConfigKey<Duration> REPLICATION_LAG_MAX = KEYS.define("replicationLagMax", LOW, DURATION,
    Duration.ofSeconds(30), between(Duration.ofSeconds(1), Duration.ofHours(1)), "with `keepUntilReplicated`: a "
      + "committed flush the standbys have not had for this long refuses new increments 503 `replication_lag` "
      + "(readiness 503) until they catch up");

  private final Kind kind;
  private final String host;
  private final int port;
  private final String name;
  private final String user;
  private final String password;
  private final String table;
  private final String dataDir;
  private final int readPoolSize;
  private final boolean createSchema;
  private final SslMode sslMode;
  private final String sslCaFile;
  private final Pooler pooler;
  /** {@code database.hosts}; empty: the one server of {@code host} and {@code port}. */
  private final List<Endpoint> hosts;
  /**
   * Not a key: the {@code synchronous_commit} the gateway's PostgreSQL sessions set, chosen at start from the
   * replication set-up (docs/guarantees.md "Replicated databases: what a failover keeps"); null keeps the server's.
   */
  private final String synchronousCommit;
  private final boolean keepUntilReplicated;
  private final long replicationLagMaxMs;

  private DatabaseOptions(Kind kind, String host, int port, String name, String user, String password, String table,
                          String dataDir, int readPoolSize, boolean createSchema, SslMode sslMode, String sslCaFile,
                          Pooler pooler, List<Endpoint> hosts, String synchronousCommit, boolean keepUntilReplicated,
                          long replicationLagMaxMs) {
    this.kind = kind;
    this.host = host;
    this.port = port;
    this.name = name;
    this.user = user;
    this.password = password;
    this.table = table;
    this.dataDir = dataDir;
    this.readPoolSize = readPoolSize;
    this.createSchema = createSchema;
    this.sslMode = sslMode;
    this.sslCaFile = sslCaFile;
    this.pooler = pooler;
    this.hosts = List.copyOf(hosts);
    this.synchronousCommit = synchronousCommit;
    this.keepUntilReplicated = keepUntilReplicated;
    this.replicationLagMaxMs = replicationLagMaxMs;
  }

  static DatabaseOptions from(ConfigSection section) {
    Kind kind = switch (section.get(KIND)) {
      case "postgres" -> Kind.POSTGRES;
      case "mysql" -> Kind.MYSQL;
      default -> Kind.EMBEDDED_POSTGRES;
    };
    int defaultPort = switch (kind) {
      case POSTGRES -> 5432;
      case MYSQL -> 3306;
      case EMBEDDED_POSTGRES -> 0;
    };
    SslMode sslMode = SslMode.valueOf(section.get(SSL_MODE).toUpperCase(Locale.ROOT).replace('-', '_'));
    String caFile = TlsFiles.readable(section, SSL_CA_FILE);
    if (kind == Kind.EMBEDDED_POSTGRES && sslMode != SslMode.DISABLE) {
      throw new ConfigException(section.key(SSL_MODE), "must be disable with the embedded PostgreSQL, which only "
        + "listens on loopback and serves no TLS");
    }
    if ((sslMode == SslMode.VERIFY_CA || sslMode == SslMode.VERIFY_FULL) && caFile == null) {
      throw new ConfigException(section.key(SSL_CA_FILE), "is required with " + section.key(SSL_MODE) + " "
        + section.get(SSL_MODE) + ": the CA the server's certificate must chain to");
    }
    Pooler pooler = Pooler.valueOf(section.get(POOLER).toUpperCase(Locale.ROOT));
    if (pooler != Pooler.NONE && kind != Kind.POSTGRES) {
      throw new ConfigException(section.key(POOLER), "must be none with database.kind " + section.get(KIND)
        + ": only PostgreSQL is reached through PgBouncer (MySQL through ProxySQL needs no setting, see Poolers)");
    }
    List<Endpoint> hosts = endpoints(section);
    if (!hosts.isEmpty() && kind == Kind.EMBEDDED_POSTGRES) {
      throw new ConfigException(section.key(HOSTS), "must be empty with database.kind embedded-postgres, which is one "
        + "server the gateway starts itself");
    }
    for (ConfigKey<?> single : List.of(HOST, PORT)) {
      if (!hosts.isEmpty() && section.has(single)) {
        throw new ConfigException(section.key(single), "must not be set with " + section.key(HOSTS) + ", which lists "
          + "every server with its port");
      }
    }
    if (section.get(KEEP_UNTIL_REPLICATED) && kind == Kind.MYSQL) {
      throw new ConfigException(section.key(KEEP_UNTIL_REPLICATED), "must be false with database.kind mysql: it reads "
        + "PostgreSQL's WAL positions; MySQL / MariaDB keep every answered increment through a failover with "
        + "semi-synchronous replication or Galera (docs/guarantees.md)");
    }
    String host = hosts.isEmpty() ? section.get(HOST) : hosts.get(0).host();
    int port = hosts.isEmpty() ? section.get(PORT, defaultPort) : hosts.get(0).port();
    return new DatabaseOptions(kind, host, port, section.get(NAME),
      section.get(USER, kind == Kind.MYSQL ? "root" : "postgres"), Secrets.resolve(section, PASSWORD, PASSWORD_FILE),
      section.get(TABLE), section.get(DATA_DIR), section.get(READ_POOL_SIZE), section.get(CREATE_SCHEMA), sslMode,
      caFile, pooler, hosts, null, section.get(KEEP_UNTIL_REPLICATED), section.get(REPLICATION_LAG_MAX).toMillis());
  }

  /** {@code database.hosts} read: each {@code host:port} once, a port within 1 – 65535. */
  private static List<Endpoint> endpoints(ConfigSection section) {
    List<Endpoint> endpoints = new java.util.ArrayList<>();
    for (String item : section.get(HOSTS)) {
      int colon = item.lastIndexOf(':');
      String host = item.substring(0, colon).replace("[", "").replace("]", "");
      int port = Integer.parseInt(item.substring(colon + 1));
      if (port < 1 || port > 65_535) {
        throw new ConfigException(section.key(HOSTS), "'" + item + "': the port must be within 1 – 65535");
      }
      Endpoint endpoint = new Endpoint(host, port);
      if (endpoints.contains(endpoint)) {
        throw new ConfigException(section.key(HOSTS), "lists " + endpoint + " twice");
      }
      endpoints.add(endpoint);
    }
    return endpoints;
  }

  /** Options from a mapping as the file's {@code database} section would hold it (tests, tools). */
  public static DatabaseOptions fromJson(JsonObject json) {
    return ConfigSection.read(json, KEYS.pattern(), DatabaseOptions::from);
  }

  /** A copy reaching the server at another endpoint: the embedded database's, known once it has started. */
  public DatabaseOptions withEndpoint(String host, int port, String user, String password) {
    return new DatabaseOptions(kind, host, port, name, user, password, table, dataDir, readPoolSize, createSchema,
      sslMode, sslCaFile, pooler, List.of(), synchronousCommit, keepUntilReplicated, replicationLagMaxMs);
  }

  /** A copy whose PostgreSQL sessions commit at {@code level} ({@code synchronous_commit}; null: the server's). */
  public DatabaseOptions withSynchronousCommit(String level) {
    return new DatabaseOptions(kind, host, port, name, user, password, table, dataDir, readPoolSize, createSchema,
      sslMode, sslCaFile, pooler, hosts, level, keepUntilReplicated, replicationLagMaxMs);
  }

  public boolean isPostgres() {
    return kind != Kind.MYSQL;
  }

  public Kind getKind() {
    return kind;
  }

  /** The server's host; with {@code database.hosts}, the first one's (what the journal records as its target). */
  public String getHost() {
    return host;
  }

  /**
   * The servers of {@code database.hosts}, of which connections go only to the one that takes writes; empty when one
   * server is configured ({@link #getHost()}, {@link #getPort()}).
   */
  public List<Endpoint> getHosts() {
    return hosts;
  }

  /** What the messages name: {@code host:port}, or every host of {@code database.hosts}. */
  public String endpointText() {
    return hosts.isEmpty() ? new Endpoint(host, port).toString()
      : hosts.stream().map(Endpoint::toString).collect(java.util.stream.Collectors.joining(", "));
  }

  /** For the embedded database, 0 picks a free port at every start. */
  public int getPort() {
    return port;
  }

  public String getName() {
    return name;
  }

  public String getUser() {
    return user;
  }

  public String getPassword() {
    return password;
  }

  public String getTable() {
    return table;
  }

  /** Where the embedded PostgreSQL keeps its files; kept across restarts. */
  public String getDataDir() {
    return dataDir;
  }

  public int getReadPoolSize() {
    return readPoolSize;
  }

  public boolean isCreateSchema() {
    return createSchema;
  }

  public SslMode getSslMode() {
    return sslMode;
  }

  /** The PEM CA file the server's certificate must chain to; null when none is configured. */
  public String getSslCaFile() {
    return sslCaFile;
  }

  public Pooler getPooler() {
    return pooler;
  }

  /** The {@code synchronous_commit} of the gateway's PostgreSQL sessions; null keeps the server's. */
  public String getSynchronousCommit() {
    return synchronousCommit;
  }

  /** {@code database.keepUntilReplicated}: flushes are held until every standby has flushed their commits. */
  public boolean isKeepUntilReplicated() {
    return keepUntilReplicated;
  }

  /** {@code database.replicationLagMax}: how long a committed flush may wait for the standbys before intake stops. */
  public long getReplicationLagMaxMs() {
    return replicationLagMaxMs;
  }

  @Override
  public String toString() {
    // never the password
    return kind + " " + user + "@" + (hosts.isEmpty() ? host + ":" + port : "[" + endpointText() + "]") + "/" + name + " table " + table + " ssl " + sslMode.text()
      + (pooler == Pooler.NONE ? "" : " pooler " + pooler.text());
  }
}
