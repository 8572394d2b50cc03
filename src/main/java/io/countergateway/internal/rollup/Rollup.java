package io.countergateway.internal.rollup;

import io.countergateway.config.RollupOptions;
import io.countergateway.internal.store.DatabaseLock;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * One roll-up: writes {@code SUM(count)} of every changed counter of a namespace into a column of the application's
 * table. A run holds the roll-up's database lock (one replica at a time) and walks the dirty counters once in key
 * order, one short transaction per batch. A run that dies loses nothing: the rows it had not marked clean are still
 * dirty, and the next run, here or on another replica, takes them.
 */
public final class Rollup {
  private static final Logger LOG = LoggerFactory.getLogger(Rollup.class);
  private static final Pattern INTEGER_ID = Pattern.compile(RollupSql.INTEGER_ID);

  /** What one call of {@link #runOnce()} did. {@code ran} is false when another replica holds the roll-up. */
  public record Run(boolean ran, long counters, long missingRows, long startedNanos, long finishedNanos) {
    static Run skipped() {
      return new Run(false, 0, 0, 0, 0);
    }
  }

  private final Pool pool;
  private final String table;
  private final RollupOptions options;
  private final RollupSql sql;
  private final RollupMetrics metrics;

  Rollup(Pool pool, String table, RollupOptions options, RollupSql sql, RollupMetrics metrics) {
    this.pool = pool;
    this.table = table;
    this.options = options;
    this.sql = sql;
    this.metrics = metrics;
  }

  public RollupOptions options() {
    return options;
  }

  /** Runs the roll-up over every counter changed since the last run, unless another replica is running it. */
  public Future<Run> runOnce() {
    return pool.withConnection(conn -> {
      DatabaseLock lock = new DatabaseLock(conn, sql.postgres, "counter-gateway:rollup:" + table + ":" + options.name());
      return lock.tryAcquire().compose(held -> {
        if (!held) {
          return Future.succeededFuture(Run.skipped());
        }
        long started = System.nanoTime();
        return batches(conn, "", new long[2])
          .compose(totals -> recordRun(conn, started, totals))
          .eventually(lock::release);
      });
    }).onSuccess(metrics::record);
  }

  /** Passes the lag read from the database to this roll-up's gauge. */
  void lag(Double seconds) {
    metrics.lag(seconds);
  }

  /** Seconds since the start of the last complete run on any replica; null before the first. */
  public Future<Double> lagSeconds() {
    return pool.preparedQuery(sql.lag).execute(Tuple.of(options.name()))
      .map(rows -> rows.size() == 0 ? null : ((Number) rows.iterator().next().getValue(0)).doubleValue());
  }

  private Future<Run> recordRun(SqlConnection conn, long started, long[] totals) {
    long finished = System.nanoTime();
    Object elapsed = sql.postgres ? (Object) ((finished - started) / 1e9) : (Object) TimeUnit.NANOSECONDS.toMicros(finished - started);
    return conn.preparedQuery(sql.recordRun).execute(Tuple.of(options.name(), elapsed, totals[0]))
      .map(done -> new Run(true, totals[0], totals[1], started, finished));
  }

  /** totals: counters rolled, rows missing in the application's table. */
  private Future<long[]> batches(SqlConnection conn, String after, long[] totals) {
    Future<Batch> batch = sql.postgres ? postgresBatch(conn, after) : mysqlBatch(conn, after);
    return batch.compose(done -> {
      totals[0] += done.counters;
      totals[1] += done.missing.size() + done.missingBeyondSample;
      if (!done.missing.isEmpty()) {
        LOG.warn("roll-up {}: {} counters have no row in {} (not created), e.g. {}", options.name(),
          done.missing.size() + done.missingBeyondSample, options.getTable(), done.missing);
      }
      return done.counters < options.getBatchSize() ? Future.succeededFuture(totals) : batches(conn, done.lastId, totals);
    });
  }

  private record Batch(int counters, String lastId, List<String> missing, int missingBeyondSample) {
  }

  private Future<Batch> postgresBatch(SqlConnection conn, String after) {
    return conn.preparedQuery(sql.rollBatch).execute(Tuple.of(options.getNamespace(), options.getBatchSize(), after))
      .map(rows -> {
        Row row = rows.iterator().next();
        int counters = row.getLong(0).intValue();
        int updated = row.getLong(1).intValue();
        String[] missing = row.getArrayOfStrings(3);
        List<String> sample = missing == null ? List.of() : List.of(missing);
        return new Batch(counters, row.getString(2), sample, Math.max(0, counters - updated - sample.size()));
      });
  }

  private Future<Batch> mysqlBatch(SqlConnection conn, String after) {
    int size = options.getBatchSize();
    return conn.begin().compose(tx -> conn.preparedQuery(sql.mysqlDirtyIds()).execute(Tuple.of(options.getNamespace(), after, size))
      .compose(idRows -> {
        List<String> ids = new ArrayList<>();
        idRows.forEach(row -> ids.add(row.getString(0)));
        if (ids.isEmpty()) {
          return tx.commit().map(new Batch(0, after, List.of(), 0));
        }
        List<String> keys = sql.integerKeys() ? ids.stream().filter(id -> INTEGER_ID.matcher(id).matches()).toList() : ids;
        return conn.preparedQuery(sql.mysqlLock(size)).execute(padded(Tuple.of(options.getNamespace()), ids, size))
          .compose(locked -> keys.isEmpty() ? Future.succeededFuture(Set.<String>of()) : existingKeys(conn, keys, size))
          .compose(existing -> (keys.isEmpty() ? Future.<RowSet<Row>>succeededFuture()
            : conn.preparedQuery(sql.mysqlUpdate(size)).execute(padded(Tuple.of(options.getNamespace()), keys, size)))
            .compose(updated -> conn.preparedQuery(sql.mysqlClear(size)).execute(padded(Tuple.of(options.getNamespace()), ids, size)))
            .compose(cleared -> tx.commit())
            .map(committed -> {
              List<String> missing = ids.stream().filter(id -> !existing.contains(id)).toList();
              return new Batch(ids.size(), ids.get(ids.size() - 1), missing.subList(0, Math.min(5, missing.size())),
                Math.max(0, missing.size() - 5));
            }))
          .recover(failure -> tx.rollback().transform(rolledBack -> Future.failedFuture(failure)));
      }));
  }

  private Future<Set<String>> existingKeys(SqlConnection conn, List<String> keys, int size) {
    return conn.preparedQuery(sql.mysqlExistingKeys(size)).execute(padded(Tuple.tuple(), keys, size)).map(rows -> {
      Set<String> existing = new HashSet<>();
      rows.forEach(row -> existing.add(String.valueOf(row.getValue(0))));
      return existing;
    });
  }

  /** The ids padded to {@code size} with the last one: the IN list keeps one prepared shape. */
  private static Tuple padded(Tuple tuple, List<String> ids, int size) {
    for (int i = 0; i < size; i++) {
      tuple.addString(ids.get(Math.min(i, ids.size() - 1)));
    }
    return tuple;
  }
}
