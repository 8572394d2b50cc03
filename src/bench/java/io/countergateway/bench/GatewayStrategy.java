package io.countergateway.bench;

import io.countergateway.Gateway;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.store.SchemaUpgrade;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The gateway itself, started in-process on the bench's Vert.x with its default batching, on a fresh table of its
 * own; counters are ids {@code c0..cN} of the namespace {@code bench}. Values are read straight from the table,
 * never through the gateway's read path.
 */
abstract class GatewayStrategy implements Strategy {
  static final String NAMESPACE = "bench";

  protected final BenchContext ctx;
  private final String table;
  protected Gateway gateway;
  private Pool checkPool;

  GatewayStrategy(BenchContext ctx, String table) {
    this.ctx = ctx;
    this.table = table;
  }

  static String id(int counter) {
    return "c" + counter;
  }

  /** The gateway's config for this run, from the bench's database options and {@code --gateway} overrides. */
  JsonObject config() {
    BenchOptions o = ctx.options();
    JsonObject config = new JsonObject()
      .put("http", new JsonObject().put("host", "127.0.0.1").put("port", 0))
      .put("database", new JsonObject().put("kind", ctx.dialect().gatewayKind()).put("host", o.host())
        .put("port", o.port()).put("name", o.database()).put("user", o.user()).put("password", o.password())
        .put("table", table))
      .put("namespaces", new JsonObject().put(NAMESPACE, new JsonObject().put("slots", o.gatewaySlots())));
    o.gatewaySettings().forEach((key, value) -> set(config, key, value));
    return config;
  }

  /** Sets {@code a.b.c} in the tree; numbers and booleans are typed, everything else stays a string. */
  static void set(JsonObject root, String dottedKey, String value) {
    String[] parts = dottedKey.split("\\.");
    JsonObject node = root;
    for (int i = 0; i < parts.length - 1; i++) {
      JsonObject child = node.getJsonObject(parts[i]);
      if (child == null) {
        child = new JsonObject();
        node.put(parts[i], child);
      }
      node = child;
    }
    Object typed = value;
    if (value.matches("-?\\d+")) {
      typed = Long.parseLong(value);
    } else if (value.equals("true") || value.equals("false")) {
      typed = Boolean.parseBoolean(value);
    }
    node.put(parts[parts.length - 1], typed);
  }

  @Override
  public Future<Void> setup() {
    checkPool = ctx.dialect().pool(ctx.vertx(), ctx.options(), 2);
    GatewayConfig config = GatewayConfig.fromJson(config());
    // every table of the schema steps: a schema table left behind would tell the gateway the others exist
    Future<?> dropped = Future.succeededFuture();
    for (String each : SchemaUpgrade.tables(table)) {
      dropped = dropped.compose(v -> checkPool.query("DROP TABLE IF EXISTS " + each).execute());
    }
    return dropped
      .compose(done -> Gateway.start(ctx.vertx(), config, new SimpleMeterRegistry()))
      .onSuccess(started -> gateway = started)
      .mapEmpty();
  }

  @Override
  public Future<Map<Integer, Long>> values(List<Integer> counters) {
    String inList = counters.stream().map(c -> "'" + id(c) + "'").collect(Collectors.joining(","));
    return checkPool.query("SELECT record_id, SUM(count) FROM " + table + " WHERE record_type = '" + NAMESPACE
      + "' AND record_id IN (" + inList + ") GROUP BY record_id").execute().map(rows -> {
        Map<Integer, Long> values = new HashMap<>();
        for (Row row : rows) {
          values.put(Integer.parseInt(row.getString(0).substring(1)), Dialect.longAt(row, 1));
        }
        return values;
      });
  }

  @Override
  public Future<Long> total() {
    return checkPool.query("SELECT SUM(count) FROM " + table).execute()
      .map(rows -> Dialect.longAt(rows.iterator().next(), 0));
  }

  /** Stops the gateway (it flushes what is pending) before the values are read. */
  @Override
  public Future<Void> quiesce() {
    return gateway == null ? Future.succeededFuture() : gateway.stop().onSuccess(stopped -> gateway = null);
  }

  @Override
  public Future<Void> close() {
    Future<Void> stopped = gateway == null ? Future.succeededFuture() : gateway.stop();
    return stopped.transform(s -> checkPool == null ? Future.succeededFuture() : checkPool.close());
  }
}
