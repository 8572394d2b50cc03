package io.countergateway.internal.write.journal;

import io.countergateway.config.JournalOptions;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.testing.Eventually;
import io.countergateway.internal.write.journal.FaultingFiles.Op;
import io.countergateway.internal.write.journal.FaultingFiles.Survival;
import io.vertx.core.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static io.countergateway.internal.write.journal.JournalLoop.await;
import static io.countergateway.internal.write.journal.JournalLoop.key;
import static io.countergateway.internal.write.journal.JournalLoop.like;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The journal on a disk that fails: EIO on a write or a force, a full disk, a restart on it, what is durable when. */
@DisplayName("The journal on a failing disk")
class JournalFaultsTest {
  private static final Path DIR = Path.of("/journal");
  private static final long SEGMENT = 8 * 1024;
  /** A failed segment is asked for again after a second (less while frames wait for it). */
  private static final Duration RETRY = Duration.ofMillis(Segments.RETRY_MS);

  private final JournalLoop loop = new JournalLoop();

  @AfterEach
  void tearDown() throws Exception {
    loop.close();
  }

  private static JournalOptions options(JournalOptions.Fsync fsync) {
    return JournalLoop.options(DIR, fsync, SEGMENT, 1 << 30);
  }

  @ParameterizedTest(name = "EIO on {0}")
  @EnumSource(value = Op.class, names = {"WRITE", "FORCE"})
  @DisplayName("a write or force that fails fails every answer it covered, answers nothing after it, and keeps what was answered before")
  void inputOutputError(Op op) {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options(JournalOptions.Fsync.ALWAYS));
    loop.accept(journal, "before", 5);
    Flush flush = new Flush(FlushId.parse("src:1"), List.of(new FlushRow("likes", "before0", (short) 0, 1)));
    files.failAt(op, files.count(op) + 1, "Input/output error");
    List<Future<Void>> answers = loop.onLoop(() -> {
      List<Future<Void>> all = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        journal.appendIncrement(like("lost" + i, 1));
        all.add(journal.committed());
      }
      all.add(journal.formed(flush, List.of()));
      return all;
    });
    for (Future<Void> answer : answers) {
      assertThat(JournalLoop.failure(answer)).as("an answer the failed %s covered", op).isNotNull();
    }
    // after the failure nothing is answered any more, not even what a later force would call clean
    assertThat(JournalLoop.failure(loop.onLoop(journal::committed))).isNotNull();
    assertThat(JournalLoop.failure(loop.onLoop(journal::force))).isNotNull();
    assertThat(JournalLoop.failure(loop.onLoop(() -> journal.formed(flush, List.of())))).isNotNull();
    assertThat(loop.refusal(journal, 10).code()).isEqualTo("journal_unavailable");
    assertThat(loop.fullChanges).as("readiness told").containsExactly(true);
    long operations = files.operations();
    loop.onLoop(() -> {
      journal.appendIncrement(like("after", 1));
      journal.settled(flush.id().toString());
      return null;
    });
    JournalLoop.await(loop.onLoop(journal::writerIdle));
    assertThat(files.operations()).as("nothing more is written").isEqualTo(operations);

    for (Survival survival : List.of(Survival.NONE, Survival.ALL)) {
      Journal.Recovered recovered = loop.open(files.afterCrash(survival), options(JournalOptions.Fsync.ALWAYS))
        .recovered();
      assertThat(recovered.pending()).as("the answered ones").containsKeys(key("before0"), key("before4"))
        .doesNotContainKeys(key("lost0"), key("after"));
    }
  }

  @Test
  @DisplayName("on a full disk new increments get 503 journal_no_room, the flushes that drain the journal are still recorded, and intake resumes once there is room")
  void fullDiskThenRoom() {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options(JournalOptions.Fsync.ALWAYS));
    files.budget(files.allocated()); // the disk is full
    JournalLedger ledger = new JournalLedger("full");
    loop.onLoop(() -> {
      ledger.start(journal);
      return null;
    });
    ledger.fillUntilRefused(loop, "f");
    assertThat(ledger.refusal).as("the refusal").isEqualTo("journal_no_room");
    assertThat(loop.fullChanges).as("readiness told").containsExactly(true);
    long answered = ledger.answeredTotal();
    assertThat(answered).isPositive();

    // the database takes what is held: the flush is recorded in the reserve, committed and settled
    assertThat(JournalLoop.failure(loop.onLoop(ledger::flush))).as("the flush recorded on a full disk").isNull();
    assertThat(ledger.committed).hasSize(1);
    loop.onLoop(() -> {
      journal.release();
      return null;
    });
    files.budget(Long.MAX_VALUE); // room made: the reserve can be made again
    loop.timers.advanceUntil("room again", RETRY, () -> loop.fullChanges.size() == 2);
    assertThat(loop.fullChanges).containsExactly(true, false);
    int refusedBefore = ledger.refused;
    await(Future.join(loop.onLoop(() -> ledger.round("g", 20, 10, 1_000))));
    assertThat(ledger.refused).as("refused once there is room").isEqualTo(refusedBefore);

    Journal restarted = loop.open(files.afterCrash(Survival.NONE), options(JournalOptions.Fsync.ALWAYS));
    loop.onLoop(() -> {
      ledger.start(restarted);
      ledger.drain();
      return null;
    });
    ledger.assertHolds("full disk, then room");
  }

  @Test
  @DisplayName("a full disk under many segments of new counters drains through the reserve, flush by flush, oldest first: every flush is recorded, intake resumes, nothing is lost")
  void fullDiskDrainsManySegments() {
    FaultingFiles files = new FaultingFiles();
    JournalOptions options = JournalLoop.options(DIR, JournalOptions.Fsync.EVERY_MS, 64 << 10, 1 << 30);
    Journal journal = loop.openWithSpare(files, options);
    JournalLedger ledger = new JournalLedger("drain");
    loop.onLoop(() -> {
      ledger.start(journal);
      return null;
    });
    // requests of 50 new counters each: every counter's flush row costs what its increment did, the worst ratio
    for (int round = 0; round < 40; round++) {
      int at = round;
      await(Future.join(loop.onLoop(() -> ledger.distinctBatches("d" + at + "-", 10, 50))).otherwiseEmpty());
    }
    files.budget(files.allocated()); // the disk is full
    await(Future.join(loop.onLoop(() -> ledger.distinctBatches("late-", 400, 50))).otherwiseEmpty());
    assertThat(ledger.refusal).as("the refusal on the full disk").isEqualTo("journal_no_room");
    // how many files hold the journal then depends on when the file worker made its spare: 8 or more is many
    assertThat(files.files().size()).as("segments written").isGreaterThanOrEqualTo(8);

    int flushes = 0;
    for (; flushes < 1_000 && loop.onLoop(ledger::hasPending); flushes++) {
      int before = ledger.committed.size();
      await(loop.onLoop(() -> ledger.flush(journal.flushRecordBytes())));
      assertThat(ledger.committed).as("flush %d recorded on the full disk, and so committed", flushes).hasSize(before + 1);
      loop.onLoop(() -> {
        journal.release();
        return null;
      });
    }
    assertThat(loop.onLoop(ledger::hasPending)).as("everything drained, in %d flushes", flushes).isFalse();
    loop.timers.advanceUntil("room again", RETRY,
      () -> loop.fullChanges.get(loop.fullChanges.size() - 1).equals(false));
    ledger.assertHolds("drained through the reserve");

    Journal restarted = loop.open(files.afterCrash(Survival.NONE), options);
    loop.onLoop(() -> {
      ledger.start(restarted);
      ledger.drain();
      return null;
    });
    ledger.assertHolds("drained through the reserve, then a machine crash");
  }

  @Test
  @DisplayName("a gateway killed on a full disk, its reserve taken by a flush, starts again on the same full disk and loses nothing")
  void restartOnAFullDisk() {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options(JournalOptions.Fsync.ALWAYS));
    files.budget(files.allocated());
    JournalLedger ledger = new JournalLedger("full");
    loop.onLoop(() -> {
      ledger.start(journal);
      return null;
    });
    ledger.fillUntilRefused(loop, "f");
    // a flush recorded in the reserve, and the database out: it never settles
    ledger.databaseDown = true;
    assertThat(JournalLoop.failure(loop.onLoop(ledger::flush))).isNull();
    assertThat(ledger.refusal).isEqualTo("journal_no_room");

    FaultingFiles killed = files.afterCrash(Survival.ALL).budget(files.allocated());
    Journal restarted = loop.open(killed, options(JournalOptions.Fsync.ALWAYS));
    assertThat(restarted.recovered().unsettled()).as("the flush in flight").hasSize(1);
    ledger.databaseDown = false;
    loop.onLoop(() -> {
      ledger.start(restarted);
      ledger.drain();
      return null;
    });
    ledger.assertHolds("restart on a full disk");
    assertThat(ledger.answeredTotal()).isPositive();
  }

  @Test
  @DisplayName("a segment deleted once nothing in it is needed stays deleted after a machine crash (its directory is synced)")
  void deletionIsDurable() {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options(JournalOptions.Fsync.ALWAYS));
    for (int round = 0; round < 6; round++) {
      loop.accept(journal, "d" + round + "-", 60);
    }
    Map<Path, byte[]> before = files.files();
    int deletes = files.count(Op.DELETE);
    loop.onLoop(() -> {
      journal.neededBy(journal::position);
      journal.release();
      return null;
    });
    Eventually.until("the deletion", () -> files.count(Op.DELETE) > deletes && files.count(Op.SYNC_DIRECTORY) > 4);
    List<Path> gone = new ArrayList<>(before.keySet());
    gone.removeAll(files.files().keySet());
    assertThat(gone).as("segments deleted").isNotEmpty();
    assertThat(files.durable().keySet()).as("after a machine crash").doesNotContainAnyElementsOf(gone);
  }

  @Test
  @DisplayName("a segment that cannot be made is asked for again at the same size: failed attempts do not grow it")
  void failedAttemptsDoNotGrowSegments() {
    FaultingFiles files = new FaultingFiles();
    // segments may grow to 1 MiB: the first is 256 KiB, the next twice that
    JournalOptions options = JournalLoop.options(DIR, JournalOptions.Fsync.ALWAYS, 1 << 20, 1 << 30);
    files.budget((256 << 10) + (5 << 20)); // the replay's segment, the reserve and the restart room fit; no spare does
    Journal journal = loop.open(files, options);
    int creates = files.count(Op.CREATE);
    loop.timers.advanceUntil("two failed attempts", RETRY, () -> files.count(Op.CREATE) >= creates + 2);
    files.budget(Long.MAX_VALUE);
    // the snapshot segment, the spare, the restart room, the reserve: the spare at the size first asked for
    List<Integer> expected = List.of(256 << 10, 256 << 10, 1 << 20, 4 << 20);
    loop.timers.advanceUntil("the spare, made whole", RETRY, () -> {
      List<Integer> sizes = new ArrayList<>(files.files().values().stream().map(bytes -> bytes.length).toList());
      Collections.sort(sizes);
      return sizes.equals(expected) && files.count(Op.SYNC_DIRECTORY) >= 4;
    });
    assertThat(journal.position()).isNotNegative();
  }

  @ParameterizedTest(name = "fsync {0}")
  @EnumSource(value = JournalOptions.Fsync.class, names = {"ALWAYS", "EVERY_MS"})
  @DisplayName("an answer is given only once what it covers would survive the crash its policy covers (the machine under always, the process otherwise)")
  void answeredOnlyWhenDurable(JournalOptions.Fsync fsync) {
    FaultingFiles files = new FaultingFiles();
    Survival crash = fsync == JournalOptions.Fsync.ALWAYS ? Survival.NONE : Survival.ALL;
    Journal journal = loop.open(files, options(fsync));
    List<FaultingFiles> atAnswers = Collections.synchronizedList(new ArrayList<>());
    List<Future<Void>> answers = loop.onLoop(() -> {
      List<Future<Void>> all = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        journal.appendIncrement(like("a" + i, 1));
        int answeredUpTo = i;
        all.add(journal.committed().onSuccess(v -> {
          if (answeredUpTo % 30 == 29) {
            atAnswers.add(files.afterCrash(crash)); // the crash right after this answer
          }
        }));
      }
      return all;
    });
    await(Future.all(answers));
    assertThat(atAnswers).hasSize(10);
    for (int n = 0; n < atAnswers.size(); n++) {
      Map<CounterKey, Long> pending = loop.open(atAnswers.get(n), options(fsync)).recovered().pending();
      for (int i = 0; i <= n * 30 + 29; i++) {
        assertThat(pending).as("after the answer to a%d", n * 30 + 29).containsKey(key("a" + i));
      }
    }
  }

  @Test
  @DisplayName("a request larger than the next segment waits for one made to its size, in order, and is replayed whole")
  void largerThanASegment() {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.openWithSpare(files, options(JournalOptions.Fsync.ALWAYS));
    List<io.countergateway.internal.model.Increment> batch = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      batch.add(like("big" + i, 1)); // about 16 KiB of record: twice a segment
    }
    Future<Void> answered = loop.onLoop(() -> {
      journal.appendIncrement(like("before", 1));
      journal.appendIncrements(batch);
      journal.appendIncrement(like("after", 1));
      return journal.committed();
    });
    await(answered);
    assertThat(files.files().values().stream().mapToInt(bytes -> bytes.length).max().orElseThrow())
      .as("the largest segment").isGreaterThan((int) SEGMENT);
    Path smallSpare = DIR.resolve(SegmentFiles.fileName(0, 4)); // after the snapshot segment and the two reserves
    Eventually.until("the spare made for smaller frames deleted", () -> !files.files().containsKey(smallSpare));
    assertThat(files.openChannels()).as("open: the current segment, the reserves, the next spare").isLessThanOrEqualTo(5);
    // a batch as the last thing appended is answered once it is written
    await(loop.onLoop(() -> {
      journal.appendIncrements(List.of(like("last", 1), like("batch", 1)));
      return journal.committed();
    }));
    Map<CounterKey, Long> pending = loop.open(files.afterCrash(Survival.NONE), options(JournalOptions.Fsync.ALWAYS))
      .recovered().pending();
    assertThat(pending).hasSize(1_004).containsKeys(key("before"), key("big999"), key("after"), key("batch"));
  }

  @Test
  @DisplayName("force() completes once everything appended is forced, whatever the policy")
  void forceCoversEverything() {
    FaultingFiles files = new FaultingFiles();
    Journal journal = loop.open(files, options(JournalOptions.Fsync.OFF));
    loop.accept(journal, "o", 50);
    FaultingFiles beforeForce = files.afterCrash(Survival.NONE);
    await(loop.onLoop(journal::force));
    FaultingFiles afterForce = files.afterCrash(Survival.NONE);
    assertThat(loop.open(beforeForce, options(JournalOptions.Fsync.OFF)).recovered().pending())
      .as("under off, answered once written: not yet on disk").hasSizeLessThan(50);
    assertThat(loop.open(afterForce, options(JournalOptions.Fsync.OFF)).recovered().pending()).hasSize(50);
  }

  @Test
  @DisplayName("a start that cannot even write its replay snapshot fails in one line naming journal.dir and the bytes it needs")
  void noRoomForTheSnapshot() {
    FaultingFiles files = new FaultingFiles();
    files.budget(1_000);
    assertThatThrownBy(() -> loop.open(files, options(JournalOptions.Fsync.ALWAYS)))
      .hasMessageContaining("journal.dir").hasMessageContaining("cannot write the replay's snapshot")
      .hasMessageContaining("No space left on device");
  }
}
