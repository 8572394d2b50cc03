package io.countergateway.internal.write.journal;

import io.countergateway.config.JournalOptions;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import static io.countergateway.internal.write.journal.JournalLoop.await;
import static io.countergateway.internal.write.journal.JournalLoop.key;
import static io.countergateway.internal.write.journal.JournalLoop.like;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Damage in the middle of a segment and at its end, and the gap rule (src/DESIGN.md §4 "Replay"): a damaged frame
 * costs that frame, and the deltas pending before a region that hid a flush record are never taken again as new.
 */
@DisplayName("The journal's replay of damaged frames")
class JournalDamageTest {
  private static final Path DIR = Path.of("/journal");
  private static final JournalOptions OPTIONS = JournalLoop.options(DIR, JournalOptions.Fsync.ALWAYS, 64 * 1024,
    1 << 30);
  private static final FlushRow X = new FlushRow("likes", "x", (short) 3, 2);
  private static final FlushRow Y = new FlushRow("likes", "y", (short) 3, 3);
  private static final Flush F = new Flush(FlushId.parse("src:1"), List.of(X, Y));

  private final JournalLoop loop = new JournalLoop();
  private final FaultingFiles files = new FaultingFiles();
  private Journal journal;

  @AfterEach
  void tearDown() throws Exception {
    loop.close();
  }

  /** Where one frame lies in its file (a flush record's two frames, the record and its copy, of equal size). */
  private record At(Path file, long from, long to) {
    /** An offset in the frame's header: its payload length. */
    long header() {
      return from + 5;
    }

    /** The last byte of its payload. */
    long payload() {
      return to - 1;
    }

    /** A flush record's copy, right after it. */
    At copy() {
      return new At(file, from + (to - from) / 2, to);
    }

    /** A flush record without its copy. */
    At record() {
      return new At(file, from, from + (to - from) / 2);
    }
  }

  /** A flush record and its copy both damaged at {@code offset} of their frames (a bad sector takes both). */
  private void flipBoth(At flush, long offsetInFrame) {
    files.flip(flush.file(), flush.record().from() + offsetInFrame);
    files.flip(flush.file(), flush.copy().from() + offsetInFrame);
  }

  private static long lastPayloadByte(At flush) {
    return flush.record().to() - flush.record().from() - 1;
  }

  /** Runs {@code append} on the loop, waits for what it returns (the frame forced), and tells where its frame is. */
  private At frame(Callable<io.vertx.core.Future<Void>> append) {
    long from = loop.onLoop(journal::fileOffset);
    await(loop.onLoop(() -> append.call().compose(v -> journal.force())));
    return new At(loop.onLoop(journal::currentFile), from, loop.onLoop(journal::fileOffset));
  }

  private At increment(String id, long delta) {
    return frame(() -> {
      journal.appendIncrement(like(id, delta));
      return journal.committed();
    });
  }

  private At formed(Flush flush) {
    return frame(() -> journal.formed(flush, List.of()));
  }

  private At settled(String id) {
    return frame(() -> {
      journal.settled(id);
      return journal.force();
    });
  }

  private Journal.Recovered reopen() {
    loop.close(journal, false);
    return loop.open(files.afterCrash(FaultingFiles.Survival.ALL), OPTIONS).recovered();
  }

  private void start() {
    journal = loop.open(files, OPTIONS);
  }

  @Test
  @DisplayName("a flush record whose payload is damaged is named by its header: the deltas pending before it are handed over under its id")
  void flushRecordDamagedPayload() {
    start();
    increment("x", 2);
    increment("y", 3);
    At formed = formed(F);
    increment("z", 1);
    flipBoth(formed, lastPayloadByte(formed));
    Journal.Recovered recovered = reopen();
    assertThat(recovered.pending()).containsExactly(Map.entry(key("z"), 1L));
    assertThat(recovered.unsettled()).containsExactly(new Flush(F.id(), List.of(X.withSlot((short) 0),
      Y.withSlot((short) 0))));
    assertThat(recovered.replay().reconstructed()).containsExactly(F.id().toString());
    assertThat(recovered.replay().damaged().frames()).isEqualTo(2);
    assertThat(recovered.replay().dropped().counters()).isZero();
  }

