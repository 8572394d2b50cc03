package io.countergateway.write;

import io.countergateway.store.Flush;
import io.countergateway.store.WriteOutcome;
import io.countergateway.store.FlushRow;
import io.countergateway.config.BatchingOptions;
import io.countergateway.model.ApiError;
import io.countergateway.model.CounterKey;
import io.countergateway.store.CounterStore;
import io.countergateway.store.Failures;
import io.countergateway.store.FlushOutcomeUnknownException;
import io.countergateway.store.VoidOutcome;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * Gets one flush into the database and settles its waiting requests.
 *
 * <p>The invariant: <b>a flush gets new ids only when its id is proven uncommitted forever.</b> A data exception
 * ({@link Failures#isValueRefused}) proves that this attempt did not commit — the statement that carries the flush id
 * failed on a value — and, since the id is checked before any value is touched (one statement on PostgreSQL, the id
 * inserted first on MySQL), that no earlier attempt had committed it <em>yet</em>. An earlier attempt may still be on
 * its way, though (held in a buffer past writeTimeoutMs, on other slots where no value overflows): so the id is then
 * voided ({@link CounterStore#voidFlush}: inserted as voided, in its own transaction), and a late copy finds it and
 * writes nothing. Only after the void are the halves written under new ids, or the refused row answered 422; if the
 * void finds that a late copy had committed the flush whole, every request of it is answered as committed.
 *
 * <p>Every other failure — lost connection, timeout, deadlock, read-only database, cancelled statement, an error
 * nobody listed — is an outage: the same flush (same id, same counters and deltas) is retried with backoff until it
 * lands, and its id makes the retry a no-op if an earlier attempt had committed. A retry may move the rows to other
 * slots, so it does not queue behind a row lock that a dead writer still holds; the id is what deduplicates.
 *
 * <p>A flush source closed by the prune while this gateway was cut off or paused is handled below the writer: the store
 * resolves the flushes by their ids and goes on under a new source (see {@code store/FlushFence}), so the retry simply
 * succeeds. Only a flush whose outcome can no longer be known ({@link FlushOutcomeUnknownException}) is answered 504.
 */
final class FlushWriter {
  private static final Logger LOG = LoggerFactory.getLogger(FlushWriter.class);
  /** How much longer than writeTimeoutMs an attempt may take before the writer gives up on the store's answer. */
  private static final long BACKSTOP_MS = 1_000;

  private final Vertx vertx;
  private final CounterStore store;
  private final BatchingOptions options;
  private final WriterHealth health;
  private final LongSupplier nanoClock;
  private final UnaryOperator<Flush> reslot;
  /** The cause a replayed flush found voided is refused with, should it be one row: its value was refused then. */
  private static final Exception VOIDED_BEFORE_A_RESTART = new IllegalStateException(
    "its id was voided after a refused value, before the restart");
  /** Ids of replayed flushes whose "already there" still needs the void's reading (see {@link #writeReplayed}). */
  private final Set<String> replayedIds = new HashSet<>();
  /** Records a split before its halves are attempted (the journal's; see {@link #split}). */
  private final BiFunction<Flush, List<Flush>, Future<Void>> replaced;
  private final Context context;
  private final Thread eventLoop;
  private boolean failing;
  private Timer flushTimer;
  private Counter retries;
  private Counter refusedRows;

  /** Upper bounds of the flush-duration buckets: a commit's milliseconds up to retries through an outage. */
  static final Duration[] FLUSH_BUCKETS = Stream.of(1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000,
    30_000, 60_000).map(Duration::ofMillis).toArray(Duration[]::new);

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
  }

  /** {@code reslot} gives the same flush on the slots of a new round, for retries. */
  FlushWriter(Vertx vertx, CounterStore store, BatchingOptions options, WriterHealth health, UnaryOperator<Flush> reslot,
              LongSupplier nanoClock, BiFunction<Flush, List<Flush>, Future<Void>> replaced) {
    this.replaced = replaced;
    this.vertx = vertx;
    this.store = store;
    this.options = options;
    this.health = health;
    this.nanoClock = nanoClock;
    this.reslot = reslot;
    this.context = vertx.getOrCreateContext();
    this.eventLoop = Thread.currentThread();
    store.keepFlushSourcesAlive(options.flushSourceHeartbeatMs());
  }

  /**
   * A flush a journal replay carried over, written again under its own id (no request waits for it). An id already
   * there means committed, or voided by a split that a crash cut between the void and the journal's record of the
   * halves: the void tells them apart (it reads a voided id as voided, a committed one as committed), and a voided
   * flush is split again, under the same half ids, instead of passing for committed.
   */
  Future<Void> writeReplayed(Flush flush) {
    replayedIds.add(flush.id());
    return write(flush, List.of()).onComplete(settled -> replayedIds.remove(flush.id()));
  }

  /** Every replayed flush is settled: the earlier runs' flush sources they wrote under can go. */
  void replayedSourcesDone(String liveSource) {
    store.replayedSourcesDone(liveSource);
  }

  /** Completes once every request of the flush is settled (never fails). */
  Future<Void> write(Flush flush, List<Ack> acks) {
    Promise<Void> settled = Promise.promise();
    long started = nanoClock.getAsLong();
    attempt(flush, acks, 0, settled);
    return settled.future().onComplete(done -> {
      store.flushSettled(flush);
      if (flushTimer != null) {
        flushTimer.record(nanoClock.getAsLong() - started, TimeUnit.NANOSECONDS);
      }
    });
  }

  private void attempt(Flush flush, List<Ack> acks, int attemptNo, Promise<Void> settled) {
    onLoop(store.write(flush)).onComplete(result -> {
      if (result.succeeded() && result.result() == WriteOutcome.ALREADY_COMMITTED && replayedIds.remove(flush.id())) {
        setFailing(false);
        voidThenSplit(flush, acks, 0, settled, VOIDED_BEFORE_A_RESTART);
      } else if (result.succeeded()) {
        setFailing(false);
        done(acks);
        settled.complete();
      } else if (result.cause() instanceof FlushOutcomeUnknownException unknown) {
        setFailing(false);
        unknown(flush, acks, unknown);
        settled.complete();
      } else if (Failures.isValueRefused(result.cause())) {
        // not committed by this attempt (see the class comment): void the id before any new id or answer
        setFailing(false);
        voidThenSplit(flush, acks, 0, settled, result.cause());
      } else {
        retryLater(flush, acks, attemptNo, settled, result.cause());
      }
    });
  }

  /**
   * The database refused a value of the flush: its id is voided, then the flush is split (or its one row refused); or,
   * if a late copy of an earlier attempt had committed it whole, its requests are answered as committed. A void that
   * fails for any other reason is retried like a write.
   */
  private void voidThenSplit(Flush flush, List<Ack> acks, int attemptNo, Promise<Void> settled, Throwable refusal) {
    onLoop(store.voidFlush(flush)).onComplete(result -> {
      if (result.succeeded() && result.result() == VoidOutcome.ALREADY_COMMITTED) {
        setFailing(false);
        LOG.warn("flush {} ({} rows) was refused a value, but a late copy of an earlier attempt had committed it whole "
          + "(on other slots): its requests are answered as committed", flush.id(), flush.rows().size());
        done(acks);
        settled.complete();
      } else if (result.succeeded()) {
        setFailing(false);
        if (flush.rows().size() > 1) {
          split(flush, acks, settled);
        } else {
          refuse(flush, acks, refusal);
          settled.complete();
        }
      } else if (result.cause() instanceof FlushOutcomeUnknownException unknown) {
        setFailing(false);
        unknown(flush, acks, unknown);
        settled.complete();
      } else {
        Throwable cause = result.cause();
        if (!Failures.isLockConflict(cause) || attemptNo >= 2) {
          setFailing(true);
        }
        long delay = options.retryDelayMs(attemptNo);
        LOG.warn("voiding flush {} after a refused value failed, retry {} in {} ms: {}", flush.id(), attemptNo + 1, delay,
          cause.toString());
        vertx.setTimer(delay, id -> voidThenSplit(flush, acks, attemptNo + 1, settled, refusal));
      }
    });
  }

  private static void done(List<Ack> acks) {
    for (Ack ack : acks) {
      ack.state = Ack.State.DONE;
      ack.promise.tryComplete();
    }
  }

  /** Whether the flush committed cannot be known (see {@link FlushOutcomeUnknownException}): 504 for its requests. */
  private void unknown(Flush flush, List<Ack> acks, FlushOutcomeUnknownException cause) {
    LOG.error("flush {} ({} rows, {} waiting requests) may or may not have been counted; not retried, answered 504: {}",
      flush.id(), flush.rows().size(), acks.size(), cause.getMessage());
    for (Ack ack : acks) {
      ack.state = Ack.State.DONE;
      ack.promise.tryFail(new ApiError(504, "outcome_unknown",
        "the increment was being written when its flush source was lost; it may or may not be counted", null));
    }
  }

  /**
   * The store's answer on this writer's event loop, failed if it does not come within writeTimeoutMs plus a margin: the
   * store bounds each attempt itself and closes the connection it used; this is the backstop. The timer is a Vert.x
   * timer of this loop, not {@code Future.timeout}, which on a future without a context fires on a global thread.
   */
  private <T> Future<T> onLoop(Future<T> answer) {
    Promise<T> onLoop = Promise.promise();
    long timer = vertx.setTimer(options.getWriteTimeoutMs() + BACKSTOP_MS, id -> onLoop.tryFail(
      new TimeoutException("the store did not answer within " + (options.getWriteTimeoutMs() + BACKSTOP_MS) + " ms")));
    answer.onComplete(result -> {
      Runnable settle = () -> {
        vertx.cancelTimer(timer);
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

  /** An outage: the same flush again, same id, never split and never dropped. */
  private void retryLater(Flush flush, List<Ack> acks, int attemptNo, Promise<Void> settled, Throwable cause) {
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
        + "batching.flushIdRetentionSeconds ({} s), a prune closes its flush source; the gateway then resolves its "
        + "flushes by their ids and goes on under a new source", flush.id(), attemptNo + 1,
        options.getFlushIdRetentionSeconds());
    }
    LOG.warn("flush {} ({} rows) failed, retry {} in {} ms under the same id: {}", flush.id(), flush.rows().size(),
      attemptNo + 1, delay, cause.toString());
    vertx.setTimer(delay, id -> attempt(reslot.apply(flush), acks, attemptNo + 1, settled));
  }

  private void split(Flush flush, List<Ack> acks, Promise<Void> settled) {
    List<FlushRow> rows = flush.rows();
    List<FlushRow> left = rows.subList(0, rows.size() / 2);
    List<FlushRow> right = rows.subList(rows.size() / 2, rows.size());
    Set<CounterKey> leftKeys = new HashSet<>();
    left.forEach(row -> leftKeys.add(new CounterKey(row.type(), row.id())));
    List<Ack> leftAcks = new ArrayList<>();
    List<Ack> rightAcks = new ArrayList<>();
    acks.forEach(ack -> (leftKeys.contains(ack.key) ? leftAcks : rightAcks).add(ack));
    Flush leftHalf = flush.half(0, left);
    Flush rightHalf = flush.half(1, right);
    Promise<Void> leftSettled = Promise.promise();
    leftSettled.future().onComplete(done -> attempt(rightHalf, rightAcks, 0, settled));
    // the journal learns of the halves before either is attempted: a replay resolves them, not the parent
    replaced.apply(flush, List.of(leftHalf, rightHalf)).onComplete(recorded -> {
      if (recorded.failed()) {
        // the journal cannot record the halves: neither is attempted (the parent is void), the replay writes them
        abandon(acks);
        settled.tryComplete();
      } else {
        attempt(leftHalf, leftAcks, 0, leftSettled);
      }
    });
  }

  /**
   * A flush the journal could not record is never attempted: the commit requests in it were not counted (503); its
   * journaled increments stay in the journal for the replay after a restart.
   */
  static void abandon(List<Ack> acks) {
    for (Ack ack : acks) {
      if (ack.state != Ack.State.DONE) {
        ack.state = Ack.State.DONE;
        ack.promise.tryFail(ApiError.unavailable("journal_unavailable", "the journal failed and the gateway writes "
          + "nothing it holds until a restart; this increment was not counted"));
      }
    }
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
      ack.state = Ack.State.DONE;
      ack.promise.tryFail(error);
    }
  }


  /** Whether the last attempt failed for a reason other than a refused value (an outage). */
  boolean isFailing() {
    return failing;
  }

  private void setFailing(boolean nowFailing) {
    if (failing != nowFailing) {
      failing = nowFailing;
      health.writerFailing(nowFailing);
    }
  }
}
