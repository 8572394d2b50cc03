package io.countergateway.bench;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Runs a strategy's writer (and reader) loops, spread over one driver verticle per event loop. Each loop keeps
 * one operation in flight and starts the next when it completes, until the measured window closes; operations
 * that complete inside the window are counted and their latency recorded. Blocking: call it from a thread that
 * is not an event loop.
 */
final class LoadDriver {
  private static final long DRAIN_TIMEOUT_SECONDS = 120;

  /** What one run measured. */
  record Measurement(long windowNanos, long increments, Histogram writeLatencyMicros, long reads,
                     Histogram readLatencyMicros, long readErrors, long writeStatements, long readStatements,
                     String firstError, CpuUse.Share cpu) {
  }

  private final Vertx vertx;
  private final int eventLoops;

  LoadDriver(Vertx vertx, int eventLoops) {
    this.vertx = vertx;
    this.eventLoops = eventLoops;
  }

  Measurement run(Strategy strategy, int writerLoops, int readerLoops, CounterBook book, StatementCounter statements,
                  Duration warmup, Duration duration) throws InterruptedException {
    Run run = new Run(strategy, book, writerLoops + readerLoops);
    List<DriverVerticle> verticles = new CopyOnWriteArrayList<>();
    AtomicInteger next = new AtomicInteger();
    int instances = Math.max(1, Math.min(eventLoops, writerLoops + readerLoops));
    String deployment = vertx.deployVerticle(() -> {
      int i = next.getAndIncrement();
      DriverVerticle verticle = new DriverVerticle(run, share(writerLoops, instances, i), share(readerLoops, instances, i));
      verticles.add(verticle);
      return verticle;
    }, new DeploymentOptions().setInstances(instances)).await();
    try {
      long start = System.nanoTime();
      run.windowStart = start + warmup.toNanos();
      run.windowEnd = run.windowStart + duration.toNanos();
      verticles.forEach(DriverVerticle::go);
      sleepUntil(run.windowStart);
      long writes0 = statements.writes();
      long reads0 = statements.reads();
      CpuUse cpu = CpuUse.now();
      sleepUntil(run.windowEnd);
      long writes1 = statements.writes();
      long reads1 = statements.reads();
      CpuUse.Share cpuShare = cpu.since();
      if (!run.finished.await(DRAIN_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException(strategy.name() + ": operations still in flight " + DRAIN_TIMEOUT_SECONDS
          + " s after the window closed");
      }
      Throwable error = run.firstError.get();
      return new Measurement(run.windowEnd - run.windowStart, run.windowIncrements.sum(),
        run.writeLatency.getIntervalHistogram(), run.windowReads.sum(), run.readLatency.getIntervalHistogram(),
        run.readErrors.sum(), writes1 - writes0, reads1 - reads0,
        error == null ? null : error.getClass().getSimpleName() + ": " + error.getMessage(), cpuShare);
    } finally {
      vertx.undeploy(deployment).await();
    }
  }

  private static int share(int total, int parts, int index) {
    return total / parts + (index < total % parts ? 1 : 0);
  }

  private static void sleepUntil(long nanos) throws InterruptedException {
    long left;
    while ((left = nanos - System.nanoTime()) > 0) {
      TimeUnit.NANOSECONDS.sleep(Math.min(left, 50_000_000L));
    }
  }

  /** State shared by all loops of one run. */
  private static final class Run {
    final Strategy strategy;
    final CounterBook book;
    final int batch;
    final CountDownLatch finished;
    final Recorder writeLatency = new Recorder(3);
    final Recorder readLatency = new Recorder(3);
    final LongAdder windowIncrements = new LongAdder();
    final LongAdder windowReads = new LongAdder();
    final LongAdder readErrors = new LongAdder();
    final AtomicReference<Throwable> firstError = new AtomicReference<>();
    volatile long windowStart;
    volatile long windowEnd;

    Run(Strategy strategy, CounterBook book, int loops) {
      this.strategy = strategy;
      this.book = book;
      this.batch = strategy.incrementsPerOperation();
      this.finished = new CountDownLatch(loops);
    }

    boolean inWindow(long nanos) {
      return nanos >= windowStart && nanos <= windowEnd;
    }

    void error(Throwable failure) {
      firstError.compareAndSet(null, failure);
    }
  }

  /** The loops of one event loop. */
  private static final class DriverVerticle extends VerticleBase {
    private final Run run;
    private final int writerCount;
    private final int readerCount;
    private final List<Strategy.Writer> writers = new ArrayList<>();
    private final List<Strategy.Reader> readers = new ArrayList<>();

    DriverVerticle(Run run, int writerCount, int readerCount) {
      this.run = run;
      this.writerCount = writerCount;
      this.readerCount = readerCount;
    }

    @Override
    public Future<?> start() {
      List<Future<?>> created = new ArrayList<>();
      for (int i = 0; i < writerCount; i++) {
        created.add(run.strategy.writer().onSuccess(writers::add));
      }
      for (int i = 0; i < readerCount; i++) {
        created.add(run.strategy.reader().onSuccess(readers::add));
      }
      return Future.all(created);
    }

    void go() {
      context.runOnContext(v -> {
        writers.forEach(writer -> new WriteLoop(writer).next());
        readers.forEach(reader -> new ReadLoop(reader).next());
      });
    }

    @Override
    public Future<?> stop() {
      List<Future<?>> closed = new ArrayList<>();
      writers.forEach(w -> closed.add(w.close()));
      readers.forEach(r -> closed.add(r.close()));
      return Future.join(closed);
    }

    private final class WriteLoop {
      private final Strategy.Writer writer;

      WriteLoop(Strategy.Writer writer) {
        this.writer = writer;
      }

      void next() {
        long started = System.nanoTime();
        if (started >= run.windowEnd) {
          run.finished.countDown();
          return;
        }
        int[] counters = pick(run.book.counters(), run.batch);
        Future<Void> done;
        try {
          done = writer.increment(counters);
        } catch (RuntimeException e) {
          done = Future.failedFuture(e);
        }
        if (done.isComplete()) {
          record(done, counters, started);
          context.runOnContext(v -> next()); // no recursion on synchronous completion
        } else {
          Future<Void> pending = done;
          pending.onComplete(result -> {
            record(pending, counters, started);
            next();
          });
        }
      }

      private void record(Future<Void> done, int[] counters, long started) {
        long ended = System.nanoTime();
        if (done.succeeded()) {
          run.book.acknowledged(counters);
          if (run.inWindow(ended)) {
            run.windowIncrements.add(counters.length);
            run.writeLatency.recordValue(Math.max(1, (ended - started) / 1_000));
          }
        } else if (done.cause() instanceof Strategy.UnknownOutcome) {
          run.book.unknown(counters);
          run.error(done.cause());
        } else {
          run.book.failed(counters);
          run.error(done.cause());
        }
      }
    }

    private final class ReadLoop {
      private final Strategy.Reader reader;

      ReadLoop(Strategy.Reader reader) {
        this.reader = reader;
      }

      void next() {
        long started = System.nanoTime();
        if (started >= run.windowEnd) {
          run.finished.countDown();
          return;
        }
        Future<Long> done;
        try {
          done = reader.read();
        } catch (RuntimeException e) {
          done = Future.failedFuture(e);
        }
        if (done.isComplete()) {
          record(done, started);
          context.runOnContext(v -> next());
        } else {
          Future<Long> read = done;
          read.onComplete(result -> {
            record(read, started);
            next();
          });
        }
      }

      private void record(Future<Long> read, long started) {
        long ended = System.nanoTime();
        if (read.succeeded()) {
          if (run.inWindow(ended)) {
            run.windowReads.increment();
            run.readLatency.recordValue(Math.max(1, (ended - started) / 1_000));
          }
        } else {
          run.readErrors.increment();
          run.error(read.cause());
        }
      }
    }
  }

  private static int[] pick(int counters, int n) {
    int[] picked = new int[n];
    if (counters > 1) {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      for (int i = 0; i < n; i++) {
        picked[i] = random.nextInt(counters);
      }
    }
    return picked;
  }
}
