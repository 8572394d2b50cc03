package io.countergateway.internal.rollup;

import io.countergateway.config.CompactionOptions;
import io.countergateway.internal.store.DatabaseLock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.util.ArrayList;
import java.util.List;

/**
 * Folds the slot rows of idle counters into one row each, so a table of many cold counters shrinks to one row per
 * counter. One replica at a time (the compaction lock); each window of counters is one statement (PostgreSQL) or
 * one short transaction in key order (MySQL), so flushes wait at most that long for a row.
 */
public final class Compaction {
  /** What one call of {@link #runOnce()} did; {@code ran} is false when another replica holds compaction. */
  public record Run(boolean ran, long counters, long rowsRemoved) {
  }

  private final Pool pool;
  private final String table;
  private final CompactionOptions options;
  private final CompactionSql sql;
  private final Counter folded;
  private final Counter removed;

  Compaction(Pool pool, boolean postgres, String table, CompactionOptions options, MeterRegistry registry) {
    this.pool = pool;
    this.table = table;
    this.options = options;
    this.sql = CompactionSql.forDialect(postgres, table);
    folded = Counter.builder("gateway.compaction.counters")
      .description("idle counters this replica folded into one row").register(registry);
    removed = Counter.builder("gateway.compaction.rows.removed")
      .description("slot rows this replica removed by folding idle counters").register(registry);
  }

  public Future<Run> runOnce() {
    return pool.withConnection(conn -> {
      DatabaseLock lock = new DatabaseLock(conn, sql.postgres, "counter-gateway:compaction:" + table);
      return lock.tryAcquire().compose(held -> held
        ? windows(conn, "", "", new long[2]).map(totals -> new Run(true, totals[0], totals[1])).eventually(lock::release)
        : Future.succeededFuture(new Run(false, 0, 0)));
    }).onSuccess(run -> {
      folded.increment(run.counters());
      removed.increment(run.rowsRemoved());
    });
  }

  private record Window(int counters, String lastType, String lastId, int folded, int rowsRemoved) {
  }

  private Future<long[]> windows(SqlConnection conn, String afterType, String afterId, long[] totals) {
    Future<Window> window = sql.postgres ? postgresWindow(conn, afterType, afterId) : mysqlWindow(conn, afterType, afterId);
    return window.compose(done -> {
      totals[0] += done.folded;
      totals[1] += done.rowsRemoved;
      return done.counters < options.getBatchSize() ? Future.succeededFuture(totals)
        : windows(conn, done.lastType, done.lastId, totals);
    });
  }

  private Future<Window> postgresWindow(SqlConnection conn, String afterType, String afterId) {
    return conn.preparedQuery(sql.foldWindow)
      .execute(Tuple.of(afterType, afterId, options.getIdleSeconds(), options.getBatchSize()))
      .map(rows -> {
        Row row = rows.iterator().next();
        long deleted = row.getLong(4);
        long foldedCounters = row.getLong(3);
        // each folded counter got its slot-0 row back (inserted or updated): rows removed = deleted - folded
        return new Window(row.getLong(0).intValue(), row.getString(1), row.getString(2), (int) foldedCounters,
          (int) (deleted - foldedCounters));
      });
  }

  private Future<Window> mysqlWindow(SqlConnection conn, String afterType, String afterId) {
    return conn.preparedQuery(sql.window)
      .execute(Tuple.of(options.getIdleSeconds(), afterType, afterType, afterId, options.getBatchSize()))
      .compose(rows -> {
        List<String[]> idle = new ArrayList<>();
        String lastType = afterType;
        String lastId = afterId;
        int counters = 0;
        for (Row row : rows) {
          counters++;
          lastType = row.getString(0);
          lastId = row.getString(1);
          if (row.getLong(2) > 1 && row.getLong(3) == 1) {
            idle.add(new String[] {lastType, lastId});
          }
        }
        Window window = new Window(counters, lastType, lastId, 0, 0);
        return idle.isEmpty() ? Future.succeededFuture(window) : conn.begin().compose(tx -> foldAll(conn, idle, window)
          .compose(done -> tx.commit().map(done))
          .recover(failure -> tx.rollback().transform(rolledBack -> Future.failedFuture(failure))));
      });
  }

  /** In key order (the window's order), one counter after the other: the same lock order as every flush. */
  private Future<Window> foldAll(SqlConnection conn, List<String[]> idle, Window window) {
    Future<Window> chain = Future.succeededFuture(window);
    for (String[] counter : idle) {
      chain = chain.compose(sofar -> conn.preparedQuery(sql.lockCounter)
        .execute(Tuple.of(options.getIdleSeconds(), counter[0], counter[1]))
        .compose(locked -> {
          int slots = 0;
          boolean stillIdle = true;
          for (Row row : locked) {
            slots++;
            stillIdle &= row.getLong(0) == 1;
          }
          if (slots < 2 || !stillIdle) {
            return Future.succeededFuture(sofar);
          }
          int removedRows = slots - 1;
          return conn.preparedQuery(sql.foldIntoSlotZero).execute(Tuple.of(counter[0], counter[1]))
            .compose(v -> conn.preparedQuery(sql.deleteOtherSlots).execute(Tuple.of(counter[0], counter[1])))
            .map(v -> new Window(sofar.counters, sofar.lastType, sofar.lastId, sofar.folded + 1, sofar.rowsRemoved + removedRows));
        }));
    }
    return chain;
  }
}
