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
import io.countergateway.testing.Eventually;
import io.countergateway.testing.Ledger;
import io.countergateway.testing.ScriptedStore;
import io.countergateway.internal.write.journal.FaultingFiles;
import io.countergateway.internal.write.journal.Journal;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.file.FileSystemOptions;
import io.vertx.core.json.JsonObject;

import java.math.BigInteger;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What outlives every run of the write path in a crash-point test: the database (a {@link ScriptedStore}), the
 * journal's directory, the clock of the flush sources' heartbeats, and the one {@link Ledger} of every request's
 * answer. A {@link Run} is one process: its own Vert.x, journal, flush sources, writer and coalescer; {@link Run#kill}
 * is kill -9 (nothing more of it reaches the database or the disk, and no request of it is answered any more).
 */
final class RecoveryWorld {
  static final String TYPE = "likes";
  static final String TABLE = "slotted_counters";
  private static final long SETTLE_SECONDS = 20;
  private static final Duration SETTLE = Duration.ofSeconds(SETTLE_SECONDS);

  private static final Path DIR = Path.of("/journal");
  final ScriptedStore store = new ScriptedStore();
  private final String fsync;
  /** The journal's disk as the last run left it: in memory, with a page cache, crashes and faults. */
  FaultingFiles files = new FaultingFiles();
  final Ledger ledger;
  final AtomicLong millis = new AtomicLong(1_000_000_000L);

  RecoveryWorld(String label, String fsync) {
    this.fsync = fsync;
    this.ledger = Ledger.named(label);
  }

  private GatewayConfig config() {
    return GatewayConfig.fromJson(new JsonObject()
      .put("batching", new JsonObject().put("maxDelay", "1ms").put("maxKeys", 8).put("retryBackoff", "1ms")
        .put("retryBackoffMax", "4ms").put("writeTimeout", "2s"))
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
    // no file cache: a run reads no files through Vert.x, and making and deleting the cache's directory at every
    // start and kill is half of what a Vert.x instance costs here
    final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(2)
      .setInternalBlockingPoolSize(2)
      .setFileSystemOptions(new FileSystemOptions().setFileCachingEnabled(false).setClassPathResolvingEnabled(false)));
    final Context loop = vertx.getOrCreateContext();
    final KillableStore database;
    /** The journal's disk as this run sees it. */
    final FaultingFiles disk = files;
    /** What readiness would be made of: here, whether the replay's flushes are settled. */
    private volatile boolean replaying;
    private final WriterHealth health = new WriterHealth() {
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
    final Journal journal;
    final Coalescer coalescer;
    final WritePath writes;
    /** Requests sent and not answered yet: at a kill they are recorded as unanswered. */
    private final List<Sent> unanswered = new ArrayList<>();
    private boolean dead;

    private record Sent(List<Increment> increments, AckMode ack) {
    }

    final GatewayConfig config = config();

    Run(long killAtStatement) {
      database = new KillableStore(store, killAtStatement);
      try {
        journal = await(EventLoop.call(loop, () -> Journal.open(vertx, config.getJournal(), disk, TABLE, 0, 1,
          full -> { })));
      } catch (IllegalStateException startFailed) {
        await(vertx.close());
        throw startFailed;
      }
      coalescer = EventLoop.call(loop, () -> {
        Coalescer c = new Coalescer(vertx, database, config, health, 0, () -> 0, System::nanoTime, journal,
          millis::get, FlushSources.TICK_MS);
        c.restore(journal.recovered());
        c.start();
        return c;
      });
      writes = EventLoop.call(loop, () -> new WritePath(coalescer, new IdempotentIncrements(vertx, config,
        new KeysInFlight(), new SimpleMeterRegistry(), NO_KEYS, millis::get), (type, id) -> Future.succeededFuture(),
        database, new NamespaceTally()));
    }

    /** Sends one request; its answer goes to the ledger when it comes. */
    void send(List<Increment> increments, AckMode ack) {
      Sent sent = new Sent(increments, ack);
      EventLoop.call(loop, () -> {
        unanswered.add(sent);
        writes.submit(WriteRequest.of(increments, ack)).onComplete(answered -> {
          if (dead || !unanswered.remove(sent)) {
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

    /** What the replay at this run's start skipped or set aside. */
    io.countergateway.internal.write.journal.ReplayReport replay() {
      return journal.recovered().replay();
    }

    /** The kill statement was sent, or the disk crashed (kill -9 at a file operation). */
    boolean killed() {
      return database.killed.isDone() || disk.crashed();
    }

    /** kill -9: the loop stops, nothing more reaches the database or the disk, the requests in flight get no answer. */
    void kill() {
      disk.crashAt(disk.operations() + 1);
      EventLoop.call(loop, () -> {
        dead = true;
        for (Sent sent : unanswered) {
          for (Increment increment : sent.increments()) {
            ledger.http(Ledger.key(increment.key().type(), increment.key().id()), increment.delta(),
              sent.ack() == AckMode.COMMIT ? Ledger.Door.COMMIT : Ledger.Door.ACCEPTED, 0, null);
          }
        }
        unanswered.clear();
        return null;
      });
      await(vertx.close());
    }

    /** The run dies at its kill statement, or soon after its statements stop coming (the workload ended first). */
    void dieAtTheKillStatement() {
      long seen = -1;
      long quietSince = System.nanoTime();
      while (!killed() && System.nanoTime() - quietSince < TimeUnit.MILLISECONDS.toNanos(5)) {
        long now = EventLoop.call(loop, database::calls);
        if (now != seen) {
          seen = now;
          quietSince = System.nanoTime();
        }
        sleep(1);
      }
      kill();
    }

    /** On this run's loop, as every statement of it runs: the store is confined to one thread at a time. */
    <T> T onLoop(java.util.concurrent.Callable<T> work) {
      return EventLoop.call(loop, work);
    }

    /** A graceful stop with the database healthy: everything pending is written, every request answered. */
    void drainAndStop() {
      await(EventLoop.call(loop, writes::drain));
      assertAnswered();
      await(EventLoop.call(loop, writes::close));
      await(vertx.close());
    }

    private void assertAnswered() {
      if (Eventually.value(() -> EventLoop.call(loop, unanswered::size), 0, SETTLE) > 0) {
        throw new AssertionError("requests never answered after a drain: " + EventLoop.call(loop, () -> unanswered));
      }
    }

    /** Waits until the replay's flushes are settled (readiness would wait for them). */
    void awaitReplayed() {
      Eventually.value(() -> replaying, false, SETTLE); // the drain after it says what is not settled
    }
  }

  Run start(long killAtStatement) {
    return new Run(killAtStatement);
  }

  /**
   * A run, started again after every crash its start meets (a kill -9 while it opens its journal); every start must
   * finish once the disk stops crashing.
   */
  Run startThroughCrashes(long killAtStatement, FaultingFiles.Survival survival) {
    while (true) {
      try {
        return start(killAtStatement);
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
      return future.toCompletionStage().toCompletableFuture().get(SETTLE_SECONDS, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Real time passing, the harness's only: a workload's pause and the quiet that ends a run are the time the write
   * path's own timers (the coalescer's delay, the writer's backoff) need to fire, and those run on Vert.x time.
   */
  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** An answer as the ledger tallies it: the status and the refusal's code. */
  static String answer(WriteAnswer answer) {
    ApiError refusal = answer.refusal();
    return answer.status() + (refusal == null ? "" : " " + refusal.code());
  }
}
