package io.countergateway.batch;

import io.countergateway.GatewayState;
import io.countergateway.config.BatchingOptions;
import io.countergateway.model.ApiError;
import io.countergateway.model.CounterKey;
import io.countergateway.store.CounterStore;
import io.countergateway.store.Failures;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Gets one flush into the database and settles its waiting requests. A failure that may hide a commit (lost
 * connection, deadlock, timeout) retries the same immutable flush with backoff until it lands; its flush id makes
 * the retry a no-op if the first attempt had committed. A refusal by the database (bad value) cannot have written
 * anything, so the flush is split in halves until the refused row is alone, and only its requests fail.
 */
final class FlushWriter {
  private static final Logger LOG = LoggerFactory.getLogger(FlushWriter.class);

  private final Vertx vertx;
  private final CounterStore store;
  private final BatchingOptions options;
  private final GatewayState state;
  private boolean failing;
  private Timer flushTimer;
  private Counter retries;
  private Counter refusedRows;

  void registerMetrics(MeterRegistry registry, Tags tags) {
    flushTimer = Timer.builder("gateway.flush.duration").tags(tags)
      .description("from a flush's first attempt until it is settled, retries included")
      .publishPercentiles(0.5, 0.99).register(registry);
    retries = Counter.builder("gateway.flush.retries").tags(tags).register(registry);
    refusedRows = Counter.builder("gateway.flush.refused.rows").tags(tags)
      .description("counter rows the database refused (e.g. BIGINT overflow); their increments were not counted")
      .register(registry);
  }

  FlushWriter(Vertx vertx, CounterStore store, BatchingOptions options, GatewayState state) {
    this.vertx = vertx;
    this.store = store;
    this.options = options;
    this.state = state;
  }

  /** Completes once every request of the flush is settled (never fails). */
  Future<Void> write(Flush flush, List<Ack> acks) {
    Promise<Void> settled = Promise.promise();
    long started = System.nanoTime();
    attempt(flush, acks, 0, settled);
    return settled.future().onComplete(done -> {
      if (flushTimer != null) {
        flushTimer.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
      }
    });
  }

  private void attempt(Flush flush, List<Ack> acks, int attemptNo, Promise<Void> settled) {
    store.write(flush).timeout(options.getWriteTimeoutMs(), TimeUnit.MILLISECONDS).onComplete(result -> {
      if (result.succeeded()) {
        setFailing(false);
        for (Ack ack : acks) {
          ack.state = Ack.State.DONE;
          ack.promise.tryComplete();
        }
        settled.complete();
      } else if (Failures.isRetryable(result.cause())) {
        setFailing(true);
        if (retries != null) {
          retries.increment();
        }
        long delay = backoff(attemptNo);
        LOG.warn("flush {} ({} rows) failed, retry {} in {} ms: {}", flush.id(), flush.rows().size(), attemptNo + 1,
          delay, result.cause().toString());
        vertx.setTimer(delay, id -> attempt(flush, acks, attemptNo + 1, settled));
      } else if (flush.rows().size() > 1) {
        setFailing(false);
        split(flush, acks, settled);
      } else {
        setFailing(false);
        refuse(flush, acks, result.cause());
        settled.complete();
      }
    });
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
    Promise<Void> leftSettled = Promise.promise();
    leftSettled.future().onComplete(done -> attempt(new Flush(flush.id() + "b", right), rightAcks, 0, settled));
    attempt(new Flush(flush.id() + "a", left), leftAcks, 0, leftSettled);
  }

  private void refuse(Flush flush, List<Ack> acks, Throwable cause) {
    FlushRow row = flush.rows().get(0);
    if (refusedRows != null) {
      refusedRows.increment();
    }
    ApiError error = Failures.isOverflow(cause)
      ? new ApiError(422, "counter_overflow", "the increment would take the counter beyond the 64-bit range; it was not counted", "delta")
      : new ApiError(500, "write_failed", "the database refused the write: " + cause.getMessage(), null);
    LOG.error("the database refused {} for counter {}/{} (slot {}); not retried, {} waiting requests get {}: {}",
      row.delta(), row.type(), row.id(), row.slot(), acks.size(), error.status(), cause.toString());
    for (Ack ack : acks) {
      ack.state = Ack.State.DONE;
      ack.promise.tryFail(error);
    }
  }

  /** Exponential, capped, with jitter so that coalescers do not retry in step. */
  private long backoff(int attemptNo) {
    long ceiling = Math.min(options.getRetryMaxMs(), (long) options.getRetryInitialMs() << Math.min(attemptNo, 20));
    return ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
  }

  private void setFailing(boolean nowFailing) {
    if (failing != nowFailing) {
      failing = nowFailing;
      state.writerFailing(nowFailing);
    }
  }
}
