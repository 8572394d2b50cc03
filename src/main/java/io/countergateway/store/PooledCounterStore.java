package io.countergateway.store;

import io.countergateway.model.CounterKey;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What both dialects do alike, given their own SQL. */
abstract class PooledCounterStore implements CounterStore {
  protected final Pool pool;
  private final String resetSql;
  private final String pruneFlushIdsSql;

  PooledCounterStore(Pool pool, String resetSql, String pruneFlushIdsSql) {
    this.pool = pool;
    this.resetSql = resetSql;
    this.pruneFlushIdsSql = pruneFlushIdsSql;
  }

  /** Rows of {@code (record_id, SUM(count))} as values, with 0 for the ids that have no row. */
  static Map<String, Long> sums(List<String> ids, RowSet<Row> rows) {
    Map<String, Long> values = new HashMap<>();
    for (String id : ids) {
      values.put(id, 0L);
    }
    for (Row row : rows) {
      values.put(row.getString(0), Failures.exactLong(row.getNumeric(1)));
    }
    return values;
  }

  @Override
  public Future<Void> reset(CounterKey key) {
    return pool.preparedQuery(resetSql).execute(Tuple.of(key.type(), key.id())).mapEmpty();
  }

  @Override
  public Future<Integer> pruneFlushIds(int olderThanSeconds) {
    return pool.preparedQuery(pruneFlushIdsSql).execute(Tuple.of(olderThanSeconds)).map(RowSet::rowCount);
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
