package io.countergateway.testing;

import io.countergateway.Gateway;
import io.countergateway.config.GatewayConfig;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.mysqlclient.MySQLBuilder;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A gateway on a real database for one test class, plus a web client to drive it and a direct SQL pool to
 * check what actually landed in the table (never the gateway's own read path).
 */
public final class GatewayFixture implements AutoCloseable {
  /** How long a test's client reuses an idle connection; see {@link #clientOptions()}. */
  public static final int CLIENT_KEEP_ALIVE_SECONDS = 3;

  public final Vertx vertx;
  public final Gateway gateway;
  public final WebClient http;
  /** The gateway's meters. */
  public final MeterRegistry registry;
  public final String table;
  private final Pool sql;
  private final boolean postgres;

  private GatewayFixture(Vertx vertx, Gateway gateway, MeterRegistry registry, Pool sql, String table,
                         boolean postgres) {
    this.vertx = vertx;
    this.gateway = gateway;
    this.registry = registry;
    this.sql = sql;
    this.table = table;
    this.postgres = postgres;
    this.http = WebClient.create(vertx, clientOptions().setDefaultHost("127.0.0.1").setDefaultPort(gateway.port()),
      new PoolOptions().setHttp1MaxSize(64));
  }

  /**
   * Options for a test's web client of a gateway: connections kept alive at most {@link #CLIENT_KEEP_ALIVE_SECONDS}
   * idle, below the {@code Keep-Alive: timeout} the gateway announces by default (5 s), so that no test sends on a
   * connection the gateway is closing (Vert.x's client also takes the announced timeout from each answer).
   */
  public static WebClientOptions clientOptions() {
    return new WebClientOptions().setKeepAlive(true).setKeepAliveTimeout(CLIENT_KEEP_ALIVE_SECONDS);
  }

  /**
   * The raw config tree the tests start from: three namespaces, one public, ephemeral port, and a journal directory
   * of its own (under {@code target/journals}), so that no two gateways of a test run replay each other's journal.
   */
  public static JsonObject baseConfig(JsonObject database, String table) {
    return new JsonObject()
      .put("http", new JsonObject().put("port", 0).put("instances", 2))
      .put("journal", new JsonObject().put("dir", freshJournalDir()))
      .put("database", database.copy().put("table", table).put("readPoolSize", 2))
      .put("limits", new JsonObject().put("requestTimeout", "10s").put("maxBodyBytes", 65_536))
      .put("namespaces", new JsonObject()
        .put("pageviews", new JsonObject().put("slots", 8).put("public", true))
        .put("downloads", new JsonObject().put("slots", 8))
        .put("likes", new JsonObject().put("slots", 4)));
  }

  /** A new, empty directory for a gateway's journal. */
  public static String freshJournalDir() {
    try {
      Path parent = Files.createDirectories(Path.of("target", "journals"));
      return Files.createTempDirectory(parent, "journal-").toAbsolutePath().toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static GatewayFixture start(JsonObject rawConfig) {
    return start(rawConfig, Clock.systemUTC());
  }

  /** {@code clock}: the gateway's UTC clock, which puts windowed increments into their buckets. */
  public static GatewayFixture start(JsonObject rawConfig, Clock clock) {
    GatewayConfig config = GatewayConfig.fromJson(rawConfig);
    Vertx vertx = Vertx.vertx();
    MeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Gateway gateway = await(Gateway.start(vertx, config, registry, clock));
    JsonObject db = rawConfig.getJsonObject("database");
    boolean postgres = !"mysql".equals(db.getString("kind"));
    if (db.containsKey("hosts")) {
      // the first listed server: where a test's own statements go until it makes another the primary
      db = db.copy().put("host", config.getDatabase().getHost()).put("port", config.getDatabase().getPort());
    }
    Pool sql = postgres
      ? PgBuilder.pool().connectingTo(new PgConnectOptions().setHost(db.getString("host")).setPort(db.getInteger("port"))
        .setDatabase(db.getString("name")).setUser(db.getString("user")).setPassword(db.getString("password", "")))
        .using(vertx).build()
      : MySQLBuilder.pool().connectingTo(new MySQLConnectOptions().setHost(db.getString("host")).setPort(db.getInteger("port"))
        .setDatabase(db.getString("name")).setUser(db.getString("user")).setPassword(db.getString("password", "")))
        .using(vertx).build();
    return new GatewayFixture(vertx, gateway, registry, sql, config.getDatabase().getTable(), postgres);
  }

  /**
   * Increments the gateway has taken so far (every verticle's): one answered 202/204 is counted here before its
   * answer, so a test that reads it unchanged knows nothing was taken that a later flush could write.
   */
  public double incrementsTaken() {
    return registry.find("gateway.increments.taken").functionCounters().stream()
      .mapToDouble(FunctionCounter::count).sum();
  }

  /** SUM(count) over the counter's slots, straight from the table. */
  public Future<Long> sumInTable(String type, String id) {
    String query = "SELECT COALESCE(SUM(count), 0) FROM " + table + " WHERE record_type = " + mark(1)
      + " AND record_id = " + mark(2);
    return sql.preparedQuery(query).execute(Tuple.of(type, id)).map(rows -> rows.iterator().next().getNumeric(0).longValue());
  }

  /**
   * SUM(count) of the counter once it reaches {@code expected}, or what it is after 5 s: for increments answered
   * before they are written (beacons, ack=accepted). Blocks the test thread, never an event loop.
   */
  public long sumInTableReaching(String type, String id, long expected) {
    return await(sumInTableReaching(type, id, expected, 5_000));
  }

  /**
   * SUM(count) over the counter's slots once it reaches {@code expected}, read every 100 ms for at most
   * {@code timeoutMs}; then whatever it is. For counts a flush retried after a refused connection writes late.
   */
  public Future<Long> sumInTableReaching(String type, String id, long expected, long timeoutMs) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    return sumInTable(type, id).compose(sum -> sum >= expected || System.nanoTime() > deadline ? Future.succeededFuture(sum)
      : vertx.timer(100).compose(v -> sumInTableReaching(type, id, expected,
        TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
  }

  /** SUM(count) per record_id of one namespace, for ids starting with {@code prefix}. */
  public Future<Map<String, Long>> sumsInTable(String type, String prefix) {
    String query = "SELECT record_id, SUM(count) FROM " + table + " WHERE record_type = " + mark(1)
      + " AND record_id LIKE " + mark(2) + " GROUP BY record_id";
    return sql.preparedQuery(query).execute(Tuple.of(type, prefix + "%")).map(rows -> {
      Map<String, Long> sums = new HashMap<>();
      for (Row row : rows) {
        sums.put(row.getString(0), row.getNumeric(1).longValue());
      }
      return sums;
    });
  }

  /** Rows of the whole table, to prove a refused request wrote nothing anywhere. */
  public Future<Long> rowsInTable() {
    return sql.query("SELECT COUNT(*) FROM " + table).execute().map(rows -> rows.iterator().next().getLong(0));
  }

  /** Direct SQL on the gateway's database, for setting up states the API cannot reach. */
  public Pool sql() {
    return sql;
  }

  /** SUM(count) per bucket start (epoch seconds) of one windowed counter, straight from the windows table. */
  public Future<Map<Long, Long>> bucketsInTable(String type, String id) {
    String query = "SELECT bucket_start, SUM(count) FROM " + table + "_windows WHERE record_type = " + mark(1)
      + " AND record_id = " + mark(2) + " GROUP BY bucket_start";
    return sql.preparedQuery(query).execute(Tuple.of(type, id)).map(rows -> {
      Map<Long, Long> sums = new HashMap<>();
      for (Row row : rows) {
        sums.put(row.getLong(0), row.getNumeric(1).longValue());
      }
      return sums;
    });
  }

  /** Rows of the windows table, to prove a refused request wrote nothing there. */
  public Future<Long> rowsInWindows() {
    return sql.query("SELECT COUNT(*) FROM " + table + "_windows").execute().map(rows -> rows.iterator().next().getLong(0));
  }

  /** PostgreSQL ({@code $1} parameters) or MariaDB ({@code ?}). */
  public boolean isPostgres() {
    return postgres;
  }

  private String mark(int position) {
    return postgres ? "$" + position : "?";
  }

  public Future<Void> stopGateway() {
    return gateway.stop();
  }

  @Override
  public void close() {
    await(gateway.stop().eventually(sql::close).eventually(vertx::close));
  }

  public static <T> T await(Future<T> future) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e.getCause() != null ? e.getCause() : e);
    }
  }
}
