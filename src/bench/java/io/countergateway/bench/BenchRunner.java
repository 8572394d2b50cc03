package io.countergateway.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.metrics.MetricsOptions;
import io.vertx.sqlclient.Pool;
import org.HdrHistogram.Histogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Runs the chosen strategies one after another on one Vert.x, each with the same writers and duration, and
 * collects their rows. Blocking: call it from a plain thread (the CLI's main thread, a test).
 */
public final class BenchRunner implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BenchRunner.class);
  private static final long STEP_TIMEOUT_SECONDS = 300;

  private final BenchOptions options;
  private final StatementCounter statements = new StatementCounter();
  private final Vertx vertx;
  private final BenchContext ctx;
  private final LoadDriver driver;

  public BenchRunner(BenchOptions options) {
    this.options = options;
    // the gateway's own transport (epoll where it loads), for the gateway and the Redis client alike
    VertxOptions vertxOptions = new VertxOptions().setMetricsOptions(new MetricsOptions().setEnabled(true))
      .setPreferNativeTransport(true);
    this.vertx = Vertx.builder().with(vertxOptions).withMetrics(statements).build();
    this.ctx = new BenchContext(vertx, options, Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36));
    this.driver = new LoadDriver(vertx, vertxOptions.getEventLoopPoolSize());
  }

  /** Runs every strategy; a strategy that fails becomes an ERROR row, the others still run. */
  public RunReport run(String commandLine) {
    RunReport report = new RunReport(options, commandLine, databaseVersion(),
      Runtime.getRuntime().availableProcessors(), OffsetDateTime.now().truncatedTo(ChronoUnit.SECONDS));
    for (String name : options.strategies()) {
      StrategyResult result = runOne(Strategies.create(name, ctx));
      LOG.info("{}: {} increments/s, p99 {} ms, {}", result.name(), String.format("%,.0f", result.incrementsPerSecond()),
        String.format("%.2f", result.p99Ms()), result.check());
      report.add(result);
    }
    return report;
  }

  private String databaseVersion() {
    Pool pool = options.dialect().pool(vertx, options, 1);
    try {
      return pool.query("SELECT version()").execute()
        .map(rows -> rows.iterator().next().getValue(0).toString()).await(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("cannot reach " + options.dialect().label() + " at " + options.host() + ":"
        + options.port() + "/" + options.database() + ": " + unwrap(e).getMessage(), unwrap(e));
    } finally {
      pool.close();
    }
  }

  StrategyResult runOne(Strategy strategy) {
    LOG.info("running {} for {} s (+{} s warm-up)", strategy.name(), options.duration().toMillis() / 1000.0,
      options.warmup().toMillis() / 1000.0);
    try {
      await(strategy.setup());
    } catch (Throwable e) {
      close(strategy);
      Throwable cause = unwrap(e);
      boolean skipped = cause instanceof Strategy.Skipped;
      if (!skipped) {
        LOG.error("{} could not start", strategy.name(), cause);
      }
      return StrategyResult.notRun(strategy.name(), strategy.title(), strategy.durable(),
        skipped ? StrategyResult.Status.SKIPPED : StrategyResult.Status.ERROR, String.valueOf(cause.getMessage()));
    }
    try {
      CounterBook book = new CounterBook(options.counters());
      int writers = strategy.writerLoops(options.concurrency());
      int readers = options.readMix() && strategy.checkable() ? options.readers() : 0;
      LoadDriver.Measurement m = driver.run(strategy, writers, readers, book, statements, options.warmup(),
        options.duration());
      await(strategy.quiesce());
      CorrectnessCheck.Verdict verdict = strategy.checkable() ? CorrectnessCheck.run(strategy, book)
        : new CorrectnessCheck.Verdict(true, "n/a: stores nothing");
      StrategyResult.Status status = !strategy.checkable() ? StrategyResult.Status.NOT_CHECKED
        : verdict.ok() ? StrategyResult.Status.OK : StrategyResult.Status.MISMATCH;
      double seconds = m.windowNanos() / 1e9;
      Histogram w = m.writeLatencyMicros();
      Histogram r = m.readLatencyMicros();
      String note = strategy.note();
      note = (note.isEmpty() ? "" : note + "; ") + m.cpu();
      if (m.firstError() != null) {
        note = note + "; first error: " + m.firstError();
      }
      return new StrategyResult(strategy.name(), strategy.title(), strategy.durable(), status, writers, seconds,
        m.increments(), m.increments() / seconds, ms(w, 50), ms(w, 99), w.getTotalCount() == 0 ? 0 : w.getMaxValue() / 1000.0,
        m.writeStatements(), m.readStatements(), book.acknowledgedTotal(), book.failedTotal(), book.unknownTotal(),
        m.reads(), m.reads() / seconds, ms(r, 99), m.readErrors(), verdict.text(), note);
    } catch (Throwable e) {
      Throwable cause = unwrap(e);
      LOG.error("{} failed", strategy.name(), cause);
      return StrategyResult.notRun(strategy.name(), strategy.title(), strategy.durable(), StrategyResult.Status.ERROR,
        String.valueOf(cause.getMessage()));
    } finally {
      close(strategy);
    }
  }

  private static double ms(Histogram histogram, double percentile) {
    return histogram.getTotalCount() == 0 ? 0 : histogram.getValueAtPercentile(percentile) / 1000.0;
  }

  private static void close(Strategy strategy) {
    try {
      await(strategy.close());
    } catch (Throwable e) {
      LOG.warn("closing {} failed: {}", strategy.name(), unwrap(e).toString());
    }
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.await(STEP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
  }

  private static Throwable unwrap(Throwable e) {
    Throwable cause = e;
    while ((cause instanceof ExecutionException || cause instanceof java.util.concurrent.CompletionException)
      && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  @Override
  public void close() {
    try {
      vertx.close().await(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.warn("closing Vert.x failed: {}", e.toString());
    }
  }
}
