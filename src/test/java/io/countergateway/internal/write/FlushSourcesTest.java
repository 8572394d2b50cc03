package io.countergateway.internal.write;

import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.internal.store.FlushSourceRow;
import io.countergateway.internal.store.FlushSourceStatements;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.TestBounds;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one owner of a flush source's life, on scripted source rows and a scripted journal force: when a row is made,
 * where a flush of a closed or vanished source goes, when a row may be deleted, and the fence's advance beside the
 * source's own attempts. Time is a clock the test moves; ticks are called by hand.
 */
@DisplayName("Flush sources")
class FlushSourcesTest {
  private static final long HEARTBEAT_MS = 60_000;

  private Vertx vertx;
  private Context loop;
  private final AtomicLong now = new AtomicLong(1_000_000);
  /** Rows as the database holds them: source to fence. */
  private final Map<String, Long> rows = new HashMap<>();
  private final Map<String, Set<FlushId>> committedIds = new HashMap<>();
  private final List<String> registered = new ArrayList<>();
  private final List<String> deleted = new ArrayList<>();
  /** Each fence raise sent, as "source fence"; it answers when the test completes {@link #advanceAnswer}. */
  private final List<String> advances = new ArrayList<>();
  private Promise<Boolean> advanceAnswer;
  /** Each delete of settled ids sent; it answers when the test completes {@link #deleteAnswer}. */
  private final List<List<String>> deletions = new ArrayList<>();
  private Promise<Void> deleteAnswer;
  private boolean registerFails;
  /** What the journal's force answers; a test that holds it completes it itself. */
  private Future<Void> forceAnswer = Future.succeededFuture();
  private int forces;

  private final FlushSourceStatements statements = new FlushSourceStatements() {
    @Override
    public Future<Void> registerSource(String source) {
      registered.add(source);
      if (registerFails) {
        return Future.failedFuture(new IllegalStateException("connection refused"));
      }
      rows.putIfAbsent(source, 0L);
      return Future.succeededFuture();
    }

    @Override
    public Future<Boolean> raiseFence(String source, long fence) {
      advances.add(source + " " + fence);
      advanceAnswer = Promise.promise();
      return advanceAnswer.future();
    }

    @Override
    public Future<Void> deleteSettledIds(List<String> ids) {
      deletions.add(List.copyOf(ids));
      deleteAnswer = Promise.promise();
      return deleteAnswer.future();
    }

    @Override
    public Future<FlushSourceRow> sourceRow(String source) {
      Long fence = rows.get(source);
      return Future.succeededFuture(new FlushSourceRow(fence,
        fence != null && fence == FlushSourceRow.CLOSED ? committedIds.getOrDefault(source, Set.of()) : Set.of()));
    }

    @Override
    public Future<Void> deleteSource(String source) {
      deleted.add(source);
      rows.remove(source);
      return Future.succeededFuture();
    }
  };

