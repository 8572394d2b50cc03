package io.countergateway.internal.rollup;

import io.countergateway.internal.time.Timers;
import io.vertx.core.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The background jobs' rounds on one event loop: each job runs every interval, and never overlaps itself on this
 * replica: the tick that comes while a slow run goes on is skipped, not queued (a queue of runs would only repeat
 * work the database lock lets one replica do at a time). A run that fails is logged and runs again at the next tick.
 */
final class Jobs {
  private static final Logger LOG = LoggerFactory.getLogger(Jobs.class);

  private final Timers timers;
  private final List<Long> scheduled = new ArrayList<>();

  Jobs(Timers timers) {
    this.timers = timers;
  }

  /** Runs {@code job} every {@code intervalSeconds}, the first time one interval from now. */
  void every(int intervalSeconds, String name, Supplier<Future<?>> job) {
    boolean[] running = {false};
    scheduled.add(timers.periodic(intervalSeconds * 1000L, () -> {
      if (running[0]) {
        return;
      }
      running[0] = true;
      job.get().onComplete(done -> {
        running[0] = false;
        if (done.failed()) {
          LOG.warn("{} failed, will run again in {} s: {}", name, intervalSeconds, done.cause().toString());
        }
      });
    }));
  }

  /** No job runs again; a run in progress ends on its own. */
  void cancel() {
    scheduled.forEach(timers::cancel);
    scheduled.clear();
  }
}
