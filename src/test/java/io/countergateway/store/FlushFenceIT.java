package io.countergateway.store;

import io.countergateway.store.Flush;
import io.countergateway.store.FlushRow;
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

import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(VertxExtension.class)
@DisplayName("Flush ids of settled flushes are deleted, behind a fence")
class FlushFenceIT {

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

  private static Flush flush(String source, long sequence, String counter) {
    return new Flush(source + ":" + Long.toString(sequence, 36), List.of(new FlushRow("likes", counter, (short) 0, 1)));
  }

  private static void waitFor(Supplier<Boolean> condition) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 10_000;
    while (!condition.get() && System.currentTimeMillis() < deadline) {
      Thread.sleep(50);
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("the ids of 300 settled flushes are gone within seconds, and a late copy of one of them writes nothing")
  void settledIdsGoAndLateCopiesWriteNothing(String database, Vertx vertx) throws InterruptedException {
    Writer writer = writer(vertx, database);
    String source = "src" + UUID.randomUUID().toString().substring(0, 8) + "-0";
    String counter = "fenced-" + source;
    for (long sequence = 0; sequence < 300; sequence++) {
      Flush flush = flush(source, sequence, counter);
      assertThat(writer.call(() -> writer.store().write(flush))).isEqualTo(WriteOutcome.COMMITTED);
      writer.call(() -> {
        writer.store().flushSettled(flush);
        return Future.succeededFuture();
      });
    }
    waitFor(() -> writer.ids(source) == 0);
    assertThat(writer.ids(source)).isZero();
    assertThat(writer.fence(source)).isEqualTo(300);

    // an attempt of flush 7 that reaches the database only now, after the gateway had settled it
    assertThat(writer.call(() -> writer.store().write(flush(source, 7, counter)))).isEqualTo(WriteOutcome.ALREADY_COMMITTED);
    assertThat(writer.sum(counter)).isEqualTo(300);
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a source closed while its gateway was cut off keeps its ids: the gateway answers the flush it holds as committed, writes the others under a new source, and deletes the closed one")
  void closedSourceRecovers(String database, Vertx vertx) throws InterruptedException {
    Writer writer = writer(vertx, database);
    String source = "src" + UUID.randomUUID().toString().substring(0, 8) + "-1";
    String counter = "unsettled-" + source;
    Flush flush = flush(source, 0, counter);
    assertThat(writer.call(() -> writer.store().write(flush))).isEqualTo(WriteOutcome.COMMITTED);
    Thread.sleep(1_500);
    assertThat(writer.call(() -> writer.store().pruneFlushIds(3_600))).as("the source is alive").isZero();
    assertThat(writer.ids(source)).isEqualTo(1);
    assertThat(writer.call(() -> writer.store().write(flush))).as("a retry after the outage").isEqualTo(WriteOutcome.ALREADY_COMMITTED);

    // the gateway is cut off: nothing raised its fence or beat its heart for longer than the retention
    await(writer.sql().query("UPDATE " + writer.table() + "_flush_sources SET heartbeat_at = heartbeat_at - INTERVAL '2' DAY")
      .execute());
    assertThat(writer.call(() -> writer.store().pruneFlushIds(86_400))).as("ids deleted").isZero();
    assertThat(writer.ids(source)).as("the closed source keeps its ids").isEqualTo(1);
    assertThat(writer.fence(source)).isEqualTo(Long.MAX_VALUE);

    // back: the unsettled flush is resolved by its id, a new one goes under a successor
    assertThat(writer.call(() -> writer.store().write(flush))).isEqualTo(WriteOutcome.ALREADY_COMMITTED);
    assertThat(writer.call(() -> writer.store().write(flush(source, 1, counter)))).isEqualTo(WriteOutcome.COMMITTED);
    assertThat(writer.sum(counter)).isEqualTo(2);
    waitFor(() -> writer.sources("source = '" + source + "'") == 0);
    assertThat(writer.sources("source = '" + source + "'")).as("the closed source, once it holds nothing").isZero();
    assertThat(writer.ids(source)).isZero();
    assertThat(writer.sources("fence < " + Long.MAX_VALUE)).as("the successor").isEqualTo(1);
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a voided id keeps a late copy of its flush out; voiding an id a late copy had committed says so")
  void voidedIdsKeepLateCopiesOut(String database, Vertx vertx) {
    Writer writer = writer(vertx, database);
    String source = "src" + UUID.randomUUID().toString().substring(0, 8) + "-2";
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
  @DisplayName("a graceful stop deletes its sources; the prune deletes a source closed for the retention, with its ids")
  void sourcesAreCleaned(String database, Vertx vertx) {
    Writer writer = writer(vertx, database);
    String source = "src" + UUID.randomUUID().toString().substring(0, 8) + "-3";
    Flush flush = flush(source, 0, "cleaned-" + source);
    assertThat(writer.call(() -> writer.store().write(flush))).isEqualTo(WriteOutcome.COMMITTED);
    writer.call(() -> {
      writer.store().flushSettled(flush);
      return Future.succeededFuture();
    });
    writer.call(() -> writer.store().close());
    assertThat(writer.sources("1 = 1")).as("sources after a graceful stop").isZero();
    assertThat(writer.ids(source)).isZero();

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
}
