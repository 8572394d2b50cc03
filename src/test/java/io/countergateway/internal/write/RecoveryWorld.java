package io.countergateway.internal.write;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushSourceRow;
import io.countergateway.internal.store.KeyedStatements;
import io.countergateway.internal.store.KeyedWrites;
import io.countergateway.internal.store.VoidOutcome;
import io.countergateway.internal.store.WriteOutcome;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.Ledger;
import io.countergateway.testing.ScriptedStore;
import io.countergateway.internal.write.journal.FaultingFiles;
import io.countergateway.internal.write.journal.Journal;
import io.countergateway.testing.TestBounds;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.file.FileSystemOptions;
import io.vertx.core.metrics.MetricsOptions;
import io.vertx.core.spi.metrics.PoolMetrics;
import io.vertx.core.spi.metrics.VertxMetrics;
import io.vertx.core.json.JsonObject;

import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What outlives every run of the write path in a crash-point test: the database (a {@link ScriptedStore}), the
 * journal's directory, the wall clock, and the one {@link Ledger} of every request's answer. A {@link Run} is one
 * process: its own journal, flush sources, writer and coalescer, and its own virtual timers, which move only when the
 * harness moves them (no test waits for time); {@link Run#kill} is kill -9 (nothing more of it reaches the database or
 * the disk, and no request of it is answered any more). Every run of a property shares one {@link Machine}.
 */
final class RecoveryWorld {
  static final String TYPE = "likes";
  static final String TABLE = "slotted_counters";
  /**
   * Real time that bounds waiting for work (a journal's open, a loop's turn): only a failing test waits it out
   * ({@link TestBounds} scales it).
   */
  private static final long WORK_MILLIS = TestBounds.millis(20);
  /** Virtual time a replay or a drain may take before the harness calls it stuck (the write timeout is 2 s). */
  private static final long SETTLE_MS = 60_000;
  /** With no statement for this long on the run's clock, the workload is over and the run is killed. */
  private static final long QUIET_MS = 5;

  private static final Path DIR = Path.of("/journal");
  final ScriptedStore store = new ScriptedStore();
  private final Machine machine;
  private final GatewayConfig config;
  /** The journal's disk as the last run left it: in memory, with a page cache, crashes and faults. */
  FaultingFiles files = new FaultingFiles();
  final Ledger ledger;
  /** The wall clock where the last run left it: the next run's timers start there. */
  private long millis = 1_000_000_000L;

  RecoveryWorld(Machine machine, String label, String fsync, int maxInFlight) {
    this.machine = machine;
    this.config = config(fsync, maxInFlight);
    this.ledger = Ledger.named(label);
  }

  /**
   * The Vert.x every run of a property runs on (one event loop), and a count of the tasks on its worker threads (the
   * journals' writers and file workers), so that the harness knows when a run has nothing left to do but wait for its
   * timers: making a Vert.x per run was most of what a scenario cost.
   */
  static final class Machine implements AutoCloseable {
    /** Per worker pool: tasks submitted and not yet finished; a closed pool's are dropped (it runs none of them). */
    private final Map<Object, long[]> busy = new HashMap<>();
    private long submitted;
    // no file cache: a run reads no files through Vert.x
    final Vertx vertx = Vertx.builder()
      .with(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(2).setInternalBlockingPoolSize(2)
        .setMetricsOptions(new MetricsOptions().setEnabled(true))
        .setFileSystemOptions(new FileSystemOptions().setFileCachingEnabled(false).setClassPathResolvingEnabled(false)))
      .withMetrics(options -> new VertxMetrics() {
        @Override
        public PoolMetrics<?, ?> createPoolMetrics(String poolType, String poolName, int maxPoolSize) {
          return new WorkerCount();
        }
      })
      .build();
    final Context loop = vertx.getOrCreateContext();

    /** One pool's tasks: counted when submitted, until they end. */
    private final class WorkerCount implements PoolMetrics<Object, Object> {
      private final long[] tasks = new long[1];

      WorkerCount() {
        synchronized (Machine.this) {
          busy.put(this, tasks);
        }
      }

      @Override
      public Object enqueue() {
        synchronized (Machine.this) {
          submitted++;
          tasks[0]++;
        }
        return null;
      }

      @Override
      public void end(Object t) {
        synchronized (Machine.this) {
          tasks[0]--;
          Machine.this.notifyAll();
        }
      }

