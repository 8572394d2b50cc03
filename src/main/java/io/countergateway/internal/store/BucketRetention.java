package io.countergateway.internal.store;

import io.countergateway.config.NamespaceOptions;
import io.countergateway.config.WindowOptions;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.time.Clock;
import java.time.Instant;

/**
 * Deletes the buckets of one windowed namespace that have left its retention (and, for a {@code unique: true}
 * namespace, their visitor sketches, and the visitor salts older than 48 hours), in small batches, on one replica at a
 * time (a database lock per namespace, as roll-ups and compaction take theirs). Every replica reports the lag: how far
 * past the retention the oldest stored bucket is, 0 once the job keeps up.
 */
public final class BucketRetention {
  /** Bucket rows per DELETE: each statement holds few row locks and a short transaction. */
  public static final int DEFAULT_BATCH = 1_000;

  private final Pool pool;
  private final boolean postgres;
  private final String table;
  private final NamespaceOptions namespace;
  private final WindowStatements sql;
  private final UniqueStatements uniques;
  private final Clock clock;
  private final int batch;
  private final Counter deleted;
  private volatile double lagSeconds = Double.NaN;

  public BucketRetention(Pool pool, boolean postgres, String table, NamespaceOptions namespace, Clock clock, int batch,
                         MeterRegistry registry) {
    this.pool = pool;
    this.postgres = postgres;
    this.table = table;
    this.namespace = namespace;
    this.sql = postgres ? new PostgresSql(table).windows : new MySqlSql(table).windows;
    this.uniques = UniqueSketches.statements(postgres, table);
    this.clock = clock;
    this.batch = batch;
    Tags tags = Tags.of("namespace", namespace.getName());
    deleted = Counter.builder("gateway.window.buckets.deleted").tags(tags)
      .description("bucket rows this replica deleted because they left the namespace's retention").register(registry);
    Gauge.builder("gateway.window.retention.lag.seconds", this, r -> r.lagSeconds).tags(tags)
      .description("seconds the oldest stored bucket is past the retention (0: nothing expired is left)").register(registry);
  }

  /** One run: all expired buckets deleted in batches if this replica gets the lock; answers the rows deleted. */
  public Future<Integer> runOnce() {
    WindowOptions window = namespace.getWindow();
    long cut = window.oldestKept(clock.instant());
    return pool.withConnection(conn -> {
      DatabaseLock lock = new DatabaseLock(conn, postgres, "counter-gateway:windows:" + table + ":" + namespace.getName());
      return lock.tryAcquire().compose(held -> held
        ? deleteBatches(conn, sql.expire(), cut, 0)
          .compose(rows -> namespace.isUnique() ? deleteBatches(conn, uniques.expire(), cut, rows)
            .compose(withSketches -> expireSalts(conn).map(withSketches)) : Future.succeededFuture(rows))
          .eventually(lock::release)
        : Future.succeededFuture(0));
    }).compose(rows -> measureLag(cut).map(rows));
  }

  /** The bucket rows, then (unique namespaces) the visitor sketches of the same buckets. */
  private Future<Integer> deleteBatches(SqlConnection conn, String expire, long cut, int sofar) {
    return conn.preparedQuery(expire).execute(Tuple.of(namespace.getName(), cut, batch)).compose(rows -> {
      deleted.increment(rows.rowCount());
      return rows.rowCount() < batch ? Future.succeededFuture(sofar + rows.rowCount())
        : deleteBatches(conn, expire, cut, sofar + rows.rowCount());
    });
  }

  /**
   * The visitor salts of the days before yesterday: a salt lives 48 hours from the start of its UTC day, long enough
   * for every replica to finish that day's visits, and no longer (at most one retention interval more).
   */
  private Future<Void> expireSalts(SqlConnection conn) {
    long yesterday = Math.floorDiv(clock.instant().getEpochSecond(), 86_400L) - 1;
    return conn.preparedQuery(uniques.expireSalts()).execute(Tuple.of(yesterday)).mapEmpty();
  }

  private Future<Void> measureLag(long cut) {
    return pool.preparedQuery(sql.oldest()).execute(Tuple.of(namespace.getName())).map(rows -> {
      Long oldest = rows.iterator().next().getLong(0);
      lagSeconds = oldest == null || oldest >= cut ? 0 : cut - oldest;
      return null;
    });
  }

  /** For tests and logs: the start of the oldest bucket kept at this instant. */
  public long cutAt(Instant now) {
    return namespace.getWindow().oldestKept(now);
  }
}
