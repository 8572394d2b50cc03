package io.countergateway.bench;

import io.vertx.core.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The correctness column, driven by in-memory strategies that count right, lose increments or time out. */
@DisplayName("the bench's correctness check")
class BenchRunnerCheckTest {
  private static BenchRunner runner;

  @BeforeAll
  static void start() {
    runner = new BenchRunner(new BenchOptions().concurrency(4).counters(10)
      .duration(Duration.ofMillis(300)).warmup(Duration.ZERO));
  }

  @AfterAll
  static void stop() {
    runner.close();
  }

  @Test
  @DisplayName("a strategy that counts every acknowledged increment is ok")
  void correctStrategyIsOk() {
    StrategyResult result = runner.runOne(new InMemory(0, false));

    assertThat(result.status()).isEqualTo(StrategyResult.Status.OK);
    assertThat(result.check()).startsWith("ok: all 10 counters");
    assertThat(result.increments()).isPositive();
    assertThat(result.incrementsPerSecond()).isPositive();
  }

  @Test
  @DisplayName("a strategy that loses increments it acknowledged is a mismatch, which fails the run")
  void losingStrategyIsAMismatch() {
    StrategyResult result = runner.runOne(new InMemory(7, false));

    assertThat(result.status()).isEqualTo(StrategyResult.Status.MISMATCH);
    assertThat(result.check()).startsWith("MISMATCH").contains("expected");
    assertThat(result.failedRun()).isTrue();
  }

  @Test
  @DisplayName("increments of unknown outcome may or may not be in the counter")
  void unknownOutcomesAreAllowedEitherWay() {
    StrategyResult result = runner.runOne(new InMemory(0, true));

    assertThat(result.status()).isEqualTo(StrategyResult.Status.OK);
    assertThat(result.unknown()).isPositive();
  }

  @Test
  @DisplayName("a strategy that cannot run here is skipped, not failed")
  void skippedStrategy() {
    StrategyResult result = runner.runOne(new InMemory(0, false) {
      @Override
      public Future<Void> setup() {
        return Future.failedFuture(new Skipped("nothing listens"));
      }
    });

    assertThat(result.status()).isEqualTo(StrategyResult.Status.SKIPPED);
    assertThat(result.failedRun()).isFalse();
    assertThat(result.note()).isEqualTo("nothing listens");
  }

  /**
   * Counts in a map. {@code loseEvery > 0} acknowledges but drops every n-th increment; {@code someUnknown}
   * reports every 5th increment as unknown, counting every other of those.
   */
  static class InMemory implements Strategy {
    private final int loseEvery;
    private final boolean someUnknown;
    private final Map<Integer, AtomicLong> values = new ConcurrentHashMap<>();
    private final AtomicLong calls = new AtomicLong();

    InMemory(int loseEvery, boolean someUnknown) {
      this.loseEvery = loseEvery;
      this.someUnknown = someUnknown;
    }

    @Override
    public String name() {
      return "in-memory";
    }

    @Override
    public String title() {
      return "in memory";
    }

    @Override
    public Future<Void> setup() {
      return Future.succeededFuture();
    }

    @Override
    public Future<Writer> writer() {
      return Future.succeededFuture(counters -> {
        long n = calls.incrementAndGet();
        // complete later, like a real round trip
        io.vertx.core.Promise<Void> promise = io.vertx.core.Promise.promise();
        io.vertx.core.Vertx.currentContext().owner().setTimer(1, id -> {
          boolean lose = loseEvery > 0 && n % loseEvery == 0;
          boolean unknown = someUnknown && n % 5 == 0;
          if (!lose && (!unknown || n % 10 == 0)) {
            values.computeIfAbsent(counters[0], c -> new AtomicLong()).incrementAndGet();
          }
          if (unknown) {
            promise.fail(new UnknownOutcome("lost the connection", null));
          } else {
            promise.complete();
          }
        });
        return promise.future();
      });
    }

    @Override
    public Future<Reader> reader() {
      return Future.succeededFuture(() -> Future.succeededFuture(values.getOrDefault(0, new AtomicLong()).get()));
    }

    @Override
    public Future<Map<Integer, Long>> values(List<Integer> counters) {
      Map<Integer, Long> result = new HashMap<>();
      counters.forEach(c -> result.put(c, values.getOrDefault(c, new AtomicLong()).get()));
      return Future.succeededFuture(result);
    }

    @Override
    public Future<Long> total() {
      return Future.succeededFuture(values.values().stream().mapToLong(AtomicLong::get).sum());
    }

    @Override
    public Future<Void> close() {
      return Future.succeededFuture();
    }
  }
}