      @Override
      public void close() {
        synchronized (Machine.this) {
          busy.remove(this);
          Machine.this.notifyAll();
        }
      }
    }

    /** Every worker task submitted so far: a change means the loop gave the workers more to do. */
    synchronized long submitted() {
      return submitted;
    }

    /** Returns once no worker thread has a task (it ran, and its answer is queued on the loop). */
    synchronized void awaitWorkersIdle() {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WORK_MILLIS);
      while (busy.values().stream().anyMatch(tasks -> tasks[0] > 0)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("a journal's worker thread still busy after " + WORK_MILLIS + " ms");
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(this, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
    }

    @Override
    public void close() {
      await(vertx.close());
    }
  }

  private static GatewayConfig config(String fsync, int maxInFlight) {
    return GatewayConfig.fromJson(new JsonObject()
      .put("batching", new JsonObject().put("maxDelay", "1ms").put("maxKeys", 8).put("retryBackoff", "1ms")
        .put("retryBackoffMax", "4ms").put("writeTimeout", "2s").put("maxInFlight", maxInFlight))
      .put("limits", new JsonObject().put("requestTimeout", "60s"))
      .put("journal", new JsonObject().put("dir", DIR.toString()).put("fsync", fsync).put("segmentBytes", 64 * 1024)
        .put("maxBytes", 1024 * 1024))
      .put("namespaces", new JsonObject().put(TYPE, new JsonObject().put("slots", 4))));
  }

  /** The table's SUM per counter, as the ledger keys them. */
  Map<String, Long> sums() {
    return Ledger.sums(store.table);
  }

  Ledger.Verdict verdict() {
    return ledger.against(sums());
  }

  /** What a restart finds of the files after a crash now: what was durable, and of the rest what {@code survival} keeps. */
  void crash(FaultingFiles.Survival survival) {
    files = files.afterCrash(survival);
  }

  /**
   * The database as one run sees it: every statement goes to the world's store until the run is killed; the
   * {@code killAt}-th statement (from 1) reaches the database and the run dies before its answer (0: never).
   */
  static final class KillableStore implements CounterStore {
    private final ScriptedStore store;
    private final long killAt;
    private final CompletableFuture<Void> killed = new CompletableFuture<>();
    /** Runs on the loop as the kill statement reaches the database: the process dies there. */
    private Runnable onKill = () -> { };
    private long calls;

    KillableStore(ScriptedStore store, long killAt) {
      this.store = store;
      this.killAt = killAt;
    }

    long calls() {
      return calls;
    }

    private <T> Future<T> call(java.util.function.Supplier<Future<T>> statement) {
      if (killed.isDone()) {
        return Promise.<T>promise().future();
      }
      calls++;
      Future<T> answer = statement.get();
      if (calls == killAt) {
        killed.complete(null);
        onKill.run();
        return Promise.<T>promise().future();
      }
      return answer;
    }

    @Override
    public Future<WriteOutcome> write(Flush flush, java.util.function.Supplier<Future<Void>> beforeSend) {
      return call(() -> store.write(flush, beforeSend));
    }

    @Override
    public Future<VoidOutcome> voidFlush(Flush flush) {
      return call(() -> store.voidFlush(flush));
    }

    @Override
    public Future<Void> registerSource(String source) {
      return call(() -> store.registerSource(source));
    }

    @Override
    public Future<Boolean> raiseFence(String source, long fence) {
      return call(() -> store.raiseFence(source, fence));
    }

    @Override
    public Future<Void> deleteSettledIds(List<String> ids) {
      return call(() -> store.deleteSettledIds(ids));
    }

    @Override
    public Future<FlushSourceRow> sourceRow(String source) {
      return call(() -> store.sourceRow(source));
    }

    @Override
    public Future<Void> deleteSource(String source) {
      return call(() -> store.deleteSource(source));
    }

    @Override
    public Future<Void> createSchema() {
      return Future.succeededFuture();
    }

    @Override
    public Future<Void> checkSchema() {
      return Future.succeededFuture();
    }

    @Override
    public Future<Map<String, BigInteger>> sum(String type, List<String> ids) {
      return call(() -> store.sum(type, ids));
    }

    @Override
    public Future<Void> reset(CounterKey key) {
      return Future.failedFuture(new UnsupportedOperationException("reset"));
    }

    @Override
    public Future<Integer> pruneFlushIds(int olderThanSeconds) {
      return Future.succeededFuture(0);
    }

    @Override
    public Future<Void> ping() {
      return Future.succeededFuture();
    }

