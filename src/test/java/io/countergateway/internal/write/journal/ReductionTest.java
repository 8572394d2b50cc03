package io.countergateway.internal.write.journal;

import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import static io.countergateway.internal.write.journal.JournalLoop.key;
import static io.countergateway.internal.write.journal.JournalLoop.like;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reduction of one stream, fed frames made by hand: the records, the run's numbering, and the gap rule
 * (src/DESIGN.md §4 "Replay") in the corners the journal's own tests do not reach.
 */
@DisplayName("The reduction of a journal stream")
class ReductionTest {
  private final Reduction reduction = new Reduction(false);
  private int seq;
  private int flushes;

  private static FlushRow row(String id, long delta) {
    return new FlushRow("likes", id, (short) 1, delta);
  }

  /** The next frame of the run: its header numbered as the journal numbers it. */
  private Frames.FrameHeader next(byte kind, String id, int length) {
    if (Frames.isFlush(kind)) {
      flushes++;
    }
    return new Frames.FrameHeader(kind, id, length, seq++, flushes, 0, Frames.FRAME_HEADER_BYTES + id.length());
  }

  private ByteBuffer payload(Consumer<JournalRecords.Out> records) {
    JournalRecords.Out out = new JournalRecords.Out(64);
    records.accept(out);
    return ByteBuffer.wrap(out.copy());
  }

  private void feed(byte kind, String id, Consumer<JournalRecords.Out> records) {
    ByteBuffer payload = payload(records);
    reduction.frame(next(kind, id, payload.limit()), payload);
  }

  /** The frame is written, then lost whole (no header left): only its number and flush count say it was there. */
  private void lose(byte kind, String id) {
    next(kind, id, 0);
  }

  /** The frame is damaged, its header intact. */
  private void damage(byte kind, String id, boolean whole) {
    reduction.damaged(40, List.of(new FrameScanner.Damaged(next(kind, id, 10), 1, whole)), false);
  }

  private void increment(String id, long delta) {
    feed(JournalRecords.INCREMENTS, "", out -> JournalRecords.increment(out, like(id, delta)));
  }

  private void formed(Flush flush, List<CounterKey> zeroKeys) {
    feed(JournalRecords.FORMED, flush.id().toString(), out -> JournalRecords.formed(out, flush.id().toString(), flush.rows(), zeroKeys));
  }

  private void settled(String id) {
    feed(JournalRecords.SETTLED, "", out -> JournalRecords.settled(out, id));
  }

  private void replaced(Flush parent, List<Flush> children) {
    feed(JournalRecords.REPLACED, parent.id().toString(), out -> JournalRecords.replaced(out, parent.id().toString(), children));
  }

  @Test
  @DisplayName("a snapshot replaces what came before it in its stream, and names the files it supersedes")
  void snapshot() {
    reduction.runStart(true);
    increment("old", 1);
    reduction.runStart(true);
    seq = 0;
    flushes = 0;
    Flush carried = new Flush(FlushId.parse("s:1"), List.of(row("c", 2)));
    feed(JournalRecords.SNAPSHOT_BEGIN, "", out -> {
      JournalRecords.snapshotBegin(out);
      JournalRecords.formed(out, carried.id().toString(), carried.rows(), List.of());
      JournalRecords.increment(out, like("new", 3));
      JournalRecords.snapshotEnd(out, List.of("journal-0-0000000001.seg"));
    });
    settled("s:0"); // settles nothing it knows: no effect
    reduction.finish();
    assertThat(reduction.pending).containsExactly(Map.entry(key("new"), 3L));
    assertThat(reduction.unsettled.values()).containsExactly(carried);
    assertThat(reduction.superseded).containsExactly("journal-0-0000000001.seg");
  }

  @Test
  @DisplayName("a snapshot that never ended never happened: the state before it stands")
  void unfinishedSnapshot() {
    reduction.runStart(true);
    increment("kept", 1);
    formed(new Flush(FlushId.parse("s:1"), List.of(row("f", 1))), List.of());
    replaced(new Flush(FlushId.parse("s:1"), List.of(row("f", 1))), List.of(new Flush(FlushId.parse("s:1.0"), List.of(row("f", 1)))));
    feed(JournalRecords.SNAPSHOT_BEGIN, "", out -> {
      JournalRecords.snapshotBegin(out);
      JournalRecords.increment(out, like("phantom", 9));
      JournalRecords.formed(out, "phantom:1", List.of(row("p", 1)), List.of());
    });
    settled("s:1"); // after the unended snapshot: the state it would have replaced knows s:1 and its half
    reduction.finish();
    assertThat(reduction.pending).containsExactly(Map.entry(key("kept"), 1L));
    assertThat(reduction.unsettled).containsOnlyKeys("s:1.0");
  }

