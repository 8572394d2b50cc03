package io.countergateway.internal.write;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.internal.write.FlushJob.Phase;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.ScriptedStore;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * database.keepUntilReplicated on virtual time and a scripted primary with one asynchronous standby
 * (src/DESIGN.md §4 "Replication"): a committed flush is answered at once and released — its journal record settled,
 * its id left for its source's fence to pass — only once the standby has flushed past its commit; a promoted standby
 * (a new timeline) gets again, under the same ids, what it lacks, and nothing twice; a standby that lags too long stops
 * intake with 503 instead of releasing anything.
 */
@DisplayName("Flushes kept until the standbys have them")
class ReplicatedReleaseTest {
  private static final long POLL_MS = ReplicatedRelease.POLL_MS;

  private final RecordingFlushLog log = new RecordingFlushLog();
  /** Every record the journal was asked for, in order, as "kind id". */
  private final List<String> journal = log.records;
  private final ScriptedStore store = new ScriptedStore();
  private final VirtualTimers timers = new VirtualTimers();
  private Vertx vertx;
  private Context loop;
  private FlushSources sources;
  private FlushWriter writer;

  /** A flush writer holding what it commits until the standbys have it (a standby may lag 30 s). */
  @BeforeEach
  void startWriter() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
    GatewayConfig config = GatewayConfig.fromJson(new JsonObject().put("namespaces", new JsonObject()
      .put("likes", new JsonObject().put("slots", 2))));
    on(() -> {
      sources = new FlushSources(store, log, 0, 60_000, timers::currentTimeMillis, FlushSources.TICK_MS, timers);
      writer = new FlushWriter(vertx, store, sources, log, config.getBatching(), new GatewayState(), flush -> flush,
        timers::nanoTime, timers);
      writer.keepUntilReplicated(store::replicationPosition, 30_000, () -> { });
      return null;
    });
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private <T> T on(Callable<T> work) {
    return EventLoop.call(loop, work);
  }

  private void advance(long ms) {
    on(() -> {
      timers.advance(ms);
      return null;
    });
  }

  /** A flush of the live source holding journaled increments, with a request per row, run to its answers. */
  private FlushJob committed(String... ids) {
    Flush flush = new Flush(on(sources::nextId), Arrays.stream(ids)
      .map(row -> new FlushRow("likes", row, (short) 1, 1)).toList());
    FlushJob job = FlushJob.formed(flush, Arrays.stream(ids)
      .map(id -> new Ack(new CounterKey("likes", id), 1, Long.MAX_VALUE)).toList(), List.of(), 42, 0);
    assertThat(on(() -> writer.run(job)).result()).as("answered").isTrue();
    assertThat(job.acks()).allSatisfy(ack -> assertThat(ack.future().succeeded()).as("200").isTrue());
    return job;
  }

  @Test
  @DisplayName("a committed flush is answered at once, but its journal record is settled and its id let go only once the standby has flushed past its commit, oldest first")
  void releasedOnlyOnceReplicated() {
    FlushJob first = committed("a");
    // the first poll learns the timeline (and checks again what settled before it), the next stamps the commit
    advance(2 * POLL_MS);
    FlushJob second = committed("b");
    advance(5 * POLL_MS);
    assertThat(first.phase()).as("the standby has nothing yet").isEqualTo(Phase.REPLICATING);
    assertThat(second.phase()).isEqualTo(Phase.REPLICATING);
    assertThat(first.journalPosition()).as("its journal frames are kept").isEqualTo(42);
    assertThat(journal).noneMatch(record -> record.startsWith("settled"));
    assertThat(store.idTable).as("ids kept for a replay to find").containsKeys(first.flush().id().toString(),
      second.flush().id().toString());

    store.standbysFlushed = 1;
    advance(2 * POLL_MS);
    assertThat(first.phase()).as("the standby flushed past its commit").isEqualTo(Phase.RELEASED);
    assertThat(first.journalPosition()).isEqualTo(-1);
    assertThat(second.phase()).as("its commit lies past what the standby flushed").isEqualTo(Phase.REPLICATING);
    assertThat(journal).contains("settled " + first.flush().id()).doesNotContain("settled " + second.flush().id());

    store.standbysFlushed = store.walPosition;
    advance(2 * POLL_MS);
    assertThat(second.phase()).isEqualTo(Phase.RELEASED);
    assertThat(on(writer::heldForReplicas)).isZero();
    assertThat(store.commits).as("each flush written once").isEqualTo(2);
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(store.value("likes", "b")).isEqualTo(1);
  }

