package io.countergateway.internal.write;

import io.countergateway.config.BatchingOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.internal.write.FlushJob.Attempt;
import io.countergateway.internal.write.FlushJob.Outcome;
import io.countergateway.internal.write.FlushJob.Phase;
import io.countergateway.internal.write.FlushJob.Step;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.ScriptedStore;
import io.countergateway.testing.ScriptedStore.Commit;
import io.countergateway.testing.ScriptedStore.CommitThenLoseAnswer;
import io.countergateway.testing.ScriptedStore.Fail;
import io.countergateway.testing.ScriptedStore.FailBeforeSending;
import io.countergateway.testing.ScriptedStore.Hold;
import io.countergateway.testing.ScriptedStore.Meanwhile;
import io.countergateway.testing.ScriptedStore.ReleaseThenFail;
import io.countergateway.testing.TestBounds;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A flush's whole life on virtual time (src/DESIGN.md "Flush jobs"): every phase and every attempt outcome, driven by
 * a scripted store that fails on cue and a journal that records (or refuses) each step. Nothing waits for real time:
 * a backoff or a backstop passes when the test moves the timers.
 */
@DisplayName("A flush job, from formed to released")
class FlushJobTest {
  /** batching.writeTimeout plus the writer's backstop margin: an answer not back by then counts as lost. */
  private static final long BACKSTOP_MS = 100 + 1_000;
  /** batching.retryBackoff = retryBackoffMax: every backoff is between half of it and all of it. */
  private static final long BACKOFF_MS = 100;
  private static final long POSITION = 42;

