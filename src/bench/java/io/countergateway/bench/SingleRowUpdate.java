package io.countergateway.bench;

import io.vertx.core.Future;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.util.List;

/** The naive baseline: one row per counter, {@code UPDATE … SET count = count + 1}; every writer queues on its lock. */
final class SingleRowUpdate extends SqlStrategy {
  static final String TABLE = "bench_single_row";

  SingleRowUpdate(BenchContext ctx) {
    super(ctx);
  }

  @Override
  public String name() {
    return "single-row";
  }

  @Override
  public String title() {
    return "single-row UPDATE";
  }

  @Override
  protected List<String> schema() {
    return List.of(drop(TABLE),
      "CREATE TABLE " + TABLE + " (counter_id INT NOT NULL PRIMARY KEY, count BIGINT NOT NULL)" + engine());
  }

  @Override
  protected Future<Void> seed(SqlConnection conn) {
    return seedRows(conn, TABLE, false, 1);
  }

  @Override
  protected Future<?> increment(SqlConnection conn, int counter) {
    return conn.preparedQuery("UPDATE " + TABLE + " SET count = count + 1 WHERE counter_id = " + dialect.p(1))
      .execute(Tuple.of(counter));
  }

  @Override
  protected String valuesSql(String inList) {
    return "SELECT counter_id, count FROM " + TABLE + " WHERE counter_id IN (" + inList + ")";
  }

  @Override
  protected String totalSql() {
    return "SELECT SUM(count) FROM " + TABLE;
  }

  @Override
  protected String readSql() {
    return "SELECT count FROM " + TABLE + " WHERE counter_id = " + dialect.p(1);
  }
}
