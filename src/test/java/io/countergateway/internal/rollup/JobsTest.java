package io.countergateway.internal.rollup;

import io.countergateway.testing.VirtualTimers;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("The background jobs' rounds")
class JobsTest {
  private final VirtualTimers timers = new VirtualTimers();
  private final Jobs jobs = new Jobs(timers);

  @Test
  @DisplayName("a job runs once every interval, the first time one interval after it is scheduled")
  void everyInterval() {
    int[] runs = {0};
    jobs.every(60, "retention", () -> {
      runs[0]++;
      return Future.succeededFuture();
    });
    timers.advance(Duration.ofSeconds(59));
    assertThat(runs[0]).as("before the first interval").isZero();
    timers.advance(Duration.ofSeconds(1));
    assertThat(runs[0]).isEqualTo(1);
    timers.advance(Duration.ofMinutes(10));
    assertThat(runs[0]).isEqualTo(11);
  }

  @Test
  @DisplayName("a run slower than the interval is not overlapped: the ticks during it are skipped, not queued")
  void slowRunSkipsTicks() {
    List<Promise<Void>> runs = new ArrayList<>();
    jobs.every(10, "roll-up", () -> {
      Promise<Void> run = Promise.promise();
      runs.add(run);
      return run.future();
    });
    timers.advance(Duration.ofSeconds(35));
    assertThat(runs).as("one run, still going after three ticks").hasSize(1);
    runs.get(0).complete();
    timers.advance(Duration.ofSeconds(5));
    assertThat(runs).as("the next tick after it ended").hasSize(2);
  }

  @Test
  @DisplayName("a failed run is tried again at the next tick")
  void failedRunRunsAgain() {
    int[] runs = {0};
    jobs.every(5, "compaction", () -> {
      runs[0]++;
      return Future.failedFuture(new IllegalStateException("the database is down"));
    });
    timers.advance(Duration.ofSeconds(15));
    assertThat(runs[0]).isEqualTo(3);
  }

  @Test
  @DisplayName("once cancelled, no job runs again")
  void cancelled() {
    int[] runs = {0};
    jobs.every(1, "idempotency key expiry", () -> {
      runs[0]++;
      return Future.succeededFuture();
    });
    timers.advance(Duration.ofSeconds(2));
    jobs.cancel();
    timers.advance(Duration.ofHours(1));
    assertThat(runs[0]).isEqualTo(2);
    assertThat(timers.pending()).as("timers left").isZero();
  }
}
