package io.countergateway.internal.store;

import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.testing.DirectSql;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(VertxExtension.class)
@DisplayName("The flush statements and the flush-source rows, on real databases")
class FlushStatementsIT {

  /** The store as the coalescer uses it: created on, and called from, one event loop. */
  private record Writer(Context loop, CounterStore store, Pool sql, String table) {
    <T> T call(Supplier<Future<T>> action) {
      Promise<T> done = Promise.promise();
      loop.runOnContext(v -> action.get().onComplete(done));
      return await(done.future());
    }

    long ids(String source) {
      return DirectSql.longValue(sql, "SELECT COUNT(*) FROM " + table + "_flushes WHERE flush_id LIKE '" + source + ":%'");
    }

    long fence(String source) {
      return DirectSql.longValue(sql, "SELECT fence FROM " + table + "_flush_sources WHERE source = '" + source + "'");
    }

    long sources(String condition) {
      return DirectSql.longValue(sql, "SELECT COUNT(*) FROM " + table + "_flush_sources WHERE " + condition);
    }

    long sum(String id) {
      return DirectSql.longValue(sql, "SELECT COALESCE(SUM(count), 0) FROM " + table + " WHERE record_id = '" + id + "'");
    }
  }

  private static Writer writer(Vertx vertx, String database) {
    return writer(vertx, database, "fence_" + UUID.randomUUID().toString().substring(0, 8));
  }

  private static Writer writer(Vertx vertx, String database, String table) {
    Context loop = vertx.getOrCreateContext();
    Promise<CounterStore> created = Promise.promise();
    loop.runOnContext(v -> created.complete(SqlStores.create(vertx, DirectSql.options(database, table), 2, 30_000)));
    CounterStore store = await(created.future());
    Writer writer = new Writer(loop, store, DirectSql.pool(vertx, database), table);
    writer.call(store::createSchema);
    return writer;
  }

  /** A new flush source, registered, named after its test by {@code suffix}. */
  private static String registeredSource(Writer writer, String suffix) {
    String source = "src" + UUID.randomUUID().toString().substring(0, 8) + suffix;
    writer.call(() -> writer.store().registerSource(source));
    return source;
  }