  @Test
  @DisplayName("a flush record's frame damaged costs nothing: its copy is read, and the replay is exact")
  void recordDamagedCopyRead() {
    oneFrameOfAFlushRecordDamaged(true);
  }

  @Test
  @DisplayName("a flush record's copy damaged costs nothing: the record is read, and the replay is exact")
  void copyDamagedRecordRead() {
    oneFrameOfAFlushRecordDamaged(false);
  }

  private void oneFrameOfAFlushRecordDamaged(boolean record) {
    start();
    increment("w", 7);
    increment("x", 2);
    increment("y", 3);
    At formed = formed(F);
    increment("z", 1);
    At damaged = record ? formed.record() : formed.copy();
    files.flip(damaged.file(), damaged.header());
    Journal.Recovered recovered = reopen();
    assertThat(recovered.pending()).containsOnly(Map.entry(key("w"), 7L), Map.entry(key("z"), 1L));
    assertThat(recovered.unsettled()).containsExactly(F);
    assertThat(recovered.replay().reconstructed()).isEmpty();
    assertThat(recovered.replay().dropped().counters()).isZero();
    assertThat(recovered.replay().damaged().frames()).isEqualTo(1);
  }

  @Test
  @DisplayName("a flush record lost whole, its id unknown: the deltas pending before it are dropped and counted, never taken again")
  void flushRecordLostWhole() {
    start();
    increment("x", 2);
    increment("y", 3);
    At formed = formed(F);
    increment("z", 1);
    flipBoth(formed, 5);
    Journal.Recovered recovered = reopen();
    assertThat(recovered.pending()).containsExactly(Map.entry(key("z"), 1L));
    assertThat(recovered.unsettled()).isEmpty();
    assertThat(recovered.replay().dropped()).isEqualTo(new ReplayReport.Dropped(2, 5));
  }

  @Test
  @DisplayName("a lost flush record settled later: what was pending before it is dropped (the flush counted it)")
  void flushRecordLostThenSettled() {
    start();
    increment("x", 2);
    increment("y", 3);
    At formed = formed(F);
    increment("z", 1);
    settled(F.id().toString());
    flipBoth(formed, 5);
    Journal.Recovered recovered = reopen();
    assertThat(recovered.pending()).containsExactly(Map.entry(key("z"), 1L));
    assertThat(recovered.unsettled()).isEmpty();
    assertThat(recovered.replay().dropped()).isEqualTo(new ReplayReport.Dropped(2, 5));
  }

  @Test
  @DisplayName("a lost flush record whose split is read later: its rows are known, and what it did not take is pending again")
  void flushRecordLostThenSplit() {
    start();
    increment("w", 7);
    increment("x", 2);
    increment("y", 3);
    At formed = formed(F); // w stays pending: this flush did not take it
    Flush left = F.half(0, List.of(X));
    Flush right = F.half(1, List.of(Y));
    frame(() -> journal.replaced(F, List.of(left, right)));
    increment("z", 1);
    flipBoth(formed, 5);
    Journal.Recovered recovered = reopen();
    assertThat(recovered.pending()).containsOnly(Map.entry(key("w"), 7L), Map.entry(key("z"), 1L));
    assertThat(recovered.unsettled()).containsExactly(left, right);
    assertThat(recovered.replay().dropped().counters()).isZero();
  }

  @Test
  @DisplayName("a lost settlement loses nothing: the flush is resolved by its id again")
  void settlementLost() {
    start();
    increment("x", 2);
    increment("y", 3);
    formed(F);
    At settled = settled(F.id().toString());
    increment("z", 1);
    files.flip(settled.file(), settled.payload());
    Journal.Recovered recovered = reopen();
    assertThat(recovered.pending()).containsExactly(Map.entry(key("z"), 1L));
    assertThat(recovered.unsettled()).containsExactly(F);
    assertThat(recovered.replay().dropped().counters()).isZero();
    assertThat(recovered.replay().damaged().frames()).isEqualTo(1);
  }

