package io.countergateway.bench;

import io.vertx.core.Future;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * N rows created in advance per counter; each increment updates a random one of them
 * ({@code UPDATE … WHERE counter_id = ? AND slot = rand}); a counter's value is the SUM of its rows.
 */
final class MultiRowRandomUpdate extends SqlStrategy {
  static final String TABLE = "bench_multi_row";
  private final int rowsPerCounter;

  MultiRowRandomUpdate(BenchContext ctx) {
    super(ctx);
    BenchOptions options = ctx.options();
    // counters x slots rows can be too many to create (1,000,000 counters): fewer rows per counter then
    this.rowsPerCounter = (int) Math.max(1, Math.min(options.slots(), options.maxPreCreatedRows() / (long) options.counters()));
  }

  int rowsPerCounter() {
    return rowsPerCounter;
  }

  @Override
  public String name() {
    return "multi-row";
  }

  @Override
  public String title() {
    return "multi-row random UPDATE (" + rowsPerCounter + " rows)";
  }

  @Override
  protected List<String> schema() {
    return List.of(drop(TABLE), slottedTable(TABLE));
  }

  @Override
  protected Future<Void> seed(SqlConnection conn) {
    return seedRows(conn, TABLE, true, rowsPerCounter);
  }

  @Override
  protected Future<?> increment(SqlConnection conn, int counter) {
    int slot = ThreadLocalRandom.current().nextInt(rowsPerCounter);
    return conn.preparedQuery("UPDATE " + TABLE + " SET count = count + 1 WHERE counter_id = " + dialect.p(1)
      + " AND slot = " + dialect.p(2)).execute(Tuple.of(counter, (short) slot));
  }

  @Override
  protected String valuesSql(String inList) {
    return "SELECT counter_id, SUM(count) FROM " + TABLE + " WHERE counter_id IN (" + inList + ") GROUP BY counter_id";
  }

  @Override
  protected String totalSql() {
    return "SELECT SUM(count) FROM " + TABLE;
  }

  @Override
  protected String readSql() {
    return "SELECT SUM(count) FROM " + TABLE + " WHERE counter_id = " + dialect.p(1);
  }
}