    @Override
    public Future<Void> close() {
      return Future.succeededFuture();
    }
  }

  /** Keyed requests are not part of these workloads. */
  private static final KeyedStatements NO_KEYS = new KeyedStatements() {
    @Override
    public Future<KeyedWrites.Outcome> write(KeyedWrites.Request request) {
      return Future.failedFuture(new UnsupportedOperationException("keyed requests"));
    }

    @Override
    public Future<Void> close() {
      return Future.succeededFuture();
    }
  };

  /** One run of the write path, as one gateway process would run it. */
  final class Run {
    final Vertx vertx = machine.vertx;
    final Context loop = machine.loop;
    /** Every timer of this run (coalescer, writer, flush sources, journal), on this run's clock; confined to the loop. */
    private final VirtualTimers timers = new VirtualTimers(millis);
    final KillableStore database;
    /** The journal's disk as this run sees it. */
    final FaultingFiles disk = files;
    /**
     * The run's ingest verticles, each with its own journal stream, coalescer and write path; all of them on the one
     * loop, so that their appends interleave as two event loops' would, and a crash point falls between any two of
     * their frames.
     */
    final List<Verticle> verticles = new ArrayList<>();
    /** The first verticle's (the only one of a run with one). */
    final Journal journal;
    final Coalescer coalescer;
    final WritePath writes;
    /** Requests sent and not answered yet: at a kill they are recorded as unanswered. */
    private final List<Sent> unanswered = new ArrayList<>();
    /** How it died (null while alive); written on the loop. */
    private volatile Death death;

    private record Sent(List<Increment> increments, AckMode ack) {
    }

    final GatewayConfig config = RecoveryWorld.this.config;

    /** One ingest verticle of the run: what one event loop of a gateway process runs. */
    final class Verticle {
      final Journal journal;
      final Coalescer coalescer;
      final WritePath writes;
      /** What readiness would be made of: here, whether the replay's flushes are settled. */
      private boolean replaying;

      Verticle(int index, Journal journal) {
        this.journal = journal;
        WriterHealth health = new WriterHealth() {
          @Override
          public void writerFailing(boolean failing) {
          }

          @Override
          public void writerShedding(boolean shedding) {
          }

          @Override
          public void writerReplaying(boolean nowReplaying) {
            replaying = nowReplaying;
          }
        };
        coalescer = EventLoop.call(loop, () -> {
          Coalescer c = new Coalescer(vertx, database, config, health, index, () -> 0, timers::nanoTime, journal,
            timers::currentTimeMillis, FlushSources.TICK_MS, timers);
          c.restore(journal.recovered());
          c.start();
          return c;
        });
        writes = EventLoop.call(loop, () -> new WritePath(coalescer, new IdempotentIncrements(vertx, config,
          new KeysInFlight(), new SimpleMeterRegistry(), NO_KEYS, timers::currentTimeMillis),
          (type, id) -> Future.succeededFuture(), database, new NamespaceTally()));
      }
    }

    Run(long killAtStatement) {
      this(killAtStatement, 1);
    }

    /**
     * A run of {@code verticleCount} ingest verticles: every journal is opened (replayed) before any coalescer starts,
     * so a kill at a statement never falls between two opens; a crash while one opens lets the opened ones go.
     */
    Run(long killAtStatement, int verticleCount) {
      database = new KillableStore(store, killAtStatement);
      database.onKill = () -> die(Death.AT_A_STATEMENT);
      List<Journal> journals = new ArrayList<>();
      try {
        for (int index = 0; index < verticleCount; index++) {
          int opened = index;
          // a failed open (a crash while it replays) closes its own workers
          journals.add(await(EventLoop.call(loop, () -> Journal.open(vertx, timers, config.getJournal(), disk,
            io.countergateway.internal.write.journal.JournalTarget.tableOnly(TABLE), opened, verticleCount,
            full -> { }))));
        }
      } catch (IllegalStateException startFailed) {
        for (Journal opened : journals) {
          closeOnCrashedDisk(opened);
        }
        throw startFailed;
      }
      for (int index = 0; index < verticleCount; index++) {
        verticles.add(new Verticle(index, journals.get(index)));
      }
      journal = verticles.get(0).journal;
      coalescer = verticles.get(0).coalescer;
      writes = verticles.get(0).writes;
    }

    /** Sends one request to the first verticle; its answer goes to the ledger when it comes. */
    void send(List<Increment> increments, AckMode ack) {
      send(increments, ack, 0);
    }

