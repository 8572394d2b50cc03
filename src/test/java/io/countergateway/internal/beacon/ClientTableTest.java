package io.countergateway.internal.beacon;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("The bounded table of client records")
class ClientTableTest {
  private final AtomicInteger made = new AtomicInteger();
  /** A record is the mark it was last given (cleared, 0); it holds a limit until the time in its second long. */
  private final ClientTable<long[]> table = new ClientTable<>(1_000, () -> {
    made.incrementAndGet();
    return new long[2];
  }, record -> {
    record[0] = 0;
    record[1] = 0;
  }, (record, now) -> now < record[1]);
  private long now;

  /** What a user of the table does: takes the record under its lock and marks it with {@code mark}; the mark before. */
  private long use(long high, long low, long mark) {
    synchronized (table.lockOf(high, low)) {
      long[] record = table.recordOf(high, low, now);
      long before = record[0];
      record[0] = mark;
      return before;
    }
  }

  @Test
  @DisplayName("a key gets one record, found again while it stays; other keys get others")
  void oneRecordPerKey() {
    assertThat(use(1, 42, 1)).isZero();
    assertThat(use(1, 42, 1)).isEqualTo(1);
    assertThat(use(2, 42, 2)).as("another high key").isZero();
    assertThat(use(1, 43, 3)).as("another low key").isZero();
    assertThat(table.size()).isEqualTo(3);
  }

  @Test
  @DisplayName("a crowd of new keys never takes it past its capacity: pushed-out records are cleared and reused")
  void bounded() {
    assertThat(table.capacity()).isBetween(1_000 - ClientTable.WAYS + 1, 1_000);
    for (int i = 1; i <= 100_000; i++) {
      assertThat(use(0, i, i)).as("a new key's record is a cleared one").isZero();
    }
    assertThat(table.size()).isLessThanOrEqualTo(table.capacity()).isGreaterThan(table.capacity() * 9L / 10);
    assertThat(made.get()).isEqualTo(table.size());
    assertThat(new ClientTable<>(3, Object::new, record -> { }, (record, at) -> false).capacity()).as("at least one set").isEqualTo(ClientTable.WAYS);
  }

  @Test
  @DisplayName("a record in use stays through a crowd of new keys; one left unused is pushed out by it and starts afresh")
  void leastRecentlyUsedGoesFirst() {
    use(4, 1, -1);
    use(4, 2, -2);
    for (int i = 1; i <= 100_000; i++) {
      use(6, i, i);
      if (i % (ClientTable.WAYS - 1) == 0) {
        assertThat(use(4, 1, -1)).isEqualTo(-1);
      }
    }
    assertThat(use(4, 2, -2)).isZero();
  }

  @Test
  @DisplayName("a record holding a limit outlives a crowd of new keys that hold none, unused, until its limit lapses")
  void holdingRecordsGoLast() {
    use(4, 1, -1);
    synchronized (table.lockOf(4, 1)) {
      table.find(4, 1)[1] = 1_000;
    }
    for (int i = 1; i <= 100_000; i++) {
      use(6, i, i);
    }
    assertThat(use(4, 1, -1)).as("still held").isEqualTo(-1);
    now = 1_000;
    for (int i = 100_001; i <= 200_000; i++) {
      use(6, i, i);
    }
    assertThat(use(4, 1, -1)).as("its limit lapsed: pushed out like the others").isZero();
  }
}
