package io.countergateway.internal.write;

import io.countergateway.config.BatchingOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.internal.store.SqlStores;
import io.countergateway.internal.store.WriteOutcome;
import io.countergateway.testing.DirectSql;
import io.countergateway.testing.EventLoop;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The flush writer and its flush sources on real databases (src/DESIGN.md §4 "Flush sources"): settled ids go behind
 * the fence, a source closed by another replica's prune is resolved by its ids, a graceful stop leaves no row.
 */
@ExtendWith(VertxExtension.class)
@DisplayName("Flush sources on real databases")
class FlushSourcesIT {

  /** One writer as an ingest verticle has it: its store, sources and writer on one event loop, ticking every 50 ms. */
  private record Writer(Context loop, CounterStore store, FlushSources sources, FlushWriter writer, Pool sql,
                        String table) {
    <T> T call(Supplier<Future<T>> action) {
      return await(EventLoop.call(loop, action::get));
    }

    Flush flush(String counter) {
      return new Flush(EventLoop.call(loop, sources::nextId), List.of(new FlushRow("likes", counter, (short) 0, 1)));
    }

    long count(String sqlText) {
      return DirectSql.longValue(sql, sqlText);
    }

    long ids(String source) {
      return count("SELECT COUNT(*) FROM " + table + "_flushes WHERE flush_id LIKE '" + source + ":%'");
    }

    long sum(String id) {
      return count("SELECT COALESCE(SUM(count), 0) FROM " + table + " WHERE record_id = '" + id + "'");
    }
  }

  private static Writer writer(Vertx vertx, String database) {
    String table = "sources_" + UUID.randomUUID().toString().substring(0, 8);
    BatchingOptions options = GatewayConfig.fromJson(new JsonObject()
      .put("batching", new JsonObject().put("retryBackoff", "10ms").put("retryBackoffMax", "50ms"))
      .put("namespaces", new JsonObject().put("likes", new JsonObject()))).getBatching();
    Context loop = vertx.getOrCreateContext();
    Writer writer = EventLoop.call(loop, () -> {
      CounterStore store = SqlStores.create(vertx, DirectSql.options(database, table), 2, 30_000);
      FlushSources sources = new FlushSources(vertx, store, FlushLog.NONE, 0, 60_000, System::currentTimeMillis, 50);
      FlushWriter flushes = new FlushWriter(vertx, store, sources, FlushLog.NONE, options, new GatewayState(),
        flush -> flush, System::nanoTime);
      return new Writer(loop, store, sources, flushes, DirectSql.pool(vertx, database), table);
    });
    writer.call(writer.store()::createSchema);
    return writer;
  }

  private static void waitFor(Supplier<Boolean> condition) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 10_000;
    while (!condition.get() && System.currentTimeMillis() < deadline) {
      Thread.sleep(50);
    }
  }

  private static List<Ack> acks(String counter) {
    return new ArrayList<>(List.of(new Ack(new CounterKey("likes", counter), 1, Long.MAX_VALUE)));
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("the ids of 300 settled flushes are gone within seconds, a late copy of one writes nothing, and a graceful stop leaves no row")
  void settledIdsGoBehindTheFence(String database, Vertx vertx) throws InterruptedException {
    Writer writer = writer(vertx, database);
    String counter = "fenced-" + UUID.randomUUID().toString().substring(0, 8);
    List<Flush> flushes = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      Flush flush = writer.flush(counter);
      flushes.add(flush);
      assertThat(writer.call(() -> writer.writer().run(FlushJob.formed(flush, acks(counter), List.of(), -1, 0)))).isTrue();
    }
    String source = flushes.get(0).id().source();
    waitFor(() -> writer.ids(source) == 0);
    assertThat(writer.ids(source)).isZero();
    assertThat(writer.count("SELECT fence FROM " + writer.table() + "_flush_sources WHERE source = '" + source + "'"))
      .isEqualTo(300);
    assertThat(writer.call(() -> writer.store().write(flushes.get(7)))).as("a late copy of flush 7")
      .isEqualTo(WriteOutcome.ALREADY_COMMITTED);
    assertThat(writer.sum(counter)).isEqualTo(300);

    writer.call(writer.sources()::retire);
    assertThat(writer.count("SELECT COUNT(*) FROM " + writer.table() + "_flush_sources")).isZero();
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a source closed by another replica's prune while its gateway was cut off: the flush whose id it holds is answered as committed, the other is written once under a fresh source, and the closed row goes")
  void closedSourceIsResolvedByItsIds(String database, Vertx vertx) throws InterruptedException {
    Writer writer = writer(vertx, database);
    String counter = "closed-" + UUID.randomUUID().toString().substring(0, 8);
    Flush landed = writer.flush(counter);
    Flush notYet = writer.flush(counter);
    String source = landed.id().source();
    // the first attempt of one flush committed, its answer lost; then the gateway was cut off past the retention
    writer.call(() -> writer.sources().registered(landed.id()));
    assertThat(writer.call(() -> writer.store().write(landed))).isEqualTo(WriteOutcome.COMMITTED);
    await(writer.sql().query("UPDATE " + writer.table() + "_flush_sources SET heartbeat_at = heartbeat_at - INTERVAL '2' DAY")
      .execute());
    assertThat(writer.call(() -> writer.store().pruneFlushIds(86_400))).isZero();

    List<Ack> first = acks(counter);
    List<Ack> second = acks(counter);
    assertThat(writer.call(() -> writer.writer().run(FlushJob.formed(landed, first, List.of(), -1, 0)))).isTrue();
    assertThat(writer.call(() -> writer.writer().run(FlushJob.formed(notYet, second, List.of(), -1, 0)))).isTrue();
    assertThat(first.get(0).future().succeeded()).isTrue();
    assertThat(second.get(0).future().succeeded()).isTrue();
    assertThat(writer.sum(counter)).isEqualTo(2);
    waitFor(() -> writer.count("SELECT COUNT(*) FROM " + writer.table() + "_flush_sources WHERE source = '" + source
      + "'") == 0);
    assertThat(writer.count("SELECT COUNT(*) FROM " + writer.table() + "_flush_sources WHERE source = '" + source + "'"))
      .as("the closed source, resolved").isZero();
    assertThat(EventLoop.call(writer.loop(), writer.sources()::liveSource)).isNotEqualTo(source);
  }
}
