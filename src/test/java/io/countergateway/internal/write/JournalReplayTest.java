package io.countergateway.internal.write;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.Eventually;
import io.countergateway.testing.ScriptedStore;
import io.countergateway.internal.write.journal.Journal;
import io.countergateway.internal.write.journal.JournalFiles;
import io.countergateway.internal.write.journal.JournalTarget;
import io.countergateway.testing.TestBounds;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The coalescer with a journal, on a scripted store: a "crash" is the journal closed without deleting and the
 * gateway's Vert.x closed mid-flight; a restart is a new Vert.x, journal and coalescer on the same directory and
 * store. Every accepted increment must be in the table exactly once afterwards, whatever the flush was doing.
 */
@DisplayName("The coalescer's journal across a crash, on a scripted store")
class JournalReplayTest {
  private static final int INCREMENTS = 500;

  @TempDir
  Path dir;
  private final ScriptedStore store = new ScriptedStore();
  private final List<Vertx> started = new ArrayList<>();

  /**
   * One run of the gateway's write path: its Vert.x, loop, journal and coalescer, every timer of them (the coalescer's
   * delay, the writer's backoff, the journal's release) on virtual time that moves only when the test says.
   */
  private final class Run {
    final Vertx vertx = Vertx.vertx();
    final Context loop = vertx.getOrCreateContext();
    final VirtualTimers timers = new VirtualTimers();
    final GatewayState state = new GatewayState();
    final Journal journal;
    final Coalescer coalescer;

