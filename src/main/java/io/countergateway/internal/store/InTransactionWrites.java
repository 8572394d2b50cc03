package io.countergateway.internal.store;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.IncrementRules;
import io.vertx.core.Future;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Slotted increments inside the caller's own transaction, with the gateway's SQL: what the public
 * {@code io.countergateway.InTransactionCounters} does. One slot row per counter, written in key order, the order every
 * flush uses, so these transactions cannot deadlock with flushes or with each other.
 */
public final class InTransactionWrites {
  private final GatewayConfig config;
  private final IncrementRules rules;
  private final PostgresSql postgres;
  private final MySqlSql mysql;

  private InTransactionWrites(GatewayConfig config) {
    this.config = config;
    this.rules = new IncrementRules(config, java.time.Clock.systemUTC());
    String table = config.getDatabase().getTable();
    this.postgres = config.getDatabase().isPostgres() ? new PostgresSql(table) : null;
    this.mysql = config.getDatabase().isPostgres() ? null : new MySqlSql(table);
  }

  /** For the gateway's database, table and namespaces (their slot counts and the input rules). */
  public static InTransactionWrites of(GatewayConfig config) {
    return new InTransactionWrites(config);
  }

  /** Adds {@code delta} to one counter, on {@code tx}: a connection inside the caller's transaction. */
  public Future<Void> increment(SqlClient tx, String type, String id, long delta) {
    return incrementAll(tx, Map.of(new CounterKey(type, id), delta));
  }

  /**
   * Adds each delta to its counter in one statement (PostgreSQL) or one multi-row statement (MySQL), in key order.
   * Bad input (undeclared namespace, id or delta against the rules) fails with the gateway's {@code ApiError}.
   */
  public Future<Void> incrementAll(SqlClient tx, Map<CounterKey, Long> deltas) {
    List<FlushRow> rows;
    try {
      rows = rows(deltas);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
    if (rows.isEmpty()) {
      return Future.succeededFuture();
    }
    if (postgres != null) {
      return tx.preparedQuery(postgres.upsertPlain).execute(PostgresSql.rowArrays(rows)).mapEmpty();
    }
    Tuple tuple = Tuple.tuple();
    for (FlushRow row : rows) {
      tuple.addString(row.type()).addString(row.id()).addShort(row.slot()).addLong(row.delta());
    }
    return tx.preparedQuery(mysql.upsert(rows.size())).execute(tuple).mapEmpty();
  }

  /**
   * One row per counter on a random slot of its namespace, summed and sorted in the flushes' lock order; a counter
   * whose deltas sum to 0 writes nothing.
   */
  private List<FlushRow> rows(Map<CounterKey, Long> deltas) {
    Map<CounterKey, Long> sorted = new TreeMap<>();
    deltas.forEach((key, delta) -> {
      if (rules.namespace(key.type()).isWindowed()) {
        throw ApiError.badRequest("windowed_namespace", "type",
          "in-transaction increments write plain counters; namespace '" + key.type() + "' is windowed");
      }
      rules.id(key.id());
      rules.delta(delta);
      sorted.merge(key, delta, Long::sum);
    });
    sorted.values().removeIf(delta -> delta == 0);
    List<FlushRow> rows = new ArrayList<>();
    sorted.forEach((key, delta) -> rows.add(new FlushRow(key.type(), key.id(),
      (short) ThreadLocalRandom.current().nextInt(config.namespace(key.type()).getSlots()), delta)));
    rows.sort(null);
    return rows;
  }
}
