package io.countergateway.internal.write.journal;

import io.countergateway.config.JournalOptions;
import io.countergateway.internal.write.journal.FaultingFiles.Op;
import io.countergateway.internal.write.journal.FaultingFiles.Survival;
import io.countergateway.testing.Eventually;
import io.countergateway.testing.HarnessShare;
import io.vertx.core.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.time.Duration;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The journal crashed at its file operations, on {@link FaultingFiles}: after every crash, what the restart's replay
 * hands over is written once, and then each counter holds at least what was answered and at most what was appended
 * ({@link JournalLedger}), whatever the page cache kept. Each test crashes at operations sampled evenly over a run;
 * {@code -Dharness.tries} samples fewer ({@link HarnessShare}), as many as a run's share of its tries.
 */
@DisplayName("The journal crashed at its file operations")
class JournalCrashTest {
  private static final Path DIR = Path.of("/journal");
  private static final int ROUNDS = 12;
  private static final int REQUESTS = 60;
  /** Crash points sampled (in a normal run) of each kind of operation, of a whole run, of a run under everyMs. */
  private static final int PER_KIND = HarnessShare.of(30);
  private static final int SAMPLED = HarnessShare.of(60);
  private static final int SAMPLED_EVERY_MS = HarnessShare.of(40);
  /** Writes sampled to crash after, losing one page of what they did not force. */
  private static final int SAMPLED_WRITES = HarnessShare.of(40);

  private final JournalLoop loop = new JournalLoop();

  @AfterEach
  void tearDown() throws Exception {
    loop.close();
  }

  private static JournalOptions options(JournalOptions.Fsync fsync) {
    // small segments: a run rolls, makes spares and deletes segments
    return JournalLoop.options(DIR, fsync, 8 * 1024, 1 << 30);
  }

  /** One run of the workload until it ends or the files crash; returns the files as they are then. */
  private void run(FaultingFiles files, JournalLedger ledger, JournalOptions options) {
    Journal journal;
    try {
      journal = loop.open(files, options);
    } catch (RuntimeException crashedWhileOpening) {
      return;
    }
    loop.onLoop(() -> {
      ledger.start(journal);
      return null;
    });
    for (int round = 0; round < ROUNDS && !files.crashed(); round++) {
      List<Future<Void>> answers = loop.onLoop(() -> ledger.round("k", REQUESTS, 20, 15));
      awaitUnlessCrashed(Future.join(answers), files);
      // the once-a-second deletion, now
      loop.onLoop(() -> {
        journal.release();
        return null;
      });
    }
    // whatever the journal does after a crash, it is gone: its close only frees its threads
    awaitUnlessCrashed(loop.onLoop(() -> journal.close(false)), files);
  }

  private static void awaitUnlessCrashed(Future<?> future, FaultingFiles files) {
    Eventually.until("the round's end", () -> future.isComplete() || files.crashed(), Duration.ofSeconds(20));
  }

  /** A crash set up by {@code fault}, a restart on what {@code survival} kept, the oracle. */
  private void crashAndRestart(Consumer<FaultingFiles> fault, Survival survival, JournalOptions options, String what) {
    FaultingFiles files = new FaultingFiles();
    fault.accept(files);
    JournalLedger ledger = new JournalLedger("first");
    run(files, ledger, options);
    restart(files, files.afterCrash(survival), ledger, options, what);
  }

