package io.countergateway.store;

import io.countergateway.batch.Flush;
import io.countergateway.batch.FlushRow;
import io.countergateway.model.CounterKey;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** PostgreSQL: a flush is ONE {@code UNNEST} upsert statement, whatever its size. */
final class PostgresStore implements CounterStore {
  private final Pool pool;
  private final PostgresSql sql;
  private final String table;

  PostgresStore(Pool pool, PostgresSql sql, String table) {
    this.pool = pool;
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
    return pool.preparedQuery(sql.upsertFlush)
      .execute(arguments)
      .map(result -> result.rowCount() == 0 ? WriteOutcome.ALREADY_COMMITTED : WriteOutcome.COMMITTED);
  }

  @Override
  public Future<Map<String, Long>> sum(String type, List<String> ids) {
    return pool.preparedQuery(sql.sumByIds)
      .execute(Tuple.tuple().addString(type).addArrayOfString(ids.toArray(String[]::new)))
      .map(rows -> {
        Map<String, Long> values = new HashMap<>();
        for (String id : ids) {
          values.put(id, 0L);
        }
        for (Row row : rows) {
          values.put(row.getString(0), Failures.exactLong(row.getNumeric(1)));
        }
        return values;
      });
  }

  @Override
  public Future<Void> reset(CounterKey key) {
    return pool.preparedQuery(sql.reset).execute(Tuple.of(key.type(), key.id())).mapEmpty();
  }

  @Override
  public Future<Integer> pruneFlushIds(int olderThanSeconds) {
    return pool.preparedQuery(sql.pruneFlushIds).execute(Tuple.of((double) olderThanSeconds)).map(r -> r.rowCount());
  }

  @Override
  public Future<Void> ping() {
    return pool.query("SELECT 1").execute().mapEmpty();
  }

  @Override
  public Future<Void> close() {
    return pool.close();
  }
}
