package io.countergateway.internal.write;

import io.countergateway.config.BatchingOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.ScriptedStore;
import io.countergateway.testing.ScriptedStore.Fail;
import io.countergateway.testing.ScriptedStore.Hold;
import io.countergateway.testing.ScriptedStore.Meanwhile;
import io.countergateway.testing.ScriptedStore.ReleaseThenFail;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The flush writer's split invariant against a late copy of a first attempt (src/DESIGN.md §4 "Exactly once"): an
 * attempt held past batching.writeTimeout reaches the store only after the retry, on other slots, was refused a value.
 */
@DisplayName("The flush writer, against late copies of its attempts")
class FlushWriterTest {
  private static final long NANOS = 0;
  private Vertx vertx;
  private Context loop;
  private ScriptedStore store;
  private GatewayState state;
  private FlushSources sources;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
    store = new ScriptedStore();
    state = new GatewayState();
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private FlushWriter writer() {
    BatchingOptions options = GatewayConfig.fromJson(new JsonObject()
      .put("batching", new JsonObject().put("writeTimeout", "100ms").put("retryBackoff", "1ms").put("retryBackoffMax", "5ms"))
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 2)))).getBatching();
    // a retry moves every row to slot 0, as a new round of the coalescer's lane would move it to another slot
    return EventLoop.call(loop, () -> {
      sources = new FlushSources(vertx, store, FlushLog.NONE, 0, 60_000, System::currentTimeMillis, 3_600_000);
      return new FlushWriter(vertx, store, sources, FlushLog.NONE, options, state,
        flush -> flush.reslotted(row -> row.withSlot((short) 0)), () -> NANOS);
    });
  }

  private static Ack ack(String id) {
    return new Ack(new CounterKey("likes", id), 1, Long.MAX_VALUE);
  }

  /** A flush of the live source, as the coalescer forms it. */
  private Flush flush(String... ids) {
    return rows(EventLoop.call(loop, sources::nextId), ids);
  }

  private static Flush rows(FlushId id, String... ids) {
    return new Flush(id, java.util.Arrays.stream(ids).map(row -> new FlushRow("likes", row, (short) 1, 1)).toList());
  }

  /** A flush of an earlier run's source, as a journal replay hands it over; the source's row is there. */
  private Flush replayed(String... ids) {
    store.sources.put("old-0", 0L);
    return rows(FlushId.formed("old-0", 1), ids);
  }

  private static Throwable outcome(Future<?> future) {
    try {
      future.toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private void write(FlushWriter writer, Flush flush, List<Ack> acks) {
    assertThat(outcome(EventLoop.call(loop, () -> writer.write(flush, acks, List.of(), false)))).isNull();
  }

  @Test
  @DisplayName("a split flush and a late copy of its first attempt: the late copy writes nothing, the 200 is counted once")
  void splitThenLateFirstAttempt() {
    FlushWriter writer = writer();
    // the first attempt (slot 1) is held past batching.writeTimeout; its retry on slot 0 overflows "full"
    store.then(new Hold()).refuseRows(row -> row.id().equals("full") && row.slot() == 0);
    Ack other = ack("other");
    Ack full = ack("full");
    write(writer, flush("full", "other"), List.of(full, other));
    assertThat(outcome(other.future())).as("the counter that was written").isNull();
    assertThat(outcome(full.future())).isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status()).isEqualTo(422));

    // now the held first attempt reaches the store, under the original id, on slot 1 where nothing overflows
    assertThat(EventLoop.call(loop, store::release)).isTrue();
    assertThat(store.value("likes", "other")).as("the answered 200, counted once").isEqualTo(1);
    assertThat(store.value("likes", "full")).as("the answered 422, not counted").isZero();
    String id = store.attempts.get(0).id().toString();
    assertThat(store.voids).as("voided before the halves and before the 422").containsExactly(id, id + ".0");
  }

  @Test
  @DisplayName("a replayed flush whose id a crash left voided (split cut before the journal had its halves) is split again, not taken as committed")
  void replayedFlushFoundVoided() {
    FlushWriter writer = writer();
    Flush replayed = replayed("a", "b");
    store.idTable.put("old-0:1", true);

    assertThat(outcome(EventLoop.call(loop, () -> writer.writeReplayed(replayed, true)))).isNull();

    assertThat(store.value("likes", "a") + store.value("likes", "b")).as("both halves written once").isEqualTo(2);
    assertThat(store.committedIds).containsExactlyInAnyOrder("old-0:1.0", "old-0:1.1");
  }

  @Test
  @DisplayName("a replayed flush that had committed is not written again")
  void replayedFlushFoundCommitted() {
    FlushWriter writer = writer();
    Flush replayed = replayed("a", "b");
    assertThat(outcome(EventLoop.call(loop, () -> store.write(replayed)))).isNull();

    assertThat(outcome(EventLoop.call(loop, () -> writer.writeReplayed(replayed, true)))).isNull();

    assertThat(store.value("likes", "a") + store.value("likes", "b")).isEqualTo(2);
    assertThat(store.committedIds).containsExactly("old-0:1");
  }

  @Test
  @DisplayName("a single refused row and a late copy of its first attempt: the 422 stays true")
  void refusedRowThenLateFirstAttempt() {
    FlushWriter writer = writer();
    store.then(new Hold()).refuseRows(row -> row.id().equals("full") && row.slot() == 0);
    Ack full = ack("full");
    write(writer, flush("full"), List.of(full));
    assertThat(outcome(full.future())).isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status()).isEqualTo(422));

    assertThat(EventLoop.call(loop, store::release)).isTrue();
    assertThat(store.value("likes", "full")).as("answered 422: not counted").isZero();
  }

  @Test
  @DisplayName("a late copy that committed the flush whole before the void: every request is answered as committed, counted once")
  void lateCopyCommittedFirst() {
    FlushWriter writer = writer();
    // the held first attempt lands (on slot 1) right before the retry (on slot 0) is refused
    store.then(new Hold(), new ReleaseThenFail(ScriptedStore.sqlState("22003")));
    Ack other = ack("other");
    Ack full = ack("full");
    write(writer, flush("full", "other"), List.of(full, other));
    assertThat(outcome(other.future())).isNull();
    assertThat(outcome(full.future())).isNull();
    assertThat(store.value("likes", "other")).isEqualTo(1);
    assertThat(store.value("likes", "full")).isEqualTo(1);
    assertThat(store.attempts).as("no split: the flush had committed whole").hasSize(2);
  }

  @Test
  @DisplayName("a flush with an attempt of unknown outcome whose source vanished is answered 504 and never written again")
  void outcomeUnknown() {
    FlushWriter writer = writer();
    Flush flush = flush("one");
    String source = flush.id().source();
    store.then(new Meanwhile(() -> { }, new ScriptedStore.CommitThenLoseAnswer()),
      new Meanwhile(() -> store.dropSource(source), new ScriptedStore.Commit()));
    Ack one = ack("one");
    write(writer, flush, List.of(one));
    assertThat(outcome(one.future())).isInstanceOfSatisfying(ApiError.class, e -> {
      assertThat(e.status()).isEqualTo(504);
      assertThat(e.code()).isEqualTo("outcome_unknown");
    });
    assertThat(store.attempts).hasSize(2);
    assertThat(store.value("likes", "one")).as("the lost answer's commit, once").isEqualTo(1);
  }

  @Test
  @DisplayName("a flush whose source was closed while it was being retried: counted once if its id is there, else written once under a fresh source")
  void closedSourceResolvedByIds() {
    FlushWriter writer = writer();
    Flush landed = flush("landed");
    Flush lost = flush("lost");
    String source = landed.id().source();
    store.then(new ScriptedStore.CommitThenLoseAnswer(), new Fail(ScriptedStore.connectionLost()),
      new Meanwhile(() -> store.closeSource(source), new ScriptedStore.Commit()));
    Ack first = ack("landed");
    Ack second = ack("lost");
    Future<Boolean> one = EventLoop.call(loop, () -> writer.write(landed, List.of(first), List.of(), false));
    Future<Boolean> two = EventLoop.call(loop, () -> writer.write(lost, List.of(second), List.of(), false));
    assertThat(outcome(one)).isNull();
    assertThat(outcome(two)).isNull();
    assertThat(outcome(first.future())).isNull();
    assertThat(outcome(second.future())).isNull();
    assertThat(store.value("likes", "landed")).isEqualTo(1);
    assertThat(store.value("likes", "lost")).isEqualTo(1);
    assertThat(store.committedIds).as("the lost one went on under a fresh source")
      .anyMatch(id -> !FlushId.parse(id).source().equals(source));
  }

  @Test
  @DisplayName("a flush none of whose attempts left the process (connection refused) is written under the live source once its own vanished, and answered 200")
  void neverSentGoesOn() {
    FlushWriter writer = writer();
    Flush flush = flush("one");
    String source = flush.id().source();
    store.then(new ScriptedStore.FailBeforeSending(ScriptedStore.connectionRefused()),
      new ScriptedStore.FailBeforeSending(ScriptedStore.connectionRefused()),
      new Meanwhile(() -> store.dropSource(source), new ScriptedStore.Commit()));
    Ack one = ack("one");
    write(writer, flush, List.of(one));
    assertThat(outcome(one.future())).isNull();
    assertThat(store.value("likes", "one")).isEqualTo(1);
    assertThat(store.committedIds).singleElement().satisfies(id -> assertThat(FlushId.parse(id).source())
      .as("a fresh source").isEqualTo(EventLoop.call(loop, sources::liveSource)).isNotEqualTo(source));
    assertThat(EventLoop.call(loop, sources::unknownFlushes)).isZero();
  }

  @Test
  @DisplayName("a flush sent whose answer was lost (connection lost), then refused at connect, is outcome unknown once its source vanished: 504, never written again")
  void sentThenNotSentStaysUnknown() {
    FlushWriter writer = writer();
    Flush flush = flush("one");
    String source = flush.id().source();
    store.then(new Fail(ScriptedStore.connectionLost()),
      new ScriptedStore.FailBeforeSending(ScriptedStore.connectionRefused()),
      new Meanwhile(() -> store.dropSource(source), new ScriptedStore.Commit()));
    Ack one = ack("one");
    write(writer, flush, List.of(one));
    assertThat(outcome(one.future())).isInstanceOfSatisfying(ApiError.class,
      e -> assertThat(e.code()).isEqualTo("outcome_unknown"));
    assertThat(store.committedIds).isEmpty();
    assertThat(EventLoop.call(loop, sources::unknownFlushes)).isEqualTo(1);
  }
}