  /** A restart on {@code restarted} (what survived the crash of {@code files}), the oracle. */
  private void restart(FaultingFiles files, FaultingFiles restarted, JournalLedger ledger, JournalOptions options,
                       String what) {
    Journal journal = loop.open(restarted, options);
    loop.onLoop(() -> {
      ledger.start(journal);
      ledger.drain();
      return null;
    });
    JournalLoop.await(loop.onLoop(() -> journal.close(false)));
    try {
      ledger.assertHolds(what);
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "\nthe replay: " + journal.recovered().replay()
        + "\nthe crashed run's file operations: " + files.log(), e);
    }
  }

  /** The file operations a whole run makes, counted by kind. */
  private FaultingFiles cleanRun(JournalOptions options) {
    FaultingFiles files = new FaultingFiles();
    JournalLedger ledger = new JournalLedger("clean");
    run(files, ledger, options);
    assertThat(ledger.answeredTotal()).as("answered in a clean run").isEqualTo(ROUNDS * REQUESTS);
    return files;
  }

  @Test
  @DisplayName("a clean run with a restart loses and doubles nothing (the oracle itself)")
  void noCrash() {
    crashAndRestart(files -> { }, Survival.NONE, options(JournalOptions.Fsync.ALWAYS), "no crash");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = Op.class, names = {"WRITE", "FORCE", "CREATE", "DELETE", "RENAME", "SYNC_DIRECTORY", "TRUNCATE"})
  @DisplayName("a crash after the n-th operation of each kind, the machine or only the process gone: every answer counted once")
  void crashAfterEachOperation(Op op) {
    JournalOptions options = options(JournalOptions.Fsync.ALWAYS);
    int count = cleanRun(options).count(op);
    assertThat(count).as("%s operations in a run", op).isPositive();
    int step = Math.max(1, count / PER_KIND);
    List<String> cases = new ArrayList<>();
    for (int n = 1; n <= count; n += step) {
      int at = n;
      for (Survival survival : List.of(Survival.NONE, Survival.ALL, Survival.random(at))) {
        crashAndRestart(files -> files.crashAfter(op, at), survival, options, "crash after " + op + " " + at);
      }
      cases.add(op + " " + at);
    }
    assertThat(cases).isNotEmpty();
  }

  @Test
  @DisplayName("a crash at sampled operations of a run under fsync everyMs, the process gone: every answer counted once")
  void crashUnderEveryMs() {
    JournalOptions options = options(JournalOptions.Fsync.EVERY_MS);
    long operations = cleanRun(options).operations();
    for (long k = 1; k <= operations; k += Math.max(1, operations / SAMPLED_EVERY_MS)) {
      long at = k;
      crashAndRestart(files -> files.crashAt(at), Survival.ALL, options, "everyMs, crash at operation " + at);
    }
  }

  @Test
  @DisplayName("a crash at sampled operations of a run, part of the page cache kept at random: every answer counted once")
  void crashAtSampledOperations() {
    JournalOptions options = options(JournalOptions.Fsync.ALWAYS);
    long operations = cleanRun(options).operations();
    for (long k = 1; k <= operations; k += Math.max(1, operations / SAMPLED)) {
      long at = k;
      crashAndRestart(files -> files.crashAt(at), Survival.random(at), options, "crash at operation " + at);
    }
  }

  @Test
  @DisplayName("a crash after sampled writes, one page of what was not forced lost and every other kept: every answer counted once")
  void crashWithOnePageLost() {
    // the kernel writes dirty pages back in any order: a segment's last page lost while the next segment's first
    // frames reached the disk, or a page lost inside one write while the pages after it reached the disk
    JournalOptions options = options(JournalOptions.Fsync.ALWAYS);
    int writes = cleanRun(options).count(Op.WRITE);
    int cases = 0;
    for (int n = 1; n <= writes; n += Math.max(1, writes / SAMPLED_WRITES)) {
      FaultingFiles files = new FaultingFiles().crashAfter(Op.WRITE, n);
      JournalLedger ledger = new JournalLedger("first");
      run(files, ledger, options);
      for (int page = 0; ; page++) {
        Survival survival = Survival.losingOnePage(page);
        FaultingFiles restarted = files.afterCrash(survival);
        if (page >= survival.pages()) {
          break;
        }
        restart(files, restarted, ledger.copy(), options, "crash after write " + n + ", unforced page " + page + " lost");
        cases++;
      }
    }
    assertThat(cases).as("crash cases with one page lost").isGreaterThan(HarnessShare.of(writes / 40));
  }

  @Test
  @DisplayName("a crash during the replay itself, at each of its operations: the next start replays the same journal")
  void crashDuringTheReplay() {
    JournalOptions options = options(JournalOptions.Fsync.ALWAYS);
    FaultingFiles files = new FaultingFiles();
    JournalLedger ledger = new JournalLedger("first");
    files.crashAfter(Op.FORCE, 40);
    run(files, ledger, options);
    FaultingFiles crashed = files.afterCrash(Survival.NONE);
    long replayOperations;
    {
      FaultingFiles probe = crashed.afterCrash(Survival.ALL);
      Journal journal = loop.open(probe, options);
      replayOperations = probe.operations();
      JournalLoop.await(loop.onLoop(() -> journal.close(false)));
    }
    assertThat(replayOperations).as("operations of a replay").isGreaterThan(5);
    // every operation of the replay in a normal run
    long step = Math.max(1, replayOperations / HarnessShare.of((int) replayOperations));
    for (long k = 1; k <= replayOperations; k += step) {
      FaultingFiles again = crashed.afterCrash(Survival.ALL).crashAt(k);
      try {
        Journal journal = loop.open(again, options);
        JournalLoop.await(loop.onLoop(() -> journal.close(false)).otherwiseEmpty());
      } catch (RuntimeException crashedInTheReplay) {
        // as expected, mostly
      }
      for (Survival survival : List.of(Survival.NONE, Survival.ALL)) {
        JournalLedger copy = ledger.copy();
        Journal journal = loop.open(again.afterCrash(survival), options);
        loop.onLoop(() -> {
          copy.start(journal);
          copy.drain();
          return null;
        });
        JournalLoop.await(loop.onLoop(() -> journal.close(false)));
        copy.assertHolds("crash at operation " + k + " of the replay, then " + (survival == Survival.NONE ? "machine"
          : "process"));
      }
    }
  }
}
