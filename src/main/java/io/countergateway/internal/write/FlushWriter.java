package io.countergateway.internal.write;

import io.countergateway.internal.time.Timers;
import io.countergateway.config.BatchingOptions;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.store.Failures;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.internal.store.FlushSourceClosedException;
import io.countergateway.internal.store.FlushStatements;
import io.countergateway.internal.store.ReplicationPosition;
import io.countergateway.internal.store.StatementNotSentException;
import io.countergateway.internal.store.VoidOutcome;
import io.countergateway.internal.store.WriteOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Context;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * The executor of flush jobs: runs each {@link FlushJob}'s next step (its source's row, its journal record, an attempt,
 * a void, a split, a backoff) until every request of it is answered, and then releases it. What a flush has been
 * through is its job's; what a source says of it is {@link FlushSources}'; this class decides what comes next.
 *
 * <p>The invariant: <b>a flush gets new ids only when its id is proven uncommitted forever</b>, and the journal
 * records the new ids ({@link FlushLog#replaced}) before any of them is attempted. Two things prove it:
 * <ul>
 *   <li>A data exception ({@link Failures#isValueRefused}) proves that this attempt did not commit — the statement that
 *   carries the flush id failed on a value — and, since the id is checked before any value is touched (one statement
 *   on PostgreSQL, the id inserted first on MySQL), that no earlier attempt had committed it <em>yet</em>. An earlier
 *   attempt may still be on its way (held in a buffer past batching.writeTimeout, on other slots where no value overflows):
 *   so the id is then voided (inserted as voided, in its own transaction), and a late copy finds it and writes
 *   nothing. Only after the void are the halves written under new ids, or the refused row answered 422; if the void
 *   finds that a late copy had committed the flush whole, every request of it is answered as committed.</li>
 *   <li>A closed flush source: its row's ids are the final word ({@link FlushSources}), so a flush whose id is not
 *   among them goes on under the live source.</li>
 * </ul>
 * Every other failure — lost connection, timeout, deadlock, read-only database, cancelled statement, an error nobody
 * listed — is an outage: the same flush (same id, same counters and deltas) is retried with backoff until it lands,
 * and its id makes the retry a no-op if an earlier attempt had committed. A retry may move the rows to other slots, so
 * it does not queue behind a row lock that a dead writer still holds; the id is what deduplicates.
 *
 * <p>An attempt ends <b>not sent</b> (no connection could be had: the statement never left the process), <b>sent
 * with its answer lost</b>, <b>refused</b> whole, or <b>committed</b> ({@link FlushJob.Outcome}). Only the second
 * can have committed unseen, so only such a flush can end as outcome unknown when its source is gone. The journal
 * keeps the difference across a crash: it records a failure before sending when no statement of the flush ever left
 * ({@link FlushLog#notSent}), and then, before the next statement leaves, that it may ({@link FlushLog#beforeSend}).
 */
final class FlushWriter {
  private static final Logger LOG = LoggerFactory.getLogger(FlushWriter.class);
  /** How much longer than batching.writeTimeout an attempt may take before the writer gives up on the store's answer. */
  private static final long BACKSTOP_MS = 1_000;
  private static final Future<Void> DONE = Future.succeededFuture();
  /** The cause a replayed flush found voided is refused with, should it be one row: its value was refused then. */
  private static final Exception VOIDED_BEFORE_A_RESTART = new IllegalStateException(
    "its id was voided after a refused value, before the restart");

  /** Upper bounds of the flush-duration buckets: a commit's milliseconds up to retries through an outage. */
  static final Duration[] FLUSH_BUCKETS = Stream.of(1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000,
    30_000, 60_000).map(Duration::ofMillis).toArray(Duration[]::new);

  private final FlushStatements store;
  private final FlushSources sources;
  private final FlushLog log;
  private final BatchingOptions options;
  private final WriterHealth health;
  private final LongSupplier nanoClock;
  private final UnaryOperator<Flush> reslot;
  private final Timers timers;
  private final Context context;
  private final Thread eventLoop;
  /** The jobs it runs, until each is released or left to the replay. */
  private final Set<FlushJob> running = new LinkedHashSet<>();
  private boolean failing;
  /** Null until {@link #measuredBy}. */
  private InFlightLimit inFlightLimit;
  /** When the writer last started failing (nanoClock), while {@link #failing}. */
  private long failingSinceNanos;
  private long unknownFlushes;
  /** Null unless database.keepUntilReplicated: then a settled job is held until the standbys have its commits. */
  private ReplicatedRelease replicas;
  /** Told of each job once released (the coalescer lets its journal position go). */
  private Consumer<FlushJob> onReleased = job -> { };
  private Timer flushTimer;
  private Counter retries;
  private Counter refusedRows;

  /** {@code reslot} gives the same flush on the slots of a new round, for retries. */
  FlushWriter(Vertx vertx, FlushStatements store, FlushSources sources, FlushLog log, BatchingOptions options,
              WriterHealth health, UnaryOperator<Flush> reslot, LongSupplier nanoClock) {
    this(vertx, store, sources, log, options, health, reslot, nanoClock, Timers.of(vertx));
  }

  /** {@code timers}: the backoffs' and the backstops' ({@link Timers#of} but in tests, which move time by hand). */
  FlushWriter(Vertx vertx, FlushStatements store, FlushSources sources, FlushLog log, BatchingOptions options,
              WriterHealth health, UnaryOperator<Flush> reslot, LongSupplier nanoClock, Timers timers) {
    this.store = store;
    this.sources = sources;
    this.log = log;
    this.options = options;
    this.health = health;
    this.nanoClock = nanoClock;
    this.reslot = reslot;
    this.timers = timers;
    this.context = vertx.getOrCreateContext();
    this.eventLoop = Thread.currentThread();
    sources.countSentAndLostBy(source -> running.stream().filter(job -> job.sentAndLostUnder(source)).count());
  }

  /**
   * database.keepUntilReplicated: each settled job that committed anything is held until every standby has flushed its
   * commits ({@link ReplicatedRelease}); {@code read} asks the primary where its WAL and its standbys stand;
   * {@code afterPoll} runs after each such read.
   */
  void keepUntilReplicated(Supplier<Future<ReplicationPosition>> read, long lagMaxMs, Runnable afterPoll) {
    replicas = new ReplicatedRelease(() -> onLoop(read.get()), this::release, this::writeAgain, afterPoll, timers,
      nanoClock, lagMaxMs);
  }

  /**
   * Told of each write sent, committed (its counts and round trip) or failed, so the coalescer can size its flushes in
   * flight.
   */
  void measuredBy(InFlightLimit limit) {
    this.inFlightLimit = limit;
  }

  void onReleased(Consumer<FlushJob> released) {
    this.onReleased = released;
  }

  /** Jobs answered and held until the standbys have their commits. */
  int heldForReplicas() {
    return replicas == null ? 0 : replicas.held();
  }

  /** Whether a held job has waited for the standbys longer than database.replicationLagMax. */
  boolean replicasLagging() {
    return replicas != null && replicas.lagging();
  }

  /**
   * Stops asking the primary about its standbys (a stop): what is held stays in the journal, and the next start writes
   * it again by its ids; what the journal does not hold (flushes of 200s only) is said in one line.
   */
  void stopReplicaPolls() {
    if (replicas == null) {
      return;
    }
    replicas.stop();
    if (replicas.held() > 0) {
      LOG.atWarn().addKeyValue("event", "stopped_before_replicated").addKeyValue("flushes", replicas.held())
        .log("stopping with {} committed flush(es) the standbys have not confirmed: the journal keeps those that hold "
          + "accepted increments for the next start; a failover before the standbys have the rest can lose their 200s",
          replicas.held());
    }
  }

  void registerMetrics(MeterRegistry registry, Tags tags) {
    // fixed buckets rather than quantiles computed here: a p99 of each verticle cannot be added up across verticles
    // and pods, buckets can (histogram_quantile over the sum of their rates)
    flushTimer = Timer.builder("gateway.flush.duration").tags(tags)
      .description("from a flush's first attempt until it is settled, retries included")
      .serviceLevelObjectives(FLUSH_BUCKETS).register(registry);
    retries = Counter.builder("gateway.flush.retries").tags(tags)
      .description("write attempts that failed for a reason other than a refused value and were retried under the same flush id")
      .register(registry);
    refusedRows = Counter.builder("gateway.flush.refused.rows").tags(tags)
      .description("counter rows the database refused (e.g. BIGINT overflow); their increments were not counted")
      .register(registry);
    FunctionCounter.builder("gateway.flush.outcome.unknown", this, FlushWriter::unknownFlushes).tags(tags)
      .description("flushes whose outcome could no longer be known (their flush source was deleted while they were "
        + "open); never written again, their requests answered 504")
      .register(registry);
  }

  /**
   * Runs {@code job} to its end: a formed one has its source's row made and, when it holds journaled increments, its
   * journal record forced (its zero keys travel with it) before its first attempt; a replayed one is written again
   * under its own id (an id already there means committed, or voided by a split that a crash cut between the void and
   * the journal's record of the halves: the void tells them apart, and a voided flush is split again, under the same
   * half ids, instead of passing for committed). Completes true once every request of it is answered and it is
   * released, false when it was left to the replay (the journal could not record a step: its requests are answered,
   * and the replay after a restart resolves it).
   */
  Future<Boolean> run(FlushJob job) {
    if (job.replayed()) {
      sources.inherit(job.flush().id());
    }
    running.add(job);
    Promise<Void> done = Promise.promise();
    if (job.phase() == FlushJob.Phase.FORMED) {
      prepare(job, 0, done);
    } else {
      attempt(job, job.flush(), job.acks(), 0, done);
    }
    return done.future().map(v -> {
      if (flushTimer != null && !job.leftToReplay()) {
        flushTimer.record(nanoClock.getAsLong() - job.startedNanos(), TimeUnit.NANOSECONDS);
      }
      return settle(job);
    });
  }

  /** Every request of {@code job} is answered: released, or held until the standbys have what it committed. */
  private boolean settle(FlushJob job) {
    running.remove(job);
    if (job.leftToReplay()) {
      return false;
    }
    job.settled();
    if (replicas == null || job.committed().isEmpty()) {
      release(job);
    } else {
      replicas.hold(job);
    }
    return true;
  }

  private void release(FlushJob job) {
    job.release(log, sources);
    onReleased.accept(job);
  }

  /**
   * A failover may have lost what {@code job} committed: each of its committed flushes is written again under its own
   * id, one after the other, with no request waiting (all were answered); an id found means the promoted server has
   * it, and nothing is written. Then it is held again.
   */
  private void writeAgain(FlushJob job) {
    running.add(job);
    List<Flush> again = job.writeAgain();
    Promise<Void> done = Promise.promise();
    writeAgain(job, again, 0, done);
    done.future().onComplete(v -> settle(job));
  }

  private void writeAgain(FlushJob job, List<Flush> again, int next, Promise<Void> done) {
    if (next == again.size() || job.leftToReplay()) {
      done.tryComplete();
      return;
    }
    Promise<Void> one = Promise.promise();
    one.future().onComplete(v -> writeAgain(job, again, next + 1, done));
    attempt(job, again.get(next), List.of(), 0, one);
  }

  /** The source's row, then the journal's record, before the first attempt. */
  private void prepare(FlushJob job, int attemptNo, Promise<Void> done) {
    onLoop(sources.registered(job.flush().id())).onComplete(made -> {
      if (made.failed()) {
        retryLater(job, job.flush(), attemptNo, made.cause(), "making the row of its flush source",
          () -> prepare(job, attemptNo + 1, done));
        return;
      }
      if (!job.mustBeRecorded()) {
        job.recorded();
        attempt(job, job.flush(), job.acks(), 0, done);
      } else if (log.failed()) {
        abandon(job, job.acks(), notRecorded(), done);
      } else {
        log.formed(job.flush(), job.zeroKeys()).onComplete(recorded -> {
          if (recorded.failed()) {
            abandon(job, job.acks(), mayBeRecorded(), done);
          } else {
            job.recorded();
            attempt(job, job.flush(), job.acks(), 0, done);
          }
        });
      }
    });
  }

  /** The next attempt of {@code flush} (the job's, one of its halves, or one gone on under a live source). */
  private void attempt(FlushJob job, Flush flush, List<Ack> acks, int attemptNo, Promise<Void> done) {
    job.attempting();
    onLoop(sources.route(flush.id())).onComplete(routed -> {
      if (routed.failed()) {
        retryLater(job, flush, attemptNo, routed.cause(), "reading its closed flush source",
          () -> attempt(job, flush, acks, attemptNo + 1, done));
        return;
      }
      switch (routed.result()) {
        case OPEN -> send(job, flush, acks, attemptNo, done);
        case COMMITTED -> {
          setFailing(false);
          job.committedAs(flush);
          committed(acks);
          done.complete();
        }
        case GONE -> {
          if (job.mayHaveCommittedUnseen(flush.id())) {
            setFailing(false);
            unknown(flush, acks);
            done.complete();
          } else {
            goOn(job, flush, acks, attemptNo, done);
          }
        }
        case NOT_COMMITTED -> goOn(job, flush, acks, attemptNo, done);
      }
    });
  }

  /**
   * A flush proven never committed under its own id goes on under a new one: the live source's row is made, then the
   * journal records it, then it is sent. The row comes first because a replay reads a journaled id whose source has no
   * row as pruned with it, and a flush of it that may have been sent as outcome unknown: an id journaled before its
   * source's row existed would turn a crash between the two into a flush dropped that can never have committed.
   */
  private void goOn(FlushJob job, Flush flush, List<Ack> acks, int attemptNo, Promise<Void> done) {
    Flush target = flush.under(job.goesOnAs(flush.id(), sources::nextId));
    if (!job.needsRerouteRecord(flush.id(), target.id())) {
      send(job, target, acks, attemptNo, done);
      return;
    }
    rowMade(job, target, attemptNo, () -> attempt(job, flush, acks, attemptNo + 1, done),
      () -> recordReroute(job, flush, target, acks, attemptNo, done));
  }

  /** Runs {@code then} once the row of {@code target}'s source is made; backs off and runs {@code again} if it fails. */
  private void rowMade(FlushJob job, Flush target, int attemptNo, Runnable again, Runnable then) {
    onLoop(sources.registered(target.id())).onComplete(made -> {
      if (made.failed()) {
        retryLater(job, target, attemptNo, made.cause(), "making the row of its flush source", again);
      } else {
        then.run();
      }
    });
  }

  private void recordReroute(FlushJob job, Flush flush, Flush target, List<Ack> acks, int attemptNo,
                             Promise<Void> done) {
    log.replaced(flush, List.of(target)).onSuccess(v -> job.rerouteRecorded(target.id())).onComplete(record -> {
      if (record.failed()) {
        abandon(job, acks, mayBeRecorded(), done);
      } else {
        send(job, target, acks, attemptNo, done);
      }
    });
  }

  /** One attempt of {@code target} under its id, its source's row made and no advance of it in the way. */
  private void send(FlushJob job, Flush target, List<Ack> acks, int attemptNo, Promise<Void> done) {
    rowMade(job, target, attemptNo, () -> attempt(job, target, acks, attemptNo + 1, done), () -> {
      boolean[] unrecordable = {false};
      Supplier<Future<Void>> beforeSend = () -> log.beforeSend(target.id()).onFailure(e -> unrecordable[0] = true);
      long[] sentNanos = {0};
      long[] gapNanos = {0};
      sources.beforeAttempt(target).transform(mayGo -> {
        sentNanos[0] = nanoClock.getAsLong();
        gapNanos[0] = inFlightLimit == null ? 0 : inFlightLimit.sent();
        return onLoop(store.write(target, beforeSend));
      }).onComplete(result -> {
        measured(result, target, nanoClock.getAsLong() - sentNanos[0], gapNanos[0]);
        FlushJob.Outcome outcome = result.succeeded() ? FlushJob.Outcome.COMMITTED : outcomeOf(result.cause());
        job.attemptEnded(target.id(), FlushJob.Step.WRITE, outcome);
        sources.attemptEnded(target, outcome);
        if (outcome == FlushJob.Outcome.NOT_SENT) {
          log.notSent(target.id());
        }
        if (unrecordable[0]) {
          // the journal could not say the flush is being sent: it is not, and the replay after a restart writes it
          abandon(job, acks, mayBeRecorded(), done);
        } else if (result.succeeded() && result.result() == WriteOutcome.ALREADY_COMMITTED && job.replayed()
          && !job.writtenAgain() && target.id().equals(job.flush().id())) {
          setFailing(false);
          voidThenSplit(job, target, acks, 0, done, VOIDED_BEFORE_A_RESTART);
        } else if (result.succeeded()) {
          setFailing(false);
          job.committedAs(target);
          committed(acks);
          done.complete();
        } else if (result.cause() instanceof FlushSourceClosedException closed) {
          sourceFound(job, target, acks, attemptNo, done, closed);
        } else if (Failures.isValueRefused(result.cause())) {
          // not committed by this attempt (see the class comment): void the id before any new id or answer
          setFailing(false);
          voidThenSplit(job, target, acks, 0, done, result.cause());
        } else {
          retryLater(job, target, attemptNo, result.cause(), "writing it",
            () -> attempt(job, reslot.apply(target), acks, attemptNo + 1, done));
        }
      });
    });
  }

  /**
   * A committed write's counts, round trip and time since the write before it size the flushes in flight; a write
   * lost to the connection, a timeout or a lock shrinks them. A value the database refused, or a flush source found
   * closed, says nothing of its load. {@code gapNanos}: what {@link InFlightLimit#sent} said when it was sent.
   */
  private void measured(AsyncResult<?> result, Flush target, long rttNanos, long gapNanos) {
    if (inFlightLimit == null) {
      return;
    }
    if (result.succeeded()) {
      long counts = 0;
      for (FlushRow row : target.rows()) {
        counts += Math.abs(row.delta());
      }
      inFlightLimit.succeeded(rttNanos, gapNanos, counts);
    } else if (!(result.cause() instanceof FlushSourceClosedException) && !Failures.isValueRefused(result.cause())) {
      inFlightLimit.failed();
    }
  }

  /**
   * A statement that never left the process, or an answer that fails the statement itself, proves nothing of it
   * committed; anything else may have.
   */
  static FlushJob.Outcome outcomeOf(Throwable failure) {
    if (failure instanceof StatementNotSentException) {
      return FlushJob.Outcome.NOT_SENT;
    }
    return failure instanceof FlushSourceClosedException || Failures.isValueRefused(failure)
      || Failures.isLockConflict(failure) ? FlushJob.Outcome.REFUSED : FlushJob.Outcome.SENT_ANSWER_LOST;
  }

  /** The flush's source was closed or is gone: its row is read once, then the flush is routed again. */
  private void sourceFound(FlushJob job, Flush flush, List<Ack> acks, int attemptNo, Promise<Void> done,
                           FlushSourceClosedException closed) {
    onLoop(sources.found(closed.source())).onComplete(read -> {
      if (read.failed()) {
        retryLater(job, flush, attemptNo, read.cause(), "reading its closed flush source",
          () -> sourceFound(job, flush, acks, attemptNo + 1, done, closed));
      } else {
        attempt(job, flush, acks, attemptNo, done);
      }
    });
  }

  /**
   * The database refused a value of the flush: its id is voided, then the flush is split (or its one row refused); or,
   * if a late copy of an earlier attempt had committed it whole, its requests are answered as committed. A void that
   * fails for any other reason is retried like a write.
   */
  private void voidThenSplit(FlushJob job, Flush flush, List<Ack> acks, int attemptNo, Promise<Void> done,
                             Throwable refusal) {
    sources.beforeAttempt(flush).onComplete(mayGo -> onLoop(store.voidFlush(flush)).onComplete(result -> {
      FlushJob.Outcome outcome = result.succeeded() ? FlushJob.Outcome.COMMITTED : outcomeOf(result.cause());
      job.attemptEnded(flush.id(), FlushJob.Step.VOID, outcome);
      sources.attemptEnded(flush, outcome);
      if (result.succeeded() && result.result() == VoidOutcome.ALREADY_COMMITTED) {
        setFailing(false);
        LOG.warn("flush {} ({} rows) was refused a value, but a late copy of an earlier attempt had committed it whole "
          + "(on other slots): its requests are answered as committed", flush.id(), flush.rows().size());
        job.committedAs(flush);
        committed(acks);
        done.complete();
      } else if (result.succeeded()) {
        setFailing(false);
        job.voided(flush.id());
        if (flush.rows().size() > 1) {
          split(job, flush, acks, done);
        } else {
          refuse(flush, acks, refusal);
          done.complete();
        }
      } else if (result.cause() instanceof FlushSourceClosedException closed) {
        // nothing of it is written under a closed source: routed again, it goes on whole under the live one
        sourceFound(job, flush, acks, attemptNo, done, closed);
      } else {
        retryLater(job, flush, attemptNo, result.cause(), "voiding it after a refused value",
          () -> voidThenSplit(job, flush, acks, attemptNo + 1, done, refusal));
      }
    }));
  }

  private void split(FlushJob job, Flush flush, List<Ack> acks, Promise<Void> done) {
    FlushJob.Halves halves = job.split(flush, acks);
    Promise<Void> leftDone = Promise.promise();
    leftDone.future().onComplete(v -> {
      if (job.leftToReplay()) {
        abandon(job, halves.rightAcks(), mayBeRecorded(), done);
      } else {
        attempt(job, halves.right(), halves.rightAcks(), 0, done);
      }
    });
    // the journal learns of the halves before either is attempted: a replay resolves them, not the parent
    log.replaced(flush, List.of(halves.left(), halves.right())).onComplete(recorded -> {
      if (recorded.failed()) {
        abandon(job, acks, mayBeRecorded(), done);
      } else {
        attempt(job, halves.left(), halves.leftAcks(), 0, leftDone);
      }
    });
  }

  private static void committed(List<Ack> acks) {
    for (Ack ack : acks) {
      ack.committed();
    }
  }

  /** Whether the flush committed can no longer be known (see {@link FlushSources}): 504 for its requests. */
  private void unknown(Flush flush, List<Ack> acks) {
    unknownFlushes++;
    LOG.atError().addKeyValue("event", "flush_outcome_unknown").addKeyValue("flush", flush.id().toString())
      .addKeyValue("rows", flush.rows().size()).addKeyValue("increments", flush.rows().stream()
        .mapToLong(FlushRow::delta).sum())
      .log("flush {} ({} rows, {} waiting requests) may or may not have been counted: its flush source was deleted "
        + "while it was open; it is never written again{}", flush.id(), flush.rows().size(), acks.size(),
        acks.isEmpty() ? "" : ", its requests get 504");
    for (Ack ack : acks) {
      ack.failed(new ApiError(504, "outcome_unknown",
        "the increment was being written when its flush source was lost; it may or may not be counted", null));
    }
  }

  /** Flushes found outcome unknown (class comment of {@link FlushSources}, 4). */
  long unknownFlushes() {
    return unknownFlushes;
  }

  /**
   * The journal could not record a step of the flush: nothing more of it is attempted in this run, and the replay
   * after a restart resolves what the journal holds. Its waiting requests are answered with {@code answer}.
   */
  private static void abandon(FlushJob job, List<Ack> acks, ApiError answer, Promise<Void> done) {
    job.leaveToReplay();
    for (Ack ack : acks) {
      ack.failed(answer);
    }
    done.tryComplete();
  }

  /** The journal had failed before the flush was recorded: nothing of it is anywhere, and never will be. */
  private static ApiError notRecorded() {
    return ApiError.unavailable("journal_unavailable", "the journal failed and the gateway writes nothing it holds "
      + "until a restart; this increment was not counted");
  }

  /** The journal failed while recording the flush: the record may be on disk, and a replay would then write it. */
  private static ApiError mayBeRecorded() {
    return new ApiError(504, "outcome_unknown", "the journal failed while recording this increment's flush; it may "
      + "be counted when the gateway restarts and replays its journal", null);
  }

  private void refuse(Flush flush, List<Ack> acks, Throwable cause) {
    FlushRow row = flush.rows().get(0);
    if (refusedRows != null) {
      refusedRows.increment();
    }
    ApiError error = Failures.isOverflow(cause)
      ? new ApiError(422, "counter_overflow", "the increment would take the counter beyond the 64-bit range; it was not counted", "delta")
      : new ApiError(500, "write_failed", "the database refused a value of the write: " + cause.getMessage(), null);
    LOG.error("the database refused {} for counter {}/{} (slot {}); not retried, {} waiting requests get {}: {}",
      row.delta(), row.type(), row.id(), row.slot(), acks.size(), error.status(), cause.toString());
    for (Ack ack : acks) {
      ack.failed(error);
    }
  }

  /**
   * The store's answer on this writer's event loop, failed if it does not come within batching.writeTimeout plus a margin: the
   * store bounds each attempt itself and closes the connection it used; this is the backstop. The timer is a Vert.x
   * timer of this loop ({@link Timers}), not {@code Future.timeout}, which on a future without a context fires on a global thread.
   */
  private <T> Future<T> onLoop(Future<T> answer) {
    if (answer.isComplete() && Thread.currentThread() == eventLoop) {
      return answer;
    }
    Promise<T> onLoop = Promise.promise();
    long timer = timers.schedule(options.getWriteTimeoutMs() + BACKSTOP_MS, () -> onLoop.tryFail(
      new TimeoutException("the store did not answer within " + (options.getWriteTimeoutMs() + BACKSTOP_MS) + " ms")));
    answer.onComplete(result -> {
      Runnable settle = () -> {
        timers.cancel(timer);
        if (result.succeeded()) {
          onLoop.tryComplete(result.result());
        } else {
          onLoop.tryFail(result.cause());
        }
      };
      if (Thread.currentThread() == eventLoop) {
        settle.run();
      } else {
        context.runOnContext(v -> settle.run());
      }
    });
    return onLoop.future();
  }

  /** An outage: the same step again after a backoff, never split, never dropped. */
  private void retryLater(FlushJob job, Flush flush, int attemptNo, Throwable cause, String step, Runnable again) {
    job.backingOff();
    // two writers meeting on a row lock is not an outage worth a readiness change, unless it keeps happening
    if (!Failures.isLockConflict(cause) || attemptNo >= 2) {
      setFailing(true);
    }
    if (retries != null) {
      retries.increment();
    }
    long delay = options.retryDelayMs(attemptNo);
    if (attemptNo == BatchingOptions.RETRIES_WITHIN_RETENTION / 2) {
      LOG.error("flush {} has failed {} times; it keeps being retried. Should this gateway stay cut off for "
        + "batching.flushIdRetention ({} s), a prune closes its flush source; the gateway then resolves its "
        + "flushes by their ids and goes on under a new source", flush.id(), attemptNo + 1,
        options.getFlushIdRetentionSeconds());
    }
    LOG.warn("flush {} ({} rows) failed {}, retry {} in {} ms under the same id: {}", flush.id(), flush.rows().size(),
      step, attemptNo + 1, delay, cause.toString());
    timers.schedule(delay, () -> {
      job.backoffOver();
      again.run();
    });
  }

  /** Whether the last attempt failed for a reason other than a refused value (an outage). */
  boolean isFailing() {
    return failing;
  }

  /**
   * How long the writer has been failing without a success in between: 0 while it is not. Asking the primary about its
   * standbys counts too: held flushes wait for nothing but an answer from it.
   */
  long failingForMs() {
    long writing = failing ? TimeUnit.NANOSECONDS.toMillis(nanoClock.getAsLong() - failingSinceNanos) : 0;
    return replicas == null ? writing : Math.max(writing, replicas.failingForMs());
  }

  private void setFailing(boolean nowFailing) {
    if (failing != nowFailing) {
      failing = nowFailing;
      failingSinceNanos = nanoClock.getAsLong();
      health.writerFailing(nowFailing);
    }
  }
}
