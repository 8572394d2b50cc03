package io.countergateway.internal.write.journal;

import io.countergateway.config.JournalOptions;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.testing.Eventually;
import io.vertx.core.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.countergateway.internal.write.journal.JournalLoop.await;
import static io.countergateway.internal.write.journal.JournalLoop.key;
import static io.countergateway.internal.write.journal.JournalLoop.like;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A write the crash cut short in the page cache (src/DESIGN.md §4 "Replay"): the pages of one unforced write that
 * reached the disk and those that did not. Nothing in such a write was answered and no flush formed in it was sent, so
 * the increments answered before it are counted once: never dropped by the gap rule, never doubled.
 */
@DisplayName("The journal's replay of a write the crash cut short in the page cache")
class JournalTornWriteTest {
  private static final Path DIR = Path.of("/journal");
  private static final int PAGE = 4096;
  private static final Flush F = new Flush(FlushId.parse("src:1"), List.of(new FlushRow("likes", "x", (short) 0, 1)));

  private final JournalLoop loop = new JournalLoop();
  private final FaultingFiles files = new FaultingFiles();
  private Journal journal;

  @AfterEach
  void tearDown() throws Exception {
    loop.close();
  }

  private static JournalOptions options(long segmentBytes) {
    return JournalLoop.options(DIR, JournalOptions.Fsync.ALWAYS, segmentBytes, 1 << 30);
  }

  private void answered(String id) {
    await(loop.onLoop(() -> {
      journal.appendIncrement(like(id, 1));
      return journal.committed();
    }));
  }

  private long offset() {
    return loop.onLoop(journal::fileOffset);
  }

  /** Opens the journal with its spare made and answers x; returns the segment being written. */
  private Path startWithXAnswered(JournalOptions options) {
    journal = loop.openWithSpare(files, options);
    answered("x");
    return loop.onLoop(journal::currentFile);
  }

  /** One request of {@code count} counters, each new: one frame of about 30 bytes a counter. */
  private static List<Increment> batch(String prefix, int count) {
    List<Increment> batch = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      batch.add(like(prefix + i, 1));
    }
    return batch;
  }

  /**
   * Answers {@code w}, holding the writer in the force that answers it while {@code next} queues frames: they all go in
   * the writer's next pass, whose first force in {@code file} never happens (the crash). Returns once it crashed.
   */
  private void nextPassCrashesBeforeItsForce(Path file, Runnable next) throws InterruptedException {
    int forces = files.count(FaultingFiles.Op.FORCE, file);
    files.pauseAt(FaultingFiles.Op.FORCE, file, forces + 1);
    files.crashAt(FaultingFiles.Op.FORCE, file, forces + 2);
    Future<Void> w = loop.onLoop(() -> {
      journal.appendIncrement(like("w", 1));
      return journal.committed();
    });
    files.awaitPaused();
    loop.onLoop(() -> {
      next.run();
      return null;
    });
    files.resume();
    await(w);
    Eventually.until("the crash", files::crashed);
    loop.onLoop(() -> journal.close(false));
  }

  /** A restart on what {@code survival} kept: x and w, answered before the torn pass, are counted once. */
  private Journal.Recovered restartCountsWhatWasAnswered(FaultingFiles.Survival survival, JournalOptions options) {
    Journal.Recovered recovered = loop.open(files.afterCrash(survival), options).recovered();
    assertThat(counted(recovered, "x")).as("x, answered before the torn pass").isEqualTo(1);
    assertThat(counted(recovered, "w")).as("w, answered by the force before the torn pass").isEqualTo(1);
    assertThat(recovered.replay().dropped().counters()).isZero();
    return recovered;
  }

  /** What the restart counts for {@code id}: pending, and in the flushes it writes again. */
  private static long counted(Journal.Recovered recovered, String id) {
    CounterKey key = key(id);
    long inFlushes = recovered.unsettled().stream().flatMap(flush -> flush.rows().stream())
      .filter(row -> new CounterKey(row.type(), row.id(), row.bucket()).equals(key)).mapToLong(FlushRow::delta).sum();
    return recovered.pending().getOrDefault(key, 0L) + inFlushes;
  }

  @Test
  @DisplayName("a segment's last frames lost while the next segment's frames of the same pass reached the disk: what was answered before them is counted once")
  void tornSegmentEnd() throws InterruptedException {
    JournalOptions options = options(8 * 1024);
    Path first = startWithXAnswered(options);
    // the flush record and its copy fit the segment, the request after them does not
    long flushBytes = 2 * Frames.frameBytes(F.id().toString().length(), 60);
    for (int i = 0; 8 * 1024 - offset() >= 100 + 2 * flushBytes + 1_000; i++) {
      answered("pad" + i);
    }
    long torn = offset() + 40;
    Path[] next = new Path[1];
    nextPassCrashesBeforeItsForce(first, () -> {
      journal.formed(F, List.of());
      journal.appendIncrements(batch("z", 200));
      next[0] = journal.currentFile();
    });
    assertThat(next[0]).as("the request after the flush record went to the next segment").isNotEqualTo(first);
    assertThat(torn / PAGE).as("the flush record is in the segment's last page written").isEqualTo(8 * 1024 / PAGE - 1);

    restartCountsWhatWasAnswered(FaultingFiles.Survival.losing(first, torn, Long.MAX_VALUE), options);
  }

  @Test
  @DisplayName("a page of one write lost while its later pages reached the disk: what was answered before it is counted once")
  void lostPageInsideOneWrite() throws InterruptedException {
    JournalOptions options = options(64 * 1024);
    Path file = startWithXAnswered(options);
    long[] lost = new long[1];
    nextPassCrashesBeforeItsForce(file, () -> {
      lost[0] = journal.fileOffset();
      journal.formed(F, List.of());
      journal.appendIncrements(batch("z", 300));
      journal.appendIncrement(like("after", 1));
    });
    assertThat(lost[0] % PAGE).as("the flush record and its copy start the lost page").isLessThan(PAGE - 400);

    Journal.Recovered recovered = restartCountsWhatWasAnswered(
      FaultingFiles.Survival.losing(file, lost[0], lost[0] + 1), options);
    assertThat(counted(recovered, "after")).as("the frame after the lost page, read").isEqualTo(1);
  }

  @Test
  @DisplayName("a forced flush record and its copy whose bytes were flipped still hide a flush that may have committed: what it took is not counted again")
  void flippedForcedFlushRecordKeepsTheGapRule() {
    JournalOptions options = options(64 * 1024);
    Path file = startWithXAnswered(options);
    long record = offset();
    await(loop.onLoop(() -> journal.formed(F, List.of())));
    long copy = record + (offset() - record) / 2;
    answered("y");
    // the headers' magic flipped: neither frame says which flush it held, and the flush committed
    files.flip(file, record);
    files.flip(file, copy);
    loop.onLoop(() -> journal.close(false));

    Journal restarted = loop.open(files.afterCrash(FaultingFiles.Survival.ALL), options);
    Journal.Recovered recovered = restarted.recovered();
    assertThat(counted(recovered, "x")).as("x, taken by the flush the damage hid").isZero();
    assertThat(counted(recovered, "y")).isEqualTo(1);
    assertThat(recovered.replay().dropped().counters()).isEqualTo(1);
  }
}