    Run() {
      this(GatewayConfig.fromJson(new JsonObject()
        .put("batching", new JsonObject().put("maxDelay", "1ms").put("maxInFlight", 1).put("retryBackoff", "1ms").put("retryBackoffMax", "5ms"))
        .put("journal", new JsonObject().put("dir", dir.toString()))
        .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4)))));
    }

    Run(GatewayConfig config) {
      started.add(vertx);
      journal = await(on(() -> Journal.open(vertx, timers, config.getJournal(), JournalFiles.disk(),
        JournalTarget.tableOnly(config.getDatabase().getTable()), 0, 1, state::writerShedding)));
      coalescer = on(() -> {
        Coalescer c = new Coalescer(vertx, store, config, state, 0, () -> 0, timers::nanoTime, journal,
          timers::currentTimeMillis, FlushSources.TICK_MS, timers);
        c.restore(journal.recovered());
        c.start();
        return c;
      });
    }

    /**
     * Moves this run's time to its next timer at each look until {@code condition} (read on the loop) holds: what the
     * timers start finishes on the journal's threads, so each look also waits for them (up to {@link Eventually#WITHIN}).
     */
    void until(String what, java.util.function.BooleanSupplier condition) {
      Eventually.until(what, () -> on(() -> {
        if (condition.getAsBoolean()) {
          return true;
        }
        timers.advance(Math.max(1, Math.min(timers.nextDue(), timers.currentTimeMillis() + 60_000)
          - timers.currentTimeMillis()));
        return condition.getAsBoolean();
      }));
    }

    <T> T on(Callable<T> work) {
      return EventLoop.call(loop, work);
    }

    void acceptAll(String prefix) {
      List<Future<Void>> answers = on(() -> {
        List<Future<Void>> all = new ArrayList<>();
        for (int i = 0; i < INCREMENTS; i++) {
          all.add(coalescer.accept(new Increment(new CounterKey("likes", prefix + (i % 50)), 1)));
        }
        return all;
      });
      await(Future.all(answers));
      // the coalescer's delay passes: a flush is attempted before whatever comes next (a crash, say)
      until("a flush attempted", () -> !store.attempts.isEmpty());
    }

    /** kill -9 as far as the journal can tell: what was written stays, nothing more is written or deleted. */
    void crash() {
      await(on(() -> journal.close(false)));
      await(vertx.close());
    }
  }

  @AfterEach
  void tearDown() {
    started.forEach(vertx -> vertx.close().toCompletionStage().toCompletableFuture().orTimeout(TestBounds.millis(10), TimeUnit.MILLISECONDS)
      .exceptionally(e -> null).join());
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(TestBounds.millis(20), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private long total(String prefix) {
    return store.table.entrySet().stream().filter(e -> e.getKey().id().startsWith(prefix))
      .mapToLong(e -> e.getValue().longValueExact()).sum();
  }

  /** Moves the run's time until the table holds {@code expected} for the prefix (read on the run's loop, which writes it). */
  private void awaitTotal(Run run, String prefix, long expected) {
    run.until("a total of " + expected + " for " + prefix, () -> total(prefix) >= expected);
    assertThat(run.on(() -> total(prefix))).isEqualTo(expected);
  }

  @Test
  @DisplayName("accepted during an outage, crashed, restarted on a healthy database: each counted once")
  void outageThenCrash() {
    for (int i = 0; i < 10_000; i++) {
      store.then(new ScriptedStore.Fail(ScriptedStore.connectionLost()));
    }
    Run first = new Run();
    first.acceptAll("o");
    first.crash();
    store.clearScript();
    Run second = new Run();
    awaitTotal(second, "o", INCREMENTS);
    assertThat(store.commits).isEqualTo(store.committedIds.size());
    second.crash();
  }

  @Test
  @DisplayName("a flush that committed but whose answer was lost before the crash is not written twice by the replay")
  void committedButUnanswered() {
    store.then(new ScriptedStore.CommitThenLoseAnswer());
    for (int i = 0; i < 10_000; i++) {
      store.then(new ScriptedStore.Fail(ScriptedStore.connectionLost()));
    }
    Run first = new Run();
    first.acceptAll("c");
    // the crash comes after the first attempt committed (its answer lost), whenever the answers came
    first.until("the first attempt committed", () -> total("c") > 0);
    first.crash();
    store.clearScript();
    assertThat(total("c")).as("committed by the first attempt").isPositive();
    awaitTotal(new Run(), "c", INCREMENTS);
  }

  @Test
  @DisplayName("a flush in flight at the crash that commits afterwards (a late copy) is not written twice by the replay")
  void lateCopyAfterTheCrash() {
    store.then(new ScriptedStore.Hold());
    Run first = new Run();
    first.acceptAll("h");
    first.crash();
    Run second = new Run();
    // the held first attempt reaches the database now, before or after the replay's attempt under the same id
    second.on(() -> {
      try {
        return store.release();
      } catch (java.util.concurrent.RejectedExecutionException firstRunIsGone) {
        return true; // it committed; its answer had nowhere to go
      }
    });
    awaitTotal(second, "h", INCREMENTS);
    assertThat(store.commits).isEqualTo(store.committedIds.size());
  }

  @Test
  @DisplayName("a flush split around a refused row, its first half committed and the second in flight at the crash: "
    + "the replay resolves the halves by their ids, so the first half is not written again")
  void splitThenCrash() {
    // the first attempt (the whole flush) is refused for row z; later attempts take z
    store.refuseRows(row -> row.id().equals("z") && store.attempts.size() == 1);
    store.then(new ScriptedStore.Commit(), new ScriptedStore.Commit(), new ScriptedStore.Hold());
    Run first = new Run();
    List<Future<Void>> answers = first.on(() -> List.of(
      first.coalescer.accept(new Increment(new CounterKey("likes", "a"), 1)),
      first.coalescer.accept(new Increment(new CounterKey("likes", "z"), 1))));
    await(Future.all(answers));
    Future<Void> held = first.on(() -> store.whenHeld(1));
    first.until("the third attempt held", held::isComplete);
    assertThat(store.attempts).hasSize(3);
    first.crash();
    Run second = new Run();
    awaitTotal(second, "a", 1);
    awaitTotal(second, "z", 1);
    second.on(() -> {
      try {
        return store.release(); // the late copy of the second half
      } catch (java.util.concurrent.RejectedExecutionException firstRunIsGone) {
        return true;
      }
    });
    assertThat(second.on(() -> total("a") + total("z"))).isEqualTo(2);
    assertThat(store.commits).isEqualTo(store.committedIds.size());
  }

  @Test
  @DisplayName("a drain that finds the database failing leaves the journal within a second or so, and the restart writes it")
  void drainLeavesTheJournal() {
    for (int i = 0; i < 10_000; i++) {
      store.then(new ScriptedStore.Fail(ScriptedStore.connectionLost()));
    }
    Run first = new Run();
    first.acceptAll("g");
    long started = first.on(first.timers::currentTimeMillis);
    Future<Void> drained = first.on(first.coalescer::drain);
    // the writer must have failed for a second on end before the drain gives up on the database
    first.on(() -> {
      first.timers.advance(Coalescer.LEAVE_TO_JOURNAL_AFTER_FAILING_MS);
      return null;
    });
    first.until("drained", drained::isComplete);
    await(drained);
    assertThat(first.on(first.timers::currentTimeMillis) - started).as("drain ms").isLessThan(2_000);
    assertThat(first.coalescer.leftInJournal()).isTrue();
    await(first.on(first.coalescer::close));
    await(first.vertx.close());
    store.clearScript();
    awaitTotal(new Run(), "g", INCREMENTS);
  }

  @Test
  @DisplayName("an accepted increment that forms a flush at once (maxKeys 1) is answered once the frame holding both is written")
  void flushFormedByTheIncrementItself() {
    GatewayConfig config = GatewayConfig.fromJson(new JsonObject()
      .put("batching", new JsonObject().put("maxKeys", 1))
      .put("journal", new JsonObject().put("dir", dir.toString()))
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4))));
    store.then(new ScriptedStore.Hold());
    Run run = new Run(config);
    Future<Void> answered = run.on(() -> run.coalescer.accept(new Increment(new CounterKey("likes", "alone"), 1)));
    assertThat(answered.toCompletionStage().toCompletableFuture()).succeedsWithin(java.time.Duration.ofSeconds(5));
  }

  @Test
  @DisplayName("a journal past maxBytes refuses with 503 journal_full and takes nothing")
  void journalFull() {
    for (int i = 0; i < 100_000; i++) {
      store.then(new ScriptedStore.Fail(ScriptedStore.connectionLost()));
    }
    GatewayConfig config = GatewayConfig.fromJson(new JsonObject()
      .put("batching", new JsonObject().put("maxDelay", "1ms").put("retryBackoff", "1ms").put("retryBackoffMax", "5ms"))
      .put("journal", new JsonObject().put("dir", dir.toString()).put("segmentBytes", 65_536).put("maxBytes", 131_072))
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4))));
    Run run = new Run(config);
    GatewayState state = run.state;
    Context loop = run.loop;
    Coalescer coalescer = run.coalescer;
    io.micrometer.core.instrument.simple.SimpleMeterRegistry registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    run.on(() -> {
      coalescer.registerMetrics(registry, 0);
      return null;
    });
    int[] taken = {0};
    ApiError refused = null;
    for (int round = 0; round < 1_000 && refused == null; round++) {
      // as requests arrive: a hundred per event-loop turn, a turn a millisecond, each turn's answers awaited
      List<Future<Void>> answers = new ArrayList<>();
      refused = EventLoop.call(loop, () -> {
        run.timers.advance(1); // a millisecond between turns
        for (int i = 0; i < 100; i++) {
          try {
            answers.add(coalescer.accept(new Increment(new CounterKey("likes", "full" + taken[0]), 1)));
            taken[0]++;
          } catch (ApiError e) {
            return e;
          }
        }
        return null;
      });
      await(Future.all(answers));
    }
    assertThat(refused).isNotNull();
    assertThat(refused.code()).isEqualTo("journal_full");
    assertThat(state.isReady()).as("ready while the journal is full").isFalse();
    assertThat(registry.get("gateway.increments.taken").functionCounter().count()).as("taken").isEqualTo(taken[0]);
    assertThat(registry.get("gateway.increments.refused").functionCounter().count()).as("refused").isEqualTo(1);
  }

  /** Every source row of the scripted database deleted, as a prune does a retention after closing a dead source. */
  private void pruneEverySource() {
    new ArrayList<>(store.sources.keySet()).forEach(store::dropSource);
  }

  @Test
  @DisplayName("refused at connect for the whole outage, crashed, its flush source pruned and deleted, restarted: every accepted increment counted once")
  void neverSentAfterTheSourceWasPruned() {
    for (int i = 0; i < 10_000; i++) {
      store.then(new ScriptedStore.FailBeforeSending(ScriptedStore.connectionRefused()));
    }
    Run first = new Run();
    first.acceptAll("n");
    first.crash();
    assertThat(store.sent).as("no statement left the first run").isEmpty();
    pruneEverySource();
    store.clearScript();
    Run second = new Run();
    awaitTotal(second, "n", INCREMENTS);
    assertThat(store.commits).isEqualTo(store.committedIds.size());
    second.crash();
  }

  @Test
  @DisplayName("sent and its answer lost at the crash, its source pruned and deleted: the replay never writes it again (outcome unknown), nothing is counted twice")
  void sentAndLostAfterTheSourceWasPruned() {
    for (int i = 0; i < 10_000; i++) {
      store.then(new ScriptedStore.Fail(ScriptedStore.connectionLost()));
    }
    Run first = new Run();
    first.acceptAll("s");
    // the crash comes once a flush was sent (and its answer lost), whenever the first flush was formed
    first.until("a statement sent by the first run", () -> !store.sent.isEmpty());
    first.crash();
    pruneEverySource();
    store.clearScript();
    Run second = new Run();
    second.until("the replay done: ready", second.state::isReady);
    long counted = second.on(() -> total("s"));
    assertThat(counted).as("what the replay wrote: the increments in no flush").isLessThan(INCREMENTS);
    assertThat(store.commits).isEqualTo(store.committedIds.size());
    second.crash();
  }

  /** The journal's segment files in the run's directory. */
  private List<String> segmentFiles() {
    try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(dir)) {
      return files.map(file -> file.getFileName().toString()).filter(name -> name.endsWith(".seg")).toList();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  @DisplayName("a drain on a failing database leaves the journal only once the writer has failed a whole second, answering every waiting request then")
  void drainLeavesAfterASecondOfFailing() {
    for (int i = 0; i < 10_000; i++) {
      store.then(new ScriptedStore.Fail(ScriptedStore.connectionLost()));
    }
    Run run = new Run();
    // a waiting request's flush is formed at once and fails from now on; what comes after it stays pending
    Ack inFlight = run.on(() -> run.coalescer.add(new Increment(new CounterKey("likes", "w"), 1), true));
    assertThat(run.state.writersHealthy()).as("failing from now").isFalse();
    run.on(() -> run.coalescer.accept(new Increment(new CounterKey("likes", "a"), 1)));
    Ack pending = run.on(() -> run.coalescer.add(new Increment(new CounterKey("likes", "p"), 1), true));
    Future<Void> drained = run.on(run.coalescer::drain);

    run.on(() -> {
      run.timers.advance(Coalescer.LEAVE_TO_JOURNAL_AFTER_FAILING_MS - 1);
      return null;
    });
    assertThat(run.on(drained::isComplete)).as("failing for less than a second").isFalse();
    assertThat(run.on(() -> inFlight.future().isComplete() || pending.future().isComplete())).isFalse();
    run.on(() -> {
      run.timers.advance(1);
      return null;
    });

    assertThat(run.on(drained::isComplete)).isTrue();
    assertThat(run.on(run.coalescer::leftInJournal)).isTrue();
    assertThat(run.on(() -> ((ApiError) pending.future().cause()).code())).isEqualTo("timeout_withdrawn");
    assertThat(run.on(() -> ((ApiError) inFlight.future().cause()).status())).isEqualTo(504);
    await(run.on(run.coalescer::close));
    assertThat(segmentFiles()).as("kept for the restart's replay").isNotEmpty();
  }

  @Test
  @DisplayName("a drain that wrote everything deletes the journal's segments at the close: nothing is left to replay")
  void drainedJournalIsDeleted() {
    Run run = new Run();
    run.acceptAll("d");
    Future<Void> drained = run.on(run.coalescer::drain);
    run.until("drained", drained::isComplete);
    assertThat(run.on(run.coalescer::leftInJournal)).isFalse();
    assertThat(segmentFiles()).isNotEmpty();
    await(run.on(run.coalescer::close));

    assertThat(total("d")).isEqualTo(INCREMENTS);
    assertThat(segmentFiles()).isEmpty();
  }
}
