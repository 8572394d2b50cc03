package io.countergateway.bench;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * Insert-only: every increment is a new ledger row ({@code INSERT (counter_id, delta)}), which never waits on a
 * lock; a periodic job folds the ledger into a totals table, and a read is totals + the ledger rows not folded
 * yet, in one statement (one snapshot).
 * <ul>
 *   <li>PostgreSQL folds in one statement: {@code WITH moved AS (DELETE … RETURNING) INSERT INTO totals SELECT
 *   … SUM … ON CONFLICT DO UPDATE}: exactly the rows it deletes are added, atomically; rows committed meanwhile
 *   stay for the next fold.</li>
 *   <li>MySQL/MariaDB folds in one transaction up to a high-water id: a locking {@code INSERT … SELECT … WHERE
 *   id <= hi} (next-key locks keep the range closed), then {@code DELETE … WHERE id <= hi}.</li>
 * </ul>
 */
final class LedgerWithFold extends SqlStrategy {
  private static final Logger LOG = LoggerFactory.getLogger(LedgerWithFold.class);
  static final String LEDGER = "bench_ledger";
  static final String TOTALS = "bench_ledger_totals";

  private Pool foldPool;
  private long timerId = -1;
  private boolean folding;
  private Promise<Void> lastFold;
  private int folds;

  LedgerWithFold(BenchContext ctx) {
    super(ctx);
  }

  @Override
  public String name() {
    return "ledger";
  }

  @Override
  public String title() {
    return "insert-only ledger + fold every " + ctx.options().foldInterval().toMillis() + " ms";
  }

  @Override
  protected List<String> schema() {
    String id = dialect.isPostgres() ? "id BIGSERIAL PRIMARY KEY" : "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY";
    return List.of(drop(LEDGER), drop(TOTALS),
      "CREATE TABLE " + LEDGER + " (" + id + ", counter_id INT NOT NULL, delta BIGINT NOT NULL)" + engine(),
      "CREATE INDEX " + LEDGER + "_counter ON " + LEDGER + " (counter_id)",
      "CREATE TABLE " + TOTALS + " (counter_id INT NOT NULL PRIMARY KEY, count BIGINT NOT NULL)" + engine());
  }

  @Override
  public Future<Void> setup() {
    return super.setup().onSuccess(done -> {
      foldPool = dialect.pool(ctx.vertx(), ctx.options(), 1);
      timerId = ctx.vertx().setPeriodic(ctx.options().foldInterval().toMillis(), id -> foldUnlessRunning());
    });
  }

  @Override
  protected Future<?> increment(SqlConnection conn, int counter) {
    return conn.preparedQuery("INSERT INTO " + LEDGER + " (counter_id, delta) VALUES (" + dialect.p(1) + ", 1)")
      .execute(Tuple.of(counter));
  }

  private synchronized void foldUnlessRunning() {
    if (folding) {
      return;
    }
    folding = true;
    Promise<Void> promise = Promise.promise();
    lastFold = promise;
    fold().onComplete(result -> {
      synchronized (this) {
        folding = false;
        folds++;
      }
      if (result.failed()) {
        LOG.warn("ledger fold failed (the rows stay for the next one): {}", result.cause().toString());
      }
      promise.complete();
    });
  }

  Future<Void> fold() {
    if (dialect.isPostgres()) {
      return foldPool.query("WITH moved AS (DELETE FROM " + LEDGER + " RETURNING counter_id, delta) "
        + "INSERT INTO " + TOTALS + " AS t (counter_id, count) SELECT counter_id, SUM(delta) FROM moved "
        + "GROUP BY counter_id ON CONFLICT (counter_id) DO UPDATE SET count = t.count + excluded.count")
        .execute().mapEmpty();
    }
    return foldPool.withTransaction(conn -> conn.query("SELECT MAX(id) FROM " + LEDGER).execute()
      .compose(rows -> {
        Long hi = rows.iterator().next().getLong(0);
        if (hi == null) {
          return Future.succeededFuture();
        }
        return conn.preparedQuery("INSERT INTO " + TOTALS + " (counter_id, count) SELECT counter_id, SUM(delta) FROM "
            + LEDGER + " WHERE id <= ? GROUP BY counter_id ON DUPLICATE KEY UPDATE count = count + VALUES(count)")
          .execute(Tuple.of(hi))
          .compose(added -> conn.preparedQuery("DELETE FROM " + LEDGER + " WHERE id <= ?").execute(Tuple.of(hi)));
      })).mapEmpty();
  }

  synchronized int folds() {
    return folds;
  }

  /** Stops the job and waits for a fold under way, so the values are read from a ledger at rest. */
  @Override
  public Future<Void> quiesce() {
    Future<Void> running;
    synchronized (this) {
      if (timerId >= 0) {
        ctx.vertx().cancelTimer(timerId);
        timerId = -1;
      }
      running = folding && lastFold != null ? lastFold.future() : Future.succeededFuture();
    }
    return running;
  }

  @Override
  protected String valuesSql(String inList) {
    return "SELECT counter_id, SUM(n) FROM (SELECT counter_id, count AS n FROM " + TOTALS + " WHERE counter_id IN ("
      + inList + ") UNION ALL SELECT counter_id, delta AS n FROM " + LEDGER + " WHERE counter_id IN (" + inList
      + ")) x GROUP BY counter_id";
  }

  @Override
  protected String totalSql() {
    return "SELECT (SELECT COALESCE(SUM(count), 0) FROM " + TOTALS + ") + (SELECT COALESCE(SUM(delta), 0) FROM "
      + LEDGER + ")";
  }

  @Override
  protected String readSql() {
    return "SELECT (SELECT COALESCE(SUM(count), 0) FROM " + TOTALS + " WHERE counter_id = " + dialect.p(1)
      + ") + (SELECT COALESCE(SUM(delta), 0) FROM " + LEDGER + " WHERE counter_id = " + dialect.p(2) + ")";
  }

  @Override
  protected boolean readBindsTwice() {
    return true;
  }

  @Override
  public Future<Void> close() {
    return quiesce().transform(q -> super.close())
      .transform(c -> foldPool == null ? Future.succeededFuture() : foldPool.close());
  }
}
