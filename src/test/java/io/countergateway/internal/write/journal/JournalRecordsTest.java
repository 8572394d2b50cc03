package io.countergateway.internal.write.journal;

import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The records a frame holds, written and read back; what does not parse is refused, never half-believed. */
@DisplayName("The journal's records")
class JournalRecordsTest {
  /** Every record read, as text. */
  private static final class Recorded implements JournalRecords.Visitor {
    final List<String> seen = new ArrayList<>();

    @Override
    public void increment(CounterKey key, long delta) {
      seen.add("increment " + key + " " + delta);
    }

    @Override
    public void formed(String id, List<FlushRow> rows, List<CounterKey> zeroKeys) {
      seen.add("formed " + id + " " + rows + " " + zeroKeys);
    }

    @Override
    public void replaced(String parent, List<Flush> children) {
      seen.add("replaced " + parent + " " + children);
    }

    @Override
    public void settled(String id) {
      seen.add("settled " + id);
    }

    @Override
    public void attempts(String id, boolean mayHaveBeenSent) {
      seen.add("attempts " + id + " " + (mayHaveBeenSent ? "may have been sent" : "never sent"));
    }

    @Override
    public void snapshotBegin() {
      seen.add("begin");
    }

    @Override
    public void snapshotEnd(List<String> files) {
      seen.add("end " + files);
    }
  }

  private static List<String> read(JournalRecords.Out out) {
    Recorded recorded = new Recorded();
    JournalRecords.read(ByteBuffer.wrap(out.copy()), recorded);
    return recorded.seen;
  }

  private static final CounterKey PLAIN = new CounterKey("likes", "p");
  private static final CounterKey LATE = new CounterKey("pageviews", "/a", 1_700_000_000L);
  private static final CounterKey EARLY = new CounterKey("pageviews", "/b", -3L);
  private static final CounterKey FAR = new CounterKey("pageviews", "/c", Long.MAX_VALUE);

  @Test
  @DisplayName("every record reads back as written: plain and windowed keys, negative and extreme deltas, ids, rows")
  void roundTrip() {
    JournalRecords.Out out = new JournalRecords.Out(1); // grows as it goes
    FlushRow row = new FlushRow("likes", "p", Short.MAX_VALUE, Long.MIN_VALUE);
    FlushRow windowed = new FlushRow("pageviews", "/a", (short) 0, Long.MAX_VALUE, 1_700_000_000L);
    Flush child = new Flush(FlushId.parse("s:1.0"), List.of(row));
    JournalRecords.increments(out, List.of(new Increment(PLAIN, 5), new Increment(LATE, -7), new Increment(EARLY, 0),
      new Increment(FAR, 1)));
    JournalRecords.increment(out, new Increment(PLAIN, Long.MAX_VALUE));
    JournalRecords.formed(out, "s:1", List.of(row, windowed), List.of(EARLY, PLAIN));
    JournalRecords.formed(out, "", List.of(), List.of(LATE));
    JournalRecords.replaced(out, "s:1", List.of(child, new Flush(FlushId.parse("s:1.1"), List.of(windowed))));
    JournalRecords.settled(out, "s:1");
    JournalRecords.snapshotBegin(out);
    JournalRecords.snapshotEnd(out, List.of("journal-0-0000000001.seg", "é"));
    assertThat(read(out)).containsExactly(
      "increment " + PLAIN + " 5", "increment " + LATE + " -7", "increment " + EARLY + " 0",
      "increment " + FAR + " 1", "increment " + PLAIN + " " + Long.MAX_VALUE,
      "formed s:1 " + List.of(row, windowed) + " " + List.of(EARLY, PLAIN),
      "formed  [] " + List.of(LATE),
      "replaced s:1 " + List.of(child, new Flush(FlushId.parse("s:1.1"), List.of(windowed))),
      "settled s:1", "begin", "end [journal-0-0000000001.seg, é]");
  }

