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
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

    long sum(String id) {
      return DirectSql.longValue(sql, "SELECT COALESCE(SUM(count), 0) FROM " + table + " WHERE record_id = '" + id + "'");
    }
  }

  private static Writer writer(Vertx vertx, String database) {
    String table = "fence_" + UUID.randomUUID().toString().substring(0, 8);
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
  @DisplayName("an unsettled flush keeps its id through any outage; a source silent past the retention is closed and its late flush fails")
  void unsettledIdsStayAndDeadSourcesClose(String database, Vertx vertx) throws InterruptedException {
    Writer writer = writer(vertx, database);
    String source = "src" + UUID.randomUUID().toString().substring(0, 8) + "-1";
    String counter = "unsettled-" + source;
    Flush flush = flush(source, 0, counter);
    assertThat(writer.call(() -> writer.store().write(flush))).isEqualTo(WriteOutcome.COMMITTED);
    Thread.sleep(1_500);
    assertThat(writer.call(() -> writer.store().pruneFlushIds(3_600))).as("the source is alive").isZero();
    assertThat(writer.ids(source)).isEqualTo(1);
    assertThat(writer.call(() -> writer.store().write(flush))).as("a retry after the outage").isEqualTo(WriteOutcome.ALREADY_COMMITTED);

    // the process is gone: nothing raised its fence or beat its heart for longer than the retention
    await(writer.sql().query("UPDATE " + writer.table() + "_flush_sources SET heartbeat_at = heartbeat_at - INTERVAL '2' DAY")
      .execute());
    assertThat(writer.call(() -> writer.store().pruneFlushIds(86_400))).isEqualTo(1);
    assertThat(writer.ids(source)).isZero();
    assertThat(writer.fence(source)).isEqualTo(Long.MAX_VALUE);
    // PostgreSQL refuses it in the flush statement, MySQL in the transaction's first step
    assertThatThrownBy(() -> writer.call(() -> writer.store().write(flush)))
      .hasMessageMatching("(?s).*(closed as dead|flush_source_missing_or_closed).*");
    assertThat(writer.sum(counter)).isEqualTo(1);
  }
}
