package io.countergateway.internal.write.journal;

import io.countergateway.config.JournalOptions;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.internal.write.journal.FaultingFiles.Survival;
import io.vertx.core.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static io.countergateway.internal.write.journal.JournalLoop.await;
import static io.countergateway.internal.write.journal.JournalLoop.like;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the journal tells a replay about a flush's attempts (src/DESIGN.md §4 "Replay"): whether any statement of it
 * may have left the process. Every crash point of a flush's life between its record and its statement, on a disk that
 * keeps only what was forced ({@link Survival#NONE}) or everything written ({@link Survival#ALL}).
 */
@DisplayName("The journal's record of whether a flush was ever sent, across crashes")
class JournalAttemptsTest {
  private static final Path DIR = Path.of("/journal");
  private static final Flush F = new Flush(FlushId.parse("src:1"), List.of(new FlushRow("likes", "x", (short) 0, 3)));
  private final JournalLoop loop = new JournalLoop();
  private final FaultingFiles files = new FaultingFiles();

  @AfterEach
  void tearDown() throws Exception {
    loop.close();
  }

  private static JournalOptions options() {
    // off: only what a step forces is on disk after a crash, so the order of records and forces is what is tested
    return JournalLoop.options(DIR, JournalOptions.Fsync.OFF, 64 * 1024, 1 << 30);
  }

  /** A journal that took x+3 and formed F from it (forced, as before the first attempt). */
  private Journal formed() {
    Journal journal = loop.open(files, options());
    await(loop.onLoop(() -> {
      journal.appendIncrement(like("x", 3));
      return journal.formed(F, List.of());
    }));
    return journal;
  }

  private Journal.Recovered afterCrash(Survival survival) {
    return loop.open(files.afterCrash(survival), options()).recovered();
  }

  @Test
  @DisplayName("a flush formed and attempted at once is taken for one that may have been sent: no record, no fsync more")
  void formedMayHaveBeenSent() {
    Journal journal = formed();
    assertThat(loop.onLoop(() -> journal.beforeSend(F.id().toString())).isComplete())
      .as("the first statement waits for nothing (no record, no fsync)").isTrue();
    Journal.Recovered recovered = afterCrash(Survival.ALL);
    assertThat(recovered.unsettled()).containsExactly(F);
    assertThat(recovered.neverSent()).isEmpty();
  }

  @Test
  @DisplayName("a flush whose attempts all failed before sending is replayed as never sent, and stays so across further replays")
  void notSentSurvivesReplays() {
    Journal journal = formed();
    loop.onLoop(() -> {
      journal.notSent(F.id().toString());
      journal.notSent(F.id().toString()); // one record says it
      return null;
    });
    await(loop.onLoop(journal::force));
    Journal.Recovered first = afterCrash(Survival.NONE);
    assertThat(first.neverSent()).containsExactly(F.id());
    Journal.Recovered second = afterCrash(Survival.NONE);
    assertThat(second.unsettled()).containsExactly(F);
    assertThat(second.neverSent()).as("carried by the snapshot").containsExactly(F.id());
  }

  @Test
  @DisplayName("crash after 'never sent' was appended but before it reached the disk: taken for one that may have been sent")
  void notSentLostWithTheCrash() {
    Journal journal = formed();
    loop.onLoop(() -> {
      journal.notSent(F.id().toString());
      return null;
    });
    assertThat(afterCrash(Survival.NONE).neverSent()).isEmpty();
  }

  @Test
  @DisplayName("crash once the next statement may leave (its record forced), before or after it was sent: may have been sent")
  void beforeSendIsForcedFirst() {
    Journal journal = formed();
    loop.onLoop(() -> {
      journal.notSent(F.id().toString());
      return null;
    });
    await(loop.onLoop(journal::force));
    Future<Void> mayGo = loop.onLoop(() -> journal.beforeSend(F.id().toString()));
    await(mayGo);
    // a machine crash keeps only what was forced: the record that the statement may leave is among it
    Journal.Recovered recovered = afterCrash(Survival.NONE);
    assertThat(recovered.unsettled()).containsExactly(F);
    assertThat(recovered.neverSent()).isEmpty();
  }

  @Test
  @DisplayName("once a statement of a flush left, a later failure before sending does not make it 'never sent'")
  void sentOnceStaysSent() {
    Journal journal = formed();
    await(loop.onLoop(() -> journal.beforeSend(F.id().toString())));
    loop.onLoop(() -> {
      journal.notSent(F.id().toString());
      return null;
    });
    await(loop.onLoop(journal::force));
    assertThat(afterCrash(Survival.ALL).neverSent()).isEmpty();
  }

  @Test
  @DisplayName("the halves of a split flush are records of their own: never-sent of the parent is not theirs")
  void replacedChildrenMayHaveBeenSent() {
    Journal journal = formed();
    Flush half = F.half(0, F.rows());
    loop.onLoop(() -> {
      journal.notSent(F.id().toString());
      return null;
    });
    await(loop.onLoop(() -> journal.replaced(F, List.of(half))));
    Journal.Recovered recovered = afterCrash(Survival.NONE);
    assertThat(recovered.unsettled()).containsExactly(half);
    assertThat(recovered.neverSent()).isEmpty();
  }
}