  @Test
  @DisplayName("a flush's zero keys are taken with it; deltas that cancel out are held by nobody")
  void zeroKeys() {
    reduction.runStart(true);
    increment("z", 4);
    increment("w", 1);
    increment("w", -1);
    formed(new Flush(FlushId.parse("s:1"), List.of(row("other", 1))), List.of(key("z")));
    reduction.finish();
    assertThat(reduction.pending).isEmpty();
  }

  @Test
  @DisplayName("settling a flush settles the halves that replaced it")
  void settlingAParentSettlesItsHalves() {
    reduction.runStart(true);
    Flush parent = new Flush(FlushId.parse("s:1"), List.of(row("a", 1), row("b", 2)));
    formed(parent, List.of());
    replaced(parent, List.of(parent.half(0, List.of(row("a", 1))), parent.half(1, List.of(row("b", 2)))));
    Flush left = parent.half(0, List.of(row("a", 1)));
    replaced(left, List.of(left.half(0, List.of(row("a", 1)))));
    settled(parent.id().toString());
    reduction.finish();
    assertThat(reduction.unsettled).isEmpty();
  }

  @Test
  @DisplayName("frames lost whole between good ones are counted by their numbers; with no flush frame among them nothing is set aside")
  void lostIncrementsOnly() {
    reduction.runStart(true);
    increment("a", 1);
    lose(JournalRecords.INCREMENTS, "");
    lose(JournalRecords.SETTLED, "");
    reduction.damaged(70, List.of(), false);
    increment("b", 1);
    reduction.finish();
    assertThat(reduction.pending).containsOnly(Map.entry(key("a"), 1L), Map.entry(key("b"), 1L));
    assertThat(reduction.damaged).isEqualTo(new ReplayReport.Skipped(70, 2, 0, true));
    assertThat(reduction.dropped).isEqualTo(ReplayReport.Dropped.NONE);
  }

  @Test
  @DisplayName("the intact headers of damaged frames name the one flush frame among them: its id takes what was pending")
  void namedAmongOthers() {
    reduction.runStart(true);
    increment("b", 3);
    increment("a", 2);
    damage(JournalRecords.INCREMENTS, "", true);
    damage(JournalRecords.FORMED, "s:1", true);
    increment("c", 1);
    reduction.finish();
    assertThat(reduction.pending).containsExactly(Map.entry(key("c"), 1L));
    assertThat(reduction.unsettled.values()).containsExactly(new Flush(FlushId.parse("s:1"),
      List.of(new FlushRow("likes", "a", (short) 0, 2), new FlushRow("likes", "b", (short) 0, 3))));
    assertThat(reduction.reconstructed).containsExactly("s:1");
    assertThat(reduction.damaged).isEqualTo(new ReplayReport.Skipped(80, 2, 2, true));
  }

  @Test
  @DisplayName("what a later flush took is no longer in doubt: it is not written again under the hidden flush's id")
  void laterFlushTakesFromTheDoubt() {
    reduction.runStart(true);
    increment("a", 2);
    increment("b", 3);
    damage(JournalRecords.FORMED, "s:1", true);
    formed(new Flush(FlushId.parse("s:2"), List.of(row("a", 2))), List.of());
    reduction.finish();
    assertThat(reduction.unsettled).containsOnlyKeys("s:2", "s:1");
    assertThat(reduction.unsettled.get("s:1").rows()).containsExactly(new FlushRow("likes", "b", (short) 0, 3));
  }

  @Test
  @DisplayName("a damaged split of a flush that is still replayed sets nothing aside")
  void damagedSplitOfAKnownFlush() {
    reduction.runStart(true);
    formed(new Flush(FlushId.parse("s:1"), List.of(row("x", 1))), List.of());
    increment("a", 2);
    damage(JournalRecords.REPLACED, "s:1", true);
    increment("b", 1);
    reduction.finish();
    assertThat(reduction.pending).containsOnlyKeys(key("a"), key("b"));
    assertThat(reduction.unsettled).containsOnlyKeys("s:1");
  }

  @Test
  @DisplayName("two regions each hiding a flush of unknown id: a later record naming one cannot tell which, so both are dropped")
  void ambiguousOrphan() {
    reduction.runStart(true);
    increment("a", 1);
    lose(JournalRecords.FORMED, "s:1");
    reduction.damaged(10, List.of(), false);
    increment("b", 2);
    lose(JournalRecords.FORMED, "s:2");
    reduction.damaged(10, List.of(), false);
    increment("c", 4);
    settled("s:1");
    reduction.finish();
    assertThat(reduction.pending).containsExactly(Map.entry(key("c"), 4L));
    assertThat(reduction.dropped).isEqualTo(new ReplayReport.Dropped(2, 3));
    assertThat(reduction.reconstructed).isEmpty();
  }