  @Test
  @DisplayName("the primary lost and its standby promoted: nothing is released while no primary answers, then what the new timeline lacks is written again under the same ids, and what it has is not written twice")
  void timelineChangeWritesAgain() {
    FlushJob replicated = committed("a");
    advance(POLL_MS);
    store.standbysFlushed = store.walPosition;
    FlushJob lost = committed("b");
    store.primaryAway = true;
    advance(10 * POLL_MS);
    assertThat(replicated.phase()).as("no poll answered: nothing released").isEqualTo(Phase.REPLICATING);
    assertThat(lost.phase()).isEqualTo(Phase.REPLICATING);

    store.promoteStandby();
    assertThat(store.value("likes", "b")).as("the promoted standby lacks the second flush").isZero();
    advance(POLL_MS);
    assertThat(store.value("likes", "a")).as("found under its id: not written twice").isEqualTo(1);
    assertThat(store.value("likes", "b")).as("written again under the same id").isEqualTo(1);
    assertThat(store.committedIds).contains(lost.flush().id().toString());
    assertThat(replicated.history()).containsSubsequence(Phase.SETTLED, Phase.REPLICATING, Phase.ATTEMPTING,
      Phase.SETTLED, Phase.REPLICATING);

    advance(2 * POLL_MS);
    assertThat(replicated.phase()).as("the promoted server has no standby: nothing to wait for").isEqualTo(Phase.RELEASED);
    assertThat(lost.phase()).isEqualTo(Phase.RELEASED);
    assertThat(journal).contains("settled " + replicated.flush().id(), "settled " + lost.flush().id());
  }

  @Test
  @DisplayName("a flush a journal replay carried over, found committed, is held as well; written again after the first poll it is found committed, never voided or split")
  void replayedFlushHeld() {
    store.sources.put("old-0", 0L);
    Flush flush = new Flush(FlushId.formed("old-0", 1), List.of(new FlushRow("likes", "a", (short) 1, 1),
      new FlushRow("likes", "b", (short) 1, 1)));
    assertThat(on(() -> writer.run(FlushJob.replayed(flush, true, 0, 0))).result()).isTrue();
    assertThat(store.value("likes", "a")).isEqualTo(1);
    int voids = store.voids.size();
    advance(POLL_MS);
    assertThat(store.voids).as("the first poll's check finds it committed: no void").hasSize(voids);
    store.standbysFlushed = store.walPosition;
    advance(2 * POLL_MS);
    assertThat(journal).contains("settled " + flush.id());
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(store.value("likes", "b")).isEqualTo(1);
    assertThat(store.commits).isEqualTo(1);
  }

  @Test
  @DisplayName("a standby that stops streaming is waited for: fewer standbys than were seen release nothing")
  void missingStandbyHolds() {
    FlushJob job = committed("a");
    advance(2 * POLL_MS);
    store.standbys = 0;
    store.standbysFlushed = 0;
    advance(5 * POLL_MS);
    assertThat(job.phase()).as("the missing standby may be the one promoted").isEqualTo(Phase.REPLICATING);
    store.standbys = 1;
    store.standbysFlushed = store.walPosition;
    advance(POLL_MS);
    assertThat(job.phase()).isEqualTo(Phase.RELEASED);
  }

  @Test
  @DisplayName("a standby lagging past database.replicationLagMax stops intake with 503 replication_lag and readiness, releasing nothing, until it catches up")
  void lagBound() {
    GatewayState state = new GatewayState();
    GatewayConfig config = GatewayConfig.fromJson(new JsonObject()
      .put("database", new JsonObject().put("kind", "postgres").put("keepUntilReplicated", true)
        .put("replicationLagMax", "1s"))
      .put("batching", new JsonObject().put("maxDelay", "1ms"))
      .put("limits", new JsonObject().put("requestTimeout", "10s"))
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4))));
    Coalescer coalescer = on(() -> {
      Coalescer made = new Coalescer(vertx, store, config, state, 0, () -> 0, timers::nanoTime, null,
        timers::currentTimeMillis, FlushSources.TICK_MS, timers);
      made.start();
      return made;
    });
    Ack first = on(() -> coalescer.add(new Increment(new CounterKey("likes", "a"), 1), true));
    advance(1);
    assertThat(first.future().succeeded()).as("200 at its commit").isTrue();

    advance(1_100);
    assertThat(on(coalescer::heldForReplicas)).isEqualTo(1);
    assertThatThrownBy(() -> on(() -> coalescer.add(new Increment(new CounterKey("likes", "b"), 1), true)))
      .isInstanceOfSatisfying(ApiError.class, error -> {
        assertThat(error.status()).isEqualTo(503);
        assertThat(error.code()).isEqualTo("replication_lag");
      });
    assertThatThrownBy(() -> on(() -> coalescer.accept(new Increment(new CounterKey("likes", "b"), 1))))
      .as("accepted increments alike").isInstanceOf(ApiError.class);
    assertThat(state.isReady()).as("readiness 503 while the standby lags").isFalse();

    store.standbysFlushed = store.walPosition;
    advance(POLL_MS);
    assertThat(on(coalescer::heldForReplicas)).isZero();
    assertThat(state.isReady()).as("ready again once the standby caught up").isTrue();
    Ack second = on(() -> coalescer.add(new Increment(new CounterKey("likes", "b"), 1), true));
    advance(1);
    assertThat(second.future().succeeded()).isTrue();
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(store.value("likes", "b")).isEqualTo(1);
  }
}
