package io.countergateway.write.journal;

import io.countergateway.config.JournalOptions;
import io.countergateway.model.CounterKey;
import io.countergateway.model.Increment;
import io.countergateway.testing.EventLoop;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Not a test: how many bytes a million held beacon increments take in the journal, and how long replaying them takes
 * (read, checksum, reduce, write the snapshot). Opt in with {@code -Dmeasure.journal=true}; {@code
 * -Dmeasure.increments=N} and {@code -Dmeasure.counters=M} (distinct counters they go to). Figures go to standard output.
 */
@EnabledIfSystemProperty(named = "measure.journal", matches = "true")
@DisplayName("Journal bytes and replay time for held increments (measurement, opt in)")
class JournalReplayMeasurement {
  @TempDir
  Path dir;

  @Test
  void measure() throws IOException {
    int increments = Integer.getInteger("measure.increments", 1_000_000);
    int counters = Integer.getInteger("measure.counters", 1_000_000);
    Vertx vertx = Vertx.vertx();
    try {
      Context loop = vertx.getOrCreateContext();
      JournalOptions options = JournalOptions.of(dir.toString(), JournalOptions.Fsync.ALWAYS, 64L << 20, 1L << 40);
      Journal journal = await(EventLoop.call(loop, () -> Journal.open(vertx, options, 0, 1, full -> { })));
      io.micrometer.core.instrument.simple.SimpleMeterRegistry registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
      EventLoop.call(loop, () -> {
        journal.registerMetrics(registry, io.micrometer.core.instrument.Tags.empty());
        return null;
      });
      long appendStarted = System.nanoTime();
      for (int from = 0; from < increments; from += 10_000) {
        int first = from;
        // as beacons arrive: one record per request, group-committed
        List<Future<Void>> answers = EventLoop.call(loop, () -> {
          List<Future<Void>> all = new ArrayList<>();
          for (int i = first; i < Math.min(increments, first + 10_000); i++) {
            journal.appendIncrement(new Increment(new CounterKey("pageviews", "/articles/" + (i % counters)), 1));
            if (i % 100 == 99) {
              all.add(journal.committed());
            }
          }
          all.add(journal.committed());
          return all;
        });
        await(Future.all(answers));
      }
      long appendMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - appendStarted);
      await(EventLoop.call(loop, () -> journal.close(false)));
      long bytes = bytesOnDisk();
      io.micrometer.core.instrument.Timer fsyncs = registry.get("gateway.journal.fsync.duration").timer();
      StringBuilder quantiles = new StringBuilder();
      for (var value : fsyncs.takeSnapshot().percentileValues()) {
        quantiles.append(String.format(" p%s %.2f ms", value.percentile(), value.value(TimeUnit.MILLISECONDS)));
      }
      System.out.printf("journal: %,d fsyncs for %,d increments (%,.0f per fsync);%s; max %.2f ms%n", fsyncs.count(),
        increments, (double) increments / fsyncs.count(), quantiles, fsyncs.max(TimeUnit.MILLISECONDS));

      long replayStarted = System.nanoTime();
      Journal replayed = await(EventLoop.call(loop, () -> Journal.open(vertx, options, 0, 1, full -> { })));
      long replayMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - replayStarted);
      long held = replayed.recovered().pending().values().stream().mapToLong(Long::longValue).sum();
      System.out.printf("journal: %,d increments to %,d counters appended in %,d ms (fsync always); %,d bytes on disk "
          + "(%,.0f bytes per million increments); replay %,d ms → %,d counters holding %,d; snapshot %,d bytes%n",
        increments, counters, appendMs, bytes, bytes * 1e6 / increments, replayMs,
        replayed.recovered().pending().size(), held, bytesOnDisk());
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
    }
  }

  private long bytesOnDisk() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(file -> file.toString().endsWith(".seg")).mapToLong(file -> file.toFile().length()).sum();
    }
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.MINUTES);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