  @Test
  @DisplayName("the estimate used for the byte bound is never below what an increment takes")
  void estimate() {
    for (Increment increment : List.of(new Increment(PLAIN, 1), new Increment(FAR, Long.MIN_VALUE),
      new Increment(new CounterKey("ns", "ü".repeat(100), 1L), -1))) {
      JournalRecords.Out out = new JournalRecords.Out(8);
      JournalRecords.increments(out, List.of(increment));
      assertThat(JournalRecords.estimate(increment)).as(increment.toString()).isGreaterThanOrEqualTo(out.length());
    }
    assertThat(JournalRecords.estimate(new Increment(new CounterKey("a", "b"), 1))).isEqualTo(30);
  }

  @Test
  @DisplayName("whether a flush's attempts left the process reads back as written")
  void attempts() {
    JournalRecords.Out out = new JournalRecords.Out(16);
    JournalRecords.attempts(out, "src:1", false);
    JournalRecords.attempts(out, "src:1", true);
    assertThat(read(out)).containsExactly("attempts src:1 never sent", "attempts src:1 may have been sent");
  }

  @Test
  @DisplayName("a record that does not parse is refused: an unknown type, a count past its end, a slot out of range, a varint too long, a record cut short")
  void malformed() {
    assertThatThrownBy(() -> JournalRecords.read(ByteBuffer.wrap(new byte[] {11}), new Recorded()))
      .hasMessageContaining("unknown record type 11");
    assertThatThrownBy(() -> JournalRecords.read(ByteBuffer.wrap(new byte[] {JournalRecords.ATTEMPTS, 1, 'a', 2}),
      new Recorded())).hasMessageContaining("attempts of a: 2");
    assertThatThrownBy(() -> JournalRecords.read(ByteBuffer.wrap(new byte[] {JournalRecords.SETTLED, 5, 'a'}),
      new Recorded())).hasMessageContaining("count 5 beyond the record");
    JournalRecords.Out slot = new JournalRecords.Out(16);
    slot.put(JournalRecords.FORMED);
    slot.string("s:1");
    slot.varint(1);
    slot.key("likes", "x", CounterKey.PLAIN);
    slot.varint(Short.MAX_VALUE + 1);
    slot.signed(1);
    slot.varint(0);
    assertThatThrownBy(() -> read(slot)).hasMessageContaining("slot 32768");
    byte[] longVarint = new byte[12];
    longVarint[0] = JournalRecords.SETTLED;
    java.util.Arrays.fill(longVarint, 1, 12, (byte) 0x80);
    assertThatThrownBy(() -> JournalRecords.read(ByteBuffer.wrap(longVarint), new Recorded()))
      .hasMessageContaining("varint longer than 10 bytes");
    JournalRecords.Out cut = new JournalRecords.Out(16);
    JournalRecords.increment(cut, new Increment(PLAIN, 1));
    assertThatThrownBy(() -> JournalRecords.read(ByteBuffer.wrap(cut.copy(), 0, cut.length() - 1), new Recorded()))
      .isInstanceOf(java.nio.BufferUnderflowException.class);
  }

  @Test
  @DisplayName("the increments of a damaged payload are counted as far as it parses")
  void countIncrements() {
    JournalRecords.Out out = new JournalRecords.Out(16);
    JournalRecords.increments(out, List.of(new Increment(PLAIN, 1), new Increment(LATE, 2), new Increment(EARLY, 3)));
    JournalRecords.settled(out, "s:1");
    JournalRecords.increment(out, new Increment(PLAIN, 1));
    assertThat(JournalRecords.countIncrements(ByteBuffer.wrap(out.copy()))).isEqualTo(4);
    byte[] bytes = out.copy();
    assertThat(JournalRecords.countIncrements(ByteBuffer.wrap(bytes, 0, 20))).as("cut short").isEqualTo(1);
    assertThat(JournalRecords.countIncrements(ByteBuffer.wrap(new byte[] {9, 9}))).isZero();
  }
}