  @Test
  @DisplayName("a split naming one of two flushes a region hid gives back none of the doubt, but takes its rows out of it")
  void splitOfOneOfTwo() {
    reduction.runStart(true);
    increment("a", 1);
    increment("b", 2);
    lose(JournalRecords.FORMED, "s:1");
    lose(JournalRecords.FORMED, "s:2");
    reduction.damaged(10, List.of(), false);
    increment("c", 4);
    Flush parent = new Flush(FlushId.parse("s:1"), List.of(row("a", 1)));
    replaced(parent, List.of(parent.half(0, parent.rows())));
    reduction.finish();
    assertThat(reduction.pending).containsExactly(Map.entry(key("c"), 4L));
    assertThat(reduction.unsettled.values()).containsExactly(parent.half(0, parent.rows()));
    assertThat(reduction.dropped).as("b only: a is in the half").isEqualTo(new ReplayReport.Dropped(1, 2));
  }

  @Test
  @DisplayName("damage before the first good frame of a file of the first format leaves the pending before it in doubt")
  void firstFormatGap() {
    reduction.runStart(false);
    reduction.frame(null, payload(out -> JournalRecords.increment(out, like("a", 1))));
    reduction.damaged(30, List.of(), false);
    reduction.frame(null, payload(out -> JournalRecords.increment(out, like("b", 1))));
    reduction.finish();
    assertThat(reduction.pending).containsExactly(Map.entry(key("b"), 1L));
    assertThat(reduction.dropped).isEqualTo(new ReplayReport.Dropped(1, 1));
    assertThat(reduction.damaged.frames()).isEqualTo(1);
  }

  @Test
  @DisplayName("a frame numbered before the frames already read is not applied, and counted as damage")
  void frameFromThePast() {
    reduction.runStart(true);
    increment("a", 1);
    increment("b", 1);
    ByteBuffer payload = payload(out -> JournalRecords.increment(out, like("old", 1)));
    reduction.frame(new Frames.FrameHeader(JournalRecords.INCREMENTS, "", payload.limit(), 0, 0, 0, 24), payload);
    reduction.finish();
    assertThat(reduction.pending).doesNotContainKey(key("old"));
    assertThat(reduction.tail.bytes()).isEqualTo(24 + payload.limit());
  }

  @Test
  @DisplayName("a frame whose checksums hold but whose records do not parse counts as damage; what parsed stands")
  void malformedPayload() {
    reduction.runStart(true);
    ByteBuffer payload = payload(out -> {
      JournalRecords.increment(out, like("parsed", 1));
      out.put((byte) 99);
    });
    reduction.frame(next(JournalRecords.INCREMENTS, "", payload.limit()), payload);
    reduction.finish();
    assertThat(reduction.pending).containsOnlyKeys(key("parsed"));
    assertThat(reduction.tail.bytes()).isEqualTo(payload.limit());
  }

  @Test
  @DisplayName("damage at the end of a run is its tail, counted once, even when a new run starts after it")
  void tailOfARun() {
    reduction.runStart(true);
    increment("a", 1);
    damage(JournalRecords.INCREMENTS, "", false);
    damage(JournalRecords.INCREMENTS, "", false);
    reduction.runStart(true);
    reduction.runStart(false);
    reduction.finish();
    assertThat(reduction.tail).isEqualTo(new ReplayReport.Skipped(80, 2, 2, false));
    assertThat(reduction.pending).containsOnlyKeys(key("a"));
  }

  @Test
  @DisplayName("at the end, a whole flush frame that fails its checksum may have been attempted; one cut short never was")
  void flushFrameAtTheEnd() {
    reduction.runStart(true);
    increment("a", 1);
    damage(JournalRecords.FORMED, "s:1", false);
    reduction.finish();
    assertThat(reduction.pending).containsOnlyKeys(key("a"));
    assertThat(reduction.tail.mayHoldAcknowledged()).isFalse();

    Reduction whole = new Reduction(false);
    whole.runStart(true);
    ByteBuffer payload = payload(out -> JournalRecords.increment(out, like("a", 1)));
    whole.frame(new Frames.FrameHeader(JournalRecords.INCREMENTS, "", payload.limit(), 0, 0, 0, 24), payload);
    whole.damaged(40, List.of(new FrameScanner.Damaged(new Frames.FrameHeader(JournalRecords.FORMED, "s:1", 10, 1, 1,
      0, 27), 0, true)), false);
    whole.finish();
    assertThat(whole.pending).isEmpty();
    assertThat(whole.reconstructed).containsExactly("s:1");
    assertThat(whole.tail.mayHoldAcknowledged()).isTrue();
  }

  @Test
  @DisplayName("a run read from a later segment (its first ones deleted) takes its numbering from its first good frame")
  void runFromAMiddleSegment() {
    reduction.runStart(false);
    seq = 5_000;
    flushes = 7;
    increment("a", 1);
    increment("b", 1);
    reduction.finish();
    assertThat(reduction.damaged.any()).isFalse();
    assertThat(reduction.pending).hasSize(2);
  }
}