    /** Sends one request to verticle {@code index}; its answer goes to the ledger when it comes. */
    void send(List<Increment> increments, AckMode ack, int index) {
      WritePath writes = verticles.get(index).writes;
      Sent sent = new Sent(increments, ack);
      onLoop(() -> {
        if (death != null) {
          return null;
        }
        unanswered.add(sent);
        writes.submit(WriteRequest.of(increments, ack)).onComplete(answered -> {
          if (death != null || !unanswered.remove(sent)) {
            return;
          }
          WriteAnswer answer = answered.result();
          for (Increment increment : increments) {
            ledger.http(Ledger.key(increment.key().type(), increment.key().id()), increment.delta(),
              ack == AckMode.COMMIT ? Ledger.Door.COMMIT : Ledger.Door.ACCEPTED, answer.status(),
              answer.refusal() == null ? null : answer.refusal().code());
          }
        });
        return null;
      });
    }

    /** What the replay at this run's start skipped or set aside (the first verticle's). */
    io.countergateway.internal.write.journal.ReplayReport replay() {
      return journal.recovered().replay();
    }

    /** What every verticle's replay at this run's start skipped or set aside. */
    List<io.countergateway.internal.write.journal.ReplayReport> replays() {
      return verticles.stream().map(verticle -> verticle.journal.recovered().replay()).toList();
    }

    /** How it died: at its kill statement, at a file operation (its disk crashed), or killed after its workload. */
    enum Death {
      AT_A_STATEMENT("at a statement"), AT_A_FILE_OPERATION("at a file operation"), AFTER_THE_WORKLOAD(
        "after the workload");

      final String label;

      Death(String label) {
        this.label = label;
      }
    }

    /** Dead, or its disk crashed (kill -9 at a file operation: it dies at the next look). */
    boolean killed() {
      return death != null || disk.crashed();
    }

    /** How it died; null while alive. */
    Death death() {
      return death;
    }

    /**
     * kill -9, on the loop: nothing more reaches the database (its statements are never answered) or the disk (every
     * later operation fails), its timers never run again, the requests in flight get no answer.
     */
    private void die(Death how) {
      if (death != null) {
        return;
      }
      death = how;
      disk.crashAt(disk.operations() + 1);
      database.killed.complete(null);
      millis = timers.currentTimeMillis();
      for (Sent sent : unanswered) {
        for (Increment increment : sent.increments()) {
          ledger.http(Ledger.key(increment.key().type(), increment.key().id()), increment.delta(),
            sent.ack() == AckMode.COMMIT ? Ledger.Door.COMMIT : Ledger.Door.ACCEPTED, 0, null);
        }
      }
      unanswered.clear();
    }

    /** kill -9 now; then its journal's worker threads are let go (on a crashed disk, nothing of it is written). */
    void kill() {
      onLoop(() -> {
        die(disk.crashed() ? Death.AT_A_FILE_OPERATION : Death.AFTER_THE_WORKLOAD);
        return null;
      });
      letGo();
    }

    private void letGo() {
      for (Verticle verticle : verticles) {
        closeOnCrashedDisk(verticle.journal);
      }
    }

    private void closeOnCrashedDisk(Journal opened) {
      try {
        await(onLoop(() -> opened.close(false)));
      } catch (IllegalStateException closedOnACrashedDisk) {
        // the workers are closed all the same
      }
    }

    /**
     * The run goes on until its kill statement (or a crash of its disk), or until no statement came for
     * {@link #QUIET_MS} of its time (the workload ended first); then it is killed.
     */
    void dieAtTheKillStatement() {
      long[] seen = {-1, 0}; // the statements sent, since when
      quiet();
      while (!killed()) {
        boolean over = onLoop(() -> {
          long now = timers.currentTimeMillis();
          if (database.calls() != seen[0]) {
            seen[0] = database.calls();
            seen[1] = now;
          } else if (now - seen[1] >= QUIET_MS) {
            return true;
          }
          advanceTo(Math.min(seen[1] + QUIET_MS, timers.nextDue()));
          return false;
        });
        if (over) {
          break;
        }
        quiet();
      }
      kill();
    }

    /** Moves this run's time on by {@code ms}, letting the run finish what each timer on the way starts. */
    void pass(long ms) {
      long until = onLoop(timers::currentTimeMillis) + ms;
      quiet();
      while (!killed() && onLoop(() -> {
        long next = Math.min(until, timers.nextDue());
        advanceTo(next);
        return next < until;
      })) {
        quiet();
      }
      quiet();
    }

