package io.countergateway.bench;

import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.vertx.core.Future;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The slotted counter pattern done per increment: upsert {@code +1} into a random slot of {@code slots}
 * ({@code ON CONFLICT DO UPDATE} / {@code ON DUPLICATE KEY UPDATE}); rows appear on first use; SUM to read.
 */
final class SlottedUpsert extends SqlStrategy {
  static final String TABLE = "bench_slotted";

  SlottedUpsert(BenchContext ctx) {
    super(ctx);
  }

  @Override
  public String name() {
    return "slotted";
  }

  @Override
  public String title() {
    return "slotted upsert per increment (" + ctx.options().slots() + " slots)";
  }

  @Override
  protected List<String> schema() {
    return List.of(drop(TABLE), slottedTable(TABLE));
  }

  static String upsert(Dialect dialect, String table) {
    String insert = "INSERT INTO " + table + (dialect.isPostgres() ? " AS c" : "")
      + " (counter_id, slot, count) VALUES (" + dialect.p(1) + ", " + dialect.p(2) + ", 1)";
    return insert + (dialect.isPostgres()
      ? " ON CONFLICT (counter_id, slot) DO UPDATE SET count = c.count + 1"
      : " ON DUPLICATE KEY UPDATE count = count + 1");
  }

  @Override
  protected Future<?> increment(SqlConnection conn, int counter) {
    int slot = ThreadLocalRandom.current().nextInt(ctx.options().slots());
    return conn.preparedQuery(upsert(dialect, TABLE)).execute(Tuple.of(counter, (short) slot));
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
