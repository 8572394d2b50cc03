package io.countergateway.internal.write.journal;

import io.countergateway.config.JournalOptions;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
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
 * Not a test: what a start after kill -9 costs. Appends held beacon increments (one request each, group-committed,
 * fsync always) into segments of {@code journal.segmentBytes} (16 MiB), copies the segment files as they are while
 * the journal runs (what a kill -9 leaves: each segment zero-filled past its last frame), and replays the copy: read,
 * checksum, reduce, write the snapshot. Opt in with {@code -Dmeasure.journal=true}; {@code -Dmeasure.increments=N},
 * {@code -Dmeasure.counters=M} (distinct counters they go to). Figures go to standard output.
 */
@EnabledIfSystemProperty(named = "measure.journal", matches = "true")
@DisplayName("Journal bytes and replay rate after a kill -9 (measurement, opt in)")
class JournalReplayMeasurement {
  @TempDir
  Path dir;

  @Test
  void measure() throws Exception {
    int increments = Integer.getInteger("measure.increments", 1_000_000);
    int counters = Integer.getInteger("measure.counters", 1_000_000);
    Path running = Files.createDirectories(dir.resolve("running"));
    Path crashed = Files.createDirectories(dir.resolve("crashed"));
    try (JournalLoop loop = new JournalLoop()) {
      Journal journal = loop.open(JournalFiles.disk(),
        JournalLoop.options(running, JournalOptions.Fsync.ALWAYS, 16L << 20, 1L << 40));
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      loop.onLoop(() -> {
        journal.registerMetrics(registry, Tags.empty());
        journal.neededBy(() -> 0); // nothing written to a database: every segment stays
        return null;
      });
      long appendStarted = System.nanoTime();
      for (int from = 0; from < increments; from += 10_000) {
        int first = from;
        List<Future<Void>> answers = loop.onLoop(() -> {
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
        JournalLoop.await(Future.all(answers));
      }
      long appendMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - appendStarted);
      io.micrometer.core.instrument.Timer fsyncs = registry.get("gateway.journal.fsync.duration").timer();
      System.out.printf("journal: %,d increments to %,d counters appended in %,d ms; %,d fsyncs (%,.0f increments "
          + "per fsync), max %.2f ms%n", increments, counters, appendMs, fsyncs.count(),
        (double) increments / fsyncs.count(), fsyncs.max(TimeUnit.MILLISECONDS));

      long segmentBytes = 0;
      int segmentFiles = 0;
      try (Stream<Path> files = Files.list(running)) {
        for (Path file : files.filter(f -> f.toString().endsWith(".seg")).toList()) {
          Files.copy(file, crashed.resolve(file.getFileName()));
          segmentBytes += Files.size(file);
          segmentFiles++;
        }
      }
      loop.close(journal, false);

      long replayStarted = System.nanoTime();
      Journal replayed = loop.open(JournalFiles.disk(),
        JournalLoop.options(crashed, JournalOptions.Fsync.ALWAYS, 16L << 20, 1L << 40));
      double replaySeconds = (System.nanoTime() - replayStarted) / 1e9;
      Journal.Recovered recovered = replayed.recovered();
      long held = recovered.pending().values().stream().mapToLong(Long::longValue).sum();
      System.out.printf("replay after kill -9: %d segment files, %,d bytes on disk (zero-filled tails included), "
          + "%,d frames, %,d bytes examined (%.2f x the files); %.3f s → %,.0f MB/s of segment files, %,.0f increments/s; "
          + "%,d counters holding %,d; damaged %s, tail %s%n", segmentFiles, segmentBytes, recovered.replay().frames(),
        recovered.replay().bytesExamined(), (double) recovered.replay().bytesExamined() / segmentBytes, replaySeconds,
        segmentBytes / 1e6 / replaySeconds, increments / replaySeconds, recovered.pending().size(), held,
        recovered.replay().damaged(), recovered.replay().tail());
      loop.close(replayed, false);
    }
  }

  static long bytesOnDisk(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(file -> file.toString().endsWith(".seg")).mapToLong(file -> file.toFile().length()).sum();
    }
  }
}