  @Test
  @DisplayName("a lost split of a flush that is replayed sets nothing aside: found voided, the flush is split again")
  void splitLost() {
    start();
    increment("x", 2);
    increment("y", 3);
    formed(F);
    increment("v", 4);
    At replaced = frame(() -> journal.replaced(F, List.of(F.half(0, List.of(X)), F.half(1, List.of(Y)))));
    increment("z", 1);
    flipBoth(replaced, lastPayloadByte(replaced));
    Journal.Recovered recovered = reopen();
    assertThat(recovered.pending()).containsOnly(Map.entry(key("v"), 4L), Map.entry(key("z"), 1L));
    assertThat(recovered.unsettled()).containsExactly(F);
    assertThat(recovered.replay().dropped().counters()).isZero();
  }

  @Test
  @DisplayName("two flush records lost in one region: the deltas pending before it are dropped, whatever later records say")
  void twoFlushRecordsLost() {
    start();
    increment("x", 2);
    increment("y", 3);
    Flush first = new Flush(FlushId.parse("src:1"), List.of(X));
    Flush second = new Flush(FlushId.parse("src:2"), List.of(Y));
    At one = formed(first);
    At two = formed(second);
    increment("z", 1);
    settled(first.id().toString());
    flipBoth(one, 5);
    flipBoth(two, 5);
    Journal.Recovered recovered = reopen();
    assertThat(recovered.pending()).containsExactly(Map.entry(key("z"), 1L));
    assertThat(recovered.unsettled()).isEmpty();
    assertThat(recovered.replay().dropped()).isEqualTo(new ReplayReport.Dropped(2, 5));
    assertThat(recovered.replay().damaged().frames()).isEqualTo(4);
  }

  @Test
  @DisplayName("a flush record cut short at the end was never forced, so never attempted: its deltas stay pending, silently")
  void tornFlushRecordAtTheEnd() {
    start();
    increment("x", 2);
    increment("y", 3);
    At formed = formed(F);
    loop.close(journal, false);
    files.cut(formed.file(), formed.from() + Frames.FRAME_HEADER_BYTES + F.id().toString().length() + 4);
    Journal.Recovered recovered = loop.open(files.afterCrash(FaultingFiles.Survival.ALL), OPTIONS).recovered();
    assertThat(recovered.pending()).containsOnly(Map.entry(key("x"), 2L), Map.entry(key("y"), 3L));
    assertThat(recovered.unsettled()).isEmpty();
    assertThat(recovered.replay().tail().frames()).isEqualTo(1);
    assertThat(recovered.replay().tail().mayHoldAcknowledged()).isFalse();
    assertThat(recovered.replay().damaged().any()).isFalse();
  }

  @Test
  @DisplayName("a whole flush record damaged at the end may have been forced and attempted: resolved under its id")
  void damagedFlushRecordAtTheEnd() {
    start();
    increment("x", 2);
    increment("y", 3);
    At formed = formed(F);
    flipBoth(formed, lastPayloadByte(formed));
    Journal.Recovered recovered = reopen();
    assertThat(recovered.pending()).isEmpty();
    assertThat(recovered.replay().reconstructed()).containsExactly(F.id().toString());
    assertThat(recovered.replay().tail().mayHoldAcknowledged()).as("whole, so maybe forced").isTrue();
  }

  @Test
  @DisplayName("the last frames of a segment damaged, the next segment whole: a gap, not an end, and what follows is replayed")
  void damageAtTheEndOfASegment() {
    journal = loop.open(files, JournalLoop.options(DIR, JournalOptions.Fsync.ALWAYS, 4 * 1024, 1 << 30));
    At last = null;
    for (int i = 0; ; i++) {
      At at = increment("s" + i, 1);
      if (last != null && !at.file().equals(last.file())) {
        break; // the segment of "last" is full
      }
      last = at;
    }
    increment("after", 1);
    files.flip(last.file(), last.payload());
    loop.close(journal, false);
    Journal.Recovered recovered = loop.open(files.afterCrash(FaultingFiles.Survival.ALL),
      JournalLoop.options(DIR, JournalOptions.Fsync.ALWAYS, 4 * 1024, 1 << 30)).recovered();
    assertThat(recovered.pending()).containsKey(key("after")).containsKey(key("s0"));
    assertThat(recovered.replay().damaged().frames()).isEqualTo(1);
    assertThat(recovered.replay().damaged().mayHoldAcknowledged()).isTrue();
    assertThat(recovered.replay().tail().any()).isFalse();
  }
}
