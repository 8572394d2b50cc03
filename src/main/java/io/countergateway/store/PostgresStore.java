package io.countergateway.store;

import io.countergateway.batch.Flush;
import io.countergateway.batch.FlushRow;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** PostgreSQL: a flush is ONE {@code UNNEST} upsert statement, whatever its size. */
final class PostgresStore extends PooledCounterStore {
  private final PostgresSql sql;
  private final String table;

  PostgresStore(Vertx vertx, Supplier<Pool> pools, long attemptTimeoutMs, PostgresSql sql, String table) {
    super(vertx, pools, attemptTimeoutMs, sql.reset, sql.pruneFlushIds);
    this.sql = sql;
    this.table = table;
  }

  @Override
  public Future<Void> createSchema() {
    // Serialise concurrent creators (replicas starting together): CREATE ... IF NOT EXISTS races on the catalog.
    return pool.withTransaction(conn -> {
      Future<?> chain = conn.query("SET LOCAL client_min_messages = warning").execute()
        .compose(quiet -> conn.query("SELECT pg_advisory_xact_lock(hashtext('counter-gateway-schema'))").execute());
      for (String statement : SchemaScript.statements("postgres", table)) {
        chain = chain.compose(done -> conn.query(statement).execute());
      }
      return chain.mapEmpty();
    });
  }

  @Override
  public Future<WriteOutcome> write(Flush flush) {
    List<FlushRow> rows = flush.rows();
    int n = rows.size();
    String[] types = new String[n];
    String[] ids = new String[n];
    Short[] slots = new Short[n];
    Long[] deltas = new Long[n];
    for (int i = 0; i < n; i++) {
      FlushRow row = rows.get(i);
      types[i] = row.type();
      ids[i] = row.id();
      slots[i] = row.slot();
      deltas[i] = row.delta();
    }
    Tuple arguments = sql.exactlyOnce ? Tuple.of(types, ids, slots, deltas, flush.id()) : Tuple.of(types, ids, slots, deltas);
    return bounded(pool -> pool.preparedQuery(sql.upsertFlush)
      .execute(arguments)
      .map(result -> result.rowCount() == 0 ? WriteOutcome.ALREADY_COMMITTED : WriteOutcome.COMMITTED));
  }

  @Override
  public Future<Map<String, BigInteger>> sum(String type, List<String> ids) {
    return bounded(pool -> pool.preparedQuery(sql.sumByIds)
      .execute(Tuple.tuple().addString(type).addArrayOfString(ids.toArray(String[]::new)))
      .map(rows -> sums(ids, rows)));
  }
}