  private final FlushLog log = new FlushLog() {
    @Override
    public Future<Void> formed(Flush flush, List<CounterKey> zeroKeys) {
      return Future.succeededFuture();
    }

    @Override
    public Future<Void> replaced(Flush parent, List<Flush> children) {
      return Future.succeededFuture();
    }

    @Override
    public Future<Void> beforeSend(FlushId id) {
      return Future.succeededFuture();
    }

    @Override
    public void notSent(FlushId id) {
    }

    @Override
    public void settled(FlushId formed) {
    }

    @Override
    public Future<Void> force() {
      forces++;
      return forceAnswer;
    }

    @Override
    public boolean failed() {
      return false;
    }
  };

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(TestBounds.millis(10), TimeUnit.MILLISECONDS);
  }

  private FlushSources sources() {
    return on(() -> new FlushSources(vertx, statements, log, 0, HEARTBEAT_MS, now::get, TimeUnit.HOURS.toMillis(1)));
  }

  private <T> T on(Callable<T> work) {
    return EventLoop.call(loop, work);
  }

  private <T> T await(Callable<Future<T>> work) {
    Future<T> future = on(work);
    try {
      return future.toCompletionStage().toCompletableFuture().get(TestBounds.millis(10), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static Flush flush(FlushId id) {
    return new Flush(id, List.of(new FlushRow("likes", "a", (short) 0, 1)));
  }

  /** A flush of the live source, its row made, attempted once with {@code outcome}. */
  private Flush attempted(FlushSources sources, FlushJob.Outcome outcome) {
    Flush flush = flush(on(sources::nextId));
    await(() -> sources.registered(flush.id()));
    await(() -> sources.beforeAttempt(flush));
    on(() -> {
      sources.attemptEnded(flush, outcome);
      return null;
    });
    return flush;
  }

  private FlushSources.Route route(FlushSources sources, Flush flush) {
    return await(() -> sources.route(flush.id()));
  }

  @Test
  @DisplayName("a live source's row is made before its first flush is recorded or attempted, once, and again after a failure")
  void rowMadeOnce() {
    FlushSources sources = sources();
    FlushId first = on(sources::nextId);
    registerFails = true;
    assertThat(on(() -> sources.registered(first)).failed()).isTrue();
    registerFails = false;
    await(() -> sources.registered(first));
    FlushId second = on(sources::nextId);
    await(() -> sources.registered(second));
    assertThat(registered).containsExactly(first.source(), first.source());
    assertThat(rows).containsOnlyKeys(first.source());
  }

  @Test
  @DisplayName("a closed source: flushes whose ids it holds counted, the others go on under new ids of a fresh live source; the closed row goes once they are settled and forced")
  void closedSourceGoesOnUnderAFreshSource() {
    FlushSources sources = sources();
    Flush committed = attempted(sources, FlushJob.Outcome.SENT_ANSWER_LOST);
    Flush notCommitted = attempted(sources, FlushJob.Outcome.SENT_ANSWER_LOST);
    String closed = committed.id().source();
    rows.put(closed, FlushSourceRow.CLOSED);
    committedIds.put(closed, Set.of(committed.id(), notCommitted.id().half(0)));

    await(() -> sources.found(closed));
    assertThat(route(sources, committed)).isEqualTo(FlushSources.Route.COMMITTED);
    assertThat(route(sources, flush(notCommitted.id().half(0)))).as("a committed half")
      .isEqualTo(FlushSources.Route.COMMITTED);
    assertThat(route(sources, notCommitted)).isEqualTo(FlushSources.Route.NOT_COMMITTED);
    FlushId movedOn = on(sources::nextId);
    assertThat(movedOn.source()).as("its new id, and those of flushes formed from now on").isNotEqualTo(closed)
      .endsWith("-0").isEqualTo(on(sources::liveSource));
    on(() -> {
      sources.settled(committed.id());
      return null;
    });
    assertThat(deleted).as("a flush of it is open").isEmpty();
    on(() -> {
      sources.settled(notCommitted.id());
      sources.settled(movedOn);
      return null;
    });
    assertThat(deleted).containsExactly(closed);
  }

  @Test
  @DisplayName("a live source that vanished: each of its flushes is routed as gone (its job decides what that means), and a fresh live source takes the flushes formed from now on")
  void vanishedLiveSource() {
    FlushSources sources = sources();
    Flush ambiguous = attempted(sources, FlushJob.Outcome.SENT_ANSWER_LOST);
    Flush failed = attempted(sources, FlushJob.Outcome.REFUSED);
    rows.remove(ambiguous.id().source());
    await(() -> sources.found(ambiguous.id().source()));
    assertThat(route(sources, ambiguous)).isEqualTo(FlushSources.Route.GONE);
    assertThat(route(sources, failed)).isEqualTo(FlushSources.Route.GONE);
    assertThat(on(sources::nextId).source()).isEqualTo(on(sources::liveSource)).isNotEqualTo(failed.id().source());
  }

  @Test
  @DisplayName("a replayed flush of an earlier run's source that vanished is routed as gone, and the source's row is never made again")
  void vanishedInheritedSource() {
    FlushSources sources = sources();
    Flush replayed = flush(FlushId.formed("old-0", 7));
    on(() -> {
      sources.inherit(replayed.id());
      return null;
    });
    await(() -> sources.registered(replayed.id()));
    assertThat(registered).as("an earlier run's row is never created").isEmpty();
    await(() -> sources.found("old-0"));
    assertThat(route(sources, replayed)).isEqualTo(FlushSources.Route.GONE);
  }

  @Test
  @DisplayName("an earlier run's source is deleted once its replayed flushes are settled and the journal forced that, not before")
  void inheritedSourceRetiresAfterTheForce() {
    FlushSources sources = sources();
    rows.put("old-0", 3L);
    Promise<Void> force = Promise.promise();
    forceAnswer = force.future();
    on(() -> {
      sources.inherit(FlushId.formed("old-0", 3));
      sources.inherit(FlushId.formed("old-0", 4));
      sources.settled(FlushId.formed("old-0", 3));
      return null;
    });
    assertThat(forces).as("one replayed flush still open").isZero();
    on(() -> {
      sources.settled(FlushId.formed("old-0", 4));
      return null;
    });
    assertThat(forces).isEqualTo(1);
    assertThat(deleted).as("the settled records are not forced yet").isEmpty();
    on(() -> force.tryComplete());
    assertThat(deleted).containsExactly("old-0");
  }

  @Test
  @DisplayName("a graceful stop deletes a live source with nothing open once the journal forced; a failed force keeps it")
  void retireNeedsTheForce() {
    FlushSources sources = sources();
    Flush flush = attempted(sources, FlushJob.Outcome.COMMITTED);
    on(() -> {
      sources.settled(flush.id());
      return null;
    });
    forceAnswer = Future.failedFuture(new IllegalStateException("fsync failed"));
    await(sources::retire);
    assertThat(deleted).as("the journal could not force its records").isEmpty();

    FlushSources next = sources();
    Flush settled = attempted(next, FlushJob.Outcome.COMMITTED);
    Flush open = attempted(next, FlushJob.Outcome.SENT_ANSWER_LOST);
    on(() -> {
      next.settled(settled.id());
      return null;
    });
    forceAnswer = Future.succeededFuture();
    await(next::retire);
    assertThat(deleted).as("a flush of it is still open").isEmpty();
    assertThat(open.id().source()).isEqualTo(settled.id().source());
  }

  private void tick(FlushSources sources) {
    on(() -> {
      sources.tick();
      return null;
    });
  }

  @Test
  @DisplayName("an advance waits for the source's attempts in flight, and an attempt that wants to go meanwhile waits for the advance")
  void advanceAndAttemptsNeverOverlap() {
    FlushSources sources = sources();
    Flush first = attempted(sources, FlushJob.Outcome.COMMITTED);
    on(() -> {
      sources.settled(first.id());
      return null;
    });
    Flush second = flush(on(sources::nextId));
    await(() -> sources.beforeAttempt(second));
    tick(sources);
    assertThat(advances).as("the second is in flight").isEmpty();

    Flush third = flush(on(sources::nextId));
    Future<Void> next = on(() -> sources.beforeAttempt(third));
    on(() -> {
      sources.attemptEnded(second, FlushJob.Outcome.COMMITTED);
      sources.settled(second.id());
      return null;
    });
    String source = first.id().source();
    assertThat(advances).as("sent once nothing is in flight, past the flushes settled by then")
      .containsExactly(source + " 1");
    assertThat(next.isComplete()).as("the third waits for the fence's raise").isFalse();
    on(() -> advanceAnswer.tryComplete(true));
    await(() -> next);
    assertThat(deletions).as("the settled ids go once the fence is raised").containsExactly(List.of(source + ":0"));
    assertThat(next.isComplete()).as("the third did not wait for their delete").isTrue();
    on(() -> deleteAnswer.tryComplete());
    tick(sources);
    assertThat(advances).as("nothing settled since, and the heartbeat is not due").hasSize(1);
  }

  @Test
  @DisplayName("an idle source beats its heart when the clock says it is due, not before; a failed advance lets waiting attempts go")
  void heartbeatOnTheClock() {
    FlushSources sources = sources();
    Flush flush = attempted(sources, FlushJob.Outcome.COMMITTED);
    on(() -> {
      sources.settled(flush.id());
      return null;
    });
    tick(sources);
    assertThat(advances).hasSize(1);
    Flush next = flush(on(sources::nextId));
    Future<Void> waiting = on(() -> sources.beforeAttempt(next));
    on(() -> advanceAnswer.tryFail(new IllegalStateException("connection lost")));
    await(() -> waiting);
    on(() -> {
      sources.attemptEnded(next, FlushJob.Outcome.REFUSED);
      return null;
    });
    now.addAndGet(HEARTBEAT_MS - 1);
    tick(sources);
    assertThat(advances).as("the failed advance's ids go with the next one, due because they are settled").hasSize(2);
    assertThat(deletions).as("nothing deleted before a raise").isEmpty();
    on(() -> advanceAnswer.tryComplete(true));
    assertThat(deletions).containsExactly(List.of(flush.id().toString()));
    on(() -> deleteAnswer.tryComplete());
    tick(sources);
    assertThat(advances).as("nothing to delete, the heartbeat was just sent").hasSize(2);
    now.addAndGet(HEARTBEAT_MS);
    tick(sources);
    assertThat(advances).as("a heartbeat").hasSize(3);
    on(() -> advanceAnswer.tryComplete(true));
    assertThat(deletions).as("a heartbeat deletes nothing").hasSize(1);
  }

  @Test
  @DisplayName("settled ids whose delete failed go with the source's next advance")
  void failedDeleteGoesWithTheNextAdvance() {
    FlushSources sources = sources();
    Flush flush = attempted(sources, FlushJob.Outcome.COMMITTED);
    on(() -> {
      sources.settled(flush.id());
      return null;
    });
    tick(sources);
    on(() -> advanceAnswer.tryComplete(true));
    on(() -> deleteAnswer.tryFail(new IllegalStateException("connection lost")));
    tick(sources);
    assertThat(advances).as("due again: the ids are settled and still in the table").hasSize(2);
    on(() -> advanceAnswer.tryComplete(true));
    assertThat(deletions).containsExactly(List.of(flush.id().toString()), List.of(flush.id().toString()));
  }

  @Test
  @DisplayName("an advance that finds its live source closed reads the row and mints a fresh live source")
  void closedWhileIdle() {
    FlushSources sources = sources();
    Flush flush = attempted(sources, FlushJob.Outcome.COMMITTED);
    on(() -> {
      sources.settled(flush.id());
      return null;
    });
    rows.put(flush.id().source(), FlushSourceRow.CLOSED);
    tick(sources);
    on(() -> advanceAnswer.tryComplete(false));
    assertThat(on(sources::liveSource)).isNotEqualTo(flush.id().source());
    assertThat(deletions).as("a closed source keeps its ids").isEmpty();
  }

  @Test
  @DisplayName("a source's advances are considered every tick on their own once its row is made, and none after a graceful stop, not even for a source kept with a flush open")
  void ticksFromTheFirstRowToTheStop() {
    VirtualTimers timers = new VirtualTimers(now.get());
    FlushSources sources = on(() -> new FlushSources(statements, log, 0, HEARTBEAT_MS, timers::currentTimeMillis,
      FlushSources.TICK_MS, timers));
    advance(timers, 2 * HEARTBEAT_MS);
    assertThat(advances).as("no row made yet").isEmpty();

    Flush settled = attempted(sources, FlushJob.Outcome.COMMITTED);
    Flush open = attempted(sources, FlushJob.Outcome.SENT_ANSWER_LOST);
    on(() -> {
      sources.settled(settled.id());
      return null;
    });
    advance(timers, FlushSources.TICK_MS);
    String source = settled.id().source();
    assertThat(advances).as("the settled id is due at the next tick").containsExactly(source + " 1");
    on(() -> advanceAnswer.tryComplete(true));
    on(() -> deleteAnswer.tryComplete());

    await(sources::retire);
    assertThat(deleted).as("a flush of it is open: kept for the prune").isEmpty();
    advance(timers, 3 * HEARTBEAT_MS);
    assertThat(advances).as("no heartbeat after the stop keeps it from being closed").hasSize(1);
    assertThat(open.id().source()).isEqualTo(source);
  }

  private void advance(VirtualTimers timers, long ms) {
    on(() -> {
      timers.advance(ms);
      return null;
    });
  }
}
