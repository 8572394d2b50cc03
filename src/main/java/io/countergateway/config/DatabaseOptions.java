package io.countergateway.config;

/** Which database holds the slotted counters and how to reach it. */
public class DatabaseOptions {
  public enum Kind { EMBEDDED_POSTGRES, POSTGRES, MYSQL }

  public static final String DEFAULT_TABLE = "slotted_counters";
  public static final String DEFAULT_DATA_DIR = "./data";
  public static final int DEFAULT_POOL_SIZE = 4;

  private Kind kind = Kind.EMBEDDED_POSTGRES;
  private String host = "127.0.0.1";
  private int port = 0;
  private String name = "counters";
  private String user = "postgres";
  private String password = "";
  private String table = DEFAULT_TABLE;
  private String dataDir = DEFAULT_DATA_DIR;
  private int readPoolSize = DEFAULT_POOL_SIZE;
  private boolean createSchema = true;

  static DatabaseOptions from(ConfigSection section) {
    DatabaseOptions options = new DatabaseOptions().setKind(parseKind(section));
    int defaultPort = switch (options.kind) {
      case POSTGRES -> 5432;
      case MYSQL -> 3306;
      case EMBEDDED_POSTGRES -> 0;
    };
    return options
      .setHost(section.stringValue("host", "127.0.0.1"))
      .setPort(section.intValue("port", defaultPort))
      .setName(section.stringValue("name", "counters"))
      .setUser(section.stringValue("user", options.kind == Kind.MYSQL ? "root" : "postgres"))
      .setPassword(Secrets.resolve(section, "password"))
      .setTable(section.stringValue("table", DEFAULT_TABLE))
      .setDataDir(section.stringValue("dataDir", DEFAULT_DATA_DIR))
      .setReadPoolSize(section.intValue("readPoolSize", DEFAULT_POOL_SIZE))
      .setCreateSchema(section.boolValue("createSchema", true));
  }

  private static Kind parseKind(ConfigSection section) {
    String value = section.stringValue("kind", "embedded-postgres").trim().toLowerCase();
    return switch (value) {
      case "embedded-postgres" -> Kind.EMBEDDED_POSTGRES;
      case "postgres", "postgresql" -> Kind.POSTGRES;
      case "mysql", "mariadb" -> Kind.MYSQL;
      default -> throw new ConfigException(section.key("kind"),
        "must be one of embedded-postgres, postgres, mysql, got '" + value + "'");
    };
  }

  public boolean isPostgres() {
    return kind != Kind.MYSQL;
  }

  public Kind getKind() {
    return kind;
  }

  public DatabaseOptions setKind(Kind kind) {
    this.kind = kind;
    return this;
  }

  public String getHost() {
    return host;
  }

  public DatabaseOptions setHost(String host) {
    this.host = Checks.notBlank("database.host", host);
    return this;
  }

  public int getPort() {
    return port;
  }

  /** For the embedded database, 0 picks a free port at every start. */
  public DatabaseOptions setPort(int port) {
    this.port = Checks.range("database.port", port, 0, 65535);
    return this;
  }

  public String getName() {
    return name;
  }

  public DatabaseOptions setName(String name) {
    this.name = Checks.identifier("database.name", name);
    return this;
  }

  public String getUser() {
    return user;
  }

  public DatabaseOptions setUser(String user) {
    this.user = Checks.notBlank("database.user", user);
    return this;
  }

  public String getPassword() {
    return password;
  }

  public DatabaseOptions setPassword(String password) {
    this.password = password == null ? "" : password;
    return this;
  }

  public String getTable() {
    return table;
  }

  public DatabaseOptions setTable(String table) {
    this.table = Checks.identifier("database.table", table);
    return this;
  }

  public String getDataDir() {
    return dataDir;
  }

  /** Where the embedded PostgreSQL keeps its files; kept across restarts. */
  public DatabaseOptions setDataDir(String dataDir) {
    this.dataDir = Checks.notBlank("database.dataDir", dataDir);
    return this;
  }

  public int getReadPoolSize() {
    return readPoolSize;
  }

  public DatabaseOptions setReadPoolSize(int readPoolSize) {
    this.readPoolSize = Checks.range("database.readPoolSize", readPoolSize, 1, 256);
    return this;
  }

  public boolean isCreateSchema() {
    return createSchema;
  }

  public DatabaseOptions setCreateSchema(boolean createSchema) {
    this.createSchema = createSchema;
    return this;
  }

  @Override
  public String toString() {
    // never the password
    return kind + " " + user + "@" + host + ":" + port + "/" + name + " table " + table;
  }
}