  private Vertx vertx;
  private Context loop;
  private ScriptedStore store;
  private VirtualTimers timers;
  private FlushSources sources;
  private FlushWriter writer;
  /** What readiness hears of the writer. */
  private final GatewayState health = new GatewayState();
  private final RecordingFlushLog log = new RecordingFlushLog();
  /** Every record the journal was asked for, in order, as "kind id". */
  private final List<String> journal = log.records;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
    store = new ScriptedStore();
    timers = new VirtualTimers();
    BatchingOptions options = GatewayConfig.fromJson(new JsonObject()
      .put("batching", new JsonObject().put("writeTimeout", "100ms").put("retryBackoff", BACKOFF_MS + "ms")
        .put("retryBackoffMax", BACKOFF_MS + "ms"))
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 2)))).getBatching();
    on(() -> {
      sources = new FlushSources(store, log, 0, 60_000, timers::currentTimeMillis, FlushSources.TICK_MS, timers);
      // a retry moves every row to slot 0, as a new round of the coalescer's lane would move it to another slot
      writer = new FlushWriter(vertx, store, sources, log, options, health,
        flush -> flush.reslotted(row -> row.withSlot((short) 0)), timers::nanoTime, timers);
      return null;
    });
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(TestBounds.millis(10), TimeUnit.MILLISECONDS);
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

  private static Ack ack(String id) {
    return new Ack(new CounterKey("likes", id), 1, Long.MAX_VALUE);
  }

  private static Flush rows(FlushId id, String... ids) {
    return new Flush(id, Arrays.stream(ids).map(row -> new FlushRow("likes", row, (short) 1, 1)).toList());
  }

  /** A flush of the live source holding journaled increments, as the coalescer forms it, with a request per row. */
  private FlushJob formed(String... ids) {
    Flush flush = rows(on(sources::nextId), ids);
    return FlushJob.formed(flush, Arrays.stream(ids).map(FlushJobTest::ack).toList(), List.of(), POSITION, 0);
  }

  /** A flush of an earlier run's source, as a journal replay hands it over; the source's row is there. */
  private FlushJob replayed(boolean mayHaveBeenSent, String... ids) {
    store.sources.put("old-0", 0L);
    return FlushJob.replayed(rows(FlushId.formed("old-0", 1), ids), mayHaveBeenSent, 0, 0);
  }

  private Future<Boolean> run(FlushJob job) {
    return on(() -> writer.run(job));
  }

  private static Ack ackOf(FlushJob job, String counter) {
    return job.acks().stream().filter(ack -> ack.key.id().equals(counter)).findFirst().orElseThrow();
  }

  private static ApiError failure(Ack ack) {
    assertThat(ack.future().failed()).as("answered with an error").isTrue();
    return (ApiError) ack.future().cause();
  }

  private static List<Outcome> outcomes(FlushJob job) {
    return job.attempts().stream().map(Attempt::outcome).toList();
  }

  @Test
  @DisplayName("a flush that commits at once: formed, recorded, attempting, settled, released; one attempt committed, its request answered, the journal told, its journal position let go")
  void commitsAtOnce() {
    FlushJob job = formed("a");
    assertThat(ackOf(job, "a").state()).as("a timeout now answers 504, no longer withdraws it")
      .isEqualTo(Ack.State.IN_FLIGHT);
    Future<Boolean> released = run(job);

    assertThat(released.result()).isTrue();
    assertThat(job.history()).containsExactly(Phase.FORMED, Phase.RECORDED, Phase.ATTEMPTING, Phase.SETTLED,
      Phase.RELEASED);
    assertThat(job.attempts()).containsExactly(new Attempt(job.flush().id(), Step.WRITE, Outcome.COMMITTED));
    assertThat(ackOf(job, "a").future().succeeded()).isTrue();
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(journal).containsExactly("formed " + job.flush().id(), "settled " + job.flush().id());
    assertThat(job.journalPosition()).as("released").isEqualTo(-1);
    assertThat(store.registered).as("its source's row made before the attempt").hasSize(1);
  }

  @Test
  @DisplayName("its source's row cannot be made: the job backs off while formed, and nothing is recorded or attempted until the row is there")
  void sourceRowFirst() {
    store.registrationsRefused = 1;
    FlushJob job = formed("a");
    Future<Boolean> released = run(job);
    assertThat(job.phase()).isEqualTo(Phase.BACKING_OFF);
    assertThat(journal).as("no journal record before the source's row").isEmpty();
    assertThat(store.attempts).isEmpty();

    advance(BACKOFF_MS);
    assertThat(released.result()).isTrue();
    assertThat(job.history()).containsExactly(Phase.FORMED, Phase.BACKING_OFF, Phase.FORMED, Phase.RECORDED,
      Phase.ATTEMPTING, Phase.SETTLED, Phase.RELEASED);
    assertThat(store.value("likes", "a")).isEqualTo(1);
  }

  @Test
  @DisplayName("an outage backs off on the clock: nothing is tried again before the backoff is over, then the same id commits once")
  void outageBacksOffOnTheClock() {
    store.then(new Fail(ScriptedStore.connectionLost()));
    FlushJob job = formed("a");
    Future<Boolean> released = run(job);
    assertThat(job.phase()).isEqualTo(Phase.BACKING_OFF);
    assertThat(outcomes(job)).containsExactly(Outcome.SENT_ANSWER_LOST);

    advance(BACKOFF_MS / 2 - 1);
    assertThat(store.attempts).as("the backoff is not over").hasSize(1);
    advance(BACKOFF_MS / 2 + 1);

    assertThat(released.result()).isTrue();
    assertThat(store.attempts).extracting(Flush::id).containsExactly(job.flush().id(), job.flush().id());
    assertThat(job.history()).containsExactly(Phase.FORMED, Phase.RECORDED, Phase.ATTEMPTING, Phase.BACKING_OFF,
      Phase.ATTEMPTING, Phase.SETTLED, Phase.RELEASED);
    assertThat(outcomes(job)).containsExactly(Outcome.SENT_ANSWER_LOST, Outcome.COMMITTED);
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(ackOf(job, "a").future().succeeded()).isTrue();
  }

  @Test
  @DisplayName("an attempt whose answer never comes is given up at the backstop, on the clock, and counts as sent with its answer lost")
  void backstopOnTheClock() {
    store.then(new Hold());
    FlushJob job = formed("a");
    Future<Boolean> released = run(job);
    advance(BACKSTOP_MS - 1);
    assertThat(job.phase()).as("still waiting for the answer").isEqualTo(Phase.ATTEMPTING);
    advance(1);
    assertThat(job.phase()).isEqualTo(Phase.BACKING_OFF);
    assertThat(outcomes(job)).containsExactly(Outcome.SENT_ANSWER_LOST);

    advance(BACKOFF_MS);
    assertThat(released.result()).isTrue();
    assertThat(on(store::release)).as("the late first attempt reaches the database").isTrue();
    assertThat(store.value("likes", "a")).as("its id makes one of the two a no-op").isEqualTo(1);
  }

  @Test
  @DisplayName("a flush none of whose attempts was sent (connection refused), its source gone meanwhile, is written again under the live source and answered 200")
  void neverSentIsRewritten() {
    FlushJob job = formed("a");
    FlushId own = job.flush().id();
    store.then(new FailBeforeSending(ScriptedStore.connectionRefused()),
      new FailBeforeSending(ScriptedStore.connectionRefused()),
      new Meanwhile(() -> store.dropSource(own.source()), new Commit()));
    Future<Boolean> released = run(job);
    advance(BACKOFF_MS);
    advance(BACKOFF_MS);

    assertThat(released.result()).isTrue();
    FlushId live = job.wentOnAs().get(own);
    assertThat(live.source()).as("the live source").isEqualTo(on(sources::liveSource)).isNotEqualTo(own.source());
    assertThat(job.attempts()).containsExactly(new Attempt(own, Step.WRITE, Outcome.NOT_SENT),
      new Attempt(own, Step.WRITE, Outcome.NOT_SENT), new Attempt(own, Step.WRITE, Outcome.REFUSED),
      new Attempt(live, Step.WRITE, Outcome.COMMITTED));
    assertThat(journal).containsExactly("formed " + own, "notSent " + own, "notSent " + own,
      "replaced " + own + " by [" + live + "]", "settled " + own);
    assertThat(store.committedIds).containsExactly(live.toString());
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(ackOf(job, "a").future().succeeded()).isTrue();
    assertThat(on(writer::unknownFlushes)).isZero();
  }

  @Test
  @DisplayName("a flush sent whose answer was lost, then refused at connect, its source gone meanwhile, is outcome unknown: 504, never written again, counted once")
  void sentAndLostIsOutcomeUnknown() {
    SimpleMeterRegistry registry = metered();
    FlushJob job = formed("a");
    FlushId own = job.flush().id();
    store.then(new CommitThenLoseAnswer(), new FailBeforeSending(ScriptedStore.connectionRefused()),
      new Meanwhile(() -> store.dropSource(own.source()), new Commit()));
    Future<Boolean> released = run(job);
    advance(BACKOFF_MS);
    advance(BACKOFF_MS);

    assertThat(released.result()).as("answered: nothing more to do with it").isTrue();
    assertThat(outcomes(job)).containsExactly(Outcome.SENT_ANSWER_LOST, Outcome.NOT_SENT, Outcome.REFUSED);
    assertThat(job.wentOnAs()).as("never written again").isEmpty();
    assertThat(failure(ackOf(job, "a")).status()).isEqualTo(504);
    assertThat(failure(ackOf(job, "a")).code()).isEqualTo("outcome_unknown");
    assertThat(store.value("likes", "a")).as("the lost answer's commit, once").isEqualTo(1);
    assertThat(on(writer::unknownFlushes)).isEqualTo(1);
    assertThat(on(writer::isFailing)).as("nothing more to retry").isFalse();
    assertThat(registry.get("gateway.flush.outcome.unknown").functionCounter().count()).isEqualTo(1);
  }

  @Test
  @DisplayName("a source closed while its flushes were retried: the one whose id it holds is answered as committed, the other goes on once under the live source, always under the same new id")
  void closedSourceResolvedByIds() {
    FlushJob landed = formed("landed");
    FlushJob lost = formed("lost");
    String source = landed.flush().id().source();
    store.then(new CommitThenLoseAnswer(), new Fail(ScriptedStore.connectionLost()));
    Future<Boolean> one = run(landed);
    Future<Boolean> two = run(lost);
    store.then(new Meanwhile(() -> store.closeSource(source), new Commit()));
    advance(BACKOFF_MS);

    assertThat(one.result()).isTrue();
    assertThat(two.result()).isTrue();
    assertThat(ackOf(landed, "landed").future().succeeded()).isTrue();
    assertThat(ackOf(lost, "lost").future().succeeded()).isTrue();
    assertThat(landed.wentOnAs()).as("its id was among the closed source's").isEmpty();
    assertThat(lost.wentOnAs()).containsOnlyKeys(lost.flush().id());
    assertThat(store.value("likes", "landed")).isEqualTo(1);
    assertThat(store.value("likes", "lost")).isEqualTo(1);
    assertThat(store.committedIds).contains(lost.wentOnAs().get(lost.flush().id()).toString());
  }

  @Test
  @DisplayName("a refused value: the id is voided, the flush split, the refused row answered 422 and the other written; a late copy of the first attempt then writes nothing")
  void refusedValueVoidsAndSplits() {
    // the first attempt (slot 1) is held past the backstop; its retry on slot 0 overflows "full"
    store.then(new Hold()).refuseRows(row -> row.id().equals("full") && row.slot() == 0);
    FlushJob job = formed("full", "other");
    FlushId own = job.flush().id();
    Future<Boolean> released = run(job);
    advance(BACKSTOP_MS);
    advance(BACKOFF_MS);

    assertThat(released.result()).isTrue();
    assertThat(job.splits()).containsExactly(own);
    assertThat(job.voids()).containsExactly(own, own.half(0));
    assertThat(job.attempts()).containsExactly(new Attempt(own, Step.WRITE, Outcome.SENT_ANSWER_LOST),
      new Attempt(own, Step.WRITE, Outcome.REFUSED), new Attempt(own, Step.VOID, Outcome.COMMITTED),
      new Attempt(own.half(0), Step.WRITE, Outcome.REFUSED), new Attempt(own.half(0), Step.VOID, Outcome.COMMITTED),
      new Attempt(own.half(1), Step.WRITE, Outcome.COMMITTED));
    assertThat(failure(ackOf(job, "full")).status()).isEqualTo(422);
    assertThat(ackOf(job, "other").future().succeeded()).isTrue();
    assertThat(journal).contains("replaced " + own + " by [" + own.half(0) + ", " + own.half(1) + "]");

    // now the held first attempt reaches the store, under the original id, on slot 1 where nothing overflows
    assertThat(on(store::release)).isTrue();
    assertThat(store.value("likes", "other")).as("the answered 200, counted once").isEqualTo(1);
    assertThat(store.value("likes", "full")).as("the answered 422, not counted").isZero();
  }

  /** Registers the writer's meters on a fresh registry, as a coalescer does at start. */
  private SimpleMeterRegistry metered() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    on(() -> {
      writer.registerMetrics(registry, Tags.empty());
      return null;
    });
    return registry;
  }

  @Test
  @DisplayName("an outage: readiness hears the writer failing, for as long as it fails, until the same id commits; the retry is counted, and the flush's duration runs from its forming to its settling")
  void outageReportedAndMeasured() {
    SimpleMeterRegistry registry = metered();
    advance(1_000);
    store.then(new Fail(ScriptedStore.connectionLost()));
    Flush flush = rows(on(sources::nextId), "a");
    FlushJob job = FlushJob.formed(flush, List.of(ack("a")), List.of(), POSITION, timers.nanoTime());
    Future<Boolean> released = run(job);
    assertThat(on(writer::isFailing)).isTrue();
    assertThat(health.failingWriters()).isEqualTo(1);
    advance(30);
    assertThat(on(writer::failingForMs)).as("failing since the attempt at 1,000 ms").isEqualTo(30);

    advance(BACKOFF_MS);
    assertThat(released.result()).isTrue();
    assertThat(on(writer::isFailing)).isFalse();
    assertThat(on(writer::failingForMs)).isZero();
    assertThat(health.failingWriters()).isZero();
    assertThat(registry.get("gateway.flush.retries").counter().count()).isEqualTo(1);
    Timer duration = registry.get("gateway.flush.duration").timer();
    assertThat(duration.count()).isEqualTo(1);
    assertThat(duration.totalTime(TimeUnit.MILLISECONDS)).as("the backoff, from forming to settling")
      .isBetween((double) BACKOFF_MS / 2, (double) BACKOFF_MS);
    assertThat(registry.get("gateway.flush.refused.rows").counter().count()).isZero();
  }

  @Test
  @DisplayName("two writers meeting on a row lock twice is no outage for readiness; the third time in a row it is, and the same id then commits once")
  void lockConflictsTurnFailingOnTheThird() {
    store.then(new Fail(ScriptedStore.sqlState("40P01")), new Fail(ScriptedStore.sqlState("40P01")),
      new Fail(ScriptedStore.sqlState("40P01")));
    FlushJob job = formed("a");
    Future<Boolean> released = run(job);
    assertThat(outcomes(job)).as("a deadlock fails the statement whole").containsExactly(Outcome.REFUSED);
    assertThat(on(writer::isFailing)).isFalse();
    advanceUntilAttempts(2);
    assertThat(on(writer::isFailing)).isFalse();
    assertThat(health.failingWriters()).isZero();
    advanceUntilAttempts(3);
    assertThat(on(writer::isFailing)).isTrue();
    assertThat(health.failingWriters()).isEqualTo(1);
    advanceUntilAttempts(4);

    assertThat(released.result()).isTrue();
    assertThat(outcomes(job)).containsExactly(Outcome.REFUSED, Outcome.REFUSED, Outcome.REFUSED, Outcome.COMMITTED);
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(on(writer::isFailing)).isFalse();
  }

  /** Moves time a millisecond at a time until the store has seen {@code count} write attempts (a second at most). */
  private void advanceUntilAttempts(int count) {
    for (int ms = 0; ms < 1_000 && store.attempts.size() < count; ms++) {
      advance(1);
    }
    assertThat(store.attempts).hasSize(count);
  }

  @Test
  @DisplayName("the flushes in flight halve on a lost write; a refused value says nothing of the database's load")
  void inFlightLimitHearsOnlyTheLoad() {
    InFlightLimit limit = new InFlightLimit(8, true, timers::nanoTime);
    on(() -> {
      writer.measuredBy(limit);
      return null;
    });
    int before = limit.current();
    store.refuseRows(row -> row.id().equals("full"));
    FlushJob refused = formed("full");
    assertThat(run(refused).result()).isTrue();
    assertThat(failure(ackOf(refused, "full")).status()).isEqualTo(422);
    assertThat(limit.current()).isEqualTo(before);

    store.then(new Fail(ScriptedStore.connectionLost()));
    FlushJob lost = formed("c");
    Future<Boolean> released = run(lost);
    assertThat(limit.current()).isEqualTo(Math.max(1, before / 2));
    advance(BACKOFF_MS);
    assertThat(released.result()).isTrue();
    assertThat(store.value("likes", "c")).isEqualTo(1);
  }

  @Test
  @DisplayName("a void whose connection is lost is retried after a backoff under the same id; then the flush is split, its refused row answered 422 and the other written once")
  void lostVoidIsRetried() {
    SimpleMeterRegistry registry = metered();
    store.voidsLost = 1;
    store.refuseRows(row -> row.id().equals("full"));
    FlushJob job = formed("full", "other");
    FlushId own = job.flush().id();
    Future<Boolean> released = run(job);
    assertThat(job.phase()).isEqualTo(Phase.BACKING_OFF);
    assertThat(job.splits()).as("nothing split before the void").isEmpty();
    assertThat(on(writer::isFailing)).isTrue();
    advance(BACKOFF_MS);

    assertThat(released.result()).isTrue();
    assertThat(store.voids).containsExactly(own.toString(), own.toString(), own.half(0).toString());
    assertThat(job.attempts()).containsExactly(new Attempt(own, Step.WRITE, Outcome.REFUSED),
      new Attempt(own, Step.VOID, Outcome.SENT_ANSWER_LOST), new Attempt(own, Step.VOID, Outcome.COMMITTED),
      new Attempt(own.half(0), Step.WRITE, Outcome.REFUSED), new Attempt(own.half(0), Step.VOID, Outcome.COMMITTED),
      new Attempt(own.half(1), Step.WRITE, Outcome.COMMITTED));
    assertThat(failure(ackOf(job, "full")).status()).isEqualTo(422);
    assertThat(failure(ackOf(job, "full")).code()).isEqualTo("counter_overflow");
    assertThat(ackOf(job, "other").future().succeeded()).isTrue();
    assertThat(store.value("likes", "other")).isEqualTo(1);
    assertThat(registry.get("gateway.flush.retries").counter().count()).isEqualTo(1);
    assertThat(registry.get("gateway.flush.refused.rows").counter().count()).isEqualTo(1);
    assertThat(on(writer::isFailing)).isFalse();
  }

  @Test
  @DisplayName("a source closed between a refused write and its void: the flush goes on whole under the live source, where its id is voided and the row answered 422")
  void sourceClosedBeforeTheVoid() {
    FlushJob job = formed("full");
    FlushId own = job.flush().id();
    boolean[] pruned = {false};
    store.refuseRows(row -> {
      if (!pruned[0]) {
        pruned[0] = true;
        store.closeSource(own.source()); // the write was checked against the fence already: it fails on its value
      }
      return row.id().equals("full");
    });
    assertThat(run(job).result()).isTrue();

    FlushId live = job.wentOnAs().get(own);
    assertThat(live.source()).isNotEqualTo(own.source());
    assertThat(job.attempts()).containsExactly(new Attempt(own, Step.WRITE, Outcome.REFUSED),
      new Attempt(own, Step.VOID, Outcome.REFUSED), new Attempt(live, Step.WRITE, Outcome.REFUSED),
      new Attempt(live, Step.VOID, Outcome.COMMITTED));
    assertThat(store.voidedIds).containsExactly(live.toString());
    assertThat(journal).contains("replaced " + own + " by [" + live + "]");
    assertThat(failure(ackOf(job, "full")).status()).isEqualTo(422);
    assertThat(store.value("likes", "full")).isZero();
  }

  @Test
  @DisplayName("a value refused for another reason than an overflow: the id is voided and the row answered 500 write_failed, counted as a refused row")
  void otherRefusedValueIs500() {
    SimpleMeterRegistry registry = metered();
    store.then(new Fail(ScriptedStore.sqlState("22P02")));
    FlushJob job = formed("a");
    assertThat(run(job).result()).isTrue();
    assertThat(failure(ackOf(job, "a")).status()).isEqualTo(500);
    assertThat(failure(ackOf(job, "a")).code()).isEqualTo("write_failed");
    assertThat(store.voidedIds).containsExactly(job.flush().id().toString());
    assertThat(store.value("likes", "a")).isZero();
    assertThat(registry.get("gateway.flush.refused.rows").counter().count()).isEqualTo(1);
    assertThat(registry.get("gateway.flush.retries").counter().count()).as("a refused value is no outage").isZero();
    assertThat(on(writer::isFailing)).isFalse();
  }

  @Test
  @DisplayName("the journal cannot record that a statement may leave: nothing is sent, the job is left to the replay and its request answered 504, and its duration is not measured")
  void journalRefusesBeforeSend() {
    SimpleMeterRegistry registry = metered();
    log.refusesBeforeSend = id -> true;
    FlushJob job = formed("a");
    assertThat(run(job).result()).isFalse();
    assertThat(job.phase()).isEqualTo(Phase.LEFT_TO_REPLAY);
    assertThat(store.sent).isEmpty();
    assertThat(store.value("likes", "a")).isZero();
    assertThat(failure(ackOf(job, "a")).status()).isEqualTo(504);
    assertThat(failure(ackOf(job, "a")).code()).isEqualTo("outcome_unknown");
    assertThat(journal).as("never settled: the replay writes it").doesNotContain("settled " + job.flush().id());
    assertThat(job.journalPosition()).isEqualTo(POSITION);
    assertThat(registry.get("gateway.flush.duration").timer().count()).isZero();
  }

  @Test
  @DisplayName("a split whose first half cannot be recorded as sent: the second half is never attempted, the job is left to the replay and both requests answered 504")
  void firstHalfLeftToReplay() {
    store.refuseRows(row -> row.id().equals("full"));
    FlushJob job = formed("full", "other");
    FlushId own = job.flush().id();
    log.refusesBeforeSend = id -> id.equals(own.half(0));
    assertThat(run(job).result()).isFalse();

    assertThat(job.phase()).isEqualTo(Phase.LEFT_TO_REPLAY);
    assertThat(store.attempts).extracting(Flush::id).containsExactly(own, own.half(0));
    assertThat(failure(ackOf(job, "full")).status()).isEqualTo(504);
    assertThat(failure(ackOf(job, "other")).status()).isEqualTo(504);
    assertThat(store.value("likes", "other")).isZero();
  }

  @Test
  @DisplayName("a closed source's row that cannot be read is read again after a backoff; then the flush goes on once under the live source")
  void closedSourceReadAgain() {
    FlushJob job = formed("a");
    FlushId own = job.flush().id();
    store.sourceRowReadsLost = 1;
    store.then(new Meanwhile(() -> store.closeSource(own.source()), new Commit()));
    Future<Boolean> released = run(job);
    assertThat(job.phase()).isEqualTo(Phase.BACKING_OFF);
    assertThat(on(writer::isFailing)).isTrue();
    advance(BACKOFF_MS);

    assertThat(released.result()).isTrue();
    assertThat(ackOf(job, "a").future().succeeded()).isTrue();
    assertThat(store.committedIds).containsExactly(job.wentOnAs().get(own).toString());
    assertThat(store.value("likes", "a")).isEqualTo(1);
  }

  @Test
  @DisplayName("the live source's row cannot be made when a flush goes on under it: the attempt backs off, then commits once under the live source")
  void liveSourceRowRetried() {
    FlushJob job = formed("a");
    FlushId own = job.flush().id();
    store.then(new Meanwhile(() -> {
      store.dropSource(own.source());
      store.registrationsRefused = 1;
    }, new Commit()));
    Future<Boolean> released = run(job);
    assertThat(job.phase()).isEqualTo(Phase.BACKING_OFF);
    FlushId live = job.wentOnAs().get(own);
    assertThat(store.registered).doesNotContain(live.source());
    advance(BACKOFF_MS);

    assertThat(released.result()).isTrue();
    assertThat(store.registered).containsExactly(own.source(), live.source());
    assertThat(store.committedIds).containsExactly(live.toString());
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(ackOf(job, "a").future().succeeded()).isTrue();
  }

  @Test
  @DisplayName("a flush goes on under the live source in the journal only once that source's row is made: a restart never finds a journaled id of a source that never had a row, which it would have to read as pruned and its flush as outcome unknown")
  void wentOnRecordedOnlyUnderAMadeRow() {
    FlushJob job = formed("a");
    FlushId own = job.flush().id();
    store.then(new Meanwhile(() -> {
      store.closeSource(own.source());
      store.registrationsRefused = 1;
    }, new Commit()));
    Future<Boolean> released = run(job);
    FlushId live = job.wentOnAs().get(own);
    assertThat(store.registered).doesNotContain(live.source());
    assertThat(journal).as("nothing names %s before its row is made", live).noneMatch(record -> record.contains(live.toString()));
    advance(BACKOFF_MS);

    assertThat(released.result()).isTrue();
    assertThat(journal).contains("replaced " + own + " by [" + live + "]");
    assertThat(store.committedIds).containsExactly(live.toString());
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(ackOf(job, "a").future().succeeded()).isTrue();
  }

  @Test
  @DisplayName("a flush found committed under its closed source after an outage: answered 200, and readiness hears the writer healthy again")
  void committedFoundAfterAnOutage() {
    FlushJob job = formed("a");
    String source = job.flush().id().source();
    store.then(new CommitThenLoseAnswer(), new Meanwhile(() -> store.closeSource(source), new Commit()));
    Future<Boolean> released = run(job);
    assertThat(on(writer::isFailing)).isTrue();
    advance(BACKOFF_MS);

    assertThat(released.result()).isTrue();
    assertThat(ackOf(job, "a").future().succeeded()).isTrue();
    assertThat(job.wentOnAs()).isEmpty();
    assertThat(store.value("likes", "a")).isEqualTo(1);
    assertThat(on(writer::isFailing)).isFalse();
    assertThat(health.failingWriters()).isZero();
  }

  @Test
  @DisplayName("a single refused row whose void lost its connection: answered 422 once the void is retried, and readiness hears the writer healthy again")
  void singleRowLostVoid() {
    store.voidsLost = 1;
    store.refuseRows(row -> row.id().equals("full"));
    FlushJob job = formed("full");
    Future<Boolean> released = run(job);
    assertThat(on(writer::isFailing)).isTrue();
    advance(BACKOFF_MS);

    assertThat(released.result()).isTrue();
    assertThat(failure(ackOf(job, "full")).status()).isEqualTo(422);
    assertThat(store.voidedIds).containsExactly(job.flush().id().toString());
    assertThat(on(writer::isFailing)).isFalse();
    assertThat(health.failingWriters()).isZero();
  }

  @Test
  @DisplayName("a store that answers on a thread of its own: the flush's requests are answered on the writer's event loop all the same")
  void answeredOnTheLoop() throws Exception {
    Thread loopThread = on(Thread::currentThread);
    store.then(new Hold());
    FlushJob job = formed("a");
    Future<Boolean> released = run(job);
    Thread[] answeredOn = {null};
    ackOf(job, "a").future().onComplete(answer -> answeredOn[0] = Thread.currentThread());
    assertThat(store.release()).as("released from the test's thread").isTrue();

    assertThat(released.toCompletionStage().toCompletableFuture().get(TestBounds.millis(10), TimeUnit.MILLISECONDS))
      .isTrue();
    assertThat(ackOf(job, "a").future().succeeded()).isTrue();
    assertThat(answeredOn[0]).isSameAs(loopThread);
  }

  @Test
  @DisplayName("each retry of one step waits about twice as long as the one before: the source's row, its reading, the live source's row, the void")
  void retriesBackOffFurther() {
    BatchingOptions growing = GatewayConfig.fromJson(new JsonObject()
      .put("batching", new JsonObject().put("writeTimeout", "100ms").put("retryBackoff", "100ms")
        .put("retryBackoffMax", "1s"))
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 2)))).getBatching();
    writer = on(() -> new FlushWriter(vertx, store, sources, log, growing, health, flush -> flush, timers::nanoTime,
      timers));
    // the second failure comes 50-100 ms in; the retry after it 100-200 ms later, never by 101 ms
    assertSecondRetryLater("its source's row", () -> store.registrationsRefused = 2, "a");
    assertSecondRetryLater("the void", () -> {
      store.voidsLost = 2;
      store.refuseRows(row -> row.id().equals("b"));
    }, "b");
    store.refuseRows(row -> false);
    assertSecondRetryLater("the closed source's row", () -> {
      store.sourceRowReadsLost = 2;
      String source = on(sources::liveSource);
      store.then(new Meanwhile(() -> store.closeSource(source), new Commit()));
    }, "c");
    assertSecondRetryLater("the live source's row", () -> {
      String source = on(sources::liveSource);
      store.then(new Meanwhile(() -> {
        store.dropSource(source);
        store.registrationsRefused = 2;
      }, new Commit()));
    }, "d");
  }

  private void assertSecondRetryLater(String step, Runnable failTwice, String counter) {
    FlushJob job = formed(counter);
    failTwice.run();
    Future<Boolean> released = run(job);
    advance(101);
    assertThat(job.phase()).as(step + ": the second backoff").isEqualTo(Phase.BACKING_OFF);
    assertThat(released.isComplete()).isFalse();
    advance(200);
    assertThat(released.result()).as(step).isTrue();
    assertThat(job.acks()).allSatisfy(ack -> assertThat(ack.future().isComplete()).isTrue());
  }

  @Test
  @DisplayName("a source found gone is logged with how many of its flushes in flight were sent and lost their answer: those of that source only")
  void sourceGoneCountsItsLostFlushes() {
    Logger logger = (Logger) LoggerFactory.getLogger(FlushSources.class);
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    logger.addAppender(logged);
    try {
      // an earlier run's flush that may have been sent, in flight meanwhile: of another source
      store.then(new Hold(), new CommitThenLoseAnswer(), new FailBeforeSending(ScriptedStore.connectionRefused()));
      run(replayed(true, "old"));
      FlushJob lost = formed("lost");
      FlushJob unsent = formed("unsent");
      String source = lost.flush().id().source();
      run(lost);
      run(unsent);
      store.then(new Meanwhile(() -> store.dropSource(source), new Commit()));
      advance(BACKOFF_MS);

      assertThat(failure(ackOf(lost, "lost")).status()).isEqualTo(504);
      assertThat(ackOf(unsent, "unsent").future().succeeded()).isTrue();
      List<ILoggingEvent> gone = logged.list.stream().filter(event -> event.getKeyValuePairs() != null
        && event.getKeyValuePairs().stream().anyMatch(pair -> "flush_source_gone".equals(pair.value))).toList();
      assertThat(gone).hasSize(1);
      assertThat(gone.get(0).getKeyValuePairs()).filteredOn(pair -> pair.key.equals("flushes_outcome_unknown"))
        .extracting(pair -> pair.value).containsExactly(1L);
    } finally {
      logger.detachAppender(logged);
    }
  }

  @Test
  @DisplayName("a job released is handed to whoever lets its journal position go, once")
  void releasedJobsAreHandedOn() {
    List<FlushJob> released = new ArrayList<>();
    on(() -> {
      writer.onReleased(released::add);
      return null;
    });
    FlushJob job = formed("a");
    run(job);
    assertThat(released).containsExactly(job);
  }

  @Test
  @DisplayName("with keepUntilReplicated, a flush a late copy committed is held for the standbys; a stop then asks the primary no more and the flush stays to the journal")
  void heldForReplicasUntilStop() {
    on(() -> {
      writer.keepUntilReplicated(store::replicationPosition, 60_000, () -> { });
      return null;
    });
    FlushJob job = lateCopyBeforeTheVoid();
    assertThat(ackOf(job, "other").future().succeeded()).isTrue();
    assertThat(job.phase()).isEqualTo(Phase.REPLICATING);
    assertThat(on(writer::heldForReplicas)).isEqualTo(1);

    on(() -> {
      writer.stopReplicaPolls();
      return null;
    });
    int reads = store.positionReads;
    advance(10_000);
    assertThat(store.positionReads).as("no poll after the stop").isEqualTo(reads);
    assertThat(job.phase()).isEqualTo(Phase.REPLICATING);
    assertThat(journal).as("never settled: the next start writes it again by its id")
      .doesNotContain("settled " + job.flush().id());
  }

  @Test
  @DisplayName("a flush holding nothing journaled (commit requests only) is attempted without a journal record, and gives the journal its zero keys when it holds some")
  void journalRecordOnlyForJournaled() {
    FlushJob unjournaled = FlushJob.formed(rows(on(sources::nextId), "a"), List.of(ack("a")), List.of(), -1, 0);
    assertThat(run(unjournaled).result()).isTrue();
    assertThat(journal).noneMatch(record -> record.startsWith("formed"));
    assertThat(unjournaled.journalPosition()).isEqualTo(-1);

    List<CounterKey> zero = List.of(new CounterKey("likes", "cancelled"));
    FlushJob journaled = FlushJob.formed(rows(on(sources::nextId), "b"), List.of(ack("b")), zero, POSITION, 0);
    assertThat(run(journaled).result()).isTrue();
    assertThat(log.zeroKeys).containsExactly(zero);
  }

  @Test
  @DisplayName("a flush found committed on its retry (the first attempt's answer lost) is answered 200 and never voided")
  void foundCommittedIsNotVoided() {
    store.then(new CommitThenLoseAnswer());
    FlushJob job = formed("a");
    Future<Boolean> released = run(job);
    advance(BACKOFF_MS);
    assertThat(released.result()).isTrue();
    assertThat(outcomes(job)).containsExactly(Outcome.SENT_ANSWER_LOST, Outcome.COMMITTED);
    assertThat(store.voids).isEmpty();
    assertThat(ackOf(job, "a").future().succeeded()).isTrue();
    assertThat(store.value("likes", "a")).isEqualTo(1);
  }

  @Test
  @DisplayName("a replayed flush, once settled, lets its earlier run's source go: the source's row is deleted")
  void replayedSourceDeletedOnceSettled() {
    FlushJob job = replayed(true, "a");
    assertThat(run(job).result()).isTrue();
    assertThat(store.deletedSources).containsExactly("old-0");
  }

  @Test
  @DisplayName("a flush written again after a failover hands over what it had committed and holds nothing until it is found again")
  void writtenAgainForgetsWhatItHad() {
    FlushJob job = formed("a");
    job.committedAs(job.flush());
    assertThat(job.writeAgain()).containsExactly(job.flush());
    assertThat(job.committed()).isEmpty();
    assertThat(job.writtenAgain()).isTrue();
  }

  @Test
  @DisplayName("a single refused row and a late copy of its first attempt: the 422 stays true")
  void refusedRowThenLateFirstAttempt() {
    store.then(new Hold()).refuseRows(row -> row.id().equals("full") && row.slot() == 0);
    FlushJob job = formed("full");
    run(job);
    advance(BACKSTOP_MS);
    advance(BACKOFF_MS);
    assertThat(failure(ackOf(job, "full")).status()).isEqualTo(422);
    assertThat(job.phase()).isEqualTo(Phase.RELEASED);

    assertThat(on(store::release)).isTrue();
    assertThat(store.value("likes", "full")).as("answered 422: not counted").isZero();
  }

  /** A flush of two rows whose held first attempt lands (on slot 1) right before its retry (on slot 0) is refused. */
  private FlushJob lateCopyBeforeTheVoid() {
    store.then(new Hold(), new ReleaseThenFail(ScriptedStore.sqlState("22003")));
    FlushJob job = formed("full", "other");
    run(job);
    advance(BACKSTOP_MS);
    advance(BACKOFF_MS);
    return job;
  }

  @Test
  @DisplayName("a late copy that committed the flush whole before the void: every request is answered as committed, counted once, nothing split")
  void lateCopyCommittedFirst() {
    FlushJob job = lateCopyBeforeTheVoid();

    assertThat(ackOf(job, "full").future().succeeded()).isTrue();
    assertThat(ackOf(job, "other").future().succeeded()).isTrue();
    assertThat(store.value("likes", "full") + store.value("likes", "other")).isEqualTo(2);
    assertThat(job.splits()).isEmpty();
    assertThat(job.voids()).as("the void found it committed").isEmpty();
    assertThat(job.attempts()).extracting(Attempt::step).containsExactly(Step.WRITE, Step.WRITE, Step.VOID);
  }

  @Test
  @DisplayName("the journal cannot record the flush: left to the replay, never attempted, its request answered 504, its journal position kept")
  void journalRefusesTheRecord() {
    log.refusesFormed = true;
    FlushJob job = formed("a");
    Future<Boolean> released = run(job);

    assertThat(released.result()).isFalse();
    assertThat(job.history()).containsExactly(Phase.FORMED, Phase.LEFT_TO_REPLAY);
    assertThat(store.attempts).isEmpty();
    assertThat(failure(ackOf(job, "a")).status()).isEqualTo(504);
    assertThat(job.journalPosition()).isEqualTo(POSITION);
    assertThat(journal).as("never settled: the replay resolves it").containsExactly("formed " + job.flush().id());
  }

  @Test
  @DisplayName("the journal had failed before the flush was formed: its request is answered 503 journal_unavailable, nothing is attempted")
  void journalFailedBefore() {
    log.failed = true;
    FlushJob job = formed("a");
    assertThat(run(job).result()).isFalse();
    assertThat(job.phase()).isEqualTo(Phase.LEFT_TO_REPLAY);
    assertThat(failure(ackOf(job, "a")).status()).isEqualTo(503);
    assertThat(failure(ackOf(job, "a")).code()).isEqualTo("journal_unavailable");
    assertThat(store.attempts).isEmpty();
  }

  @Test
  @DisplayName("the journal cannot record a split's halves: nothing of them is attempted, the job is left to the replay and every request of it answered 504")
  void journalRefusesTheHalves() {
    log.refusesReplaced = true;
    store.refuseRows(row -> row.id().equals("full"));
    FlushJob job = formed("full", "other");
    assertThat(run(job).result()).isFalse();

    assertThat(job.phase()).isEqualTo(Phase.LEFT_TO_REPLAY);
    assertThat(job.voids()).containsExactly(job.flush().id());
    assertThat(store.attempts).as("no half attempted").hasSize(1);
    assertThat(failure(ackOf(job, "full")).status()).isEqualTo(504);
    assertThat(failure(ackOf(job, "other")).status()).isEqualTo(504);
    assertThat(job.journalPosition()).isEqualTo(POSITION);
  }

  @Test
  @DisplayName("a replayed flush found committed is not written again; one found voided (a split cut short by a crash) is split again under the same half ids")
  void replayedFlushes() {
    FlushJob committed = replayed(true, "a", "b");
    on(() -> store.write(committed.flush()));
    assertThat(run(committed).result()).isTrue();
    assertThat(committed.history()).startsWith(Phase.RECORDED);
    assertThat(store.committedIds).containsExactly("old-0:1");

    store.committedIds.clear();
    store.idTable.put("old-0:1", true);
    FlushJob voided = replayed(true, "a", "b");
    assertThat(run(voided).result()).isTrue();
    assertThat(store.committedIds).containsExactlyInAnyOrder("old-0:1.0", "old-0:1.1");
    assertThat(voided.splits()).containsExactly(voided.flush().id());
  }

  @Test
  @DisplayName("a replayed flush whose source vanished: written under the live source if the journal says it was never sent, outcome unknown if it may have been")
  void replayedFlushOfAGoneSource() {
    FlushJob neverSent = replayed(false, "a");
    store.dropSource("old-0");
    assertThat(run(neverSent).result()).isTrue();
    assertThat(neverSent.wentOnAs()).containsOnlyKeys(neverSent.flush().id());
    assertThat(store.value("likes", "a")).isEqualTo(1);

    FlushJob maybeSent = FlushJob.replayed(rows(FlushId.formed("old-1", 1), "b"), true, 0, 0);
    assertThat(run(maybeSent).result()).isTrue();
    assertThat(maybeSent.wentOnAs()).isEmpty();
    assertThat(store.value("likes", "b")).isZero();
    assertThat(on(writer::unknownFlushes)).isEqualTo(1);
  }

  @Test
  @DisplayName("every transition outside formed → recorded → attempting ⇄ backing off → settled → released (or left to the replay) throws")
  void illegalTransitionsThrow() {
    FlushJob job = FlushJob.formed(rows(FlushId.formed("s-0", 0), "a"), List.of(), List.of(), -1, 0);
    assertThatThrownBy(job::settled).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(job::attempting).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> job.attemptEnded(job.flush().id(), Step.WRITE, Outcome.COMMITTED))
      .as("no attempt before it is recorded").isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(job::backoffOver).isInstanceOf(IllegalStateException.class);

    job.backingOff();
    assertThatThrownBy(job::attempting).as("a backoff goes back where it came from").isInstanceOf(IllegalStateException.class);
    job.backoffOver();
    assertThat(job.phase()).isEqualTo(Phase.FORMED);
    job.recorded();
    assertThatThrownBy(job::recorded).isInstanceOf(IllegalStateException.class);
    job.attempting();
    job.attempting();
    assertThat(job.phase()).as("attempting again is staying").isEqualTo(Phase.ATTEMPTING);
    job.settled();
    assertThatThrownBy(job::attempting).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(job::leaveToReplay).isInstanceOf(IllegalStateException.class);
    on(() -> {
      job.release(FlushLog.NONE, sources);
      return null;
    });
    assertThatThrownBy(() -> on(() -> {
      job.release(FlushLog.NONE, sources);
      return null;
    })).isInstanceOf(IllegalStateException.class);

    FlushJob left = FlushJob.formed(rows(FlushId.formed("s-0", 1), "a"), List.of(), List.of(), 3, 0);
    left.leaveToReplay();
    assertThatThrownBy(left::recorded).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(left::settled).isInstanceOf(IllegalStateException.class);
    assertThat(left.journalPosition()).isEqualTo(3);
  }
}
