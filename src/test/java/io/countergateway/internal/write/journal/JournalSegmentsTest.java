package io.countergateway.internal.write.journal;

import io.countergateway.config.JournalOptions;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.testing.Eventually;
import io.countergateway.internal.write.journal.FaultingFiles.Op;
import io.countergateway.internal.write.journal.FaultingFiles.Survival;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static io.countergateway.internal.write.journal.JournalLoop.await;
import static io.countergateway.internal.write.journal.JournalLoop.key;
import static io.countergateway.internal.write.journal.JournalLoop.like;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The journal's segments: made ahead, waited for, filled exactly, bounded, deleted, inherited, read in order. */
@DisplayName("The journal's segments")
class JournalSegmentsTest {
  private static final Path DIR = Path.of("/journal");
  private static final long SEGMENT = 8 * 1024;

  private final JournalLoop loop = new JournalLoop();

  @AfterEach
  void tearDown() throws Exception {
    loop.close();
  }

  private static JournalOptions options(JournalOptions.Fsync fsync, long maxBytes) {
    return JournalLoop.options(DIR, fsync, SEGMENT, maxBytes);
  }

  private static JournalOptions options() {
    return options(JournalOptions.Fsync.ALWAYS, 1 << 30);
  }

  @Test
  @DisplayName("journal.maxBytes is the exact bound of what is held, and refusing ends once a tenth of it is released")
  void byteBoundExactly() {
    long max = 64 * 1024;
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options(JournalOptions.Fsync.ALWAYS, max));
    long[] needed = {0};
    loop.onLoop(() -> {
      journal.neededBy(() -> needed[0]);
      return null;
    });
    for (int round = 0; loop.onLoop(journal::position) < max - 200; round++) {
      loop.accept(journal, "b" + round + "-", 20);
    }
    long held = loop.onLoop(journal::position);
    assertThat(loop.refusal(journal, max - held)).as("exactly at the bound").isNull();
    assertThat(loop.refusal(journal, max - held + 1).code()).isEqualTo("journal_full");
    assertThat(loop.fullChanges).containsExactly(true);
    // held stays above 90 % of the bound: still refusing
    loop.onLoop(() -> {
      needed[0] = journal.position() - max * 9 / 10;
      journal.release();
      return null;
    });
    assertThat(loop.fullChanges).containsExactly(true);
    loop.onLoop(() -> {
      needed[0] = journal.position() - max * 9 / 10 + 1;
      journal.release();
      return null;
    });
    assertThat(loop.fullChanges).containsExactly(true, false);
    assertThat(loop.refusal(journal, 100)).isNull();
  }

  @Test
  @DisplayName("the byte and age gauges tell what is held and since when; an fsync is timed")
  void gauges() {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options());
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    long[] needed = {0};
    loop.onLoop(() -> {
      journal.registerMetrics(registry, Tags.empty());
      journal.neededBy(() -> needed[0]);
      journal.release();
      return null;
    });
    loop.accept(journal, "g", 300); // more than a segment
    loop.timers.advance(Duration.ofMillis(1_100)); // the release timer runs once on the way
    long position = loop.onLoop(() -> {
      journal.release();
      return journal.position();
    });
    assertThat(registry.get("gateway.journal.bytes").gauge().value()).as("bytes held").isEqualTo(position);
    assertThat(registry.get("gateway.journal.oldest.age").gauge().value()).as("age of the oldest, held since the open")
      .isEqualTo(1.1);
    assertThat(registry.get("gateway.journal.fsync.duration").timer().max(TimeUnit.SECONDS)).isBetween(0.0, 5.0);
    loop.onLoop(() -> {
      needed[0] = journal.position();
      journal.release();
      return null;
    });
    assertThat(registry.get("gateway.journal.oldest.age").gauge().value()).as("nothing held").isZero();
    assertThat(registry.get("gateway.journal.bytes").gauge().value()).as("the current segment's")
      .isLessThan(position);
  }

  @Test
  @DisplayName("frames wait in order for a segment being made, past half the reserve new increments get journal_no_room, and all goes on once it is made")
  void waitingForASegment() {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options(JournalOptions.Fsync.OFF, 1 << 30));
    files.pauseAt(Op.CREATE, files.count(Op.CREATE) + 1); // the spare after the next roll
    List<Future<Void>> answers = new ArrayList<>();
    ApiError refused = null;
    Flush flush = new Flush(FlushId.parse("s:1"), List.of(new FlushRow("likes", "w0", (short) 0, 1)));
    for (int i = 0; refused == null && i < 2_000; i++) {
      int n = i;
      refused = loop.refusal(journal, JournalRecords.estimate(like("w" + n, 1)));
      if (refused == null) {
        answers.add(loop.onLoop(() -> {
          journal.appendIncrement(like("w" + n, 1));
          return journal.committed();
        }));
      }
    }
    assertThat(refused).as("refused while frames wait").isNotNull();
    assertThat(refused.code()).isEqualTo("journal_no_room");
    Future<Void> formed = loop.onLoop(() -> journal.formed(flush, List.of()));
    assertThat(answers.get(answers.size() - 1).isComplete()).as("the last waits").isFalse();
    files.resume();
    await(Future.all(answers));
    await(formed); // forced once placed, though fsync is off
    assertThat(loop.refusal(journal, 100)).isNull();
    Journal.Recovered recovered = loop.open(files.afterCrash(Survival.NONE), options()).recovered();
    assertThat(recovered.unsettled()).containsExactly(flush);
    assertThat(recovered.pending()).hasSize(answers.size() - 1);
  }

  @Test
  @DisplayName("answers go on while the next segment is being made: the writer never waits for the file worker")
  void writerDoesNotWaitForTheFileWorker() throws Exception {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options());
    files.pauseAt(Op.CREATE, files.count(Op.CREATE) + 1);
    Path first = loop.onLoop(journal::currentFile);
    for (int i = 0; loop.onLoop(journal::currentFile).equals(first); i++) {
      loop.accept(journal, "r" + i + "-", 1);
    }
    files.awaitPaused(); // the spare after the roll is being made, and stays so
    loop.accept(journal, "meanwhile", 20);
    files.resume();
  }

  @Test
  @DisplayName("a close while a segment is being made waits for it and deletes it; what waited for room fails; no file is left open")
  void closeWhileMaking() throws Exception {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options());
    files.pauseAt(Op.CREATE, files.count(Op.CREATE) + 1);
    Future<Void> waiting = null;
    for (int i = 0; loop.refusal(journal, 50) == null; i++) {
      int n = i;
      waiting = loop.onLoop(() -> {
        journal.appendIncrement(like("c" + n, 1));
        return journal.committed();
      });
    }
    files.awaitPaused();
    Future<Void> closed = loop.onLoop(() -> journal.close(false));
    Future<Void> last = waiting;
    Eventually.until("the answer waiting for room fails", last::isComplete);
    assertThat(last.failed()).as("an answer still waiting for room").isTrue();
    assertThat(loop.onLoop(closed::isComplete)).as("the close, after what the loop had to do, waits for the segment "
      + "being made").isFalse();
    files.resume();
    await(closed);
    assertThat(files.openChannels()).as("channels left open").isZero();
    assertThat(files.files().keySet()).as("only segments holding frames").allSatisfy(file ->
      assertThat(files.files().get(file).length).isLessThan((int) SEGMENT));
    assertThat(files.durable().values().stream().mapToInt(bytes -> bytes.length).sum())
      .as("cut to what they hold, durably").isEqualTo(files.files().values().stream().mapToInt(b -> b.length).sum());
  }

  @Test
  @DisplayName("a frame that fills the rest of a segment exactly goes into it; made segments are their capacity, no more")
  void exactFit() {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options());
    Path first = loop.onLoop(journal::currentFile);
    // an increment of id length L takes 24 + 11 + L bytes: fill until the rest takes one whole
    int i = 0;
    while (true) {
      long rest = SEGMENT - loop.onLoop(journal::fileOffset);
      if (rest - 35 >= 1 && rest - 35 < 100) {
        break;
      }
      loop.accept(journal, "f" + i++ + "-", 1);
    }
    long rest = SEGMENT - loop.onLoop(journal::fileOffset);
    loop.onLoop(() -> journal.appendIncrement(like("x".repeat((int) rest - 35), 1)));
    await(loop.onLoop(journal::committed));
    assertThat(loop.onLoop(journal::currentFile)).isEqualTo(first);
    assertThat(loop.onLoop(journal::fileOffset)).isEqualTo(SEGMENT);
    Eventually.until("the next spare made after the roll", () -> files.count(Op.CREATE) >= 4);
    loop.accept(journal, "next", 1);
    Eventually.until("a spare made ahead, with no frame waiting", () -> files.count(Op.CREATE) >= 5
      && files.count(Op.SYNC_DIRECTORY) >= 5);
    assertThat(files.files().values().stream().map(bytes -> bytes.length))
      .as("every segment its capacity: the reserve four segments, the others one")
      .containsOnly((int) SEGMENT, (int) (4 * SEGMENT)).containsOnlyOnce((int) (4 * SEGMENT));
  }

  @Test
  @DisplayName("a segment larger than the chunk zeros are written in is made exactly to its capacity")
  void largeSegments() {
    FaultingFiles files = new FaultingFiles();
    long segment = 1_536 * 1024; // one and a half MiB: the reserve is that size
    loop.open(files, JournalLoop.options(DIR, JournalOptions.Fsync.ALWAYS, segment, 1L << 30));
    assertThat(files.files().values().stream().map(bytes -> bytes.length)).contains((int) segment);
  }

  @Test
  @DisplayName("without a reserve (no room at start) increments are refused at once and readiness is told")
  void noReserveAtStart() {
    FaultingFiles files = new FaultingFiles();
    files.budget(2 * SEGMENT); // the snapshot segment and one reserve; not the restart room
    Journal journal = loop.open(files, options());
    assertThat(loop.fullChanges).containsExactly(true);
    assertThat(loop.refusal(journal, 10).code()).isEqualTo("journal_no_room");
  }

  @Test
  @DisplayName("a segment wholly below what is needed is deleted, one that ends exactly there too; by the timer, with no coalescer telling")
  void deletionAtTheEdge() {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options());
    Path first = loop.onLoop(journal::currentFile);
    long endOfFirst = 0;
    for (int i = 0; loop.onLoop(journal::currentFile).equals(first); i++) {
      endOfFirst = loop.onLoop(journal::position);
      loop.accept(journal, "e" + i, 1);
    }
    long edge = endOfFirst;
    loop.onLoop(() -> {
      journal.neededBy(() -> edge);
      journal.release();
      return null;
    });
    Eventually.until("the first segment deleted", () -> !files.files().containsKey(first));
    Path second = loop.onLoop(journal::currentFile);
    loop.accept(journal, "more", 300);
    loop.onLoop(() -> {
      journal.neededBy(journal::position);
      return null;
    });
    assertThat(files.files()).as("kept until the timer runs").containsKey(second);
    loop.timers.advance(Duration.ofSeconds(1));
    Eventually.until("the timer's deletion", () -> !files.files().containsKey(second));
  }

  @Test
  @DisplayName("with no coalescer telling what it needs, every segment below the current one is deleted by the timer")
  void deletionWithoutACoalescer() {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options());
    Path first = loop.onLoop(journal::currentFile);
    for (int i = 0; loop.onLoop(journal::currentFile).equals(first); i++) {
      loop.accept(journal, "n" + i, 1);
    }
    loop.timers.advance(Duration.ofSeconds(1));
    Eventually.until("the timer's deletion", () -> !files.files().containsKey(first));
  }

  @Test
  @DisplayName("under fsync everyMs the journal is forced by its timer, with nobody asking")
  void everyMsTimer() {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options(JournalOptions.Fsync.EVERY_MS, 1 << 30));
    int forces = files.count(Op.FORCE);
    JournalOptions options = options(JournalOptions.Fsync.EVERY_MS, 1 << 30);
    loop.accept(journal, "t", 10);
    assertThat(files.count(Op.FORCE)).as("not forced before the timer").isEqualTo(forces);
    loop.timers.advance(Duration.ofMillis(options.getFsyncIntervalMs()));
    Eventually.until("the timer's force", () -> files.count(Op.FORCE) > forces);
    assertThat(loop.open(files.afterCrash(Survival.NONE), options()).recovered().pending()).hasSize(10);
  }

  @Test
  @DisplayName("with the reserve taken while a later spare holds increments, the replay reads the segments in the order they were written")
  void readInWriteOrder() {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options());
    files.budget(files.allocated());
    JournalLedger ledger = new JournalLedger("order");
    loop.onLoop(() -> {
      ledger.start(journal);
      return null;
    });
    ledger.fillUntilRefused(loop, "o");
    // part of what is pending, in a flush recorded in the reserve (made before the spare the increments are in)
    Flush part = new Flush(FlushId.parse("part:1"), List.of(new FlushRow("likes", "o0", (short) 0, 1)));
    await(loop.onLoop(() -> journal.formed(part, List.of(key("o1")))));
    Journal.Recovered recovered = loop.open(files.afterCrash(Survival.ALL).budget(Long.MAX_VALUE), options())
      .recovered();
    assertThat(recovered.replay().damaged().any()).isFalse();
    assertThat(recovered.unsettled()).containsExactly(part);
    assertThat(recovered.pending()).doesNotContainKeys(key("o0"), key("o1")).containsKeys(key("o2"), key("o9"));
  }

  @Test
  @DisplayName("a verticle inherits the streams of verticles a previous run had and this one has not, and sums what they share")
  void inheritedStreams() {
    FaultingFiles files = new FaultingFiles();
    Journal zero = loop.open(files, options(), JournalTarget.tableOnly("slotted_counters"), 0, 2, full -> { });
    Journal one = loop.open(files, options(), JournalTarget.tableOnly("slotted_counters"), 1, 2, full -> { });
    loop.accept(zero, "s", 3);
    loop.accept(one, "s", 2);
    loop.accept(one, "only-one-", 1);
    loop.close(zero, false);
    loop.close(one, false);
    // the next run has one verticle, and a crash cuts its replay after the snapshot's rename
    FaultingFiles cut = files.afterCrash(Survival.ALL).crashAfter(Op.RENAME, 1);
    assertThatThrownBy(() -> loop.open(cut, options()));
    Map<CounterKey, Long> pending = loop.open(cut.afterCrash(Survival.ALL), options()).recovered().pending();
    assertThat(pending).containsOnly(Map.entry(key("s0"), 2L), Map.entry(key("s1"), 2L), Map.entry(key("s2"), 1L),
      Map.entry(key("only-one-0"), 1L));
  }
}