  private static Flush flush(String source, long sequence, String counter) {
    return new Flush(FlushId.formed(source, sequence), List.of(new FlushRow("likes", counter, (short) 0, 1)));
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a raised fence refuses a late copy below it, before and after its settled ids are deleted")
  void advanceDeletesIdsBehindTheFence(String database, Vertx vertx) {
    Writer writer = writer(vertx, database);
    String source = registeredSource(writer, "-0");
    String counter = "fenced-" + source;
    List<String> ids = new java.util.ArrayList<>();
    for (long sequence = 0; sequence < 30; sequence++) {
      Flush flush = flush(source, sequence, counter);
      assertThat(writer.call(() -> writer.store().write(flush))).isEqualTo(WriteOutcome.COMMITTED);
      ids.add(flush.id().toString());
    }
    assertThat(writer.call(() -> writer.store().raiseFence(source, 30))).isTrue();
    assertThat(writer.fence(source)).isEqualTo(30);
    assertThat(writer.call(() -> writer.store().write(flush(source, 7, counter)))).as("a late copy of flush 7, its id there")
      .isEqualTo(WriteOutcome.ALREADY_COMMITTED);
    writer.call(() -> writer.store().deleteSettledIds(ids));
    assertThat(writer.ids(source)).isZero();
    assertThat(writer.call(() -> writer.store().write(flush(source, 8, counter)))).as("a late copy of flush 8, its id gone")
      .isEqualTo(WriteOutcome.ALREADY_COMMITTED);
    assertThat(writer.sum(counter)).isEqualTo(30);
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("an advance beats the source's heart: a prune closes a source silent for the retention, never one that has just advanced")
  void advanceKeepsTheSourceAlive(String database, Vertx vertx) {
    Writer writer = writer(vertx, database);
    String alive = "src" + UUID.randomUUID().toString().substring(0, 8) + "-4";
    String silent = "src" + UUID.randomUUID().toString().substring(0, 8) + "-5";
    writer.call(() -> writer.store().registerSource(alive));
    writer.call(() -> writer.store().registerSource(silent));
    await(writer.sql().query("UPDATE " + writer.table() + "_flush_sources SET heartbeat_at = heartbeat_at - INTERVAL '2' DAY")
      .execute());
    assertThat(writer.call(() -> writer.store().raiseFence(alive, 0))).as("a heartbeat").isTrue();
    writer.call(() -> writer.store().pruneFlushIds(86_400));
    assertThat(writer.fence(alive)).isZero();
    assertThat(writer.fence(silent)).isEqualTo(FlushSourceRow.CLOSED);
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a source closed by the prune keeps its ids: nothing of it is written any more, its row says which ids committed, an advance finds it closed")
  void closedSourceKeepsItsIds(String database, Vertx vertx) {
    Writer writer = writer(vertx, database);
    String source = registeredSource(writer, "-1");
    String counter = "unsettled-" + source;
    Flush committed = flush(source, 0, counter);
    assertThat(writer.call(() -> writer.store().write(committed))).isEqualTo(WriteOutcome.COMMITTED);
    assertThat(writer.call(() -> writer.store().voidFlush(flush(source, 1, counter)))).isEqualTo(VoidOutcome.VOIDED);
    assertThat(writer.call(() -> writer.store().pruneFlushIds(3_600))).as("the source is alive").isZero();

    // the gateway is cut off: nothing raised its fence or beat its heart for longer than the retention
    await(writer.sql().query("UPDATE " + writer.table() + "_flush_sources SET heartbeat_at = heartbeat_at - INTERVAL '2' DAY")
      .execute());
    assertThat(writer.call(() -> writer.store().pruneFlushIds(86_400))).as("ids deleted").isZero();
    assertThat(writer.fence(source)).isEqualTo(FlushSourceRow.CLOSED);
    FlushSourceRow row = writer.call(() -> writer.store().sourceRow(source));
    assertThat(row.closed()).isTrue();
    assertThat(row.committed()).as("the voided id is not a committed one").containsExactly(committed.id());
    assertThat(writer.call(() -> writer.store().write(flush(source, 2, counter)).otherwise(e -> null))).isNull();
    assertThat(writer.call(() -> writer.store().raiseFence(source, 3))).as("a closed source is not raised").isFalse();
    assertThat(writer.ids(source)).isEqualTo(2);
    assertThat(writer.sum(counter)).isEqualTo(1);
    assertThat(writer.call(() -> writer.store().sourceRow("never-0")).missing()).isTrue();
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a voided id keeps a late copy of its flush out; voiding an id a late copy had committed says so")
  void voidedIdsKeepLateCopiesOut(String database, Vertx vertx) {
    Writer writer = writer(vertx, database);
    String source = registeredSource(writer, "-2");
    String counter = "voided-" + source;
    assertThat(writer.call(() -> writer.store().voidFlush(flush(source, 0, counter)))).isEqualTo(VoidOutcome.VOIDED);
    assertThat(writer.call(() -> writer.store().voidFlush(flush(source, 0, counter)))).as("a repeated void")
      .isEqualTo(VoidOutcome.VOIDED);
    assertThat(writer.call(() -> writer.store().write(flush(source, 0, counter)))).as("a late copy")
      .isEqualTo(WriteOutcome.ALREADY_COMMITTED);
    assertThat(writer.sum(counter)).isZero();

    assertThat(writer.call(() -> writer.store().write(flush(source, 1, counter)))).isEqualTo(WriteOutcome.COMMITTED);
    assertThat(writer.call(() -> writer.store().voidFlush(flush(source, 1, counter)))).isEqualTo(VoidOutcome.ALREADY_COMMITTED);
    assertThat(writer.sum(counter)).isEqualTo(1);
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a deleted source takes its ids with it; the prune deletes a source closed for the retention, with its ids")
  void sourcesAreCleaned(String database, Vertx vertx) {
    Writer writer = writer(vertx, database);
    String source = registeredSource(writer, "-3");
    Flush flush = flush(source, 0, "cleaned-" + source);
    assertThat(writer.call(() -> writer.store().write(flush))).isEqualTo(WriteOutcome.COMMITTED);
    writer.call(() -> writer.store().deleteSource(source));
    assertThat(writer.sources("1 = 1")).isZero();
    assertThat(writer.ids(source)).isZero();
    assertThat(writer.call(() -> writer.store().write(flush).otherwise(e -> null))).as("a late copy finds no row").isNull();

    // a process that died with an unsettled flush, closed by a prune a retention ago
    await(writer.sql().query("INSERT INTO " + writer.table() + "_flush_sources (source, fence) VALUES ('dead-9', "
      + Long.MAX_VALUE + ")").execute());
    await(writer.sql().query("INSERT INTO " + writer.table() + "_flushes (flush_id) VALUES ('dead-9:0')").execute());
    Writer pruner = writer(vertx, database, writer.table());
    assertThat(pruner.call(() -> pruner.store().pruneFlushIds(86_400))).as("closed just now: kept").isZero();
    await(writer.sql().query("UPDATE " + writer.table() + "_flush_sources SET closed_at = heartbeat_at - INTERVAL '2' DAY")
      .execute());
    assertThat(pruner.call(() -> pruner.store().pruneFlushIds(86_400))).isEqualTo(1);
    assertThat(writer.sources("1 = 1")).isZero();
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a flush writes any id and any delta exactly, plain and windowed rows together; a refused value writes none of it")
  void flushCarriesEveryValueExactly(String database, Vertx vertx) {
    Writer writer = writer(vertx, database);
    String source = registeredSource(writer, "-4");
    String quoted = "it's \"quoted\" \\ back\\slash";
    String unicode = "caf\u00e9 \u20ac \ud83d\ude00 \u4e2d";
    String tab = "line\tbreak\nhere";
    long bucket = 1_764_201_600L;
    Flush flush = new Flush(FlushId.formed(source, 0), List.of(
      new FlushRow("exact", quoted, (short) 0, Long.MAX_VALUE),
      new FlushRow("exact", unicode, (short) 1, Long.MIN_VALUE),
      new FlushRow("exact", tab, (short) 3, 9_007_199_254_740_993L),
      new FlushRow("exact", unicode, (short) 2, 7, bucket)));
    assertThat(writer.call(() -> writer.store().write(flush))).isEqualTo(WriteOutcome.COMMITTED);

    List<String> ids = List.of(quoted, unicode, tab);
    assertThat(writer.call(() -> writer.store().sum("exact", ids))).containsOnly(
      Map.entry(quoted, BigInteger.valueOf(Long.MAX_VALUE)), Map.entry(unicode, BigInteger.valueOf(Long.MIN_VALUE)),
      Map.entry(tab, BigInteger.valueOf(9_007_199_254_740_993L)));
    assertThat(writer.call(() -> writer.store().windowTotals("exact", List.of(unicode), bucket, bucket + 1)))
      .containsOnly(Map.entry(unicode, BigInteger.valueOf(7)));

    // the first row overflows its slot: the database refuses the value, and the other rows and the id stay unwritten
    Flush overflowing = new Flush(FlushId.formed(source, 1), List.of(
      new FlushRow("exact", quoted, (short) 0, 1), new FlushRow("exact", tab, (short) 3, 1)));
    Throwable refused = writer.call(() -> writer.store().write(overflowing).transform(Future::succeededFuture))
      .cause();
    assertThat(Failures.isValueRefused(refused)).as("%s", refused).isTrue();
    assertThat(writer.ids(source)).isEqualTo(1);
    assertThat(writer.call(() -> writer.store().sum("exact", List.of(tab))))
      .containsOnly(Map.entry(tab, BigInteger.valueOf(9_007_199_254_740_993L)));
  }
}
