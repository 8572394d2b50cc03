package io.countergateway.bench;

import io.vertx.core.Future;
import io.vertx.sqlclient.DatabaseException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

/**
 * A strategy written by hand against the database with the Vert.x SQL client: every writer holds a connection of
 * its own (like {@code concurrency} application threads with one connection each) and sends one statement (or one
 * short transaction) per increment. Counters are integers {@code 0..counters-1} in a table of the strategy's own,
 * dropped and created again at every run.
 */
abstract class SqlStrategy implements Strategy {
  protected final BenchContext ctx;
  protected final Dialect dialect;
  protected Pool writePool;
  protected Pool readPool;
  private static final int MAX_ATTEMPTS = 10;
  private final LongAdder retries = new LongAdder();

  SqlStrategy(BenchContext ctx) {
    this.ctx = ctx;
    this.dialect = ctx.dialect();
  }

  /** DROP/CREATE statements for the strategy's tables. */
  protected abstract List<String> schema();

  /** Rows to create before the run; none by default. */
  protected Future<Void> seed(SqlConnection conn) {
    return Future.succeededFuture();
  }

  /** Session settings of a writer's connection; none by default. */
  protected Future<Void> prepare(SqlConnection conn) {
    return Future.succeededFuture();
  }

  /** One increment of {@code counter} on the writer's own connection. */
  protected abstract Future<?> increment(SqlConnection conn, int counter);

  /** {@code SELECT counter_id, value ... WHERE counter_id IN (%s)}: one row per counter with a value. */
  protected abstract String valuesSql(String inList);

  /** One row, one column: the sum over all counters. */
  protected abstract String totalSql();

  /** One row, one column: the value of the counter bound as parameter 1 (and 2, if {@link #readBindsTwice()}). */
  protected abstract String readSql();

  protected boolean readBindsTwice() {
    return false;
  }

  @Override
  public Future<Void> setup() {
    int writers = ctx.options().concurrency();
    writePool = dialect.pool(ctx.vertx(), ctx.options(), writers);
    readPool = dialect.pool(ctx.vertx(), ctx.options(), Math.max(2, ctx.options().readers()));
    return readPool.withConnection(conn -> {
      Future<?> chain = quiet(conn);
      for (String statement : schema()) {
        chain = chain.compose(done -> conn.query(statement).execute());
      }
      return chain.compose(done -> seed(conn));
    });
  }

  /** PostgreSQL notices about DROP IF EXISTS of a missing table are noise here. */
  private Future<?> quiet(SqlConnection conn) {
    return dialect.isPostgres() ? conn.query("SET client_min_messages = warning").execute() : Future.succeededFuture();
  }

  @Override
  public Future<Writer> writer() {
    return writePool.getConnection().compose(conn -> prepare(conn).map(conn)).map(conn -> new Writer() {
      @Override
      public Future<Void> increment(int[] counters) {
        return attempt(conn, counters[0], 1).recover(SqlStrategy::classify);
      }

      @Override
      public Future<Void> close() {
        return conn.close();
      }
    });
  }

  /** As an application would: a deadlock victim (or lock wait timeout) is retried at once, a few times. */
  private Future<Void> attempt(SqlConnection conn, int counter, int attemptNo) {
    return increment(conn, counter).<Void>mapEmpty().recover(failure -> {
      if (attemptNo < MAX_ATTEMPTS && isLockConflict(failure)) {
        retries.increment();
        return attempt(conn, counter, attemptNo + 1);
      }
      return Future.failedFuture(failure);
    });
  }

  static boolean isLockConflict(Throwable failure) {
    if (!(failure instanceof DatabaseException db)) {
      return false;
    }
    return "40001".equals(db.getSqlState()) || "40P01".equals(db.getSqlState())
      || db.getErrorCode() == 1213 || db.getErrorCode() == 1205;
  }

  @Override
  public String note() {
    long n = retries.sum();
    return n == 0 ? "" : n + " deadlock/lock-timeout retries";
  }