    /** On the loop: runs the timers due by {@code at} (a time of this run's clock), then stops the clock there. */
    private void advanceTo(long at) {
      if (death == null) {
        timers.advance(Math.max(0, at - timers.currentTimeMillis()));
      }
    }

    /**
     * Returns once the run has nothing to do but wait for its timers: no worker thread busy, and the loop's turns
     * change nothing (no statement, no file operation, no worker task) twice in a row. A disk that crashed meanwhile
     * kills the run here, at once.
     */
    void quiet() {
      long seen = -1;
      int unchanged = 0;
      while (unchanged < 2) {
        machine.awaitWorkersIdle();
        long progress = onLoop(() -> {
          if (disk.crashed()) {
            die(Death.AT_A_FILE_OPERATION);
          }
          return database.calls() + disk.operations() + machine.submitted();
        });
        if (progress == seen) {
          unchanged++;
        } else {
          seen = progress;
          unchanged = 0;
        }
      }
    }

    /**
     * Moves time from one timer to the next, letting the run finish what each starts, until {@code condition} (read
     * on the loop) holds; fails naming {@code what} if it does not within {@link #SETTLE_MS} of the run's time.
     */
    void runUntil(String what, java.util.function.BooleanSupplier condition) {
      long deadline = onLoop(timers::currentTimeMillis) + SETTLE_MS;
      quiet();
      while (onLoop(() -> {
        if (condition.getAsBoolean()) {
          return false;
        }
        long next = timers.nextDue();
        if (next > deadline) {
          throw new AssertionError("not " + what + " after " + SETTLE_MS + " ms of the run's time");
        }
        advanceTo(next);
        return true;
      })) {
        quiet();
      }
    }

    /** On this run's loop, as every statement of it runs: the store is confined to one thread at a time. */
    <T> T onLoop(java.util.concurrent.Callable<T> work) {
      return EventLoop.call(loop, work);
    }

    /** A graceful stop with the database healthy: everything pending is written, every request answered. */
    void drainAndStop() {
      Future<Void> drained = onLoop(() -> Future.all(verticles.stream().map(verticle -> verticle.writes.drain())
        .toList()).<Void>mapEmpty());
      runUntil("drained", drained::isComplete);
      await(drained);
      runUntil("every request answered after a drain", unanswered::isEmpty);
      Future<Void> closed = onLoop(() -> Future.all(verticles.stream().map(verticle -> verticle.writes.close())
        .toList()).<Void>mapEmpty());
      runUntil("stopped", closed::isComplete);
      await(closed);
      onLoop(() -> millis = timers.currentTimeMillis());
    }

    /** Waits until every verticle's replayed flushes are settled (readiness would wait for them). */
    void awaitReplayed() {
      // the drain after it says what is not settled
      runUntil("replayed", () -> verticles.stream().noneMatch(verticle -> verticle.replaying));
    }
  }

  Run start(long killAtStatement) {
    return new Run(killAtStatement);
  }

  /** A run of {@code verticles} ingest verticles. */
  Run start(long killAtStatement, int verticles) {
    return new Run(killAtStatement, verticles);
  }

  /**
   * A run, started again after every crash its start meets (a kill -9 while it opens its journal); every start must
   * finish once the disk stops crashing.
   */
  Run startThroughCrashes(long killAtStatement, FaultingFiles.Survival survival) {
    return startThroughCrashes(killAtStatement, survival, 1);
  }

  /** {@link #startThroughCrashes(long, FaultingFiles.Survival)} of a run of {@code verticles} ingest verticles. */
  Run startThroughCrashes(long killAtStatement, FaultingFiles.Survival survival, int verticles) {
    while (true) {
      try {
        return start(killAtStatement, verticles);
      } catch (IllegalStateException startFailed) {
        if (!files.crashed()) {
          throw startFailed;
        }
        crash(survival);
      }
    }
  }

  static Increment increment(String id, long delta) {
    return new Increment(new CounterKey(TYPE, id), delta);
  }

  static <T> T await(Future<T> future) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(WORK_MILLIS, TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** An answer as the ledger tallies it: the status and the refusal's code. */
  static String answer(WriteAnswer answer) {
    ApiError refusal = answer.refusal();
    return answer.status() + (refusal == null ? "" : " " + refusal.code());
  }
}