  /** The server refused the statement: nothing was written. Anything else (a lost connection): unknown. */
  static Future<Void> classify(Throwable failure) {
    if (failure instanceof DatabaseException) {
      return Future.failedFuture(failure);
    }
    return Future.failedFuture(new UnknownOutcome(String.valueOf(failure.getMessage()), failure));
  }

  @Override
  public Future<Reader> reader() {
    io.vertx.sqlclient.Tuple args = readBindsTwice() ? io.vertx.sqlclient.Tuple.of(0, 0) : io.vertx.sqlclient.Tuple.of(0);
    String sql = readSql();
    return Future.succeededFuture(() -> readPool.preparedQuery(sql).execute(args)
      .map(rows -> Dialect.longAt(rows.iterator().next(), 0)));
  }

  @Override
  public Future<Map<Integer, Long>> values(List<Integer> counters) {
    String inList = counters.stream().map(String::valueOf).collect(Collectors.joining(","));
    return readPool.query(valuesSql(inList)).execute().map(rows -> {
      Map<Integer, Long> values = new HashMap<>();
      for (Row row : rows) {
        values.merge(row.getInteger(0), Dialect.longAt(row, 1), Long::sum);
      }
      return values;
    });
  }

  @Override
  public Future<Long> total() {
    return readPool.query(totalSql()).execute().map(rows -> Dialect.longAt(rows.iterator().next(), 0));
  }

  @Override
  public Future<Void> close() {
    Future<Void> writes = writePool == null ? Future.succeededFuture() : writePool.close();
    Future<Void> reads = readPool == null ? Future.succeededFuture() : readPool.close();
    return Future.join(writes, reads).mapEmpty();
  }

  /** {@code CREATE TABLE name (counter_id, slot, count)} with the key on (counter_id, slot). */
  protected String slottedTable(String table) {
    return "CREATE TABLE " + table + " (counter_id INT NOT NULL, slot SMALLINT NOT NULL, count BIGINT NOT NULL, "
      + "PRIMARY KEY (counter_id, slot))" + engine();
  }

  protected String engine() {
    return dialect.isPostgres() ? "" : " ENGINE=InnoDB";
  }

  protected static String drop(String table) {
    return "DROP TABLE IF EXISTS " + table;
  }

  /** Creates {@code rowsPerCounter} zero rows for every counter (PostgreSQL in one statement, MySQL in chunks). */
  protected Future<Void> seedRows(SqlConnection conn, String table, boolean slotted, int rowsPerCounter) {
    int counters = ctx.options().counters();
    if (dialect.isPostgres()) {
      String sql = slotted
        ? "INSERT INTO " + table + " (counter_id, slot, count) SELECT c, s, 0 FROM generate_series(0, " + (counters - 1)
          + ") c, generate_series(0, " + (rowsPerCounter - 1) + ") s"
        : "INSERT INTO " + table + " (counter_id, count) SELECT c, 0 FROM generate_series(0, " + (counters - 1) + ") c";
      return conn.query(sql).execute().compose(done -> conn.query("ANALYZE " + table).execute()).mapEmpty();
    }
    long rows = (long) counters * rowsPerCounter;
    Future<?> chain = Future.succeededFuture();
    int chunk = 1_000;
    for (long from = 0; from < rows; from += chunk) {
      StringBuilder sql = new StringBuilder("INSERT INTO ").append(table)
        .append(slotted ? " (counter_id, slot, count) VALUES " : " (counter_id, count) VALUES ");
      long to = Math.min(rows, from + chunk);
      for (long row = from; row < to; row++) {
        sql.append(row == from ? "" : ",").append('(').append(row / rowsPerCounter);
        if (slotted) {
          sql.append(',').append(row % rowsPerCounter);
        }
        sql.append(",0)");
      }
      String statement = sql.toString();
      chain = chain.compose(done -> conn.query(statement).execute());
    }
    return chain.compose(done -> conn.query("ANALYZE TABLE " + table).execute()).mapEmpty();
  }
}
